"""``aerialdojo doctor``: check a running simulator server against a run config before a run.

It drives the server with the bridge's own backend and parameters: connects and prints the
server's build, resets every agent, checks each camera's size, encoding and field of view as
the server delivers them, executes one action per agent and checks the pose change and the
clock, then prints a pass/fail table with the fix for each failure. A GPU user runs it first
on a real server (docs/simulators.md); CI runs it against the fake servers.

The simulators' clients live in their own venvs (tools/bootstrap_backend.sh): started from
another interpreter, the doctor runs itself again in the backend's venv.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from aerialdojo.actions import Action
from aerialdojo.errors import AerialDojoError, ConfigError
from aerialdojo.geometry import Pose

if TYPE_CHECKING:
    from aerialdojo.graph import NodeSpec
    from aerialdojo.sim.backend import CameraSpec, MotionOutcome, Observation
    from aerialdojo.sim.remote.diagnostics import ServerCamera

#: The client module each remote backend needs in the interpreter that runs the checks.
CLIENT_MODULES = {"projectairsim": "projectairsim", "carla_air": "airsim"}
#: One action per agent whose expected pose change is easy to check.
PROBE_ACTIONS = {"uav": Action("MoveUp", 1.0), "ugv": Action("MoveForward", 1.0)}
POSE_TOLERANCE_M = 0.05
FOV_TOLERANCE_DEG = 0.5
START_SERVER = (
    "start the simulator (docs/simulators.md, docker/compose.gpu.yaml) and check server_host "
    "and the ports in the config"
)


@dataclass(frozen=True)
class Check:
    """One line of the doctor's table.

    Attributes:
        name: what was checked.
        passed: whether it passed.
        detail: what was found.
        fix: what to do when it failed.
    """

    name: str
    passed: bool
    detail: str
    fix: str = ""


class RemoteBackend(Protocol):
    """What the doctor uses of a remote backend (``ProjectAirSimBackend``,
    ``CarlaAirBackend``)."""

    server_build: str

    def connect(self) -> None: ...

    def scenes(self) -> list[str]: ...

    def cameras(self, agent: str) -> list[CameraSpec]: ...

    def reset(self, scene: str, poses: dict[str, Pose]) -> None: ...

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome: ...

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation: ...

    def server_cameras(self, agent: str) -> dict[str, ServerCamera]: ...

    def start_pose(self, scene: str, agent: str) -> Pose: ...

    def close(self) -> None: ...


def diagnose(
    backend: RemoteBackend,
    agents: Sequence[str],
    *,
    seconds_per_action: float,
    scene: str | None = None,
    poses: dict[str, Pose] | None = None,
) -> list[Check]:
    """Run every check against a server; stops at the first check the others depend on.

    Args:
        backend: a remote backend built from the run config.
        agents: the agents the bridge serves.
        seconds_per_action: simulated time one action takes.
        scene: the scene to reset; default the backend's first.
        poses: start pose per agent; default the backend's own start for each.
    """
    checks: list[Check] = []
    try:
        backend.connect()
    except AerialDojoError as error:
        return [_failed("server", error, START_SERVER)]
    checks.append(Check("server", True, backend.server_build))
    scene = scene or backend.scenes()[0]
    try:
        given = poses or {}
        starts = {agent: given.get(agent) or backend.start_pose(scene, agent) for agent in agents}
        backend.reset(scene, starts)
    except AerialDojoError as error:
        return [*checks, _failed("reset", error, "pass a free start with --pose AGENT=x,y,z,yaw")]
    where = ", ".join(
        f"{a} at ({p.x + 0.0:.1f}, {p.y + 0.0:.1f}, {p.z + 0.0:.1f})" for a, p in starts.items()
    )
    checks.append(Check("reset", True, f"{scene}: {where}"))
    before: dict[str, Observation] = {}
    for agent in agents:
        try:
            before[agent] = backend.observe(agent)
            delivered = backend.server_cameras(agent)
        except AerialDojoError as error:
            return [*checks, _failed(f"{agent} cameras", error, _camera_fix(backend))]
        checks += [
            _camera_check(agent, spec, before[agent], delivered.get(spec.name), backend)
            for spec in backend.cameras(agent)
        ]
    for agent in agents:
        checks += _step_checks(backend, agent, seconds_per_action)
    if len(before) > 1:
        stamps = {agent: observation.sim_time_s for agent, observation in before.items()}
        spread = max(stamps.values()) - min(stamps.values())
        checks.append(
            Check(
                "one clock",
                spread < 1.0,
                ", ".join(f"{agent} {stamp:.3f} s" for agent, stamp in stamps.items()),
                "the agents' frames must carry one simulation clock (CARLA's for CARLA-Air)",
            )
        )
    return checks


def _failed(name: str, error: BaseException, fix: str) -> Check:
    message = str(error)
    detail, _, told = message.partition(" Fix: ")
    return Check(name, False, detail, told or fix)


def _camera_fix(backend: RemoteBackend) -> str:
    if type(backend).__name__ == "CarlaAirBackend":
        from aerialdojo.sim.remote.airsim_settings import SETTINGS_FIX  # noqa: PLC0415

        return f"UAV: {SETTINGS_FIX}; UGV: check carla_air_ugv_blueprint"
    return (
        "the bridge writes the cameras into the robot config it loads: check that the scene's "
        "robot actor is named like the agent and that the server build supports them"
    )


def _camera_check(
    agent: str,
    spec: CameraSpec,
    observation: Observation,
    delivered: ServerCamera | None,
    backend: RemoteBackend,
) -> Check:
    import numpy as np  # noqa: PLC0415

    name = f"camera {agent}/{spec.name}"
    frame = observation.frames.get(spec.name)
    if frame is None or delivered is None:
        return Check(name, False, "no frame", _camera_fix(backend))
    problems = []
    if (delivered.width, delivered.height) != (spec.width, spec.height):
        problems.append(f"{delivered.width}x{delivered.height}, not {spec.width}x{spec.height}")
    if not math.isclose(delivered.fov_deg, spec.fov_deg, abs_tol=FOV_TOLERANCE_DEG):
        problems.append(f"FOV {delivered.fov_deg:.1f} deg, not {spec.fov_deg:g}")
    if frame.rgb.dtype != np.uint8 or frame.rgb.shape != (spec.height, spec.width, 3):
        problems.append(f"colour decoded as {frame.rgb.dtype} {frame.rgb.shape}")
    seen = frame.depth[np.isfinite(frame.depth)]
    if frame.depth.dtype != np.float32 or frame.depth.shape != (spec.height, spec.width):
        problems.append(f"depth decoded as {frame.depth.dtype} {frame.depth.shape}")
    elif seen.size and float(seen.min()) < 0.0:
        problems.append("negative depth")
    detail = (
        f"{delivered.width}x{delivered.height}, FOV {delivered.fov_deg:.1f} deg, "
        f"{delivered.colour_encoding} + {delivered.depth_encoding}"
    )
    if problems:
        return Check(name, False, f"{detail}: {'; '.join(problems)}", _camera_fix(backend))
    return Check(name, True, detail)


def _step_checks(backend: RemoteBackend, agent: str, seconds_per_action: float) -> list[Check]:
    from aerialdojo.actions import target_pose  # noqa: PLC0415

    action = PROBE_ACTIONS.get(agent, PROBE_ACTIONS["uav"])
    step = f"step {agent} {action.name} {action.magnitude:g}"
    try:
        before = backend.observe(agent)
        outcome = backend.execute(agent, action)
        after = backend.observe(agent)
    except AerialDojoError as error:
        return [_failed(step, error, START_SERVER)]
    expected = target_pose(before.pose, action)
    error_m = math.dist(
        (after.pose.x, after.pose.y, after.pose.z), (expected.x, expected.y, expected.z)
    )
    moved = f"{_position(before.pose)} -> {_position(after.pose)}"
    if outcome.collided:
        pose_check = Check(
            step,
            False,
            f"{moved}, collided with {outcome.collision_object!r}",
            "the start is next to an obstacle: pass a free one with --pose AGENT=x,y,z,yaw",
        )
    else:
        pose_check = Check(
            step,
            error_m <= POSE_TOLERANCE_M,
            f"{moved}, {error_m:.3f} m from the target",
            "the server moved the agent elsewhere: ProjectAirSim needs a non-physics robot "
            "(the bridge sets it), CARLA-Air the ExternalPhysicsEngine of its AirSim settings",
        )
    advanced = after.sim_time_s - before.sim_time_s
    clock_check = Check(
        f"clock {agent}",
        seconds_per_action * 0.5 <= advanced <= seconds_per_action * 2.0 + 1.0,
        f"{before.sim_time_s:.3f} s -> {after.sim_time_s:.3f} s ({advanced:.3f} s for a "
        f"{seconds_per_action:g} s action)",
        "the simulation clock must advance by one action's time: ProjectAirSim with a steppable "
        "clock (the bridge sets it), CARLA-Air in synchronous mode ticked by the bridge alone",
    )
    return [pose_check, clock_check]


def _position(pose: Pose) -> str:
    return f"({pose.x + 0.0:.2f}, {pose.y + 0.0:.2f}, {pose.z + 0.0:.2f})"


def format_table(checks: Sequence[Check]) -> str:
    """The checks as a plain-text table, the fix under each failure."""
    width = max(len(check.name) for check in checks)
    lines = []
    for check in checks:
        verdict = "PASS" if check.passed else "FAIL"
        lines.append(f"{verdict}  {check.name:<{width}}  {check.detail}")
        if not check.passed and check.fix:
            lines.append(f"{'':6}{'':<{width}}  fix: {check.fix}")
    passed = sum(check.passed for check in checks)
    lines.append(f"{passed} of {len(checks)} checks passed")
    return "\n".join(lines)


# -- command line --------------------------------------------------------------------------


def add_parser(commands: Any) -> None:
    """Add the ``doctor`` subcommand to the ``aerialdojo`` command line."""
    parser = commands.add_parser(
        "doctor",
        help="check a running simulator server against a run config, before a run",
        description=__doc__,
    )
    parser.add_argument("--config", type=Path, required=True, help="run config YAML")
    parser.add_argument("--scene", help="scene to reset (default: the backend's first)")
    parser.add_argument(
        "--pose",
        action="append",
        default=[],
        metavar="AGENT=X,Y,Z,YAW",
        help="start pose of an agent in the map frame, metres and degrees",
    )
    parser.add_argument(
        "--airsim-settings",
        type=Path,
        metavar="FILE",
        help="only write the AirSim settings.json for the config's UAV rig (carla_air)",
    )
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """Run the doctor for ``aerialdojo doctor``; exit status 0 when every check passed."""
    from aerialdojo.graph import load_config, node_interpreter, node_specs  # noqa: PLC0415

    specs = node_specs(load_config(args.config))
    bridge = next(spec for spec in specs if spec.name == "sim_bridge")
    name = str(bridge.parameters["backend"])
    if name not in CLIENT_MODULES:
        raise ConfigError(
            f"{args.config}: sim_bridge.backend is {name!r}; the doctor checks the remote "
            f"simulators: {', '.join(CLIENT_MODULES)}"
        )
    if args.airsim_settings is not None:
        return _write_airsim_settings(bridge, args.airsim_settings)
    if importlib.util.find_spec(CLIENT_MODULES[name]) is None:
        python = node_interpreter(bridge)
        assert python is not None  # a remote backend always has a venv
        again = ["--config", str(args.config), *(["--scene", args.scene] if args.scene else [])]
        again += [f"--pose={pose}" for pose in args.pose]
        doctor = [str(python), "-m", "aerialdojo.doctor", *again]
        return subprocess.run(doctor, check=False).returncode
    poses = dict(_parse_pose(text) for text in args.pose)
    seconds = _number(bridge, "seconds_per_action")
    backend = _backend(bridge)
    try:
        agents = _agents(bridge)
        checks = diagnose(
            backend, agents, seconds_per_action=seconds, scene=args.scene, poses=poses
        )
    finally:
        backend.close()
    print(f"aerialdojo doctor: {args.config} ({name})")
    print(format_table(checks))
    return 0 if all(check.passed for check in checks) else 1


def _number(bridge: NodeSpec, name: str) -> float:
    value = bridge.parameters[name]
    assert isinstance(value, int | float)  # validated against the parameter table
    return float(value)


def _agents(bridge: NodeSpec) -> list[str]:
    agents = bridge.parameters["agents"]
    assert isinstance(agents, list)  # validated against the parameter table
    return [str(agent) for agent in agents]


def _rig(bridge: NodeSpec) -> list[CameraSpec]:
    """The UAV rig a remote backend carries (``SimulatorBackend.camera_rigs``, which the
    remote backends do not override), without importing their clients."""
    from aerialdojo.sim.backend import SimulatorBackend  # noqa: PLC0415

    width, height = _number(bridge, "image_width"), _number(bridge, "image_height")
    rigs = SimulatorBackend.camera_rigs(
        ["uav"], int(width), int(height), _number(bridge, "fov_deg")
    )
    return rigs["uav"]


def _backend(bridge: NodeSpec) -> RemoteBackend:
    """The backend the bridge would build, with the same parameters and rigs."""
    from aerialdojo.backends import create_backend  # noqa: PLC0415
    from aerialdojo.sim.backend import BackendOptions  # noqa: PLC0415

    backend = create_backend(
        str(bridge.parameters["backend"]),
        BackendOptions(
            agents=_agents(bridge),
            image_width=int(_number(bridge, "image_width")),
            image_height=int(_number(bridge, "image_height")),
            fov_deg=_number(bridge, "fov_deg"),
            seed=int(_number(bridge, "seed")),
            agent_radius_m=_number(bridge, "agent_radius_m"),
            seconds_per_action=_number(bridge, "seconds_per_action"),
            parameters={k: v for k, v in bridge.parameters.items() if k != "use_sim_time"},
        ),
    )
    return cast("RemoteBackend", backend)


def _write_airsim_settings(bridge: NodeSpec, path: Path) -> int:
    from aerialdojo.sim.remote.airsim_settings import settings_for_rig  # noqa: PLC0415

    path.write_text(json.dumps(settings_for_rig(_rig(bridge)), indent=2) + "\n")
    print(f"{path}: install as ~/Documents/AirSim/settings.json on the CARLA-Air host")
    return 0


def _parse_pose(text: str) -> tuple[str, Pose]:
    agent, _, numbers = text.partition("=")
    try:
        x, y, z, yaw_deg = (float(value) for value in numbers.split(","))
    except ValueError as error:
        raise ConfigError(f"--pose {text!r}: expected AGENT=x,y,z,yaw_deg") from error
    return agent, Pose(x, y, z, math.radians(yaw_deg))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m aerialdojo.doctor``: the same as ``aerialdojo doctor``, in this interpreter."""
    parser = argparse.ArgumentParser(prog="aerialdojo doctor")
    commands = parser.add_subparsers(dest="command", required=True)
    add_parser(commands)
    args = parser.parse_args(["doctor", *(sys.argv[1:] if argv is None else argv)])
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except AerialDojoError as error:
        print(f"aerialdojo doctor: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
