"""Fuzzed bag mapping files (``evaluate-bag --map robot.yaml``), checked by ``load_mapping``
before any bag is opened: a mapping whose every number is finite and every range ordered, or
a ``ConfigError`` naming the file, and nothing written. Seeds: the every-field example of
docs/replay.md and one mapping of each other choice (a tf chain, a still stop, time ranges,
one episode per bag), with values replaced or deleted anywhere, text spliced, or bytes."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml
from fuzz_inputs import files_under, mutated, outcome, spliced
from hypothesis import given
from hypothesis import strategies as st

from aerialdojo.bags.mapping import BagMapping, load_mapping

REPLAY_DOC = Path(__file__).resolve().parents[2] / "docs" / "replay.md"
_DOC_EXAMPLE = re.search(r"```yaml\n(# robot\.yaml.*?)```", REPLAY_DOC.read_text(), re.DOTALL)
assert _DOC_EXAMPLE is not None, "docs/replay.md lost its robot.yaml example"
SEEDS: list[Any] = [
    yaml.safe_load(_DOC_EXAMPLE[1]),
    {
        "pose": {"tf": {"parent": "odom", "child": "base_link"}, "frame": "map"},
        "collision": {"topic": "/scan", "below": 0.3},
        "stop": {"speed_below_mps": 0.1, "for_s": 2.0},
        "episodes": {"ranges": [{"episode_id": "id1", "start_s": 12.0, "end_s": 95.5}]},
    },
    {"pose": {"topic": "/odom", "frame": "start"}, "episodes": {"per_bag": ["id1", "id2"]}},
]


@st.composite
def mapping_bytes(draw: st.DrawFn) -> bytes:
    seed = draw(st.sampled_from(SEEDS))
    kind = draw(st.sampled_from(["fields", "text", "bytes"]))
    if kind == "fields":
        return yaml.safe_dump(draw(mutated(seed)), allow_unicode=True).encode()
    if kind == "text":
        return draw(spliced(yaml.safe_dump(seed), span=80)).encode("utf-8", "surrogatepass")
    return draw(st.binary(max_size=300))


def _numbers(mapping: BagMapping) -> list[float]:
    signals = (mapping.collision, mapping.stop, mapping.actions)
    found = [signal.below for signal in signals if signal is not None and signal.below is not None]
    if mapping.still_stop is not None:
        found += [mapping.still_stop.speed_below_mps, mapping.still_stop.for_s]
    for cut in mapping.episodes.ranges:
        assert cut.start_s < cut.end_s, cut
        found += [cut.start_s, cut.end_s]
    return found


@given(data=mapping_bytes())
def test_a_fuzzed_mapping_loads_checked_or_its_error_names_the_file(
    tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "robot.yaml"
    path.write_bytes(data)
    before = files_under(tmp_path)
    loaded = outcome(lambda: load_mapping(path), str(path), path.name)
    if isinstance(loaded, BagMapping):
        assert loaded.pose.topic is not None or loaded.pose.tf_child is not None
        assert all(math.isfinite(number) for number in _numbers(loaded))
        assert all(isinstance(topic, str) and topic for topic in loaded.topics())
    assert files_under(tmp_path) == before
