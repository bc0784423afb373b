"""Indented, key-sorted JSON text, byte for byte what ``json.dumps(document, sort_keys=True,
indent=2, allow_nan=False)`` writes, faster.

The standard library encodes with its C encoder only without ``indent``; with it, a Python
generator per value wrote ``metrics.json`` of a 200,000-episode run in about a tenth of the
merge's time. This encoder builds the same text from lists: containers of plain scalars
(most of the document) by the C encoder with the line break and indentation as its item
separator, other strings and numbers with the standard library's own functions
(``encode_basestring_ascii``, ``int.__repr__``, ``float.__repr__``). Anything else (a type
the standard library would hand to ``default``, a key that is not a string) is left to
``json.dumps`` itself, so the result never differs.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

_INDENT = "  "


class _UnsupportedError(Exception):
    """A value this encoder leaves to ``json.dumps``."""


def dumps_sorted_indented(
    document: Any, written: Mapping[str, Sequence[str]] | None = None, end: str = ""
) -> str:
    """``json.dumps(document, sort_keys=True, indent=2, allow_nan=False) + end``.

    Args:
        document: the value to write.
        written: entries of the dict ``document`` whose values are written already, key ->
            the value's text at a top-level entry's indentation, in parts (``list_parts(...,
            1)``): placed as they are, in place of ``document``'s value for the key, if any.
        end: text after the document's (joined with it: no copy of a long text to add it).

    Raises:
        ValueError: a NaN or infinite float (as ``json.dumps`` raises).
        TypeError: a value JSON cannot hold (as ``json.dumps`` raises).
    """
    if written:
        text = dumps_sorted_indented({**document, **dict.fromkeys(written)})
        # A top-level entry's line is the only one that starts with a line break, one
        # indentation and a quote, and each key is there once: each placeholder's line is
        # found exactly (a string holds no raw line break). The whole text is joined once:
        # copies of a long written value (200,000 episodes) were most of writing it.
        places = []
        for key in written:
            line = "\n" + _INDENT + encode_basestring_ascii(key) + ": "
            places.append((text.index(line + "null") + len(line), key))
        pieces: list[str] = []
        start = 0
        for at, key in sorted(places):
            pieces.append(text[start:at])
            pieces += written[key]
            start = at + len("null")
        pieces += (text[start:], end)
        return "".join(pieces)
    parts: list[str] = []
    runs = _ScalarRuns(parts)
    try:
        _encode(document, "\n", parts, runs)
    except _UnsupportedError:
        return json.dumps(document, sort_keys=True, indent=2, allow_nan=False) + end
    runs.fill()
    parts.append(end)
    return "".join(parts)


class _ScalarRuns:
    """The runs of scalar entries of a document's dicts, written by one call of the C
    encoder per indentation, not one per run: ``metrics.json`` of 200,000 episodes holds
    600,000 of them, and a call's set-up cost more than its encoding.

    One call encodes a list of the runs of one indentation with an item separator that
    holds ``_MARK``. Its output cannot hold that character otherwise (the C encoder
    escapes every control character in a string), and a run holds only scalars, so the
    separator follows a ``}`` only between two runs: the text splits into the runs there,
    and the mark becomes the line break and indentation.
    """

    def __init__(self, parts: list[str]) -> None:
        self._parts = parts
        self._pending: dict[str, tuple[list[int], list[dict[str, Any]]]] = {}

    def add(self, inner: str, run: dict[str, Any]) -> None:
        """Leave a place in the parts for ``run``'s entries, one per line at ``inner``."""
        places, runs = self._pending.setdefault(inner, ([], []))
        places.append(len(self._parts))
        runs.append(run)
        self._parts.append("")

    def fill(self) -> None:
        """Write every run into its place."""
        for inner, (places, runs) in self._pending.items():
            text = json.dumps(runs, sort_keys=True, allow_nan=False, separators=_MARKED)
            bodies = text[2:-2].split("}" + _MARKED[0] + "{")
            for place, body in zip(places, bodies, strict=True):
                self._parts[place] = body.replace(_MARK, inner)


#: Stands for a line break and indentation in ``_ScalarRuns``'s text.
_MARK = "\x00"
_MARKED = ("," + _MARK, ": ")


def _float(value: float) -> str:
    if math.isfinite(value):
        return float.__repr__(value)
    raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return str(encode_basestring_ascii(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    raise _UnsupportedError


#: The scalar encoders of exact built-in types, looked up before the general rules.
_SCALARS: dict[type, Callable[[Any], str]] = {
    str: lambda value: str(encode_basestring_ascii(value)),
    int: int.__repr__,
    float: _float,
    bool: lambda value: "true" if value else "false",
    type(None): lambda _: "null",
}


def _encode(value: Any, newline: str, parts: list[str], runs: _ScalarRuns) -> None:
    """Append ``value``'s text at the indentation ``newline`` ends with."""
    scalar = _SCALARS.get(type(value))
    if scalar is not None:
        parts.append(scalar(value))
    elif isinstance(value, dict):
        _encode_dict(value, newline, parts, runs)
    elif isinstance(value, (list, tuple)):
        _encode_list(value, newline, parts, runs)
    else:
        parts.append(_scalar(value))


def _flat(inner: str, container: list[Any] | tuple[Any, ...]) -> str:
    """The items of a list of built-in scalars, one per line at ``inner``: the C encoder,
    whose item separator may hold the line break and indentation."""
    text = json.dumps(container, allow_nan=False, separators=("," + inner, ": "))
    return text[1:-1]


def _encode_dict(value: dict[Any, Any], newline: str, parts: list[str], runs: _ScalarRuns) -> None:
    if not value:
        parts.append("{}")
        return
    if not all(type(key) is str for key in value):
        raise _UnsupportedError  # the standard library converts and sorts such keys its own way
    inner = newline + _INDENT
    separator = "," + inner
    parts.append("{" + inner)
    # Runs of scalar entries between containers are written together (``_ScalarRuns``;
    # an episode's score holds two containers among a dozen scalars).
    scalars: dict[str, Any] = {}
    for key, item in sorted(value.items()):
        if type(item) in _SCALARS:
            scalars[key] = item
            continue
        if scalars:
            runs.add(inner, scalars)
            parts.append(separator)
            scalars = {}
        parts.append(encode_basestring_ascii(key) + ": ")
        _encode(item, inner, parts, runs)
        parts.append(separator)
    if scalars:
        runs.add(inner, scalars)
    else:
        parts.pop()  # the separator after the last container
    parts.append(newline + "}")


def _encode_list(
    value: list[Any] | tuple[Any, ...], newline: str, parts: list[str], runs: _ScalarRuns
) -> None:
    """A list, one item per line."""
    if not value:
        parts.append("[]")
        return
    inner = newline + _INDENT
    if all(type(item) in _SCALARS for item in value):
        parts.append("[" + inner + _flat(inner, value) + newline + "]")
        return
    if all(type(item) is dict for item in value):
        # A list of records (``metrics.json``'s episodes): written column by column.
        parts.append("[" + inner + ("," + inner).join(_texts(value, inner)) + newline + "]")
        return
    separator = "," + inner
    parts.append("[" + inner)
    for index, item in enumerate(value):
        if index:
            parts.append(separator)
        _encode(item, inner, parts, runs)
    parts.append(newline + "]")


def list_item_texts(values: Sequence[Any], level: int) -> list[str]:
    """The text of each of ``values`` as an item of a list whose own line is at indentation
    ``level`` (the value of a top-level entry: 1), as ``dumps_sorted_indented`` writes it:
    ``list_parts`` of the texts of several parts is the whole list's."""
    return _texts(list(values), "\n" + _INDENT * (level + 1))


def list_parts(item_texts: Sequence[str], level: int) -> list[str]:
    """The text of the list whose items' texts are ``item_texts`` (``list_item_texts`` at
    ``level``), in parts (brackets, items and separators), for ``dumps_sorted_indented``'s
    ``written``."""
    if not item_texts:
        return ["[]"]
    newline = "\n" + _INDENT * level
    inner = newline + _INDENT
    parts = ["," + inner] * (2 * len(item_texts) + 1)
    parts[1::2] = item_texts
    parts[0] = "[" + inner
    parts[-1] = newline + "]"
    return parts


def _texts(values: list[Any] | tuple[Any, ...], newline: str) -> list[str]:
    """The text of each of ``values`` at the indentation ``newline`` ends with.

    Records (dicts of the same keys) are written by columns: a column of scalars by one call
    of the C encoder, split where its item separator holds ``_MARK`` (which, escaped in every
    string, marks only separators), a column of records by this function again, and each
    record's entries put together by one format. ``metrics.json`` of 200,000 episodes took
    three dict walks and sorts per episode otherwise, the most of writing it. Anything else
    is written value by value.
    """
    if not values:
        return []
    types = set(map(type, values))
    if types <= _SCALARS.keys():
        text = json.dumps(values, allow_nan=False, separators=_MARKED)
        return text[1:-1].split(_MARKED[0])
    if types != {dict}:
        return [dumps_sorted_indented(value).replace("\n", newline) for value in values]
    keys = tuple(values[0])
    # Every record holding as many keys as the first and each of its keys: the same keys.
    if set(map(len, values)) == {len(keys)} and all(
        all(map(operator.contains, values, itertools.repeat(key))) for key in keys
    ):
        return _record_texts(values, keys, newline)
    rows_of: dict[tuple[Any, ...], list[int]] = {}
    for row, value in enumerate(values):
        rows_of.setdefault(tuple(value), []).append(row)
    texts = [""] * len(values)
    for shape, rows in rows_of.items():
        shape_texts = _record_texts([values[row] for row in rows], shape, newline)
        for row, text in zip(rows, shape_texts, strict=True):
            texts[row] = text
    return texts


def _record_texts(records: Sequence[Any], keys: tuple[Any, ...], newline: str) -> list[str]:
    """The text of each of ``records``, dicts whose keys are ``keys``, column by column."""
    if not keys:
        return ["{}"] * len(records)
    if not all(type(key) is str for key in keys):
        raise _UnsupportedError  # as in ``_encode_dict``
    ordered = sorted(keys)
    inner = newline + _INDENT
    # Each entry's key in a %-format, a % in a key doubled.
    entries = ("," + inner).join(
        encode_basestring_ascii(key).replace("%", "%%") + ": %s" for key in ordered
    )
    template = "{" + inner + entries + newline + "}"
    columns = [_texts(list(map(operator.itemgetter(key), records)), inner) for key in ordered]
    return [template % row for row in zip(*columns, strict=True)]
