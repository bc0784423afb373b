"""Fuzzed task suites of every benchmark, loaded as the task manager and ``tasks validate``
load them: a suite, or problems naming the file, and nothing written. Each case is one of
the shipped suites (cut to a few episodes, so a case takes milliseconds) with fields
replaced or deleted anywhere, its text cut, or bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fuzz_inputs import files_under, mutated, outcome, spliced
from hypothesis import given
from hypothesis import strategies as st

from aerialdojo.errors import AerialDojoError
from aerialdojo.protocols import load_suite, suite_protocol
from aerialdojo.tasks.suite import resolve_suite

SHIPPED = ("aerialdojo_mini", "agos_mini", "citynav_mini", "alley_rehearsal")


def _seed(name: str) -> dict[str, Any]:
    document = json.loads(resolve_suite(name).read_text())
    kept = document["episodes"][:4]
    ids = {episode["episode_id"] for episode in kept}
    document["episodes"] = kept
    document["default_selection"] = [e for e in document["default_selection"] if e in ids]
    return document


SEEDS = {name: _seed(name) for name in SHIPPED}


@st.composite
def suite_texts(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(SHIPPED))
    kind = draw(st.sampled_from(["fields", "text", "bytes"]))
    if kind == "fields":
        return name, json.dumps(draw(mutated(SEEDS[name]))).encode()
    if kind == "text":
        return name, draw(spliced(json.dumps(SEEDS[name]))).encode()
    return name, draw(st.binary(max_size=400))


@given(case=suite_texts())
def test_a_fuzzed_suite_loads_or_its_problems_name_the_file(
    tmp_path: Path, case: tuple[str, bytes]
) -> None:
    name, data = case
    shipped = resolve_suite(name).parent
    for entry in shipped.iterdir():  # the reference images and maps beside it
        if entry.name != "suite.json" and not (tmp_path / entry.name).exists():
            (tmp_path / entry.name).symlink_to(entry)
    path = tmp_path / "suite.json"
    path.write_bytes(data)
    before = files_under(tmp_path)
    loaded = outcome(lambda: load_suite(path), str(path))
    if not isinstance(loaded, AerialDojoError):
        _protocol, suite = loaded
        assert suite.select("all") is not None
    rules = outcome(lambda: suite_protocol(path).episodes, str(path))
    if rules is not None and not isinstance(rules, AerialDojoError):
        for problem in outcome(lambda: rules.validate_suite(path), str(path)) or []:
            assert str(path) in problem, problem
    assert files_under(tmp_path) == before
