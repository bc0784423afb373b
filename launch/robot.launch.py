"""Launch an evaluation on robots (docs/robots.md): the evaluation graph of
``eval.launch.py`` with a robot config, a surveyed site's suite, the safety gate and, for
``vehicle:=sim``, the simulated robot and an automatic operator.

    ros2 launch aerialdojo robot.launch.py site:=<suite> vehicle:=mavros|px4|sim
        [episodes:=N] [output_dir:=DIR] [run_id:=ID] [NODE.PARAM:=VALUE ...]

``vehicle`` picks ``config/robot_<vehicle>.yaml`` (the same file ``aerialdojo eval --config``
reads, so both entry points start the same graph); ``site`` is the suite built from the
site (``aerialdojo tasks from-site``), a shipped name or a path, and becomes
``task_manager.suite``. On a real robot the operator runs ``aerialdojo console --config
config/robot_<vehicle>.yaml`` in a second terminal.
"""

from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    IncludeLaunchDescription,
    OpaqueFunction,
    SetLaunchConfiguration,
)
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration

from aerialdojo.graph import PACKAGE
from aerialdojo.launch_files import FORWARDED, robot_configs

SHARE = Path(get_package_share_directory(PACKAGE))


def _include(context: LaunchContext) -> list:
    vehicle = LaunchConfiguration("vehicle").perform(context)
    return [
        # eval.launch.py reads NODE.PARAM launch configurations as overrides.
        SetLaunchConfiguration("task_manager.suite", LaunchConfiguration("site")),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(str(Path(__file__).parent / "eval.launch.py")),
            launch_arguments={
                "config": str(robot_configs(SHARE / "config")[vehicle]),
                **{name: LaunchConfiguration(name) for name in FORWARDED},
            }.items(),
        ),
    ]


def generate_launch_description() -> LaunchDescription:
    """The robot graph of ``vehicle`` flying the suite of ``site``."""
    vehicles = sorted(robot_configs(SHARE / "config"))
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "site",
                description="Suite built from the surveyed site (aerialdojo tasks from-site): "
                "a shipped name such as alley_rehearsal, or a path to its suite.json",
            ),
            DeclareLaunchArgument(
                "vehicle",
                choices=vehicles,
                description="The robot config, config/robot_<vehicle>.yaml: mavros (MAVROS), "
                "px4 (px4_msgs over uXRCE-DDS), sim (the simulated robot, a rehearsal)",
            ),
            *(
                DeclareLaunchArgument(name, default_value="", description=description)
                for name, description in FORWARDED.items()
            ),
            OpaqueFunction(function=_include),
        ]
    )
