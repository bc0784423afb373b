"""AGOS end to end through ``aerialdojo eval``: the bridge, task manager, evaluator and the
UAV and UGV agents as separate processes, one Easy, one Mid and one Hard episode; the AGOS
metrics in the report, the handoff messages in the bag, the bag's metrics equal to the live
ones; and the Baseline and the no_rgpp ablation, laid out with the full run as in
AGOS-Bench, Tables 3 and 4."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rosbags.highlevel import AnyReader

from aerialdojo.report.compare import paper_table

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
AGOS_METRICS = {"sr", "osr", "spl", "ne_m", "ase", "acg", "gva", "ds", "ds_uav", "ds_ugv", "cerr_m"}


def _config(repo: Path, tmp_path: Path, condition: str) -> Path:
    config = yaml.safe_load((repo / "config" / "agos.yaml").read_text())
    settings = {"mode": "baseline"} if condition == "baseline" else {"ablation": condition}
    config["task_manager"]["ros__parameters"].update(settings)
    # A ring view too: the UGV publishes it only right after STOP_OBSERVE.
    config["evaluator"]["ros__parameters"]["record_image_views"].append("ugv/ring_back")
    path = tmp_path / f"agos_{condition}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _aerialdojo(*args: object, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _run(repo: Path, tmp_path: Path, condition: str, episodes: int) -> Path:
    run = _aerialdojo("eval", "--config", _config(repo, tmp_path, condition), "--episodes",
                      episodes, "--output", tmp_path / "runs", "--run-id", condition)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ASE (%)" in run.stdout and "GVA-Support" in run.stdout
    return tmp_path / "runs" / condition


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first three episodes of agos_mini (one per setting) with every tool."""
    return _run(REPO, tmp_path_factory.mktemp("agos"), "full", 3)


def test_easy_mid_and_hard_episodes_run_with_both_agents(full_run: Path, tmp_path: Path) -> None:
    run_dir = full_run
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["benchmark"] == "agos"
    assert {m["key"] for m in metrics["metrics"]} >= AGOS_METRICS
    assert {e["setting"] for e in metrics["episodes"]} == {"easy", "mid", "hard"}
    assert set(metrics["by_setting"]) == {"easy", "mid", "hard"}
    overall = metrics["overall"]
    report = (run_dir / "report.md").read_text()
    assert "## AGOS by mode, ablation and difficulty" in report
    assert "| this run | AGOS-Agent | full | Easy (1) |" in report
    assert "| this run | AGOS-Agent |" in report.split("Table 3 layout")[1]
    assert {e["conditions"]["mode"] for e in metrics["episodes"]} == {"agent"}
    assert set(metrics["by_condition"]["ablation"]) == {"full"}
    supported = [e for e in metrics["episodes"] if e["values"]["gva"] is not None]
    assert overall["support"]["gva"] == len(supported)  # GVA-Support
    assert 0.0 < overall["values"]["ds"] <= 80.0
    for node in ("agos_uav_agent", "ugv_agent", "task_manager", "sim_bridge", "evaluator"):
        assert (run_dir / "logs" / f"{node}.log").stat().st_size > 0
    # Each recorded view is one its agent publishes, and is owed only after the actions
    # that bring it (the ring after STOP_OBSERVE): nothing is waited for in vain or
    # counted lost.
    assert "no publisher of" not in (run_dir / "logs" / "evaluator.log").read_text()
    assert "the recorder lost" not in (run_dir / "run_notes.md").read_text()
    for episode in metrics["episodes"]:
        assert episode["values"]["ds"] == episode["values"]["ds_uav"] + episode["values"]["ds_ugv"]

    replay = _aerialdojo("evaluate-bag", run_dir / "bag", "--out", tmp_path / "replay")
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()

    with AnyReader([run_dir / "bag"]) as reader:
        topics = {c.topic for c in reader.connections}
        messages = [
            reader.deserialize(raw, connection.msgtype)
            for connection, _, raw in reader.messages(
                connections=[c for c in reader.connections if c.topic == "/agos/messages"]
            )
        ]
        candidates = [
            reader.deserialize(raw, connection.msgtype)
            for connection, _, raw in reader.messages(
                connections=[c for c in reader.connections if c.topic == "/agos/candidates"]
            )
        ]
    assert {"/uav/odom", "/ugv/odom", "/uav/camera/down/image/compressed"} <= topics
    kinds = {(m.sender, m.kind) for m in messages}
    assert {("uav", 0), ("ugv", 0)} <= kinds  # the initial exchange of positions
    if candidates:  # a candidate brings the inspection request, arrival and confirmation
        assert {("uav", 1), ("ugv", 2), ("ugv", 3)} <= kinds
        request = next(m for m in messages if m.kind == 1)
        assert request.candidate_id == candidates[0].candidate_id and "(" in request.text


def test_a_rerun_decides_the_same_and_modes_and_ablations_report_like_tables_3_and_4(
    repo: Path, tmp_path: Path, full_run: Path
) -> None:
    # The decision clock decides whose turn it is, so a second run of an episode makes the
    # same decisions.
    full = _run(repo, tmp_path, "full", 1)
    first = json.loads((full_run / "metrics.json").read_text())["episodes"]
    again = json.loads((full / "metrics.json").read_text())["episodes"]
    easy = next(e for e in first if e["setting"] == "easy")
    assert again == [easy]
    ablated = _run(repo, tmp_path, "no_rgpp", 1)
    baseline = _run(repo, tmp_path, "baseline", 1)
    (episode,) = json.loads((baseline / "metrics.json").read_text())["episodes"]
    assert episode["conditions"] == {"ablation": "none", "mode": "baseline"}
    assert episode["values"]["acg"] is None  # undefined without candidates
    with AnyReader([baseline / "bag"]) as reader:
        facts = [
            json.loads(reader.deserialize(raw, connection.msgtype).episode_json or "{}")
            for connection, _, raw in reader.messages(
                connections=[c for c in reader.connections if c.topic.endswith("episode_events")]
            )
        ]
    actions = {f["action"] for f in facts if "action" in f}
    assert not actions & {"ANNOTATE_CANDIDATE", "GO_TO_CANDIDATE", "NO_RELIABLE_CANDIDATE"}

    table = paper_table({"baseline": baseline, "full": full, "no_rgpp": ablated})
    lines = table.splitlines()
    assert lines[2].startswith("| Condition | Method | Easy SR ↑ | Easy OSR ↑ | Easy SPL ↑")
    assert lines[4].startswith("| baseline | Baseline | ")
    assert lines[5].startswith("| full | AGOS-Agent | ")
    assert lines[6].startswith("| no_rgpp | AGOS-Agent (no_rgpp) | ")
    table4 = lines[
        lines.index("AGOS-Bench, Table 4 layout (mode and ablation by difficulty):") + 2 :
    ]
    assert table4[0].startswith("| Condition | Mode | Ablation | Diff. | SR ↑ | OSR ↑ | SPL ↑")
    assert table4[2].startswith("| baseline | Baseline | – | Easy (1) |")
    assert table4[3].startswith("|  |  |  | Total (1) |")
    assert table4[4].startswith("| full | AGOS-Agent | full | Easy (1) |")
    assert table4[6].startswith("| no_rgpp | AGOS-Agent | no_rgpp | Easy (1) |")
