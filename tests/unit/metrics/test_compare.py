"""``aerialdojo compare`` tells where two runs are not alike: different episodes, groups only
one run has, different success radii, a file given for a run directory; and per-episode
deltas of path, final distance and success."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from written_runs import write_report

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols.scoring import score_run
from aerialdojo.report.compare import compare_runs, compare_table

Factory = Callable[..., EpisodeTrace]


def test_different_episode_sets_and_counts_are_warned(make_trace: Factory, tmp_path: Path) -> None:
    write_report(score_run([make_trace(episode_id="e1")]), tmp_path / "a")
    write_report(
        score_run([make_trace(episode_id="e2"), make_trace(episode_id="e3")]), tmp_path / "b"
    )
    warnings = compare_runs(tmp_path / "a", tmp_path / "b").warnings
    assert "the runs scored different numbers of episodes: A 1, B 2" in warnings[0]
    assert "1 episode(s) only in A: e1" in warnings
    assert "2 episode(s) only in B: e2, e3" in warnings
    assert "WARNING: the runs scored different numbers" in compare_table(
        tmp_path / "a", tmp_path / "b"
    )


def test_a_family_only_one_run_has_is_reported_not_dropped(
    make_trace: Factory, tmp_path: Path
) -> None:
    urban = make_trace(episode_id="u1")
    natural = make_trace(episode_id="n1", scene="Mountain_0", family="natural")
    write_report(score_run([urban, natural]), tmp_path / "a")
    write_report(score_run([urban]), tmp_path / "b")
    comparison = compare_runs(tmp_path / "a", tmp_path / "b")
    assert "family: natural only in A (1 episodes): B shows N/A" in comparison.warnings
    row = next(r for r in comparison.rows if (r.scope, r.key) == ("family: natural", "sr_3m"))
    assert (row.value_a, row.value_b, row.delta) == (100.0, None, None)
    # And the other way round: a family only B has.
    comparison = compare_runs(tmp_path / "b", tmp_path / "a")
    assert "family: natural only in B (1 episodes): A shows N/A" in comparison.warnings
    assert any(r.scope == "family: natural" and r.value_b == 100.0 for r in comparison.rows)


def test_different_success_radii_are_warned(make_trace: Factory, tmp_path: Path) -> None:
    traces = [make_trace(episode_id="e1")]
    write_report(score_run(traces, [3.0]), tmp_path / "a")
    write_report(score_run(traces, [10.0]), tmp_path / "b")
    comparison = compare_runs(tmp_path / "a", tmp_path / "b")
    assert (
        "the runs were scored at different success radii: A 3 m, B 10 m; only metrics at a "
        "radius both share are compared" in comparison.warnings
    )
    assert not any(row.key.startswith("sr_") for row in comparison.rows)
    write_report(score_run(traces, [3.0]), tmp_path / "c")
    assert compare_runs(tmp_path / "a", tmp_path / "c").warnings == []


def test_a_metrics_file_for_a_run_directory_is_a_clear_error(
    make_trace: Factory, tmp_path: Path
) -> None:
    write_report(score_run([make_trace()]), tmp_path / "a")
    with pytest.raises(MetricsError, match=r"metrics.json is a file; compare takes run dir"):
        compare_runs(tmp_path / "a" / "metrics.json", tmp_path / "a")


def test_per_episode_deltas_of_path_final_distance_and_success(
    make_trace: Factory, tmp_path: Path
) -> None:
    # Target at (0, 0, 10). A: 10 m -> 1 m, stops (path 9, final 1, success at 3 m).
    # B: 10 m -> 6 m -> 4 m, stops (path 6, final 4, no success).
    write_report(score_run([make_trace(episode_id="e1")]), tmp_path / "sim")
    robot = make_trace(episode_id="e1", positions=((10, 0, 10), (6, 0, 10), (4, 0, 10)))
    write_report(score_run([robot]), tmp_path / "real")
    (task,) = compare_runs(tmp_path / "sim", tmp_path / "real").tasks
    assert (task.path_a, task.path_b) == (9.0, 6.0)
    assert (task.final_a, task.final_b) == (1.0, 4.0)
    assert (task.success_a, task.success_b) == (True, False)
    table = compare_table(tmp_path / "sim", tmp_path / "real")
    assert (
        "| e1 | 9.00 | 6.00 | -3.00 | 1.00 | 4.00 | +3.00 | yes | no | stopped / stopped |" in table
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"[1, 2]", "expected a metrics object, got a JSON list"),
        (b"\xff\xfe{}", "not a text file: byte 0 is not UTF-8"),
        (b'{"format": "aerialdojo-metrics/1"}', "benchmark: missing, or not a JSON str"),
        (b"[" * 100_000, "nested 100000 levels deep"),
    ],
)
def test_a_metrics_file_compare_cannot_read_is_named_not_a_crash(
    make_trace: Factory, tmp_path: Path, content: bytes, reason: str
) -> None:
    # Issue 29, item 11: a metrics.json that was a JSON list, or not UTF-8, crashed compare.
    write_report(score_run([make_trace(episode_id="e1")]), tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "metrics.json").write_bytes(content)
    with pytest.raises(MetricsError) as refused:
        compare_runs(tmp_path / "a", tmp_path / "b")
    assert str(refused.value).startswith(f"{tmp_path / 'b' / 'metrics.json'}: ")
    assert reason in str(refused.value)
