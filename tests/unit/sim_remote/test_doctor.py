"""``aerialdojo doctor`` end to end on its command line: against the fake ProjectAirSim server in
a process of its own (the doctor runs itself again in .venv-projectairsim), once as it should
be and once misconfigured for each check that must fail (the other protocol generation, depth
in other units, black frames, frames away from the commanded pose, a suite for another
level), against no server at all, and writing AirSim settings. The CARLA-Air checks against
the fakes run in-process in test_carla_air_backend.py: CARLA's client cannot be faked at the
wire.

Needs the backend venvs (tools/bootstrap_backend.sh); the server tests skip without them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.projectairsim_process import FakeServerProcess
from fakes.projectairsim_scenes import write_scene_config
from fakes.remote_suite import write_one_episode_suite

from aerialdojo.agos.sensors import uav_rig
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.remote.airsim_settings import settings_for_rig

REPO = Path(__file__).resolve().parents[3]
PROJECTAIRSIM_PYTHON = REPO / ".venv-projectairsim" / "bin" / "python"
CARLA_AIR_PYTHON = REPO / ".venv-carla-air" / "bin" / "python"
needs_projectairsim = pytest.mark.skipif(
    not PROJECTAIRSIM_PYTHON.exists(), reason="tools/bootstrap_backend.sh projectairsim"
)


def _doctor(config: Path, *options: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "doctor", "--config", str(config), *options],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "AERIALDOJO_ROOT": str(REPO)},
    )
    print(result.stdout, result.stderr)  # the table, for whoever reads the test log
    return result


def _config(path: Path, bridge: dict[str, Any], manager: dict[str, Any] | None = None) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "sim_bridge": {"ros__parameters": bridge},
                "task_manager": {"ros__parameters": manager or {}},
                "evaluator": {"ros__parameters": {}},
            }
        )
    )
    return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: A wall 20-21 m north of the scene's origin, and the suite's target in the level.
LEVEL = ["--obstacle", "wall,20,-5,-50,21,5,0", "--level-object", "obj_001,5,5,0"]


@pytest.fixture
def fake_projectairsim(tmp_path: Path) -> Iterator[FakeServerProcess]:
    server = FakeServerProcess(PROJECTAIRSIM_PYTHON, tmp_path / "fake.log", LEVEL)
    yield server
    server.close()


def _projectairsim_config(tmp_path: Path, server: FakeServerProcess) -> Path:
    scene_dir = tmp_path / "sim_config"
    write_scene_config(scene_dir, "Yard")
    suite = write_one_episode_suite(tmp_path / "suite", scene="Yard")  # target obj_001
    bridge = {
        "backend": "projectairsim",
        "image_width": 32,
        "image_height": 24,
        "projectairsim_scene_dir": str(scene_dir),
        "projectairsim_topics_port": server.ports["topics"],
        "projectairsim_services_port": server.ports["services"],
        "server_timeout_s": 5.0,
        "server_attempts": 1,
    }
    return _config(tmp_path / "projectairsim.yaml", bridge, {"suite": str(suite)})


@needs_projectairsim
def test_the_doctor_passes_a_projectairsim_server_that_works(
    fake_projectairsim: FakeServerProcess, tmp_path: Path
) -> None:
    result = _doctor(_projectairsim_config(tmp_path, fake_projectairsim))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    verdicts = [line.split()[:2] for line in lines[1:-1]]
    assert verdicts == [
        ["PASS", "server"],
        ["PASS", "reset"],
        ["PASS", "suite"],
        *([["PASS", "camera"]] * 4),
        ["PASS", "depth"],
        ["PASS", "step"],
        ["PASS", "clock"],
    ]
    assert "pair1 topics); topic round trip answered" in lines[1]
    assert "32x24, FOV not reported, BGR + 32FC1" in result.stdout
    assert "frames captured at (0.00, 0.00, 11.00) for the commanded (0.00, 0.00, 11.00)" in (
        result.stdout
    )
    assert lines[-1] == "10 of 10 checks passed"


@needs_projectairsim
@pytest.mark.parametrize(
    ("misconfiguration", "check", "found", "fix"),
    [
        (
            ["--topics-protocol", "pair0"],
            "server",
            "client/server protocol mismatch",
            "run the public ProjectAirSim server",
        ),
        (
            ["--depth-scale", "1000"],
            "depth",
            "median 10000.00 against an altitude of 10.00 m",
            "depth must be metres",
        ),
        (["--black-frames"], "camera", "the colour image is black", "the level renders nothing"),
        (
            ["--render-offset", "0,3,0"],
            "step",
            "largest error 3.000 m",
            "the frames were not captured",
        ),
        ([], "suite", "1 of 1 objects are not in the running level (obj_001)", "run a suite made"),
    ],
    ids=["other protocol", "depth units", "black frames", "camera pose", "other level"],
)
def test_each_doctor_check_fails_on_a_server_misconfigured_for_it(
    misconfiguration: list[str], check: str, found: str, fix: str, tmp_path: Path
) -> None:
    level = [] if check == "suite" else LEVEL
    server = FakeServerProcess(
        PROJECTAIRSIM_PYTHON, tmp_path / "fake.log", [*level, *misconfiguration]
    )
    try:
        started = time.monotonic()
        result = _doctor(_projectairsim_config(tmp_path, server))
        elapsed = time.monotonic() - started
    finally:
        server.close()
    assert result.returncode == 1, result.stdout + result.stderr
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert failed and failed[0].split()[1] == check, result.stdout
    assert found in result.stdout and f"fix: {fix}" in result.stdout
    if check == "server":
        assert elapsed < 10.0 + 3.0, f"{elapsed:.1f} s (the doctor's own start included)"


@needs_projectairsim
def test_the_doctor_names_the_fix_of_a_start_inside_geometry(
    fake_projectairsim: FakeServerProcess, tmp_path: Path
) -> None:
    config = _projectairsim_config(tmp_path, fake_projectairsim)
    result = _doctor(config, "--pose", "uav=0,20.5,10,0")  # map y is NED north: in the wall
    assert result.returncode == 1
    assert "FAIL  reset   ProjectAirSim at 127.0.0.1" in result.stdout
    assert "collides with 'wall'" in result.stdout
    assert "fix: pass a free start with --pose AGENT=x,y,z,yaw" in result.stdout


@pytest.mark.parametrize(
    ("backend", "python", "ports"),
    [
        ("projectairsim", PROJECTAIRSIM_PYTHON, ("projectairsim_services_port",)),
        ("carla_air", CARLA_AIR_PYTHON, ("carla_port", "airsim_port")),
    ],
)
def test_the_doctor_says_how_to_start_a_server_that_is_not_there(
    backend: str, python: Path, ports: tuple[str, ...], tmp_path: Path
) -> None:
    if not python.exists():
        pytest.skip(f"no {python.parent.parent.name}")
    bridge = {
        "backend": backend,
        "projectairsim_scene_dir": str(REPO / "config" / "projectairsim"),
        "server_timeout_s": 1.0,
        "server_attempts": 1,
        **dict.fromkeys(ports, _free_port()),
    }
    result = _doctor(_config(tmp_path / f"{backend}.yaml", bridge))
    assert result.returncode == 1
    assert "FAIL  server  " in result.stdout and "after 1 tries" in result.stdout
    assert "fix: start the simulator" in result.stdout
    assert result.stdout.rstrip().endswith("0 of 1 checks passed")


def test_the_doctor_writes_the_airsim_settings_of_a_config(tmp_path: Path) -> None:
    config = _config(
        tmp_path / "carla_air.yaml",
        {"backend": "carla_air", "image_width": 320, "image_height": 240, "fov_deg": 70.0},
    )
    written = tmp_path / "settings.json"
    result = _doctor(config, "--airsim-settings", str(written))
    assert result.returncode == 0, result.stderr
    assert json.loads(written.read_text()) == settings_for_rig(aerialdojo_uav_rig(320, 240, 70.0))


def test_the_doctor_writes_the_nadir_camera_of_an_agos_config(tmp_path: Path) -> None:
    config = _config(
        tmp_path / "carla_air_agos.yaml",
        {
            "backend": "carla_air",
            "carla_air_benchmark": "agos",
            "agents": ["uav", "ugv"],
            "image_width": 320,
            "image_height": 240,
        },
    )
    written = tmp_path / "settings.json"
    result = _doctor(config, "--airsim-settings", str(written))
    assert result.returncode == 0, result.stderr
    assert json.loads(written.read_text()) == settings_for_rig(uav_rig(320, 240))


@needs_projectairsim
def test_a_suite_built_from_the_servers_world_runs_there_and_the_doctor_says_so(
    tmp_path: Path,
) -> None:
    """``aerialdojo tasks from-server`` against the fake: the level's objects (ListObjects,
    GetObjectPoses) become targets and landmarks, each target photographed from its anchor
    by the backend, and the suite passes the doctor's suite check on that server."""
    level = [
        "--level-object",
        "Car_Red,8,12,-0.8",
        "--level-object",
        "Crate_01,-6,4,-0.5",
        "--level-object",
        "Building_North,40,0,-15",
    ]
    server = FakeServerProcess(PROJECTAIRSIM_PYTHON, tmp_path / "fake.log", level)
    try:
        config = _projectairsim_config(tmp_path, server)
        out = tmp_path / "yard_suite"
        built = subprocess.run(
            [
                sys.executable,
                "-m",
                "aerialdojo.cli",
                "tasks",
                "from-server",
                "--config",
                str(config),
                "--out",
                str(out),
                "--image-size",
                "32",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "AERIALDOJO_ROOT": str(REPO)},
        )
        print(built.stdout, built.stderr)
        assert built.returncode == 0, built.stdout + built.stderr
        site = yaml.safe_load((out / "site.yaml").read_text())
        assert site["simulator_scene"] == "Yard" and site["frame"]["method"] == "simulator"
        assert [t["id"] for t in site["targets"]] == ["Car_Red", "Crate_01"]
        assert [m["name"] for m in site["landmarks"]] == ["building north"]
        suite = json.loads((out / "suite.json").read_text())
        assert {e["scene"] for e in suite["episodes"]} == {"Yard"}
        assert {e["target"]["object_id"] for e in suite["episodes"]} == {"Car_Red", "Crate_01"}
        assert "from-server" in suite["site"]["command"]
        # The doctor's suite check finds the suite's targets in the running level.
        yaml_config = yaml.safe_load(config.read_text())
        yaml_config["task_manager"]["ros__parameters"]["suite"] = str(out / "suite.json")
        config.write_text(yaml.safe_dump(yaml_config))
        checked = _doctor(config)
        line = next(x for x in checked.stdout.splitlines() if "suite scenes" in x)
        assert line.startswith("PASS") and "2 object(s) named by its episodes: all on" in line
    finally:
        server.close()
