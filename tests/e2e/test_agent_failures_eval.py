"""What the agent does is the agent's (issue 25): a plug-in policy that only ever returns an
illegal action, run through ``aerialdojo eval``, has every episode scored as its failure
with the termination named, and the run ends at once, not after the agent timeout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

#: MoveForward takes 1, 3 or 5 m (AerialDojo-200K, section 3.1): 2 m is refused every time.
PLUGIN = """
from pathlib import Path

from aerialdojo.actions import Action

REFUSALS = Path(__file__).with_name("refusals.txt")


class AlwaysIllegal:
    def reset(self, goal):
        self.episode = goal.episode_id

    def act(self, observation):
        return Action("MoveForward", 2.0)

    def refused(self, reason):
        with REFUSALS.open("a") as log:
            log.write(f"{self.episode}\\t{reason}\\n")
"""
#: Far longer than the CLI's own timeout below: a run that waited for it would never end.
AGENT_TIMEOUT_S = 3600.0
#: An AGOS UAV that always flies to a waypoint no town has.
AGOS_PLUGIN = """
from pathlib import Path

from aerialdojo.agos.policies import Decision

REFUSALS = Path(__file__).with_name("agos_refusals.txt")


class NowhereUav:
    def reset(self, task):
        self.episode = task.episode_id

    def act(self, observation):
        return Decision("MOVE_TO_UAV_WAYPOINT", "U_nowhere")

    def refused(self, reason):
        with REFUSALS.open("a") as log:
            log.write(f"{self.episode}\\t{reason}\\n")
"""


def _eval(tmp_path: Path, config: Path, run_id: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    started = time.monotonic()
    run = subprocess.run(
        [
            sys.executable, "-m", "aerialdojo.cli", "eval", "--config", config,
            "--episodes", "2", "--output", tmp_path / "runs", "--run-id", run_id,
        ],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip
    print(f"two always-illegal episodes ran in {time.monotonic() - started:.0f} s")
    return run


def _config(source: Path, tmp_path: Path, node: str, policy: str) -> Path:
    config = yaml.safe_load(source.read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=64, image_height=64)
    config["task_manager"]["ros__parameters"].update(agent_timeout_s=AGENT_TIMEOUT_S)
    config[node] = {
        "ros__parameters": {**(config[node] or {}).get("ros__parameters", {}), "policy": policy}
    }
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_an_always_illegal_policy_is_scored_as_failing_at_once(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "illegal_policy.py").write_text(PLUGIN)
    config = _config(
        repo / "config" / "eval.yaml", tmp_path, "uav_agent", "illegal_policy:AlwaysIllegal"
    )
    run = _eval(tmp_path, config, "illegal")
    assert run.returncode == 0, run.stderr[-3000:]  # every episode scored: none excluded
    run_dir = tmp_path / "runs" / "illegal"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["excluded"] == []
    episodes = metrics["episodes"]
    assert [e["termination"] for e in episodes] == ["invalid_action", "invalid_action"]
    assert all(e["steps_used"] == 0 and e["values"]["sr_3m"] == 0.0 for e in episodes)
    status = json.loads((run_dir / "run_status.json").read_text())
    assert status["endings"] == {"invalid_action": 2} and status["complete"] is True
    report = (run_dir / "report.md").read_text()
    assert "the scored ones ended: invalid action 2" in report
    # The policy was told why, and asked again twice (refusals_allowed) per episode.
    refusals = (tmp_path / "refusals.txt").read_text().splitlines()
    assert len(refusals) == 4
    assert all("MoveForward does not take magnitude 2" in line for line in refusals), refusals
    assert "invalid action" in run.stderr  # the progress line names the ending
    # The bag gives the same numbers.
    replay = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "evaluate-bag", run_dir / "bag", "--out",
         tmp_path / "replay"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()


def test_an_agos_agent_asks_again_in_its_turn_and_then_fails(repo: Path, tmp_path: Path) -> None:
    # AGOS-Bench, eq. 5: the reply is parsed into a legal action; a decision the referee
    # refuses goes back to the same agent in the same turn (docs/protocols/agos.md, G18).
    (tmp_path / "nowhere_policy.py").write_text(AGOS_PLUGIN)
    config = _config(
        repo / "config" / "agos.yaml", tmp_path, "agos_uav_agent", "nowhere_policy:NowhereUav"
    )
    run = _eval(tmp_path, config, "agos_illegal")
    assert run.returncode == 0, run.stderr[-3000:]
    metrics = json.loads((tmp_path / "runs" / "agos_illegal" / "metrics.json").read_text())
    assert metrics["excluded"] == []
    assert [e["termination"] for e in metrics["episodes"]] == ["invalid_action"] * 2
    assert all(e["values"]["sr"] == 0.0 for e in metrics["episodes"])
    refusals = (tmp_path / "agos_refusals.txt").read_text().splitlines()
    assert len(refusals) == 4 and all("U_nowhere" in line for line in refusals), refusals
