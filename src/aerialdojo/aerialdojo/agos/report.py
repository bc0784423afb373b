"""The AGOS ablation report laid out like AGOS-Bench's Table 4 (appendix A.5): one block per
condition, one row per difficulty and a Total, columns SR OSR SPL NE ASE ACG GVA DS CErr.

    python -m aerialdojo.agos.report full=runs/a no_e2a=runs/b [--out table.md]

Each ``condition=DIR`` names a run directory (its ``metrics.json``) of that condition.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aerialdojo.errors import MetricsError

#: Table 4's columns: (metric key, header, format: "%" rate as percent, "r" rate as 0.xxx,
#: "m" metres, "s" steps).
COLUMNS = (
    ("sr", "SR ↑", "%"),
    ("osr", "OSR ↑", "%"),
    ("spl", "SPL ↑", "r"),
    ("ne_m", "NE ↓", "m"),
    ("ase", "ASE ↑", "r"),
    ("acg", "ACG ↑", "r"),
    ("gva", "GVA ↑", "%"),
    ("ds", "DS ↓", "s"),
    ("cerr_m", "CErr ↓", "m"),
)
DIFFICULTIES = (("easy", "Easy"), ("mid", "Mid"), ("hard", "Hard"))


def _cell(value: float | None, style: str) -> str:
    if value is None:
        return "N/A"
    if style == "%":
        return f"{100.0 * value:.1f}%"
    if style == "r":
        return f"{value:.3f}"
    return f"{value:.1f}"


def read_metrics(run_dir: Path) -> dict[str, Any]:
    """The ``metrics.json`` of an AGOS run directory.

    Raises:
        MetricsError: missing, unreadable, or not an AGOS run.
    """
    path = run_dir / "metrics.json"
    try:
        metrics: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MetricsError(f"{path}: cannot read metrics: {error}") from error
    if metrics.get("benchmark") != "agos":
        raise MetricsError(f"{path}: benchmark {metrics.get('benchmark')!r}, not 'agos'")
    return metrics


def ablation_table(conditions: Mapping[str, Mapping[str, Any]]) -> str:
    """Markdown table of several conditions' metrics (condition name -> metrics.json).

    Difficulties a run did not hold are left out of its block; ``Total`` is the run's
    overall aggregate (episode-pooled, conditional metrics over their support).
    """
    header = "| Condition | Diff. | " + " | ".join(title for _, title, _ in COLUMNS) + " |"
    lines = [header, "|" + " --- |" * (len(COLUMNS) + 2)]
    for condition, metrics in conditions.items():
        groups = [
            (label, metrics["by_setting"][key])
            for key, label in DIFFICULTIES
            if key in metrics["by_setting"]
        ]
        groups.append(("Total", metrics["overall"]))
        for row, (label, group) in enumerate(groups):
            values = group["values"]
            cells = [_cell(values.get(key), style) for key, _, style in COLUMNS]
            name = condition if row == 0 else ""
            lines.append(f"| {name} | {label} ({group['episodes']}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="condition=RUN_DIR, e.g. full=runs/20261129-2300")
    parser.add_argument("--out", type=Path, help="write the table here as well")
    args = parser.parse_args(argv)
    conditions = {}
    for item in args.runs:
        name, equals, directory = item.partition("=")
        if not equals:
            parser.error(f"{item!r} is not condition=RUN_DIR")
        conditions[name] = read_metrics(Path(directory))
    table = ablation_table(conditions)
    print(table, end="")
    if args.out is not None:
        args.out.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
