"""Launch an aerialdojo evaluation: simulator bridge, task manager, evaluator and agents.

    ros2 launch aerialdojo eval.launch.py [config:=<yaml>] [episodes:=N] [output_dir:=DIR]
        [NODE.PARAM:=VALUE ...]

``NODE.PARAM:=VALUE`` arguments (e.g. ``uav_agent.policy:=oracle``) override the config's
parameters as ``aerialdojo eval NODE.PARAM=VALUE`` does: values read as YAML, validated with
the config before any node starts.
The nodes and their parameters come from ``aerialdojo.graph.node_specs``, the function
``aerialdojo eval`` uses too, so both entry points start the same graph from the same YAML.
The launch ends when the evaluator exits after writing its report. A node of
``runner.RESTARTABLE`` that dies during the run is started again as ``aerialdojo eval`` starts
it (the bridge; the task manager, which resumes the run from its journal; an agent stopped
by a signal, whose attempt under way the task manager reruns). Any other exit of a node ends
the launch, as it ends the run of ``aerialdojo eval``: the evaluator, stopped last, writes
what it has, and ``aerialdojo rerun`` runs the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    EmitEvent,
    LogInfo,
    OpaqueFunction,
    RegisterEventHandler,
    SetEnvironmentVariable,
)
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from aerialdojo.dds import run_environment
from aerialdojo.errors import ConfigError
from aerialdojo.graph import (
    PACKAGE,
    claim_run_dir,
    default_run_id,
    discovery_of,
    is_override,
    node_interpreter,
    parse_overrides,
    run_dir_of,
    run_specs,
    write_run_config,
)
from aerialdojo.nodes.domain_guard import check_domain_free
from aerialdojo.runner import RESTARTABLE, Restarts, shm_segments, start_segment_cleaner
from aerialdojo.runtime import RUN_DIR_ENV

if TYPE_CHECKING:  # launch.events.process: not in the stand-in the entry-point tests use
    from launch.events.process import ProcessExited

#: Seconds launch waits, once it has stopped the evaluator with SIGINT, before SIGTERM, and
#: then before SIGKILL (``ExecuteProcess``'s sigterm_timeout and sigkill_timeout).
EVALUATOR_STOP_TIMEOUTS = {"sigterm_timeout": "120", "sigkill_timeout": "10"}

SHARE = Path(get_package_share_directory(PACKAGE))
#: The checkout (or image workdir) holding backend venvs: install/aerialdojo/share/aerialdojo
#: lies three levels below it.
SOURCE_ROOT = SHARE.parents[3]


def _nodes(context: LaunchContext) -> list:
    episodes = LaunchConfiguration("episodes").perform(context)
    # Launch keeps every name:=value argument, declared or not, as a launch configuration.
    overrides = [
        f"{name}={value}"
        for name, value in context.launch_configurations.items()
        if is_override(f"{name}={value}")
    ]

    try:
        episode_count = int(episodes) if episodes else None
    except ValueError:
        raise ConfigError(f"launch arguments: episodes:={episodes} is not a whole number") from None

    def specs_of(run_id: str) -> list:
        return run_specs(
            Path(LaunchConfiguration("config").perform(context)),
            run_id=run_id,
            output_dir=LaunchConfiguration("output_dir").perform(context) or None,
            episodes=episode_count,
            source="launch arguments",
            overrides=parse_overrides(overrides, source="launch arguments"),
        )

    chosen = LaunchConfiguration("run_id").perform(context)
    specs = specs_of(chosen or default_run_id())
    # Before the run directory is claimed: a run refused here leaves nothing behind.
    check_domain_free()
    # Claimed before any node starts, as aerialdojo eval does: a run never writes into another.
    claimed = claim_run_dir(run_dir_of(specs), named=f"run_id:={chosen}" if chosen else None)
    if claimed != run_dir_of(specs).name:
        specs = specs_of(claimed)
    # The run's config as the nodes run it, as aerialdojo eval saves it: aerialdojo rerun reads it.
    arguments = " ".join(
        f"{name}:={value}" for name, value in context.launch_configurations.items()
    )
    write_run_config(run_dir_of(specs), specs, f"ros2 launch aerialdojo eval.launch.py {arguments}")
    # Whatever ends the launch (a Ctrl-C, a kill), the shared memory of its dead nodes goes:
    # aerialdojo eval's clean-up, by a process that outlives the launch.
    segments_before = shm_segments()
    # Every node names its run in its NodeInfo, and runs on the transport profile of the
    # run's discovery setting, as under aerialdojo eval.
    actions: list = [
        OpaqueFunction(function=lambda _context: start_segment_cleaner(segments_before)),
        SetEnvironmentVariable(RUN_DIR_ENV, str(run_dir_of(specs))),
        *(
            SetEnvironmentVariable(name, value)
            for name, value in run_environment(discovery_of(specs)).items()
        ),
    ]
    for spec in specs:
        interpreter = node_interpreter(spec, SOURCE_ROOT)

        def node_of(spec=spec, interpreter=interpreter) -> Node:
            return Node(
                prefix=str(interpreter) if interpreter else None,
                package=spec.package,
                executable=spec.executable,
                name=spec.name,
                namespace=spec.namespace or None,
                parameters=[spec.parameters],
                output="screen",
                emulate_tty=True,
                # The evaluator closes the bag and writes the report when stopped: launch's
                # default 5 s before SIGTERM and 5 more before SIGKILL can cut that short.
                **(EVALUATOR_STOP_TIMEOUTS if spec.name == "evaluator" else {}),
            )

        if spec.name in RESTARTABLE:
            actions += _restartable(node_of, spec.name, RESTARTABLE[spec.name])
            continue
        node = node_of()
        actions += [
            node,
            RegisterEventHandler(
                OnProcessExit(target_action=node, on_exit=_ends_the_launch(spec.name))
            ),
        ]
    return actions


def _ends_the_launch(name: str) -> Callable[[ProcessExited, LaunchContext], list | None]:
    """What a node's exit does when the node is not started again: it ends the launch, as
    ``runner.wait_for_graph`` ends the run of ``aerialdojo eval``. The evaluator exits once it
    has written its report; any other node is one the run cannot go on without (an agent
    whose policy raised would leave every later episode to the agent timeout), and the
    evaluator, stopped with the rest, writes what it has."""

    def on_exit(event: ProcessExited, context: LaunchContext) -> list | None:
        if context.is_shutdown:
            return None
        reason = f"node {name} exited with status {event.returncode}"
        # Launch logs a shutdown's reason only at debug level.
        return [LogInfo(msg=f"{reason}: the launch ends"), EmitEvent(event=Shutdown(reason=reason))]

    return on_exit


def _restartable(node_of: Callable[[], Node], name: str, restarts: Restarts, done: int = 0) -> list:
    """A node started again, while ``restarts`` allows, when it dies during the launch: as
    ``runner.wait_for_graph`` does, which launch's own ``respawn`` cannot (it restarts on any
    exit status, also a task manager's refusal to start, which would only refuse again).
    Otherwise its exit ends the launch."""
    node = node_of()
    ends_the_launch = _ends_the_launch(name)

    def on_exit(event: ProcessExited, context: LaunchContext) -> list | None:
        if context.is_shutdown or not restarts.allows(event.returncode, done):
            return ends_the_launch(event, context)
        return _restartable(node_of, name, restarts, done + 1)

    return [node, RegisterEventHandler(OnProcessExit(target_action=node, on_exit=on_exit))]


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
            OpaqueFunction(function=_nodes),
        ]
    )
