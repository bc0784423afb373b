"""Benchmark: one GSM update per step against a plain numpy rasterisation of its polygons.

An episode of the shipped ``citynav_mini`` suite is replayed with its reference actions in
the embedded city at the default grid (2 m cells over 540 m: 270 x 270) and a 128 px nadir
view; the frames are rendered first, outside the timing. Per step it times:

- value: the whole GSM update (``GeoSemanticMap.update``: the view's footprint filled with
  Pillow, the explored area, the detections projected with depth; the landmark layer was
  filled once, at the episode's start);
- baseline: a plain numpy rasterisation (even-odd crossing test on every cell corner) of the
  same polygons that a step's map shows, the footprint and the named landmarks.

The baseline's masks are checked against the GSM's (the same cells but within two cells of
an outline, where Pillow's rounding of vertices to whole cells shows), so the two fill the
same polygons.

Usage:
    tools/run.sh python benchmarks/gsm.py [--episode ID] [--repeats 5]

Prints figures, then exactly one line
``RESULT gsm_update_ms value=<v> baseline=<b> ratio=<v/b>``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from scipy import ndimage

from aerialdojo.citynav.backend import CityNavBackend
from aerialdojo.citynav.episodes import load_citynav_suite
from aerialdojo.citynav.gsm import GeoSemanticMap, GridSpec, nadir_footprint
from aerialdojo.tasks.suite import shipped_suites_dir


def numpy_fill(grid: GridSpec, polygons: list[np.ndarray]) -> np.ndarray:
    """Cells whose lower-left corner lies in a polygon (even-odd rule), plain numpy."""
    xs = grid.origin[0] + np.arange(grid.width) * grid.resolution_m
    ys = grid.origin[1] + np.arange(grid.height) * grid.resolution_m
    px, py = np.meshgrid(xs, ys)
    mask = np.zeros(px.shape, dtype=bool)
    for polygon in polygons:
        inside = np.zeros(px.shape, dtype=bool)
        for (x0, y0), (x1, y1) in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
            crosses = (y0 > py) != (y1 > py)
            with np.errstate(divide="ignore", invalid="ignore"):
                at = x0 + (py - y0) * (x1 - x0) / (y1 - y0)
            inside ^= crosses & (px < at)
        mask |= inside
    return mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episode", default="CityNavTown_0-val_seen-0001")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    suite = load_citynav_suite(shipped_suites_dir() / "citynav_mini" / "suite.json")
    episode = suite.episode(args.episode)
    city = suite.city_map(episode.scene)
    backend = CityNavBackend(rigs=CityNavBackend.camera_rigs(["uav"], 128, 128, 90.0))
    backend.reset(episode.scene, {"uav": episode.start})
    frames = []
    for action in (None, *episode.reference_actions):
        if action is not None:
            backend.execute("uav", action)
        observation = backend.observe("uav")
        frames.append((observation.pose, observation.frames["down"]))

    gsm_ms, numpy_ms, agreement = [], [], []
    for _ in range(args.repeats):
        gsm = GeoSemanticMap(city, episode.description)
        landmarks = [np.asarray(lm.polygon) for lm in gsm.named]
        for pose, frame in frames:
            intrinsics = frame.spec.intrinsics()
            started = time.perf_counter()
            gsm.update(pose, frame.rgb, frame.depth, intrinsics)
            gsm_ms.append((time.perf_counter() - started) * 1e3)
            footprint = nadir_footprint(pose, intrinsics, frame.depth.shape, city.ground_z)
            started = time.perf_counter()
            view = numpy_fill(gsm.grid, [footprint])
            named = numpy_fill(gsm.grid, landmarks)
            numpy_ms.append((time.perf_counter() - started) * 1e3)
            ours = gsm.layers["current_view"] | gsm.layers["landmarks"]
            theirs = view | named
            # The same cells but near the outlines: Pillow rounds vertices to whole cells.
            outline = ndimage.binary_dilation(theirs, iterations=2) & ~ndimage.binary_erosion(
                theirs, iterations=2
            )
            agreement.append(not ((ours ^ theirs) & ~outline).any())
    value, baseline = statistics.median(gsm_ms), statistics.median(numpy_ms)
    grid = GeoSemanticMap(city, episode.description).grid
    print(
        f"episode {episode.episode_id}: {len(frames)} steps x {args.repeats}, grid "
        f"{grid.width} x {grid.height} at {grid.resolution_m:g} m, 128 px nadir view"
    )
    print(
        f"GSM update: median {value:.3f} ms; numpy rasterisation of the same polygons: median "
        f"{baseline:.3f} ms; masks agree on {sum(agreement)} of {len(agreement)} steps"
    )
    if not all(agreement):
        raise SystemExit("the numpy rasterisation and the GSM fill different cells")
    ratio = value / baseline
    print(f"RESULT gsm_update_ms value={value:.4f} baseline={baseline:.4f} ratio={ratio:.4f}")


if __name__ == "__main__":
    main()
