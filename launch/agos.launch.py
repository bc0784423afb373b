"""Launch an AGOS evaluation (AGOS-Bench): the evaluation graph of ``eval.launch.py`` with the
AGOS config, i.e. bridge, task manager, evaluator, and the UAV and UGV agents in their
``/uav`` and ``/ugv`` namespaces.

    ros2 launch aerialdojo agos.launch.py [config:=<yaml>] [episodes:=N] [output_dir:=DIR]
        [NODE.PARAM:=VALUE ...]   (overrides, as in eval.launch.py)
"""

from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription

from aerialdojo.graph import PACKAGE
from aerialdojo.launch_files import evaluation_with_config


def generate_launch_description() -> LaunchDescription:
    """The evaluation graph with ``config/agos.yaml`` as the default config."""
    share = Path(get_package_share_directory(PACKAGE))
    return evaluation_with_config(Path(__file__).parent, share / "config" / "agos.yaml", "AGOS")
