"""Fuzzed trajectory logs (metrics JSONL: ``aerialdojo metrics --log``), scored as
``score_trajectory_log`` scores them: scores, or a ``TrajectoryLogError`` / ``MetricsError``
naming the file, and nothing written. Seed: a log of three episodes (stopped, collided,
budget exhausted) and an excluded attempt, as ``write_trajectory_log`` writes it; each case
replaces or deletes values in its records, drops or repeats lines, splices its text, or is
bytes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from conftest import files_under, mutated, outcome, spliced
from hypothesis import given
from hypothesis import strategies as st

from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.metrics.jsonl import write_trajectory_log
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.report.run import RunResult, score_trajectory_log


def _trace(episode_id: str, **fields: Any) -> EpisodeTrace:
    base: dict[str, Any] = {
        "episode_id": episode_id,
        "benchmark": "aerialdojo",
        "scene": "Mall_0",
        "family": "urban",
        "setting": "base",
        "split": "test",
        "positions": ((10.0, 0.0, 10.0), (5.0, 0.0, 10.0), (1.0, 0.0, 10.0)),
        "stop_called": True,
        "collided": False,
        "collision_step": None,
        "steps_used": 3,
        "action_budget": 90,
        "target": (0.0, 0.0, 10.0),
        "reference_length_m": 12.0,
        "termination": "stopped",
    }
    return EpisodeTrace(**{**base, **fields})


def _seed_lines(scratch: Path) -> list[Any]:
    path = scratch / "seed.jsonl"
    write_trajectory_log(
        path,
        [
            _trace("a"),
            _trace(
                "b",
                stop_called=False,
                collided=True,
                collision_step=2,
                termination="collided",
            ),
            _trace("c", stop_called=False, steps_used=90, termination="budget_exhausted"),
        ],
        [ExcludedEpisode(episode_id="d", attempt=2, reason="renderer crashed")],
    )
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
