"""Property-based fuzzing of every input surface (issue 29, "Fuzzing"): service requests,
configs and overrides, suites, trajectory logs (metrics JSONL), mapping files and bags. The
property, for every surface: no crash and no traceback, only aerialdojo's own errors, each
naming its source, and nothing written outside the run.

The hypothesis profile comes from ``AERIALDOJO_FUZZ_PROFILE``:
  ``ci`` (default, ``make test``): 200 cases per test, the same ones every run (derandomized),
      so that CI fails only on a change of the code;
  ``nightly`` (``make fuzz``): 1,000 cases per test, new ones each run; a failure prints the
      ``@reproduce_failure`` blob that replays it.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from aerialdojo.errors import AerialDojoError

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "unit" / "core"), str(TESTS / "node")]  # eventstream, rostest

PROFILE_VARIABLE = "AERIALDOJO_FUZZ_PROFILE"
_COMMON: dict[str, Any] = {
    "deadline": None,  # a shared 2-core machine: no per-case time limit
    "database": None,  # no .hypothesis/ in the checkout
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=200, derandomize=True, **_COMMON)
settings.register_profile("nightly", max_examples=1000, derandomize=False, **_COMMON)
_profile = os.environ.get(PROFILE_VARIABLE, "ci")
if _profile not in ("ci", "nightly"):
    raise SystemExit(f"{PROFILE_VARIABLE}={_profile!r}: use ci or nightly")
settings.load_profile(_profile)

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
