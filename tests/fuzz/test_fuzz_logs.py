"""Fuzzed trajectory logs (metrics JSONL: ``aerialdojo metrics --log``), scored as
``score_trajectory_log`` scores them: scores, or a ``TrajectoryLogError`` / ``MetricsError``
naming the file, and nothing written. Seed: a log of three episodes folded from events as the
evaluator folds them (stopped, collided, budget exhausted) and an excluded attempt; each case
replaces or deletes values in its records, drops or repeats lines, splices its text, or is
bytes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from eventstream import straight_episode
from fuzz_inputs import files_under, mutated, outcome, spliced
from hypothesis import given
from hypothesis import strategies as st

from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.metrics.jsonl import write_trajectory_log
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import RunResult, score_trajectory_log


def _seed_lines(scratch: Path) -> list[Any]:
    """The records of a log written from three episodes as the evaluator folds them
    (stopped, collided, budget exhausted) and an excluded attempt."""
    assembler = EpisodeAssembler(trace_builder)
    for episode in (
        straight_episode("a", EventKind.STOPPED, [5, 9]),
        straight_episode("b", EventKind.COLLIDED, [3, 4]),
        straight_episode("c", EventKind.BUDGET_EXHAUSTED, [2, 7, 11]),
    ):
        for e in episode:
            assembler.add(e)
    assert len(assembler.traces) == 3
    path = scratch / "seed.jsonl"
    excluded = [ExcludedEpisode(episode_id="d", attempt=2, reason="renderer crashed")]
    write_trajectory_log(path, assembler.traces, excluded)
    return [json.loads(line) for line in path.read_text().splitlines()]


@st.composite
def log_bytes(draw: st.DrawFn, records: list[Any]) -> bytes:
    kind = draw(st.sampled_from(["records", "lines", "text", "bytes"]))
    if kind == "records":
        changed = draw(mutated(records))  # the list itself may be replaced: one line then
        lines = changed if isinstance(changed, list) else [changed]
        return "".join(json.dumps(r) + "\n" for r in lines).encode()
    if kind == "lines":
        lines = [json.dumps(r) for r in records]
        picked = draw(st.lists(st.sampled_from(lines), max_size=8))
        return "".join(line + "\n" for line in picked).encode()
    if kind == "text":
        text = "".join(json.dumps(r) + "\n" for r in records)
        return draw(spliced(text)).encode("utf-8", "surrogatepass")
    return draw(st.binary(max_size=400))


@given(case=st.data())
def test_a_fuzzed_trajectory_log_scores_or_its_error_names_the_file(
    tmp_path: Path, case: st.DataObject
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(case.draw(log_bytes(_seed_lines(tmp_path))))
    before = files_under(tmp_path)
    scored = outcome(lambda: score_trajectory_log(path), str(path))
    if isinstance(scored, RunResult):
        assert scored.metrics is not None
        for name, value in scored.metrics.overall.values.items():
            assert value is None or math.isfinite(value), f"{name} = {value}"
    assert files_under(tmp_path) == before
