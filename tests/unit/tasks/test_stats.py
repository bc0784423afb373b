"""Suite statistics in the paper's Table 7 / Table 6 layout."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from aerialdojo.tasks.stats import suite_stats
from aerialdojo.tasks.suite import load_suite


def test_table_7_rows_count_instances_and_path_once_per_task(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    markdown, text = suite_stats(yard_suite_path)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["level"] for row in rows] == ["scene", "scene", "family", "total"]
    for scene in ("Yard_0", "Yard_1"):
        (row,) = [r for r in rows if r["scene"] == scene]
        episodes = [e for e in suite.episodes if e.scene == scene]
        assert int(row["all"]) == len(episodes)
        for setting in ("base", "standard", "long_horizon"):
            assert int(row[setting]) == sum(e.setting == setting for e in episodes)
        once = sum(e.reference.length_m for e in episodes if e.goal.representation == "semantic")
        assert float(row["path_km"]) == pytest.approx(once / 1000.0, abs=1e-6)
        assert (row["landmarks"], row["objects"], row["anchors"]) == ("2", "4", "4")
    total = rows[-1]
    assert int(total["all"]) == len(suite.episodes)
    assert int(total["landmarks"]) == 4
    assert "| Yard_0 | 2 | 4/4 |" in markdown
    assert "| **Total** | 4 | 8/8 |" in markdown
    assert f"{len(suite.episodes)} task instances" in markdown


def test_table_6_splits_add_up(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    markdown, _ = suite_stats(yard_suite_path)
    for group, split in (("ID", "train"), ("ID", "test"), ("OOD", "adaptation"), ("OOD", "test")):
        line = next(
            text for text in markdown.splitlines() if text.startswith(f"| {group} | {split} |")
        )
        count = sum(e.split == split and e.distribution == group.lower() for e in suite.episodes)
        assert line.rstrip(" |").endswith(f"| {count}")
