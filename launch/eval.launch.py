"""Launch an aerialdojo evaluation: simulator bridge, task manager, evaluator and agents.

    ros2 launch aerialdojo eval.launch.py [config:=<yaml>] [episodes:=N] [output_dir:=DIR]

The nodes and their parameters come from ``aerialdojo.graph.node_specs``, the function
``aerialdojo eval`` uses too, so both entry points start the same graph from the same YAML.
The launch ends when the evaluator exits after writing its report.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch.actions import (
    DeclareLaunchArgument,
    EmitEvent,
    OpaqueFunction,
    RegisterEventHandler,
    SetEnvironmentVariable,
)
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from aerialdojo.graph import PACKAGE, apply_overrides, load_config, node_specs
from aerialdojo.transport import transport_environment
from launch import LaunchContext, LaunchDescription

SHARE = Path(get_package_share_directory(PACKAGE))


def _nodes(context: LaunchContext) -> list:
    config = load_config(Path(LaunchConfiguration("config").perform(context)))
    overrides: dict[str, dict[str, object]] = {
        "evaluator": {
            "run_id": LaunchConfiguration("run_id").perform(context)
            or datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        }
    }
    output_dir = LaunchConfiguration("output_dir").perform(context)
    if output_dir:
        overrides["evaluator"]["output_dir"] = output_dir
    episodes = LaunchConfiguration("episodes").perform(context)
    if episodes:
        overrides["task_manager"] = {"max_episodes": int(episodes)}
    actions = []
    for spec in node_specs(apply_overrides(config, overrides, "launch arguments")):
        node = Node(
            package=spec.package,
            executable=spec.executable,
            name=spec.name,
            namespace=spec.namespace or None,
            parameters=[spec.parameters],
            output="screen",
            emulate_tty=True,
        )
        actions.append(node)
        if spec.name == "evaluator":
            actions.append(
                RegisterEventHandler(
                    OnProcessExit(target_action=node, on_exit=[EmitEvent(event=Shutdown())])
                )
            )
    return actions


def generate_launch_description() -> LaunchDescription:
    """The evaluation graph described by the ``config`` file."""
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "config",
                default_value=str(SHARE / "config" / "eval.yaml"),
                description="Run config: one ros__parameters section per node",
            ),
            DeclareLaunchArgument(
                "episodes",
                default_value="",
                description="Run at most this many of the selected episodes (empty: all)",
            ),
            DeclareLaunchArgument(
                "output_dir",
                default_value="",
                description="Directory that receives <run_id>/ (empty: the config's)",
            ),
            DeclareLaunchArgument(
                "run_id",
                default_value="",
                description="Name of the run directory (empty: a UTC timestamp)",
            ),
            *(
                SetEnvironmentVariable(name, value)
                for name, value in transport_environment().items()
            ),
            OpaqueFunction(function=_nodes),
        ]
    )
