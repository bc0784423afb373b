"""The protocol documents stay true: every rule names a status, every implementing function
they name exists, and every rule that is not implemented says why."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs" / "protocols"
#: A rule row: | id | rule | the paper says | implemented by | status |
_ROW = re.compile(r"^\| ([A-Z]+\d+) \|(.*)\|$")
_NAME = re.compile(r"`(aerialdojo\.[A-Za-z0-9_.]+)`")
_STATUS = re.compile(r"^(exact|choice \(.+\)|not implemented( here)? \(.+\))")


def _rules(path: Path) -> list[tuple[str, list[str]]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            cells = [cell.strip() for cell in match[2].split(" | ")]
            rows.append((match[1], cells))
    return rows


def _resolve(dotted: str) -> object:
    """The object a dotted name points at: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[split:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


#: Each protocol document and the fewest rules it may hold (so that a table that stopped
#: parsing fails here rather than passing empty).
DOCUMENTS = {"aerialdojo.md": 30, "agos.md": 30, "citynav.md": 20}


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_every_rule_has_a_status_and_names_code_that_exists(document: str) -> None:
    rules = _rules(DOCS / document)
    assert len(rules) >= DOCUMENTS[document]
    identifiers = [identifier for identifier, _ in rules]
    assert len(set(identifiers)) == len(identifiers), "a rule id repeats"
    for identifier, cells in rules:
        assert len(cells) == 4, f"{document} {identifier}: expected 4 cells after the id"
        _, said, implemented_by, status = cells
        assert said, f"{document} {identifier}: no sentence of the paper"
        assert _STATUS.match(status), f"{document} {identifier}: status {status!r}"
        names = _NAME.findall(implemented_by)
        if status.startswith("not implemented"):
            assert implemented_by == "—", f"{document} {identifier}: names code it lacks"
            continue
        assert names, f"{document} {identifier}: names no implementing function"
        for name in names:
            try:
                _resolve(name)
            except (ImportError, AttributeError) as error:
                pytest.fail(f"{document} {identifier}: {name} does not exist ({error})")
