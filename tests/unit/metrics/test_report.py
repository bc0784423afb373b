"""Run reports written to disk: metrics.json, report.md, episodes.csv; run comparison."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import pytest
from written_runs import write_report

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import protocol
from aerialdojo.protocols.scoring import score_run
from aerialdojo.report.compare import compare, comparison_table
from aerialdojo.report.markdown import metrics_json_text
from aerialdojo.report.run import RunResult, write_run

Factory = Callable[..., EpisodeTrace]


def _traces(make_trace: Factory) -> list[EpisodeTrace]:
    return [
        make_trace(episode_id="u1"),
        make_trace(
            episode_id="u2",
            positions=((10, 0, 10), (7, 0, 10)),
            stop_called=False,
            termination="budget_exhausted",
        ),
        make_trace(episode_id="n1", scene="Mountain_0", family="natural", setting="standard"),
    ]


def test_reports_are_written_and_agree(make_trace: Factory, tmp_path: Path) -> None:
    excluded = [ExcludedEpisode(episode_id="u3", attempt=1, reason="simulator timed out")]
    run = score_run(_traces(make_trace), excluded=excluded)
    write_report(run, tmp_path)

    data = json.loads((tmp_path / "metrics.json").read_text())
    assert data["benchmark"] == "aerialdojo"
    # Base: urban Mall_0 (1 + 0) / 2 = 0.5; Standard: natural 1. AerialDojo-200K reports
    # each setting apart (issue 25): the run-wide mean, (0.5 + 1) / 2 = 0.75 before (and
    # 2/3 task-weighted), pools Base and Standard and is withheld.
    assert data["headline"] == "by_setting"
    assert data["by_setting"]["base"]["values"]["sr_3m"] == 0.5
    assert data["by_setting"]["standard"]["values"]["sr_3m"] == 1.0
    assert data["task_weighted_by_setting"]["base"]["values"]["sr_3m"] == 0.5
    assert data["overall"]["values"]["sr_3m"] is None
    assert data["overall"]["episodes"] == 3 and data["overall"]["support"]["sr_3m"] == 0
    assert data["task_weighted"]["values"]["sr_3m"] is None
    # A family within one setting pools nothing and is kept.
    assert data["by_family"]["urban"]["values"]["sr_3m"] == 0.5
    assert data["excluded"] == [{"attempt": 1, "episode_id": "u3", "reason": "simulator timed out"}]
    assert [episode["episode_id"] for episode in data["episodes"]] == ["n1", "u1", "u2"]

    report = (tmp_path / "report.md").read_text()
    assert "| setting: base | 2 | 50.00 |" in report
    assert "| setting: standard (task-weighted) | 1 | 100.00 |" in report
    assert "| Overall | 3 |" not in report  # each setting table keeps its own "Overall"
    assert "the headline is per setting" in report and "no figure pools settings" in report
    assert "| u3 | 1 | infrastructure | simulator timed out |" in report
    assert "### Setting: standard" in report

    with (tmp_path / "episodes.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert [row["episode_id"] for row in rows] == ["n1", "u1", "u2"]
    assert rows[2]["termination"] == "budget_exhausted"
    assert float(rows[2]["dts_m"]) == 7.0


def test_metrics_json_is_byte_stable(make_trace: Factory) -> None:
    traces = _traces(make_trace)
    text = metrics_json_text(score_run(traces))
    assert metrics_json_text(score_run(traces[::-1])) == text
    assert "NaN" not in text
    keys = list(json.loads(text))
    assert keys == sorted(keys)


def test_compare_reports_signed_deltas(make_trace: Factory, tmp_path: Path) -> None:
    traces = _traces(make_trace)
    write_report(score_run(traces), tmp_path / "a")
    improved = [*traces[:1], make_trace(episode_id="u2"), traces[2]]
    write_report(score_run(improved), tmp_path / "b")

    rows = {(row.scope, row.key): row for row in compare(tmp_path / "a", tmp_path / "b")}
    base_sr = rows[("setting: base", "sr_3m")]
    assert (base_sr.value_a, base_sr.value_b) == (50.0, 100.0)
    assert (base_sr.delta, base_sr.better, base_sr.unit) == (50.0, "b", "%")
    # The run-wide scope pools Base and Standard: withheld in both runs (issue 25).
    assert (rows[("overall", "sr_3m")].value_a, rows[("overall", "sr_3m")].delta) == (None, None)
    dts = rows[("family: urban", "dts_m")]
    assert (dts.delta, dts.better) == (-3.0, "b")  # 7 m -> 1 m on u2; lower is better
    assert rows[("setting: standard", "sr_3m")].better == ""
    table = comparison_table(list(rows.values()), "old", "new")
    assert "| setting: base | SR@3m (%) | 50.00 | 100.00 | +50.00 | new |" in table


def test_compare_refuses_missing_and_foreign_runs(make_trace: Factory, tmp_path: Path) -> None:
    write_report(score_run(_traces(make_trace)), tmp_path / "a")
    with pytest.raises(MetricsError, match="no metrics file"):
        compare(tmp_path / "a", tmp_path / "missing")
    citynav = make_trace(benchmark="citynav")
    write_report(score_run([citynav]), tmp_path / "c")
    with pytest.raises(MetricsError, match="aerialdojo run"):
        compare(tmp_path / "a", tmp_path / "c")


def test_a_run_over_id_and_ood_reports_both_groups_and_goal_types(
    make_trace: Factory, tmp_path: Path
) -> None:
    # AerialDojo-200K evaluates ID test and OOD test scenes apart (section 3.3, appendix C)
    # and SemanticOGS apart from ImageOGS; split=test selects both families of scenes.
    def conditions(distribution: str, goal: str) -> dict[str, str]:
        return {"distribution": distribution, "goal": goal, "observation": "front"}

    failed = {
        "positions": ((10, 0, 10), (7, 0, 10)),
        "stop_called": False,
        "termination": "budget_exhausted",
    }
    traces = [
        make_trace(episode_id="id-sem", conditions=conditions("id", "semantic")),
        make_trace(episode_id="id-img", conditions=conditions("id", "image"), **failed),
        make_trace(
            episode_id="ood-sem", scene="Mall_1", conditions=conditions("ood", "semantic"), **failed
        ),
        make_trace(episode_id="ood-img", scene="Mall_1", conditions=conditions("ood", "image")),
    ]
    run = score_run(traces)
    assert run.group_keys == ("distribution", "goal")
    by_distribution = run.by_condition["distribution"]
    assert {name: group.values["sr_3m"] for name, group in by_distribution.items()} == {
        "id": 0.5,
        "ood": 0.5,
    }
    assert [dict(group.conditions) for group in run.groups] == [
        {"distribution": "id", "goal": "image"},
        {"distribution": "id", "goal": "semantic"},
        {"distribution": "ood", "goal": "image"},
        {"distribution": "ood", "goal": "semantic"},
    ]
    assert [group.overall.values["sr_3m"] for group in run.groups] == [0.0, 1.0, 1.0, 0.0]
    write_report(run, tmp_path)

    data = json.loads((tmp_path / "metrics.json").read_text())
    assert set(data["by_condition"]["distribution"]) == {"id", "ood"}
    assert data["groups"][3]["by_setting"]["base"]["values"]["sr_3m"] == 0.0
    assert data["episodes"][0]["conditions"]["observation"] == "front"
    report = (tmp_path / "report.md").read_text()
    assert "| distribution: ID | 2 | 50.00 |" in report
    assert "| distribution: OOD | 2 | 50.00 |" in report
    assert "| goal: SemanticOGS | 2 |" in report and "| goal: ImageOGS | 2 |" in report
    assert "## By split family and goal type, each by setting and family" in report
    for title in ("ID · SemanticOGS", "ID · ImageOGS", "OOD · SemanticOGS", "OOD · ImageOGS"):
        assert f"### {title}\n" in report
    conditions_line = "- Conditions: distribution: ID, OOD; goal: ImageOGS, SemanticOGS; "
    assert conditions_line + "observation: front view" in report
    with (tmp_path / "episodes.csv").open() as stream:
        rows = {row["episode_id"]: row for row in csv.DictReader(stream)}
    assert rows["ood-img"]["distribution"] == "ood" and rows["ood-img"]["goal"] == "image"

    # Comparisons see the groups too.
    worse = make_trace(
        episode_id="ood-img", scene="Mall_1", conditions=conditions("ood", "image"), **failed
    )
    write_report(score_run([*traces[:3], worse]), tmp_path / "b")
    rows_b = {(row.scope, row.key): row for row in compare(tmp_path, tmp_path / "b")}
    assert rows_b[("distribution: ood", "sr_3m")].delta == -50.0


def test_writing_a_run_never_looks_its_protocol_up_again(
    make_trace: Factory, tmp_path: Path
) -> None:
    # The scored run carries its protocol (RunResult.protocol) through every report helper;
    # issue 24 counted 6 to 13 lookups by name for one write_run.
    traces = tuple(_traces(make_trace))
    result = RunResult(
        metrics=score_run(traces),
        finished=True,
        excluded=(),
        traces=traces,
        protocol=protocol("aerialdojo"),
    )
    lookup = protocol.__code__
    callers: list[str] = []

    def count(frame: FrameType, event: str, _: object) -> None:
        if event == "call" and frame.f_code is lookup and frame.f_back is not None:
            callers.append(frame.f_back.f_globals["__name__"])

    sys.setprofile(count)
    try:
        write_run(tmp_path, result)
    finally:
        sys.setprofile(None)
    assert callers == []
    assert (tmp_path / "report.md").read_text().startswith("# Run report: AerialDojo-200K")
    with pytest.raises(MetricsError, match="carries the protocol"):
        RunResult(metrics=result.metrics, finished=True, excluded=(), traces=traces)
