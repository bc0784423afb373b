"""Launch a CityNav evaluation (CityNav): the evaluation graph of ``eval.launch.py`` with the
CityNav config, i.e. bridge, task manager, evaluator, and the CityNav agent in ``/uav`` with
its geographic semantic map on ``/uav/gsm/*``.

    ros2 launch aerialdojo citynav.launch.py [config:=<yaml>] [episodes:=N] [output_dir:=DIR]
        [NODE.PARAM:=VALUE ...]   (overrides, as in eval.launch.py)
"""

from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription

from aerialdojo.graph import PACKAGE
from aerialdojo.launch_files import evaluation_with_config


def generate_launch_description() -> LaunchDescription:
    """The evaluation graph with ``config/citynav.yaml`` as the default config."""
    share = Path(get_package_share_directory(PACKAGE))
    return evaluation_with_config(
        Path(__file__).parent, share / "config" / "citynav.yaml", "CityNav"
    )
