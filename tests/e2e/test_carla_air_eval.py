"""``aerialdojo eval --config config/carla_air.yaml --episodes 1`` (and ``carla_air_agos.yaml``)
end to end against the CARLA-Air fakes: each shipped config runs one episode of its shipped
suite of Town10HD (``carla_air_town10hd``, ``carla_air_agos_town10hd``), the bridge in
.venv-carla-air driving the real airsim client against the fake AirSim server over
msgpack-rpc and the CARLA stand-in world (CARLA's client cannot be faked at the wire;
``fakes/inject/sitecustomize.py`` puts the stand-in where the client is, in the bridge's
process). The episode's objects are spawned by blueprint at reset and destroyed when the bridge
closes, and the AGOS UGV's cameras are CARLA sensors: the stand-in's journal lists them. Image
size is overridden to 32x32 to keep the run short.

Needs .venv-carla-air (tools/bootstrap_backend.sh carla-air); skipped without it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aerialdojo.agos.sensors import RING_VIEWS
from aerialdojo.protocols import load_suite as load_any_suite
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


@dataclass
class _Run:
    """One ``aerialdojo eval`` of a shipped config against the fakes, read back."""

    status: dict[str, Any]
    events: list[dict[str, Any]]
    logs: str
    stdout: str


def _eval_one_episode(tmp_path: Path, config: str, benchmark: str) -> _Run:
    """``aerialdojo eval --config config/<config> --episodes 1`` against the CARLA-Air fakes
    (AirSim's settings serving ``benchmark``'s UAV rig), at 32x32; the run must end whole,
    its one episode scored on Town10HD."""
    port = _free_port()
    journal = tmp_path / "actors.jsonl"
    world = {
        "airsim_port": port,
        "width": SIZE,
        "height": SIZE,
        "benchmark": benchmark,
        "journal": str(journal),
    }
    inject = os.pathsep.join([str(REPO / "tests" / "fakes" / "inject"), str(REPO / "tests")])
    env = {
        **os.environ,
        "AERIALDOJO_ROOT": str(REPO),
        "AERIALDOJO_FAKE_CARLA_AIR": json.dumps(world),
        "PYTHONPATH": os.pathsep.join([inject, os.environ.get("PYTHONPATH", "")]),
    }
    run_id = Path(config).stem
    run = _aerialdojo(
        "eval", "--config", REPO / "config" / config, "--episodes", 1,
        "--output", tmp_path / "runs", "--run-id", run_id,
        f"sim_bridge.airsim_port={port}", f"sim_bridge.image_width={SIZE}",
        f"sim_bridge.image_height={SIZE}", env=env,
    )  # fmt: skip
    run_dir = tmp_path / "runs" / run_id
    logs = "".join(p.read_text()[-1500:] for p in sorted((run_dir / "logs").glob("*.log")))
    assert run.returncode == 0, run.stderr[-3000:] + logs
    status = json.loads((run_dir / "run_status.json").read_text())
    assert status["complete"] and status["scored"] == status["selected"], (status, logs)
    assert len(status["scored"]) == 1, status
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert [e["scene"] for e in metrics["episodes"]] == ["Town10HD"]
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    return _Run(status, events, logs, run.stdout[-2000:])


def _spawned_and_destroyed(
    run: _Run, spawns: Any
) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[tuple[str, str]]]:
    """The episode's objects as (blueprint, role name), and those the journal shows spawned
    and destroyed."""
    wanted = {(s.blueprint, f"aerialdojo/object/{s.object_id}") for s in spawns}
    objects = [e for e in run.events if e["role_name"].startswith("aerialdojo/object/")]
    spawned = {(e["type_id"], e["role_name"]) for e in objects if e["event"] == "spawned"}
    destroyed = {(e["type_id"], e["role_name"]) for e in objects if e["event"] == "destroyed"}
    return wanted, spawned, destroyed


@pytest.mark.skipif(not VENV.exists(), reason="needs .venv-carla-air: tools/bootstrap_backend.sh")
def test_the_shipped_carla_air_config_runs_an_episode_of_its_shipped_suite(tmp_path: Path) -> None:
    run = _eval_one_episode(tmp_path, "carla_air.yaml", "aerialdojo")
    # The episode's target was spawned by its blueprint under the backend's role name, and
    # destroyed when the bridge closed.
    suite = load_suite(resolve_suite("carla_air_town10hd"))
    episode = next(e for e in suite.episodes if e.episode_id == run.status["scored"][0])
    assert episode.target_object_id in {s.object_id for s in episode.spawns}
    wanted, spawned, destroyed = _spawned_and_destroyed(run, episode.spawns)
    assert spawned == wanted, (run.events, run.logs)
    assert destroyed == wanted, (run.events, run.stdout, run.logs)


@pytest.mark.skipif(not VENV.exists(), reason="needs .venv-carla-air: tools/bootstrap_backend.sh")
def test_the_shipped_carla_air_agos_config_runs_an_episode_of_its_shipped_suite(
    tmp_path: Path,
) -> None:
    """``config/carla_air_agos.yaml``: the AGOS UAV and UGV agents, unchanged, get the nadir
    view from AirSim and the UGV's front view and ring from CARLA cameras; the episode is
    scored, and its vehicles are spawned at reset and destroyed at the end."""
    run = _eval_one_episode(tmp_path, "carla_air_agos.yaml", "agos")
    # The UGV carried its fourteen cameras (RGB and depth per AGOS view) and its collision
    # sensor; every actor of the run is gone at its end.
    ugv_views = {
        e["role_name"].rsplit("/", 1)[-1]
        for e in run.events
        if e["event"] == "spawned" and e["type_id"].startswith("sensor.camera.")
        and e["role_name"].startswith("aerialdojo/ugv/")
    }  # fmt: skip
    assert ugv_views == {"front", *RING_VIEWS}, run.events
    _protocol, suite = load_any_suite(resolve_suite("carla_air_agos_town10hd"))
    episode = next(e for e in suite.episodes if e.episode_id == run.status["scored"][0])
    wanted, spawned, destroyed = _spawned_and_destroyed(run, episode.spawns)
    assert spawned == wanted, (run.events, run.logs)
    assert destroyed == wanted, (run.events, run.stdout, run.logs)
    ours = [e for e in run.events if e["role_name"].startswith("aerialdojo/")]
    alive = {e["id"] for e in ours if e["event"] == "spawned"} - {
        e["id"] for e in ours if e["event"] == "destroyed"
    }
    assert not alive, (alive, run.events)
