"""``aerialdojo doctor``: check a running simulator server against a run config before a run.

It drives the server with the bridge's own backend and parameters, and every check can fail
on some server (tests/unit/sim_remote show a misconfigured fake for each): the connection with
a protocol round trip (ProjectAirSim: a topic answer, naming a client/server protocol
mismatch), a CARLA round trip (spawn, tick, a sensor frame, destroy), the reset, every scene of
the configured suite on the server and in the running level, every blueprint the suite spawns
and its attributes on the server, each camera's size (views an agent sees only after an action,
an AGOS UGV's ring after STOP_OBSERVE, after that action), effective
field of view (where the server reports it) and encodings, frames that show something (not
one colour), the depth units (the down camera's median depth against the altitude), one
action per agent with the pose the frames (ProjectAirSim: the camera pose each frame carries)
or the server report, and the clock. It prints a pass/fail table with the fix for each
failure. A GPU user runs it first on a real server (docs/simulators.md); CI runs it against the
fake servers.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from aerialdojo.actions import Action
from aerialdojo.errors import AerialDojoError, ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.spawns import SpawnedObject

if TYPE_CHECKING:
    from aerialdojo.graph import NodeSpec
    from aerialdojo.sim.backend import CameraSpec, MotionOutcome, Observation
    from aerialdojo.sim.remote.diagnostics import CapturedPose, ServerCamera

#: One action per agent whose expected pose change is easy to check.
PROBE_ACTIONS = {"uav": Action("MoveUp", 1.0), "ugv": Action("MoveForward", 1.0)}
POSE_TOLERANCE_M = 0.05
ANGLE_TOLERANCE_DEG = 1.0
FOV_TOLERANCE_DEG = 0.5
#: The down camera's median depth must be the altitude within this fraction.
DEPTH_TOLERANCE = 0.10
#: A colour image whose brightest value is this low shows nothing.
BLACK_LEVEL = 10
DEPTH_FIX = (
    "depth must be metres: ProjectAirSim's planar depth material scales Unreal centimetres by "
    "0.01 (DepthPlannerMaterialFunc) and AirSim's DepthPlanar floats are metres; a custom "
    "depth material or build in other units needs converting. Start the check over open "
    "ground, or give its height with --ground-z"
)
FRAMES_FIX = (
    "the level renders nothing there: check that it is lit and loaded and that the camera is "
    "not inside a mesh (a start inside geometry)"
)
POSE_FIX = (
    "the frames were not captured where the agent was commanded: a sweep stopped by geometry, "
    "a level whose origin differs from the scene config's, or another client moving it"
)
SCENES_FIX = (
    "run a suite made for this server's world: its scenes must be the levels the server runs "
    "and its targets objects of them"
)
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
    ``CarlaAirBackend``). Optional: ``round_trip()`` (a round trip through the server worth its
    own check, described), ``captured_poses(agent)`` (where each view's newest frame was
    captured, as the server wrote it into the frame), ``spawn_problems(spawns)`` (why the
    server could not spawn those objects; a backend without it spawns nothing)."""

    server_build: str
    #: What to do when a camera check fails.
    camera_fix: str

    def connect(self) -> None: ...

    def scenes(self) -> list[str]: ...

    def cameras(self, agent: str) -> list[CameraSpec]: ...

    def reset(self, scene: str, poses: dict[str, Pose]) -> None: ...

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome: ...

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation: ...

    def server_cameras(self, agent: str) -> dict[str, ServerCamera]: ...

    def scene_problems(self, scene: str, objects: Sequence[str]) -> list[str]: ...

    def start_pose(self, scene: str, agent: str) -> Pose: ...

    def close(self) -> None: ...


def diagnose(
    backend: RemoteBackend,
    agents: Sequence[str],
    *,
    seconds_per_action: float,
    scene: str | None = None,
    poses: dict[str, Pose] | None = None,
    suite_scenes: Mapping[str, Sequence[str]] | None = None,
    suite_spawns: Sequence[SpawnedObject] = (),
    ground_z: float = 0.0,
) -> list[Check]:
    """Run every check against a server; stops at the first check the others depend on.

    Args:
        backend: a remote backend built from the run config.
        agents: the agents the bridge serves.
        seconds_per_action: simulated time one action takes.
        scene: the scene to reset; default the backend's first.
        poses: start pose per agent; default the backend's own start for each.
        suite_scenes: the configured suite's scenes, each with the objects its episodes name
            that the level must hold (not those they spawn).
        suite_spawns: what the suite's episodes spawn by blueprint at reset.
        ground_z: map height of the ground under the start (the depth check).
    """
    checks: list[Check] = []
    try:
        backend.connect()
    except AerialDojoError as error:
        return [_failed("server", error, START_SERVER)]
    checks.append(Check("server", True, backend.server_build))
    round_trip = getattr(backend, "round_trip", None)
    if round_trip is not None:
        try:
            checks.append(Check("round trip", True, str(round_trip())))
        except AerialDojoError as error:
            return [*checks, _failed("round trip", error, START_SERVER)]
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
    if suite_scenes is not None:
        checks.append(_scenes_check(backend, suite_scenes))
    if suite_spawns:
        checks.append(_spawns_check(backend, suite_spawns))
    from aerialdojo.sim.backend import Observation  # noqa: PLC0415 - numpy, only here

    reveal_actions: Mapping[str, Action] = getattr(backend, "reveal_actions", {})
    for agent in agents:
        try:
            seen = backend.observe(agent)
            frames = dict(seen.frames)
            reveal = reveal_actions.get(agent)
            if reveal is not None:
                # Views the first observation leaves out (an AGOS UGV's ring) come after
                # this action, as the agent gets them.
                backend.execute(agent, reveal)
                frames.update(backend.observe(agent).frames)
            delivered = backend.server_cameras(agent)
        except AerialDojoError as error:
            return [*checks, _failed(f"{agent} cameras", error, backend.camera_fix)]
        every_view = Observation(sim_time_s=seen.sim_time_s, pose=seen.pose, frames=frames)
        checks += [
            _camera_check(agent, spec, every_view, delivered.get(spec.name), backend)
            for spec in backend.cameras(agent)
        ]
        checks += _depth_checks(agent, backend.cameras(agent), every_view, ground_z)
    for agent in agents:
        checks += _step_checks(backend, agent, seconds_per_action)
    return checks


def _failed(name: str, error: BaseException, fix: str) -> Check:
    message = str(error)
    detail, _, told = message.partition(" Fix: ")
    return Check(name, False, detail, told or fix)


def _scenes_check(backend: RemoteBackend, suite_scenes: Mapping[str, Sequence[str]]) -> Check:
    """Every scene of the suite exists on the server and the objects its episodes name are
    in the running level (ProjectAirSim cannot change the level; CARLA-Air runs one map)."""
    problems = []
    try:
        for scene, objects in sorted(suite_scenes.items()):
            problems += backend.scene_problems(scene, sorted(objects))
    except AerialDojoError as error:
        return _failed("suite scenes", error, SCENES_FIX)
    count = sum(len(objects) for objects in suite_scenes.values())
    detail = f"{len(suite_scenes)} scene(s), {count} object(s) named by its episodes"
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        return Check("suite scenes", False, f"{detail}: {shown}", SCENES_FIX)
    return Check("suite scenes", True, f"{detail}: all on the server")


def _spawns_check(backend: RemoteBackend, spawns: Sequence[SpawnedObject]) -> Check:
    """The server has every blueprint the suite spawns, and each takes the attributes given
    (the suite was made for this server's build)."""
    kinds = {(spawn.blueprint, spawn.attributes) for spawn in spawns}
    detail = f"{len(kinds)} blueprint(s) with their attributes, spawned by its episodes"
    spawn_problems = getattr(backend, "spawn_problems", None)
    if spawn_problems is None:
        return Check("suite spawns", False, f"{detail}: this backend spawns nothing", SCENES_FIX)
    try:
        problems = spawn_problems(spawns)
    except AerialDojoError as error:
        return _failed("suite spawns", error, SCENES_FIX)
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        return Check("suite spawns", False, f"{detail}: {shown}", SCENES_FIX)
    return Check("suite spawns", True, f"{detail}: all on the server")


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
        return Check(name, False, "no frame", backend.camera_fix)
    problems = []
    fixes = [backend.camera_fix]
    if (delivered.width, delivered.height) != (spec.width, spec.height):
        problems.append(f"{delivered.width}x{delivered.height}, not {spec.width}x{spec.height}")
    if delivered.fov_deg is not None and not math.isclose(
        delivered.fov_deg, spec.fov_deg, abs_tol=FOV_TOLERANCE_DEG
    ):
        problems.append(f"FOV {delivered.fov_deg:.1f} deg, not {spec.fov_deg:g}")
    if frame.rgb.dtype != np.uint8 or frame.rgb.shape != (spec.height, spec.width, 3):
        problems.append(f"colour decoded as {frame.rgb.dtype} {frame.rgb.shape}")
    elif int(frame.rgb.max()) <= BLACK_LEVEL:
        problems.append("the colour image is black")
        fixes = [FRAMES_FIX]
    elif bool((frame.rgb == frame.rgb[0, 0]).all()):
        problems.append(
            f"every pixel of the colour image is {tuple(int(v) for v in frame.rgb[0, 0])}"
        )
        fixes = [FRAMES_FIX]
    seen = frame.depth[np.isfinite(frame.depth)]
    if frame.depth.dtype != np.float32 or frame.depth.shape != (spec.height, spec.width):
        problems.append(f"depth decoded as {frame.depth.dtype} {frame.depth.shape}")
    elif seen.size and float(seen.min()) < 0.0:
        problems.append("negative depth")
    fov = "FOV not reported" if delivered.fov_deg is None else f"FOV {delivered.fov_deg:.1f} deg"
    detail = (
        f"{delivered.width}x{delivered.height}, {fov}, "
        f"{delivered.colour_encoding} + {delivered.depth_encoding}"
    )
    if problems:
        return Check(name, False, f"{detail}: {'; '.join(problems)}", "; ".join(fixes))
    return Check(name, True, detail)


def _depth_checks(
    agent: str, rig: Sequence[CameraSpec], observation: Observation, ground_z: float
) -> list[Check]:
    """The down camera's median planar depth against the altitude: depth in other units
    (millimetres, centimetres) is off by a factor, not a few per cent."""
    import numpy as np  # noqa: PLC0415

    checks = []
    altitude = observation.pose.z - ground_z
    for spec in rig:
        frame = observation.frames.get(spec.name)
        if spec.pitch_deg > -89.0 or frame is None or altitude <= 0.0:
            continue
        seen = frame.depth[np.isfinite(frame.depth)]
        name = f"depth {agent}/{spec.name}"
        if seen.size == 0:
            checks.append(Check(name, False, "no depth below the agent", DEPTH_FIX))
            continue
        median = float(np.median(seen))
        off = abs(median - altitude) / altitude
        checks.append(
            Check(
                name,
                off <= DEPTH_TOLERANCE,
                f"median {median:.2f} against an altitude of {altitude:.2f} m "
                f"({off * 100.0:.0f} % off)",
                DEPTH_FIX,
            )
        )
    return checks


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
    captured_poses = getattr(backend, "captured_poses", None)
    if captured_poses is not None:
        # The server's report of the pose echoes the command (ProjectAirSim's ground truth):
        # the frames' camera poses are the evidence.
        try:
            captured = captured_poses(agent)
        except AerialDojoError as error:
            return [_failed(step, error, START_SERVER)]
        pose_check = _captured_pose_check(step, backend.cameras(agent), expected, captured)
        return [pose_check, _clock_check(agent, before, after, seconds_per_action)]
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
    return [pose_check, _clock_check(agent, before, after, seconds_per_action)]


def _clock_check(
    agent: str, before: Observation, after: Observation, seconds_per_action: float
) -> Check:
    advanced = after.sim_time_s - before.sim_time_s
    return Check(
        f"clock {agent}",
        seconds_per_action * 0.5 <= advanced <= seconds_per_action * 2.0 + 1.0,
        f"{before.sim_time_s:.3f} s -> {after.sim_time_s:.3f} s ({advanced:.3f} s for a "
        f"{seconds_per_action:g} s action)",
        "the simulation clock must advance by one action's time: ProjectAirSim with a steppable "
        "clock (the bridge sets it), CARLA-Air in synchronous mode ticked by the bridge alone",
    )


def _captured_pose_check(
    name: str, rig: Sequence[CameraSpec], commanded: Pose, captured: Mapping[str, CapturedPose]
) -> Check:
    """Each view's frame was captured at the commanded pose composed with the view's mount."""
    worst = (0.0, 0.0, "")
    for spec in rig:
        at = captured.get(spec.name)
        if at is None:
            return Check(name, False, f"{spec.name}: no frame with a camera pose", POSE_FIX)
        forward, left, up = spec.offset
        c, s = math.cos(commanded.yaw), math.sin(commanded.yaw)
        x = commanded.x + c * forward - s * left
        y = commanded.y + s * forward + c * left
        error_m = math.dist((at.x, at.y, at.z), (x, y, commanded.z + up))
        error_deg = abs(at.pitch_deg - spec.pitch_deg)
        if abs(spec.pitch_deg) < 80.0:  # the heading of a nadir view is undefined
            heading = math.degrees(commanded.yaw) + spec.yaw_deg
            error_deg = max(error_deg, abs((at.yaw_deg - heading + 180.0) % 360.0 - 180.0))
        if (error_m, error_deg) > worst[:2]:
            worst = (error_m, error_deg, spec.name)
    error_m, error_deg, view = worst
    front = captured[rig[0].name]
    detail = (
        f"frames captured at ({front.x + 0.0:.2f}, {front.y + 0.0:.2f}, {front.z + 0.0:.2f}) "
        f"for the commanded {_position(commanded)}; largest error {error_m:.3f} m, "
        f"{error_deg:.1f} deg{f' ({view})' if view else ''}"
    )
    passed = error_m <= POSE_TOLERANCE_M and error_deg <= ANGLE_TOLERANCE_DEG
    return Check(name, passed, detail, POSE_FIX)


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
        "--ground-z",
        type=float,
        default=0.0,
        help="map height of the ground under the start, for the depth check (default 0)",
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
    specs, bridge = remote_bridge(args.config)
    if args.airsim_settings is not None:
        return _write_airsim_settings(bridge, args.airsim_settings)
    again = ["--config", str(args.config), *(["--scene", args.scene] if args.scene else [])]
    again += [f"--pose={pose}" for pose in args.pose] + [f"--ground-z={args.ground_z}"]
    code = rerun_in_backend_venv(bridge, "aerialdojo.doctor", again)
    if code is not None:
        return code
    poses = dict(_parse_pose(text) for text in args.pose)
    seconds = _number(bridge, "seconds_per_action")
    manager = next((spec for spec in specs if spec.name == "task_manager"), None)
    suite_scenes, suite_spawns = _suite_scenes(manager) if manager is not None else (None, [])
    backend = remote_backend(bridge)
    try:
        agents = _agents(bridge)
        checks = diagnose(
            backend,
            agents,
            seconds_per_action=seconds,
            scene=args.scene,
            poses=poses,
            suite_scenes=suite_scenes,
            suite_spawns=suite_spawns,
            ground_z=args.ground_z,
        )
    finally:
        backend.close()
    print(f"aerialdojo doctor: {args.config} ({bridge.parameters['backend']})")
    print(format_table(checks))
    return 0 if all(check.passed for check in checks) else 1


def remote_bridge(config: Path) -> tuple[list[NodeSpec], NodeSpec]:
    """The node specs of a run config and its bridge's.

    Raises:
        ConfigError: the config is invalid, or its backend drives no simulator server.
    """
    from aerialdojo.backends import backend_entry  # noqa: PLC0415
    from aerialdojo.graph import load_config, node_specs  # noqa: PLC0415

    specs = node_specs(load_config(config))
    bridge = next(spec for spec in specs if spec.name == "sim_bridge")
    name = str(bridge.parameters["backend"])
    if backend_entry(name).client_module is None:
        raise ConfigError(
            f"{config}: sim_bridge.backend is {name!r}, which drives no simulator server"
        )
    return specs, bridge


def rerun_in_backend_venv(bridge: NodeSpec, module: str, argv: Sequence[str]) -> int | None:
    """Run ``python -m module argv`` again in the backend's venv when this interpreter lacks
    the backend's client; returns its exit status, or None when the client is here."""
    from aerialdojo.backends import backend_entry  # noqa: PLC0415
    from aerialdojo.graph import node_interpreter  # noqa: PLC0415

    client = backend_entry(str(bridge.parameters["backend"])).client_module
    if client is None or importlib.util.find_spec(client) is not None:
        return None
    python = node_interpreter(bridge)
    assert python is not None  # a remote backend always has a venv
    return subprocess.run([str(python), "-m", module, *argv], check=False).returncode


def _suite_scenes(manager: NodeSpec) -> tuple[dict[str, list[str]], list[SpawnedObject]]:
    """The configured suite's scenes, each with the target objects its episodes name that
    the level must hold, and the objects its episodes spawn at reset.

    Raises:
        ConfigError: the suite cannot be found or loaded.
    """
    from aerialdojo.protocols import load_suite  # noqa: PLC0415
    from aerialdojo.tasks.suite import resolve_suite  # noqa: PLC0415

    _protocol, suite = load_suite(resolve_suite(str(manager.parameters["suite"])))
    scenes: dict[str, set[str]] = {}
    spawns: list[SpawnedObject] = []
    for episode in getattr(suite, "episodes", ()):
        objects = scenes.setdefault(str(episode.scene), set())
        spawned = tuple(getattr(episode, "spawns", ()))
        spawns += spawned
        target = str(getattr(episode, "target_object_id", ""))
        if target and target not in {spawn.object_id for spawn in spawned}:
            objects.add(target)
    return {scene: sorted(objects) for scene, objects in scenes.items()}, spawns


def _number(bridge: NodeSpec, name: str) -> float:
    value = bridge.parameters[name]
    assert isinstance(value, int | float)  # validated against the parameter table
    return float(value)


def _agents(bridge: NodeSpec) -> list[str]:
    agents = bridge.parameters["agents"]
    assert isinstance(agents, list)  # validated against the parameter table
    return [str(agent) for agent in agents]


def _rig(bridge: NodeSpec) -> list[CameraSpec]:
    """The UAV rig a remote backend carries (the run's benchmark's, ``sim.remote.rigs``),
    without importing their clients."""
    from aerialdojo.sim.remote.rigs import benchmark_rigs  # noqa: PLC0415

    width, height = _number(bridge, "image_width"), _number(bridge, "image_height")
    benchmark = str(bridge.parameters["carla_air_benchmark"])
    rigs = benchmark_rigs(benchmark, ["uav"], int(width), int(height), _number(bridge, "fov_deg"))
    return rigs["uav"]


def remote_backend(bridge: NodeSpec) -> RemoteBackend:
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
    return run_handler(args.handler, args, "aerialdojo doctor")


def run_handler(
    handler: Callable[[argparse.Namespace], int], args: argparse.Namespace, prog: str
) -> int:
    """Run a command as ``python -m`` does: an aerialdojo error is one line on stderr and
    exit status 2."""
    try:
        return handler(args)
    except AerialDojoError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
