"""``aerialdojo eval --config config/carla_air.yaml --episodes 1`` end to end against the CARLA-Air
fakes: the suite is built first by ``aerialdojo tasks from-server`` from the fake world (its
environment objects and lanes, each target photographed by the UAV), then the shipped config
runs one episode of it, the bridge in .venv-carla-air driving the real airsim client against
the fake AirSim server over msgpack-rpc and the CARLA stand-in world (CARLA's client cannot be
faked at the wire; ``fakes/inject/sitecustomize.py`` puts the stand-in where the client is, in
the bridge's process). Image size is overridden to 32x32 to keep the run short.

Needs .venv-carla-air (tools/bootstrap_backend.sh carla-air); skipped without it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-carla-air" / "bin" / "python"
SIZE = 32


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _aerialdojo(*args: object, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    print(result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.mark.skipif(not VENV.exists(), reason="needs .venv-carla-air: tools/bootstrap_backend.sh")
def test_the_shipped_carla_air_config_runs_an_episode_of_a_suite_of_its_world(
    tmp_path: Path,
) -> None:
    port = _free_port()
    world = {"airsim_port": port, "width": SIZE, "height": SIZE}
    inject = os.pathsep.join([str(REPO / "tests" / "fakes" / "inject"), str(REPO / "tests")])
    env = {
        **os.environ,
        "AERIALDOJO_ROOT": str(REPO),
        "AERIALDOJO_FAKE_CARLA_AIR": json.dumps(world),
        "PYTHONPATH": os.pathsep.join([inject, os.environ.get("PYTHONPATH", "")]),
    }
    config = REPO / "config" / "carla_air.yaml"
    sized = [
        f"sim_bridge.airsim_port={port}",
        f"sim_bridge.image_width={SIZE}",
        f"sim_bridge.image_height={SIZE}",
    ]
    # The survey reads the same config with the test's port and image size written in.
    survey_config = yaml.safe_load(config.read_text())
    survey_config["sim_bridge"]["ros__parameters"].update(
        airsim_port=port, image_width=SIZE, image_height=SIZE
    )
    (tmp_path / "carla_air.yaml").write_text(yaml.safe_dump(survey_config))
    suite_dir = tmp_path / "carla_air_town10hd"
    built = _aerialdojo(
        "tasks", "from-server", "--config", tmp_path / "carla_air.yaml", "--out", suite_dir,
        "--image-size", SIZE, env=env,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    suite = json.loads((suite_dir / "suite.json").read_text())
    assert {e["scene"] for e in suite["episodes"]} == {"Town10HD"}
    assert {e["target"]["object_id"] for e in suite["episodes"]} == {"SM_Car_Parked"}

    run = _aerialdojo(
        "eval", "--config", config, "--episodes", 1, "--output", tmp_path / "runs",
        "--run-id", "carla_air", f"task_manager.suite={suite_dir / 'suite.json'}", *sized,
        env=env,
    )  # fmt: skip
    run_dir = tmp_path / "runs" / "carla_air"
    logs = "".join(p.read_text()[-1500:] for p in sorted((run_dir / "logs").glob("*.log")))
    assert run.returncode == 0, run.stderr[-3000:] + logs
    status = json.loads((run_dir / "run_status.json").read_text())
    assert status["complete"] and status["scored"] == status["selected"], status
    assert len(status["scored"]) == 1 and status["scored"][0].startswith("Town10HD-"), status
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert [e["scene"] for e in metrics["episodes"]] == ["Town10HD"]
