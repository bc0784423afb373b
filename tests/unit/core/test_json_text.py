"""The fast indented JSON writer writes what ``json.dumps`` writes, and refuses what it refuses."""

from __future__ import annotations

import enum
import json
import math
import random
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

from aerialdojo.json_text import dumps_sorted_indented, list_item_texts, list_parts


def _stdlib(document: Any) -> str:
    return json.dumps(document, sort_keys=True, indent=2, allow_nan=False)


class _Kind(enum.IntEnum):
    STEP = 1


def _random_document(rng: random.Random, depth: int = 0) -> Any:
    scalars = [
        lambda: rng.choice(["", "a", 'é ☃ "q" \\ \n\t', "x" * rng.randint(0, 9)]),
        lambda: rng.randint(-(10**20), 10**20),
        lambda: rng.uniform(-1e6, 1e6),
        lambda: rng.choice([0.1, 1e-300, -0.0, 5e-324, 1e300, 3.0]),
        lambda: rng.choice([True, False, None]),
    ]
    if depth > 3 or rng.random() < 0.4:
        return rng.choice(scalars)()
    if rng.random() < 0.5:
        return [_random_document(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        f"k{rng.randint(0, 30)}é": _random_document(rng, depth + 1)
        for _ in range(rng.randint(0, 5))
    }


def test_it_writes_the_standard_librarys_bytes() -> None:
    rng = random.Random(0)
    for _ in range(500):
        document = _random_document(rng)
        assert dumps_sorted_indented(document) == _stdlib(document)


@pytest.mark.parametrize(
    "document",
    [
        {"t": (1, 2.5, "x")},
        OrderedDict([("b", 1), ("a", [])]),
        {"enum": _Kind.STEP, "numpy": np.float64(0.25), "nested": {"": {}}},
        [],
        {},
        "plain",
    ],
)
def test_subclasses_and_empty_containers_match(document: Any) -> None:
    assert dumps_sorted_indented(document) == _stdlib(document)


@pytest.mark.parametrize(
    "document", [{"x": math.nan}, [math.inf], {"x": object()}, {1: "a", "b": 2}]
)
def test_it_refuses_what_json_dumps_refuses(document: Any) -> None:
    with pytest.raises(Exception) as ours:
        dumps_sorted_indented(document)
    with pytest.raises(Exception) as theirs:
        _stdlib(document)
    assert type(ours.value) is type(theirs.value)


def test_integer_keys_are_left_to_json_dumps() -> None:
    assert dumps_sorted_indented({2: "b", 1: "a"}) == _stdlib({2: "b", 1: "a"})


def test_runs_of_scalars_written_together_keep_their_places() -> None:
    # Strings that look like the joins between runs (braces, commas, the control
    # character that stands for a line break) at every indentation.
    tricky = ["}", "},{", "},\x00{", "\x00", "a,\x00b", "{}", '"}', "\\"]
    rng = random.Random(1)
    episodes = [
        {
            "id": rng.choice(tricky) + str(index),
            "distance": rng.uniform(0.0, 50.0),
            "conditions": {} if index % 2 else {"goal": rng.choice(tricky)},
            "values": {"sr": float(index % 2), "note": rng.choice(tricky), "n": index},
            "zlast": [rng.choice(tricky), {"deep": {"x": rng.choice(tricky), "y": None}}],
        }
        for index in range(200)
    ]
    document = {"episodes": episodes, "b": "}", "a": {"only": {}}, "c": [{"k": 1}, {}]}
    assert dumps_sorted_indented(document) == _stdlib(document)


def _record(rng: random.Random, keys: list[str]) -> dict[str, Any]:
    return {key: _random_document(rng, 2) for key in keys}


def test_lists_of_records_written_by_columns_match() -> None:
    # Records of one shape, of several shapes (and the same keys in another order), with
    # keys holding % (the columns are put together by a %-format) and nested records.
    rng = random.Random(2)
    shapes = [["b%s", "a", "c"], ["c", "a", "b%s"], ["a"], [], ["%d", "é", "z"]]
    for _ in range(300):
        records = [
            {
                **_record(rng, rng.choice(shapes)),
                "values": _record(rng, rng.choice(shapes)),
                "list": [_record(rng, rng.choice(shapes)) for _ in range(rng.randint(0, 3))],
            }
            for _ in range(rng.randint(1, 12))
        ]
        document = {"episodes": records, "mixed": [*records[:2], 1, [records[0]]]}
        assert dumps_sorted_indented(document) == _stdlib(document)


@pytest.mark.parametrize(
    "records",
    [
        [{"k": _Kind.STEP}, {"k": 2}],
        [{"k": np.float64(0.5)}, {"k": 0.5}],
        [{"k": math.nan}, {"k": 1.0}],
        [{"k": 1}, {2: 1}],
        [{"k": OrderedDict([("b", 1), ("a", 2)])}, {"k": {"a": 1, "b": 2}}],
    ],
)
def test_columns_of_odd_values_match_or_refuse_as_json_dumps(records: list[Any]) -> None:
    try:
        expected: str | type = _stdlib(records)
    except (TypeError, ValueError) as error:
        expected = type(error)
    if isinstance(expected, str):
        assert dumps_sorted_indented(records) == expected
    else:
        with pytest.raises(expected):
            dumps_sorted_indented(records)


def test_lists_written_in_parts_and_entries_written_already_match() -> None:
    rng = random.Random(3)
    for _ in range(200):
        items = [_random_document(rng) for _ in range(rng.randint(0, 6))]
        cut = rng.randint(0, len(items))
        parts = [*list_item_texts(items[:cut], 1), *list_item_texts(items[cut:], 1)]
        # The key sorts first, among others or last; a nested entry of the same key stays.
        document = {key: _random_document(rng) for key in rng.sample(["a", "list", "z", "é"], k=2)}
        document["inner"] = {"list": _random_document(rng)}
        expected = _stdlib({**document, "list": items})
        assert dumps_sorted_indented(document, {"list": list_parts(parts, 1)}) == expected
        document["list"] = "replaced"
        written = {"list": list_parts(parts, 1)}
        assert dumps_sorted_indented(document, written, end="\n") == expected + "\n"
    # Left to json.dumps (an integer key), with the end still added.
    assert dumps_sorted_indented({1: 2}, end="\n") == _stdlib({1: 2}) + "\n"
