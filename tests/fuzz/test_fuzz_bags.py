"""Fuzzed run bags, read as ``aerialdojo evaluate-bag`` reads them (``assemble_bag``, then
``score_assembled``): a real evaluator-style bag (rosbag2 directory, chunked MCAP with CRCs)
with bits flipped, spans overwritten, its end cut or junk appended, or its metadata.yaml
edited; sometimes with the ``run_status.json`` digests its run recorded beside it.

The property beyond "a result or a ``BagError`` naming the bag": damage never changes a
score. Every episode that is still scored has exactly the trace the undamaged bag gives, and a
bag whose run recorded its digests is refused whole once a byte of it changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from eventstream import checkpointed_bag, event, straight_episode
from fuzz_inputs import files_under, outcome, spliced
from hypothesis import given
from hypothesis import strategies as st

from aerialdojo.bags.integrity import bag_digests
from aerialdojo.bags.replay import assemble_bag
from aerialdojo.errors import AerialDojoError, BagError
from aerialdojo.events import EventKind
from aerialdojo.report.run import RunResult, score_assembled

EPISODES = [
    event(EventKind.RUN_STARTED, episode_json='{"selection": ["a", "b", "c"]}'),
    *straight_episode("a", EventKind.STOPPED, [5, 9]),
    *straight_episode("b", EventKind.COLLIDED, [3, 4, 6]),
    *straight_episode("c", EventKind.STOPPED, [2, 7, 11, 12]),
    event(EventKind.RUN_FINISHED, message="3 of 3 episodes ran"),
]


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    """The undamaged bag's directory and its scores."""
    mcap_file = checkpointed_bag(tmp_path_factory.mktemp("seed") / "bag", EPISODES)
    replayed = assemble_bag(mcap_file.parent)
    scored = score_assembled(replayed.assembler, None, replayed.warnings)
    assert [trace.episode_id for trace in scored.traces] == ["a", "b", "c"]
    return mcap_file.parent, scored


@st.composite
def damage(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to three of: a bit flipped, a span overwritten, its end cut, junk
    appended."""
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "overwrite", "cut", "append"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "overwrite":
            span = draw(st.binary(min_size=1, max_size=24))
            data[at : at + len(span)] = span
        elif kind == "cut":
            del data[at:]
        else:
            data += draw(st.binary(min_size=1, max_size=64))
    return bytes(data)


@st.composite
def damaged_bags(draw: st.DrawFn, mcap: bytes, metadata: str) -> tuple[bytes, str]:
    if draw(st.integers(0, 9)) == 0:  # one case in ten: the metadata.yaml
        return mcap, draw(spliced(metadata, span=60))
    return draw(damage(mcap)), metadata


@given(case=st.data(), with_digests=st.booleans())
def test_a_damaged_bag_is_refused_or_scores_only_what_verifies(
    tmp_path: Path, seed: tuple[Path, RunResult], case: st.DataObject, with_digests: bool
) -> None:
    seed_bag, seed_scores = seed
    mcap_name = next(seed_bag.glob("*.mcap")).name
    mcap = (seed_bag / mcap_name).read_bytes()
    metadata = (seed_bag / "metadata.yaml").read_text()
    damaged_mcap, damaged_metadata = case.draw(damaged_bags(mcap, metadata))
    run_dir = tmp_path / "run"
    bag = run_dir / "bag"
    shutil.rmtree(run_dir, ignore_errors=True)  # hypothesis reuses tmp_path
    bag.mkdir(parents=True)
    (bag / mcap_name).write_bytes(damaged_mcap)
    (bag / "metadata.yaml").write_text(damaged_metadata)
    if with_digests:
        digests = bag_digests(seed_bag)
        (run_dir / "run_status.json").write_text(json.dumps({"complete": True, "bag": digests}))
    before = files_under(tmp_path)

    def scored() -> RunResult:
        replayed = assemble_bag(bag)
        return score_assembled(replayed.assembler, None, replayed.warnings)

    result = outcome(scored, str(bag), mcap_name)
    changed = damaged_mcap != mcap or damaged_metadata != metadata
    if with_digests and damaged_mcap != mcap:
        assert isinstance(result, BagError), "a bag that changed since its run was scored"
    if not isinstance(result, AerialDojoError):
        originals = {trace.episode_id: trace for trace in seed_scores.traces}
        for trace in result.traces:
            assert trace == originals[trace.episode_id], f"damage changed {trace.episode_id}"
        if changed and len(result.traces) < len(originals):
            assert result.source_notes or not result.complete, "an episode lost in silence"
    assert files_under(tmp_path) == before  # reading a bag writes nothing
