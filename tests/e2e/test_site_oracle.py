"""A surveyed site's suite runs through the whole graph unchanged: the oracle flies two episodes
of the shipped rehearsal site ``alley_rehearsal`` on the embedded backend (the scene the site
is) and scores every one a success; the run records the suite it ran, and its bag replays to
the same metrics."""

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
