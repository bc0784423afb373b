"""``aerialdojo eval --config config/carla_air.yaml --episodes 1`` end to end against the CARLA-Air
fakes: the shipped config runs one episode of the shipped suite of Town10HD
(``carla_air_town10hd``), the bridge in .venv-carla-air driving the real airsim client against
the fake AirSim server over msgpack-rpc and the CARLA stand-in world (CARLA's client cannot be
faked at the wire; ``fakes/inject/sitecustomize.py`` puts the stand-in where the client is, in
the bridge's process). The episode's target is spawned by blueprint at reset and destroyed when
the bridge closes: the stand-in's journal lists both. Image size is overridden to 32x32 to keep
the run short.

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

from aerialdojo.tasks.suite import load_suite, resolve_suite

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
def test_the_shipped_carla_air_config_runs_an_episode_of_its_shipped_suite(tmp_path: Path) -> None:
    port = _free_port()
    journal = tmp_path / "actors.jsonl"
    world = {"airsim_port": port, "width": SIZE, "height": SIZE, "journal": str(journal)}
    inject = os.pathsep.join([str(REPO / "tests" / "fakes" / "inject"), str(REPO / "tests")])
    env = {
        **os.environ,
        "AERIALDOJO_ROOT": str(REPO),
        "AERIALDOJO_FAKE_CARLA_AIR": json.dumps(world),
        "PYTHONPATH": os.pathsep.join([inject, os.environ.get("PYTHONPATH", "")]),
    }
    run = _aerialdojo(
        "eval", "--config", REPO / "config" / "carla_air.yaml", "--episodes", 1,
        "--output", tmp_path / "runs", "--run-id", "carla_air",
        f"sim_bridge.airsim_port={port}", f"sim_bridge.image_width={SIZE}",
        f"sim_bridge.image_height={SIZE}", env=env,
    )  # fmt: skip
    run_dir = tmp_path / "runs" / "carla_air"
    logs = "".join(p.read_text()[-1500:] for p in sorted((run_dir / "logs").glob("*.log")))
    assert run.returncode == 0, run.stderr[-3000:] + logs
    status = json.loads((run_dir / "run_status.json").read_text())
    assert status["complete"] and status["scored"] == status["selected"], (status, logs)
    assert len(status["scored"]) == 1, status
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert [e["scene"] for e in metrics["episodes"]] == ["Town10HD"]
    # The episode's target was spawned by its blueprint under the backend's role name, and
    # destroyed when the bridge closed.
    suite = load_suite(resolve_suite("carla_air_town10hd"))
    episode = next(e for e in suite.episodes if e.episode_id == status["scored"][0])
    wanted = {(s.blueprint, f"aerialdojo/object/{s.object_id}") for s in episode.spawns}
    assert episode.target_object_id in {s.object_id for s in episode.spawns}
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    objects = [e for e in events if e["role_name"].startswith("aerialdojo/object/")]
    spawned = {(e["type_id"], e["role_name"]) for e in objects if e["event"] == "spawned"}
    destroyed = {(e["type_id"], e["role_name"]) for e in objects if e["event"] == "destroyed"}
    assert spawned == wanted, (events, logs)
    assert destroyed == wanted, (events, run.stdout[-2000:], logs)
