"""What the fuzz tests share: strategies that mutate valid inputs, and the property every
surface must hold (an aerialdojo error naming its source, or a result). A module of its own,
not the conftest, so that a test imports it by a name no other test directory has."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import strategies as st

from aerialdojo.errors import AerialDojoError

T = TypeVar("T")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one to three values somewhere in it replaced or deleted."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, 3))):
        parent, key, node = None, None, document
        for _ in range(draw(st.integers(0, 6))):
            if isinstance(node, dict) and node:
                key = draw(st.sampled_from(sorted(node)))
            elif isinstance(node, list) and node:
                key = draw(st.integers(0, len(node) - 1))
            else:
                break
            parent, node = node, node[key]
        if parent is None:
            document = draw(json_values)
        elif draw(st.booleans()):
            parent[key] = draw(json_values)
        elif isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
    return document


@st.composite
def spliced(draw: st.DrawFn, text: str, span: int = 200) -> str:
    """``text`` with one span of up to ``span`` characters replaced by arbitrary text."""
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + span)))
    return text[:start] + draw(st.text(max_size=30)) + text[end:]


def outcome(call: Callable[[], T], *names: str) -> T | AerialDojoError:
    """Call ``call``; return what it returned, or the aerialdojo error it raised, which must
    name one of ``names`` (its file, ``command line``). Any other exception fails the test."""
    try:
        return call()
    except AerialDojoError as error:
        text = str(error)
        assert text.strip(), f"{type(error).__name__} with no message"
        assert any(name in text for name in names), f"the error names none of {names}: {text}"
        assert "Traceback" not in text
        return error


def files_under(root: Path) -> dict[str, Any]:
    """Every file and directory under ``root`` with its size and modification time."""
    return {
        str(path.relative_to(root)): (path.is_dir(), path.stat().st_size, path.stat().st_mtime_ns)
        for path in root.rglob("*")
    }
