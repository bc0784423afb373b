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
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration

from aerialdojo.graph import PACKAGE

SHARE = Path(get_package_share_directory(PACKAGE))
#: Forwarded unchanged to eval.launch.py, which builds the nodes from the config.
FORWARDED = {
    "episodes": "Run at most this many of the selected episodes (empty: all)",
    "output_dir": "Directory that receives <run_id>/ (empty: the config's)",
    "run_id": "Name of the run directory (empty: a UTC timestamp)",
}


def generate_launch_description() -> LaunchDescription:
    """The evaluation graph with ``config/agos.yaml`` as the default config."""
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "config",
                default_value=str(SHARE / "config" / "agos.yaml"),
                description="AGOS run config: one ros__parameters section per node",
            ),
            *(
                DeclareLaunchArgument(name, default_value="", description=description)
                for name, description in FORWARDED.items()
            ),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(str(Path(__file__).parent / "eval.launch.py")),
                launch_arguments={
                    name: LaunchConfiguration(name) for name in ("config", *FORWARDED)
                }.items(),
            ),
        ]
    )
