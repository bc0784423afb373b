"""Statistics of an AGOS suite (``aerialdojo tasks stats``): episodes per town and setting,
route lengths, look-alike distractors and splits."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict

from aerialdojo.agos.episodes import SETTINGS as AGOS_SETTINGS
from aerialdojo.agos.episodes import AgosSuite


def _count(value: int) -> str:
    return f"{value:,}"


def agos_suite_stats(suite: AgosSuite) -> tuple[str, str]:
    """Statistics of an AGOS suite as Markdown and CSV: episodes per town and setting
    (AGOS-Bench, Table 2 settings), reference route length (the UGV's shortest road route
    to a verifying anchor, SPL's l_e), look-alike distractors, and episodes per split."""
    towns = sorted({episode.scene for episode in suite.episodes})
    counts = Counter((episode.scene, episode.setting) for episode in suite.episodes)
    route_m: defaultdict[str, float] = defaultdict(float)
    distractors: defaultdict[str, int] = defaultdict(int)
    for episode in suite.episodes:
        route_m[episode.scene] += episode.reference_length_m
        distractors[episode.scene] += len(episode.distractor_ids)
    rows = [
        (town, [counts[town, setting] for setting in AGOS_SETTINGS], route_m[town] / 1000.0,
         distractors[town])
        for town in towns
    ]  # fmt: skip
    total = (
        "total",
        [sum(row[1][i] for row in rows) for i in range(len(AGOS_SETTINGS))],
        sum(row[2] for row in rows),
        sum(row[3] for row in rows),
    )
    headers = " | ".join(setting.capitalize() for setting in AGOS_SETTINGS)
    markdown = [
        f"# {suite.name}: {len(suite.episodes):,} AGOS episodes",
        "",
        "Episodes per town and setting (AGOS-Bench), reference route length and look-alike "
        "distractors.",
        "",
        f"| Town | {headers} | ALL | Route (km) | Distractors |",
        "| --- |" + " --- |" * (len(AGOS_SETTINGS) + 3),
    ]
    for town, per_setting, km, look_alikes in [*rows, total]:
        name = "**Total**" if town == "total" else town
        cells = " | ".join(_count(n) for n in per_setting)
        markdown.append(
            f"| {name} | {cells} | {_count(sum(per_setting))} | {km:,.3f} | {look_alikes} |"
        )
    splits = Counter((episode.split, episode.setting) for episode in suite.episodes)
    markdown += ["", "Episodes by split.", "", f"| Split | {headers} | ALL |"]
    markdown.append("| --- |" + " --- |" * (len(AGOS_SETTINGS) + 1))
    for split in sorted({episode.split for episode in suite.episodes}):
        per_setting = [splits[split, setting] for setting in AGOS_SETTINGS]
        cells = " | ".join(_count(n) for n in per_setting)
        markdown.append(f"| {split} | {cells} | {_count(sum(per_setting))} |")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("town", *AGOS_SETTINGS, "all", "route_km", "distractors"))
    for town, per_setting, km, look_alikes in [*rows, total]:
        writer.writerow((town, *per_setting, sum(per_setting), f"{km:.6f}", look_alikes))
    return "\n".join(markdown) + "\n", buffer.getvalue()
