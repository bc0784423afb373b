"""Suite statistics laid out like AerialDojo-200K, Table 7 (inventory) and Table 6 (splits)."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aerialdojo.sim.annotations import FAMILIES
from aerialdojo.tasks.episode import REPRESENTATION_SEMANTIC
from aerialdojo.tasks.settings import SETTINGS, legal_splits
from aerialdojo.tasks.suite import Suite, load_suite

_CSV_COLUMNS = (
    "level", "family", "scene", "distribution", "landmarks", "objects", "anchors",
    *(setting.name for setting in SETTINGS), "all", "path_km",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class InventoryRow:
    """One row of Table 7: a scene, a family total or the suite total.

    Attributes:
        level: ``"scene"``, ``"family"`` or ``"total"``.
        family: the family ("" for the total).
        scene: the scene ("" for totals).
        distribution: ``"id"`` / ``"ood"`` ("" for totals).
        landmarks: annotated landmarks.
        objects: annotated objects.
        anchors: annotated anchors.
        instances: task instances (both twins) per setting name.
        path_km: reference length in km, each navigation task counted once.
    """

    level: str
    family: str
    scene: str
    distribution: str
    landmarks: int
    objects: int
    anchors: int
    instances: dict[str, int]
    path_km: float

    @property
    def all(self) -> int:
        """Task instances over every setting."""
        return sum(self.instances.values())


def _total(rows: Sequence[InventoryRow], level: str, family: str) -> InventoryRow:
    return InventoryRow(
        level=level,
        family=family,
        scene="",
        distribution="",
        landmarks=sum(row.landmarks for row in rows),
        objects=sum(row.objects for row in rows),
        anchors=sum(row.anchors for row in rows),
        instances={s.name: sum(row.instances[s.name] for row in rows) for s in SETTINGS},
        path_km=sum(row.path_km for row in rows),
    )


def inventory_rows(suite: Suite) -> list[InventoryRow]:
    """Table 7 rows: per family its scenes then the family total; the suite total last."""
    instances: dict[str, Counter[str]] = {scene.scene: Counter() for scene in suite.scenes}
    path_m: defaultdict[str, float] = defaultdict(float)
    for episode in suite.episodes:
        instances[episode.scene][episode.setting] += 1
        if episode.goal.representation == REPRESENTATION_SEMANTIC:
            path_m[episode.scene] += episode.reference.length_m
    rows: list[InventoryRow] = []
    family_totals = []
    for family in FAMILIES:
        scenes = [
            InventoryRow(
                level="scene",
                family=family,
                scene=scene.scene,
                distribution=scene.distribution,
                landmarks=scene.landmarks,
                objects=scene.objects,
                anchors=scene.anchors,
                instances={s.name: instances[scene.scene][s.name] for s in SETTINGS},
                path_km=path_m[scene.scene] / 1000.0,
            )
            for scene in suite.scenes
            if scene.family == family
        ]
        if scenes:
            family_totals.append(_total(scenes, "family", family))
            rows += [*scenes, family_totals[-1]]
    return [*rows, _total(family_totals, "total", "")]


def _count(value: int) -> str:
    return f"{value:,}"


def _markdown_inventory(rows: Sequence[InventoryRow]) -> list[str]:
    lines = [
        "| Scene | LM | Obj./Anc. "  # the paper's header  # codespell:ignore anc
        "| Base | Standard | LH | ALL | Path (km) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if row.level == "scene":
            name = row.scene
        elif row.level == "family":
            name = f"*{row.family.capitalize()} total*"
        else:
            name = "**Total**"
        counts = " | ".join(_count(row.instances[s.name]) for s in SETTINGS)
        lines.append(
            f"| {name} | {row.landmarks} | {_count(row.objects)}/{_count(row.anchors)} | "
            f"{counts} | {_count(row.all)} | {row.path_km:,.3f} |"
        )
    return lines


def _markdown_splits(suite: Suite) -> list[str]:
    counts: Counter[tuple[str, str, str]] = Counter(
        (episode.distribution, episode.split, episode.setting) for episode in suite.episodes
    )
    lines = [
        "| Scenes | Task subset | Base | Standard | LH | ALL |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for distribution in ("id", "ood"):
        for split in legal_splits(distribution):
            per_setting = [counts[distribution, split, s.name] for s in SETTINGS]
            cells = " | ".join(_count(n) for n in per_setting)
            lines.append(
                f"| {distribution.upper()} | {split} | {cells} | {_count(sum(per_setting))} |"
            )
    return lines


def suite_stats(path: str | Path, *, source: str | None = None) -> tuple[str, str]:
    """Statistics of a suite file as Markdown and CSV.

    AerialDojo suites: the Table 7 inventory per scene with family totals, then Table 6
    split counts (CSV: the Table 7 rows). Task-instance counts include both goal
    representations; path length counts each navigation task once, as in the paper. (The
    other benchmarks' suites have their own: ``agos.stats``, ``citynav.stats``.)

    Args:
        path: the suite file.
        source: how problems name the file (default: ``path``).

    Raises:
        TaskFileError: the suite does not validate.
    """
    suite = load_suite(path, source=source)
    rows = inventory_rows(suite)
    markdown = [
        f"# {suite.name}: {len(suite.episodes):,} task instances",
        "",
        "Scene inventory and search task statistics (AerialDojo-200K, Table 7).",
        "",
        *_markdown_inventory(rows),
        "",
        "Task instances by scene group and split (AerialDojo-200K, Table 6).",
        "",
        *_markdown_splits(suite),
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_CSV_COLUMNS)
    for row in rows:
        writer.writerow(
            (
                row.level, row.family, row.scene, row.distribution,
                row.landmarks, row.objects, row.anchors,
                *(row.instances[s.name] for s in SETTINGS), row.all, f"{row.path_km:.6f}",
            )
        )  # fmt: skip
    return "\n".join(markdown) + "\n", buffer.getvalue()
