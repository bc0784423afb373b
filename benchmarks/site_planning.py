"""Planning a surveyed site's references: the site's own collision worlds (geofence walls and
obstacle prisms) behind FCL capsule screens, as shipped, against the same worlds answered by
exact swept-sphere tests alone (the baseline: what ``sites.world`` did before the screens).

A walled yard (40 x 30 m, a wall across most of it, a row of round posts, a fence ceiling
below the wall's top) with four start pads and two targets: every route goes round the wall,
so the search runs along geometry. Both configurations must build the same suite, reference
for reference; the figure is the CPU seconds of building it (median of ``--repeats``).

Usage: tools/run.sh python benchmarks/site_planning.py [--repeats 3]
The last line is ``RESULT site_planning_cpu_s value=<screened> baseline=<exact>
ratio=<value/baseline>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

# Measure this checkout, not whatever version the install/ overlay last built.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "aerialdojo"))
from aerialdojo.sites import world
from aerialdojo.sites.build import build_site_suite
from aerialdojo.sites.site import load_site
from aerialdojo.tasks.serialization import episode_to_json


def yard() -> dict[str, Any]:
    """The benchmark's site file."""
    posts = [
        {"name": f"post {i}", "center_m": [26.0, 3.0 + 3.0 * i], "radius_m": 0.15, "max_z_m": 6.0}
        for i in range(8)
    ]
    pad = {"yaw_deg": 0.0}
    return {
        "format": "aerialdojo-site/1",
        "name": "benchmark_yard",
        "family": "urban",
        "frame": {"method": "tape", "origin": "south-west fence post"},
        "geofence": {
            "polygon_m": [[0, 0], [40, 0], [40, 30], [0, 30]],
            "min_z_m": 0.0,
            "max_z_m": 10.0,
        },
        "landmarks": [{"name": "tower", "position_m": [0.0, 0.0, 15.0]}],
        "starts": [
            {"name": "pad_a", "position_m": [5.0, 5.0, 2.0], **pad},
            {"name": "pad_b", "position_m": [5.0, 15.0, 2.0], **pad},
            {"name": "pad_c", "position_m": [10.0, 25.0, 3.0], **pad},
            {"name": "pad_d", "position_m": [12.0, 3.0, 1.5], **pad},
        ],
        "targets": [
            {
                "id": target,
                "name": target,
                "position_m": [35.0, y, 0.5],
                "anchor": {"position_m": [33.0, y, 2.0], "yaw_deg": 0.0},
                "description": f"a {target}",
                "reference_image": "photo.png",
            }
            for target, y in (("crate", 5.0), ("barrel", 17.0))
        ],
        "obstacles": [
            {
                "name": "wall",
                "polygon_m": [[18, -1], [20, -1], [20, 22], [18, 22]],
                "max_z_m": 20.0,
            },
            *posts,
        ],
    }


def build(directory: Path, screened: bool) -> tuple[float, list[Any]]:
    """CPU seconds of building the yard's suite, and its episodes as the file stores them."""
    site = load_site(directory / "site.yaml")
    shipped = world._screened
    if not screened:
        world._screened = lambda exact: exact  # type: ignore[assignment,return-value]
    try:
        began = time.process_time()
        built = build_site_suite(
            site, directory / ("screened" if screened else "exact"), command="b"
        )
        seconds = time.process_time() - began
    finally:
        world._screened = shipped
    return seconds, [episode_to_json(episode) for episode in built.suite.episodes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        Image.new("RGB", (64, 48), (10, 120, 200)).save(directory / "photo.png")
        (directory / "site.yaml").write_text(yaml.safe_dump(yard(), sort_keys=False))
        times: dict[bool, list[float]] = {True: [], False: []}
        episodes: dict[bool, list[Any]] = {}
        for _ in range(args.repeats):
            for screened in (True, False):
                seconds, episodes[screened] = build(directory, screened)
                times[screened].append(seconds)
        if episodes[True] != episodes[False]:
            raise SystemExit("the screened and exact worlds planned different references")
    tasks = len(episodes[True]) // 2
    value, baseline = statistics.median(times[True]), statistics.median(times[False])
    print(f"{tasks} tasks, identical references in both configurations")
    print(f"CPU seconds per build: screened {times[True]}, exact {times[False]}")
    print(f"load average at end: {os.getloadavg()}")
    print(
        f"RESULT site_planning_cpu_s value={value:.3f} baseline={baseline:.3f} "
        f"ratio={value / baseline:.3f}"
    )


if __name__ == "__main__":
    main()
