"""Top-down pictures of what agents did: a map per episode, a contact sheet of the failures,
and the paths of two runs laid over each other (``aerialdojo compare --out``).

A map shows the scene from above (when the scene is one of ours and the suite is known),
the start, the target with its success radius, the reference path, the executed path
coloured by time, where a collision or the Stop happened, and for AGOS-Bench the candidate
regions the UAV handed over and the UGV's route.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from aerialdojo.errors import AerialDojoError
from aerialdojo.geometry import Pose
from aerialdojo.metrics.scores import EpisodeScore
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.report.figures import agg_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.collections import LineCollection

MAPS_DIR = "maps"
FAILURES_PNG = "failures.png"
#: Pixels per side of a scene overview.
OVERVIEW_PIXELS = 512
#: Contact sheet tiles per row.
SHEET_COLUMNS = 4


@dataclass(frozen=True)
class Overview:
    """A nadir picture of a scene and the map rectangle it covers (x0, x1, y0, y1)."""

    rgb: np.ndarray
    extent: tuple[float, float, float, float]


@dataclass(frozen=True)
class Scenery:
    """What a map draws besides the trace: known only from the suite.

    Attributes:
        reference_xy: the reference path, (N, 2); None where the benchmark has none.
        overview: the scene from above; None where the scene cannot be rendered here.
        radius_m: the episode's success radius, drawn around the target.
    """

    reference_xy: np.ndarray | None = None
    overview: Overview | None = None
    radius_m: float | None = None


#: Scenery of an episode id, or None where the suite does not know it.
SceneryLookup = Callable[[str], Scenery | None]


def _reference_xy(episode: object) -> np.ndarray | None:
    # AerialDojo episodes carry a ReferencePath, CityNav ones build a Reference from
    # their actions; AGOS-Bench has only a reference length (SPL's l_e).
    reference = getattr(episode, "reference", None)
    poses: Sequence[Pose] = getattr(reference, "poses", ())
    if not poses:
        return None
    return np.array([(pose.x, pose.y) for pose in poses])


@functools.lru_cache(maxsize=16)
def scene_overview(scene: str) -> Overview | None:
    """Render ``scene`` from straight above its centre, or None where no registered
    backend's scene source knows it (a GPU simulator's world or a real site)."""
    from aerialdojo.backends import load_scene  # noqa: PLC0415 - Embree on demand

    loaded = load_scene(scene)
    if loaded is None:
        return None
    from aerialdojo.sim.backend import nadir_rig  # noqa: PLC0415
    from aerialdojo.sim.embedded.renderer import render_views  # noqa: PLC0415

    low, high = loaded.annotations.bounds_min, loaded.annotations.bounds_max
    centre_x, centre_y = (low[0] + high[0]) / 2.0, (low[1] + high[1]) / 2.0
    half = max(high[0] - low[0], high[1] - low[1]) / 2.0
    # A 90 deg nadir view sees a ground square twice its altitude across; it must also fly
    # above the highest roof.
    altitude = max(half, high[2] - low[2] + 1.0)
    pose = Pose(centre_x, centre_y, low[2] + altitude, math.pi / 2.0)  # facing north
    frame = render_views(
        loaded, pose, nadir_rig(OVERVIEW_PIXELS, OVERVIEW_PIXELS), with_ground_truth_ids=False
    )
    (view,) = frame.values()
    extent = (centre_x - altitude, centre_x + altitude, centre_y - altitude, centre_y + altitude)
    return Overview(rgb=view.rgb, extent=extent)


def suite_scenery(suite: Path, *, overviews: bool = True) -> SceneryLookup:
    """Scenery of the episodes of a suite file (or shipped suite name).

    Raises:
        TaskFileError: the suite cannot be loaded.
    """
    from aerialdojo.protocols import load_suite  # noqa: PLC0415
    from aerialdojo.tasks.suite import resolve_suite  # noqa: PLC0415

    _, loaded = load_suite(resolve_suite(str(suite)))

    def lookup(episode_id: str) -> Scenery | None:
        try:
            episode = loaded.episode(episode_id)
        except (KeyError, AerialDojoError):
            return None
        overview = scene_overview(episode.scene) if overviews else None
        radius = getattr(episode, "success_radius_m", None)
        return Scenery(
            reference_xy=_reference_xy(episode),
            overview=overview,
            radius_m=float(radius) if radius is not None else None,
        )

    return lookup


#: How a map marks its points: marker, face colour, edge colour, size.
_MARKS = {
    "start": ("^", "lime", "black", 10),
    "target": ("*", "red", "black", 14),
    "collision": ("X", "red", "white", 13),
    "Stop": ("s", "white", "black", 9),
}


def _mark(axes: Axes, xy: np.ndarray, kind: str, label: str | None = None) -> None:
    marker, face, edge, size = _MARKS[kind]
    axes.plot(
        *xy[:2],
        marker=marker,
        color=face,
        markeredgecolor=edge,
        markersize=size,
        linestyle="",
        zorder=6,
        label=label or kind,
    )


def _path_xy(trace: EpisodeTrace) -> np.ndarray:
    return np.array([(x, y) for x, y, _ in trace.positions], dtype=np.float64).reshape(-1, 2)


def _frame(axes: Axes, points: Sequence[np.ndarray], margin_m: float = 8.0) -> None:
    everything = np.concatenate([p.reshape(-1, 2) for p in points if p.size])
    low, high = everything.min(axis=0) - margin_m, everything.max(axis=0) + margin_m
    side = max(high - low) / 2.0
    centre = (low + high) / 2.0
    axes.set_xlim(centre[0] - side, centre[0] + side)
    axes.set_ylim(centre[1] - side, centre[1] + side)
    axes.set_aspect("equal")


def draw_episode(
    axes: Axes,
    trace: EpisodeTrace,
    score: EpisodeScore | None = None,
    scenery: Scenery | None = None,
    *,
    legend: bool = True,
) -> LineCollection:
    """Draw one episode's map into ``axes``; returns the time-coloured path (for a colour
    bar)."""
    # Imported here, as in ``report.figures``: not in processes that never draw.
    from matplotlib.collections import LineCollection  # noqa: PLC0415
    from matplotlib.patches import Circle, Polygon  # noqa: PLC0415

    path = _path_xy(trace)
    target = np.array(trace.target[:2])
    scenery = scenery or Scenery()
    if scenery.overview is not None:
        axes.imshow(scenery.overview.rgb, extent=scenery.overview.extent, origin="upper")
    if scenery.reference_xy is not None:
        axes.plot(*scenery.reference_xy.T, "--", color="white", linewidth=2.2, zorder=2)
        axes.plot(
            *scenery.reference_xy.T,
            "--",
            color="black",
            linewidth=1.0,
            zorder=2,
            label="reference path",
        )
    air_ground = trace.agos is not None
    for candidate in trace.agos.candidates if trace.agos else ():
        axes.add_patch(
            Polygon(
                np.array(candidate.polygon_xy),
                closed=True,
                fill=False,
                edgecolor="orange",
                linewidth=1.5,
                zorder=3,
            )
        )
        axes.annotate(candidate.candidate_id, candidate.center[:2], color="orange", fontsize=7)
    segments = [path[index : index + 2] for index in range(len(path) - 1)]
    line = LineCollection(
        segments,
        cmap="viridis",
        linewidths=2.0,
        zorder=4,
        label="UGV route (colour: time)" if air_ground else "executed path (colour: time)",
    )
    line.set_array(np.arange(len(segments), dtype=float))
    axes.add_collection(line)
    _mark(axes, path[0], "start")
    _mark(axes, target, "target")
    if scenery.radius_m:
        axes.add_patch(
            Circle(
                tuple(target), scenery.radius_m, fill=False, color="red", linestyle=":", zorder=3
            )
        )
    if trace.collided:
        _mark(axes, path[-1], "collision", f"collision (step {trace.collision_step})")
    elif trace.stop_called:
        _mark(axes, path[-1], "Stop")
    drawn = [path, target[None, :]]
    if scenery.reference_xy is not None:
        drawn.append(scenery.reference_xy)
    _frame(axes, drawn)
    outcome = trace.termination.replace("_", " ")
    if score is not None:
        outcome += f", {score.final_distance_m:.1f} m to go"
    axes.set_title(f"{trace.episode_id}\n{outcome}", fontsize=8)
    axes.set_xlabel("x (m, east)", fontsize=7)
    axes.set_ylabel("y (m, north)", fontsize=7)
    axes.tick_params(labelsize=6)
    if legend:
        axes.legend(loc="upper left", fontsize=6, framealpha=0.8)
    return line


def plot_episode_map(
    trace: EpisodeTrace,
    path: Path,
    score: EpisodeScore | None = None,
    scenery: Scenery | None = None,
) -> None:
    """One episode's top-down map as a PNG."""
    figure = agg_figure(6.0, 6.0)
    axes = figure.add_subplot()
    line = draw_episode(axes, trace, score, scenery)
    figure.colorbar(line, ax=axes, shrink=0.7, label="step along the path")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)


def map_file(episode_id: str) -> str:
    """Where an episode's map lies in a run directory."""
    return f"{MAPS_DIR}/{episode_id.replace('/', '_')}.png"


def write_episode_maps(
    run_dir: Path,
    traces: Sequence[EpisodeTrace],
    scores: Mapping[str, EpisodeScore],
    scenery: SceneryLookup | None = None,
) -> list[str]:
    """A map per episode in ``run_dir/maps``; returns their file names, in trace order."""
    written = []
    for trace in traces:
        name = map_file(trace.episode_id)
        plot_episode_map(
            trace,
            run_dir / name,
            scores.get(trace.episode_id),
            scenery(trace.episode_id) if scenery else None,
        )
        written.append(name)
    return written


def write_contact_sheet(run_dir: Path, map_files: Sequence[str], path: Path) -> None:
    """The maps ``map_files`` (relative to ``run_dir``) tiled into one PNG, in order."""
    tiles = [Image.open(run_dir / name).convert("RGB") for name in map_files]
    width, height = max(t.width for t in tiles), max(t.height for t in tiles)
    columns = min(SHEET_COLUMNS, len(tiles))
    rows = math.ceil(len(tiles) / columns)
    sheet = Image.new("RGB", (columns * width, rows * height), "white")
    for index, tile in enumerate(tiles):
        sheet.paste(tile, ((index % columns) * width, (index // columns) * height))
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path)


def plot_overlay(
    runs: Mapping[str, Mapping[str, EpisodeTrace]],
    path: Path,
    scenery: SceneryLookup | None = None,
) -> list[str]:
    """The paths of every run (name -> episode id -> trace) over each other, one panel per
    episode the runs share; returns the episodes drawn.

    Raises:
        MetricsError: the runs share no episode.
    """
    from aerialdojo.errors import MetricsError  # noqa: PLC0415

    names = list(runs)
    shared = sorted(set.intersection(*(set(traces) for traces in runs.values())))
    if not shared:
        raise MetricsError(f"the runs {', '.join(names)} share no episode to overlay")
    columns = min(3, len(shared))
    rows = math.ceil(len(shared) / columns)
    figure = agg_figure(4.6 * columns, 4.6 * rows)
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:purple")
    for index, episode_id in enumerate(shared, start=1):
        axes = figure.add_subplot(rows, columns, index)
        first = runs[names[0]][episode_id]
        scene = scenery(episode_id) if scenery else None
        if scene is not None and scene.overview is not None:
            axes.imshow(scene.overview.rgb, extent=scene.overview.extent, origin="upper")
        if scene is not None and scene.reference_xy is not None:
            axes.plot(*scene.reference_xy.T, "--", color="black", linewidth=1.0, label="reference")
        drawn = [np.array([first.target[:2]])]
        for colour, name in zip(colours, names, strict=False):
            trace = runs[name][episode_id]
            path_xy = _path_xy(trace)
            drawn.append(path_xy)
            axes.plot(
                *path_xy.T,
                color=colour,
                linewidth=1.8,
                label=f"{name}: {trace.termination.replace('_', ' ')}",
            )
            marker = "X" if trace.collided else "s" if trace.stop_called else "o"
            axes.plot(*path_xy[-1], marker=marker, color=colour, markeredgecolor="black")
        start = _path_xy(first)[0]
        _mark(axes, start, "start", "_start")
        _mark(axes, np.array(first.target), "target")
        _frame(axes, drawn)
        axes.set_title(episode_id, fontsize=8)
        axes.tick_params(labelsize=6)
        axes.legend(loc="upper left", fontsize=6, framealpha=0.8)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    return shared
