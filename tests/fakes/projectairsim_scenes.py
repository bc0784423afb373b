"""Scene config files in ProjectAirSim's format for the tests (no client needed to write them)."""

from __future__ import annotations

from pathlib import Path


def write_scene_config(directory: Path, scene: str, actor: str = "uav") -> Path:
    """A minimal ProjectAirSim scene config (JSONC) and its robot config, as users write
    them; the backend patches clock, physics and cameras on load."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"robot_{actor}.jsonc").write_text(
        '{"physics-type": "fast-physics", "links": [{"name": "Frame"}], "sensors": []}'
    )
    path = directory / f"scene_{scene}.jsonc"
    path.write_text(
        "{\n  // a scene for the fake server\n"
        f'  "id": "{scene}",\n'
        f'  "actors": [{{"type": "robot", "name": "{actor}", '
        f'"origin": {{"xyz": "0 0 -10", "rpy-deg": "0 0 0"}}, '
        f'"robot-config": "robot_{actor}.jsonc"}}],\n'
        '  "clock": {"type": "real-time", "step-ns": 3000000},\n'
        '  "home-geo-point": {"latitude": 47.6, "longitude": -122.1, "altitude": 100.0}\n}\n'
    )
    return path
