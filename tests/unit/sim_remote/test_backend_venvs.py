"""Runs the backend tests in their backend venvs, so the main suite covers them where the
venvs exist (tools/bootstrap_backend.sh); each client needs its own venv (msgpack 1 vs 0.5)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

BACKEND_TESTS = {
    "projectairsim": (
        "projectairsim",
        ("test_projectairsim_backend.py", "test_projectairsim_wire.py"),
    ),
    "carla-air": ("airsim", ("test_carla_air_backend.py",)),
}


@pytest.mark.parametrize("backend", sorted(BACKEND_TESTS))
def test_backend_tests_pass_in_their_venv(backend: str) -> None:
    client, test_files = BACKEND_TESTS[backend]
    if importlib.util.find_spec(client) is not None:
        pytest.skip(f"running inside the {backend} venv: {', '.join(test_files)} run directly")
    python = REPO / f".venv-{backend}" / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no .venv-{backend}: tools/bootstrap_backend.sh {backend}")
    result = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *(str(HERE / test_file) for test_file in test_files),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and " skipped" not in result.stdout, result.stdout[-2000:]
