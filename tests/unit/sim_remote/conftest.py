"""Fixtures of the remote-backend tests: the fakes package on the path, scene configs on disk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # for ``import fakes``

ROBOT_CONFIG = '{"physics-type": "fast-physics", "links": [{"name": "Frame"}], "sensors": []}'


def write_scene(directory: Path, scene: str, actor: str = "uav", xyz: str = "0 0 -10") -> Path:
    """A minimal ProjectAirSim scene config (JSONC) and its robot config, as users write them."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "robot_uav.jsonc").write_text(ROBOT_CONFIG)
    path = directory / f"scene_{scene}.jsonc"
    path.write_text(
        "{\n  // written by the test\n"
        f'  "id": "{scene}",\n'
        f'  "actors": [{{"type": "robot", "name": "{actor}", '
        f'"origin": {{"xyz": "{xyz}", "rpy-deg": "0 0 0"}}, "robot-config": "robot_uav.jsonc"}}],\n'
        '  "clock": {"type": "real-time", "step-ns": 3000000},\n'
        '  "home-geo-point": {"latitude": 47.6, "longitude": -122.1, "altitude": 100.0}\n}\n'
    )
    return path


@pytest.fixture
def scene_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "sim_config"
    write_scene(directory, "Yard")
    write_scene(directory, "Quarry")
    return directory
