"""CityNav end to end through ``aerialdojo eval``: bridge, task manager, evaluator and the
CityNav agent as separate processes on three episodes (one each of val_seen, val_unseen and
test_unseen) at 128 px. The oracle scores SR = 100 % and SPL = 1; the GSM baseline beats the
colour baseline; the report carries NE, SR, OSR and SPL at 20 m by split; the bag holds the
agent's GSM and scores the same from ``evaluate-bag``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from rosbags.highlevel import AnyReader
from test_agos_eval import _aerialdojo

from aerialdojo.bags.typestore import aerialdojo_typestore
from aerialdojo.report.compare import paper_table

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
KEYS = {"ne_m", "sr_20m", "osr_20m", "spl_20m"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The default selection flown by the oracle, the GSM baseline and the colour baseline."""
    tmp_path = tmp_path_factory.mktemp("citynav")
    done = {}
    for policy in ("oracle", "gsm", "colour"):
        config = yaml.safe_load((REPO / "config" / "citynav.yaml").read_text())
        config["citynav_agent"]["ros__parameters"]["policy"] = policy
        config["evaluator"]["ros__parameters"]["record_gsm"] = policy == "gsm"
        path = tmp_path / f"{policy}.yaml"
        path.write_text(yaml.safe_dump(config))
        run = _aerialdojo(
            "eval", "--config", path, "--output", tmp_path / "runs", "--run-id", policy
        )
        assert run.returncode == 0, run.stderr[-3000:]
        assert "SR@20m (%)" in run.stdout
        done[policy] = tmp_path / "runs" / policy
    return done


def _metrics(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


def test_the_oracle_reaches_every_goal(runs: dict[str, Path]) -> None:
    metrics = _metrics(runs["oracle"])
    assert metrics["benchmark"] == "citynav"
    assert {spec["key"] for spec in metrics["metrics"]} == KEYS
    assert {e["split"] for e in metrics["episodes"]} == {"val_seen", "val_unseen", "test_unseen"}
    assert metrics["overall"]["values"]["sr_20m"] == 1.0
    assert metrics["overall"]["values"]["spl_20m"] == pytest.approx(1.0)
    assert all(e["termination"] == "stopped" for e in metrics["episodes"])
    report = (runs["oracle"] / "report.md").read_text()
    assert "## CityNav by split" in report and "| val_unseen (1) |" in report


def test_the_gsm_baseline_beats_the_colour_baseline(runs: dict[str, Path], tmp_path: Path) -> None:
    gsm = _metrics(runs["gsm"])["overall"]["values"]
    colour = _metrics(runs["colour"])["overall"]["values"]
    assert gsm["sr_20m"] > colour["sr_20m"]
    assert gsm["ne_m"] < colour["ne_m"]
    table = paper_table({"GSM": runs["gsm"], "colour": runs["colour"]})
    lines = table.splitlines()
    assert lines[0].startswith("| Method | val_seen NE ↓ | val_seen SR ↑")
    assert lines[2].startswith("| GSM |") and lines[3].startswith("| colour |")


def test_the_bag_holds_the_gsm_and_scores_the_same(runs: dict[str, Path], tmp_path: Path) -> None:
    run_dir = runs["gsm"]
    replay = _aerialdojo("evaluate-bag", run_dir / "bag", "--out", tmp_path / "replay")
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()
    with AnyReader([run_dir / "bag"], default_typestore=aerialdojo_typestore()) as reader:
        connections = [c for c in reader.connections if c.topic == "/uav/gsm/layers"]
        maps = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(connections)]
    assert maps, "no GSM recorded"
    first = maps[0]
    assert first.header.frame_id == "map"
    assert list(first.layers) == [
        "current_view", "explored", "landmarks", "potential_goals", "surroundings"
    ]  # fmt: skip
    layers = np.asarray(first.data).reshape(5, first.info.height, first.info.width)
    assert set(np.unique(layers)) <= {0, 100}
    assert (layers[2] == 100).any(), "the named landmarks are on the map"
    assert (layers[0] == 100).sum() <= (layers[1] == 100).sum()  # the view is explored
