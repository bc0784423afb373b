"""The oracle proves the harness end to end: replaying each reference through the whole graph
(bridge, task manager, agent node, evaluator, bag) must score every episode of the shipped
suite a success with SPL 1 and no collision, live and from the bag, and the report must say
that the run read ground truth. A surveyed site's suite runs through the same graph
unchanged: the rehearsal site ``alley_rehearsal`` on the embedded scene it is."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from aerialdojo.tasks.suite import resolve_suite


def _aerialdojo(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_oracle_scores_every_shipped_episode_and_is_marked_privileged(
    repo: Path, tmp_path: Path
) -> None:
    run = _aerialdojo(
        "eval", "--config", repo / "config" / "oracle.yaml", "--output", tmp_path, "--run-id", "o"
    )
    assert run.returncode == 0, run.stderr[-3000:]
    run_dir = tmp_path / "o"
    metrics = json.loads((run_dir / "metrics.json").read_text())

    assert len(metrics["episodes"]) == 6  # aerialdojo_mini's default selection
    overall = metrics["overall"]["values"]
    assert overall["sr_3m"] == 1.0 and overall["osr_3m"] == 1.0 and overall["cr"] == 0.0
    assert overall["spl_3m"] == pytest.approx(1.0, abs=1e-12)
    for episode in metrics["episodes"]:
        assert episode["termination"] == "stopped"
        assert episode["values"]["spl_3m"] == pytest.approx(1.0, abs=1e-12)
        assert episode["final_distance_m"] <= 3.0

    assert metrics["run"]["agents"] == [
        {
            "agent": "uav",
            "policy": "oracle",
            "privileged": True,
            "description": "reference actions of aerialdojo_mini",
        }
    ]
    report = (run_dir / "report.md").read_text()
    assert "> **Note**: PRIVILEGED: the uav policy oracle read ground truth" in report
    assert "**Privileged run**" in report
    assert "PRIVILEGED" in run.stdout

    replay = _aerialdojo("evaluate-bag", run_dir / "bag", "--out", tmp_path / "replay")
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()


def test_the_oracle_flies_the_rehearsal_site_on_the_embedded_backend(
    repo: Path, tmp_path: Path
) -> None:
    run = _aerialdojo(
        "eval",
        "--config",
        repo / "config" / "oracle.yaml",
        "task_manager.suite=alley_rehearsal",
        "--episodes",
        2,
        "--output",
        tmp_path,
        "--run-id",
        "site",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    run_dir = tmp_path / "site"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert [e["episode_id"] for e in metrics["episodes"]] == [
        "Alley_0-base-0000-sem",
        "Alley_0-base-0001-img",
    ]
    overall = metrics["overall"]["values"]
    assert overall["sr_3m"] == 1.0 and overall["cr"] == 0.0
    assert overall["spl_3m"] == pytest.approx(1.0, abs=1e-12)
    suite = resolve_suite("alley_rehearsal")
    assert metrics["run"]["suites"] == [
        {"name": "alley_rehearsal", "sha256": hashlib.sha256(suite.read_bytes()).hexdigest()}
    ]
    replay = _aerialdojo("evaluate-bag", run_dir / "bag", "--out", tmp_path / "replay")
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()
