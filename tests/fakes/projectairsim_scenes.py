"""Scene config files in ProjectAirSim's format for the tests (no client needed to write them)."""

from __future__ import annotations

import json
from pathlib import Path


def write_scene_config(
    directory: Path,
    scene: str,
    actor: str = "uav",
    *,
    step_ns: int = 3_000_000,
    link_collision: bool | None = None,
) -> Path:
    """A minimal ProjectAirSim scene config (JSONC) and its robot config, as users write
    them; the backend patches clock, physics and cameras on load.

    Args:
        directory: where to write ``scene_<scene>.jsonc`` and ``robot_<actor>.jsonc``.
        scene: the scene's name and id.
        actor: the robot actor's name.
        step_ns: the clock's step.
        link_collision: the root link's ``collision.enabled``; None leaves it out (on).
            ProjectAirSim's own non-physics robot config sets it false.
    """
    directory.mkdir(parents=True, exist_ok=True)
    frame: dict[str, object] = {"name": "Frame"}
    if link_collision is not None:
        frame["collision"] = {"enabled": link_collision}
    robot = {"physics-type": "fast-physics", "links": [frame], "sensors": []}
    (directory / f"robot_{actor}.jsonc").write_text(json.dumps(robot))
    path = directory / f"scene_{scene}.jsonc"
    path.write_text(
        "{\n  // a scene for the fake server\n"
        f'  "id": "{scene}",\n'
        f'  "actors": [{{"type": "robot", "name": "{actor}", '
        f'"origin": {{"xyz": "0 0 -10", "rpy-deg": "0 0 0"}}, '
        f'"robot-config": "robot_{actor}.jsonc"}}],\n'
        f'  "clock": {{"type": "real-time", "step-ns": {step_ns}}},\n'
        '  "home-geo-point": {"latitude": 47.6, "longitude": -122.1, "altitude": 100.0}\n}\n'
    )
    return path
