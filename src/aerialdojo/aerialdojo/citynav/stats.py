"""Statistics of a CityNav suite (``aerialdojo tasks stats``): episodes per city and split
(CityNav, section 5.1), the start's distance from the goal and the reference path."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict

from aerialdojo.citynav.episodes import SPLITS, CityNavSuite


def citynav_suite_stats(suite: CityNavSuite) -> tuple[str, str]:
    """Markdown and CSV: one row per city (then the total) with its episodes per split, and
    the mean 2D start-to-goal distance and mean reference path length, in metres."""
    cities = sorted({episode.scene for episode in suite.episodes})
    counts = Counter((episode.scene, episode.split) for episode in suite.episodes)
    counts.update(Counter(("total", episode.split) for episode in suite.episodes))
    distance: defaultdict[str, list[float]] = defaultdict(list)
    path: defaultdict[str, list[float]] = defaultdict(list)
    for episode in suite.episodes:
        for scope in (episode.scene, "total"):
            distance[scope].append(episode.start_distance_m)
            path[scope].append(episode.reference_length_m)
    rows = [
        (
            city,
            [counts[city, split] for split in SPLITS],
            _mean(distance[city]),
            _mean(path[city]),
        )
        for city in [*cities, "total"]
    ]
    markdown = [
        f"# {suite.name}: {len(suite.episodes):,} CityNav episodes",
        "",
        "Episodes per city and split (CityNav, section 5.1); mean start-to-goal distance on "
        "the map and mean reference path, metres.",
        "",
        f"| City | {' | '.join(SPLITS)} | ALL | Start distance (m) | Reference (m) |",
        "| --- |" + " --- |" * (len(SPLITS) + 3),
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("city", *SPLITS, "all", "start_distance_m", "reference_m"))
    for city, per_split, start_m, reference_m in rows:
        name = "**Total**" if city == "total" else city
        cells = " | ".join(str(count) for count in per_split)
        markdown.append(
            f"| {name} | {cells} | {sum(per_split)} | {start_m:.1f} | {reference_m:.1f} |"
        )
        writer.writerow((city, *per_split, sum(per_split), f"{start_m:.3f}", f"{reference_m:.3f}"))
    return "\n".join(markdown) + "\n", buffer.getvalue()


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
