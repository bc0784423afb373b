"""Fixtures of the remote-backend tests: the fakes package on the path, scene configs on disk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # for ``import fakes``

from fakes.projectairsim_scenes import write_scene_config  # noqa: E402


@pytest.fixture
def scene_dir(tmp_path: Path) -> Path:
    """Two ProjectAirSim scene configs, Yard and Quarry."""
    directory = tmp_path / "sim_config"
    write_scene_config(directory, "Yard")
    write_scene_config(directory, "Quarry")
    return directory
