"""Report plots: per-family radar charts (AerialDojo-200K, Figure 5) and success-radius sweeps."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import RunMetrics
from aerialdojo.metrics.scores import radius_key
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.report.figures import agg_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from aerialdojo.protocols import BenchmarkProtocol

RADAR_PNG = "radar.png"
RADIUS_SWEEP_PNG = "radius_sweep.png"

#: Radar axes in order: SR, OSR, SPL (%), DTS (m), CR (%).
RADAR_AXES = ("SR", "OSR", "SPL", "DTS", "CR")
#: Radii of the sweep plot: 1 to 20 m.
SWEEP_RADII = tuple(float(radius) for radius in range(1, 21))


@dataclass(frozen=True, kw_only=True)
class RadarRange:
    """The values an axis maps to its centre (radius 0) and its outer edge (radius 1).

    ``centre > edge`` flips the axis so that outward is always better (DTS, CR).
    """

    centre: float
    edge: float

    def normalise(self, value: float) -> float:
        """Radial position of ``value`` in [0, 1], clipped at the centre and edge."""
        return min(1.0, max(0.0, (value - self.centre) / (self.edge - self.centre)))


#: The default: fixed, so that two runs' charts compare by eye and an all-zero run reads as
#: the loss it is (rates at the centre, CR at the centre too: it is inverted, as DTS is).
#: DTS spans Figure 5's 40 m.
FIXED_RANGES = {
    "SR": RadarRange(centre=0.0, edge=100.0),
    "OSR": RadarRange(centre=0.0, edge=100.0),
    "SPL": RadarRange(centre=0.0, edge=100.0),
    "DTS": RadarRange(centre=40.0, edge=0.0),
    "CR": RadarRange(centre=100.0, edge=0.0),
}
#: Said on every radar chart: the inverted axes would otherwise read the wrong way round.
OUTWARD_NOTE = "Outward is better on every axis (DTS and CR run from high at the centre to 0)."

#: AerialDojo-200K, Figure 5: SR and SPL 0-5 %, OSR 0-15 %, DTS 40-0 m, CR 100-0 %.
FIGURE5_RANGES = {
    "SR": RadarRange(centre=0.0, edge=5.0),
    "OSR": RadarRange(centre=0.0, edge=15.0),
    "SPL": RadarRange(centre=0.0, edge=5.0),
    "DTS": RadarRange(centre=40.0, edge=0.0),
    "CR": RadarRange(centre=100.0, edge=0.0),
}


@dataclass(frozen=True, kw_only=True)
class SweepPoint:
    """Headline SR and OSR (fractions) of a run at one success radius."""

    radius_m: float
    sr: float
    osr: float


def _defined(value: float | None, what: str) -> float:
    # Only conditional metrics can be N/A, and none of the plotted ones is conditional.
    if value is None:
        raise MetricsError(f"{what} is N/A and cannot be plotted")
    return value


def radar_values(run: RunMetrics, radius_m: float | None = None) -> dict[str, dict[str, float]]:
    """Family -> axis -> value in report units (% and m) at ``radius_m`` (default: primary).

    Raises:
        MetricsError: a run without the radar's metrics (AerialDojo-200K's SR, OSR, SPL,
            DTS and CR), or a radius the run was not scored at.
    """
    if not run.radii:
        raise MetricsError(f"radar charts plot AerialDojo metrics, not {run.benchmark}")
    radius = run.radii[0] if radius_m is None else radius_m
    if radius not in run.radii:
        raise MetricsError(f"run was scored at radii {list(run.radii)}, not {radius:g} m")
    keys = {
        "SR": radius_key("sr", radius),
        "OSR": radius_key("osr", radius),
        "SPL": radius_key("spl", radius),
        "DTS": "dts_m",
        "CR": "cr",
    }
    scored = {spec.key for spec in run.specs}
    missing = [axis for axis, key in keys.items() if key not in scored]
    if missing:
        raise MetricsError(
            f"radar charts plot AerialDojo metrics, not {run.benchmark} (no {', '.join(missing)})"
        )
    values: dict[str, dict[str, float]] = {}
    for family, group in run.by_family.items():
        row = {}
        for axis, key in keys.items():
            value = _defined(group.values[key], f"{family} {axis}")
            row[axis] = value if axis == "DTS" else 100.0 * value
        values[family] = row
    return values


def plot_radar(
    runs: Mapping[str, RunMetrics],
    path: Path,
    ranges: Mapping[str, RadarRange] | None = None,
    radius_m: float | None = None,
) -> None:
    """Write ``radar_figure(runs, ranges, radius_m)`` as a PNG at ``path``."""
    radar_figure(runs, ranges, radius_m).savefig(path, dpi=100)


def radar_figure(
    runs: Mapping[str, RunMetrics],
    ranges: Mapping[str, RadarRange] | None = None,
    radius_m: float | None = None,
) -> Figure:
    """One radar per scene family with one curve per run, like AerialDojo-200K, Figure 5.

    Args:
        runs: label -> AerialDojo run (one curve each; the legend names them).
        ranges: axis -> range; None: ``FIXED_RANGES`` (rates 0-100 %, DTS 40-0 m, CR
            100-0 %); ``FIGURE5_RANGES`` reproduces the paper's figure.
        radius_m: success radius of SR/OSR/SPL; None for each run's primary radius.

    Raises:
        MetricsError: no runs, or a run that ``radar_values`` refuses.
    """
    if not runs:
        raise MetricsError("no runs to plot")
    per_run = {label: radar_values(run, radius_m) for label, run in runs.items()}
    families = sorted({family for values in per_run.values() for family in values})
    chosen = ranges or FIXED_RANGES
    figure = agg_figure(max(4.0 * len(families), 6.0), 4.8)
    angles = [2.0 * math.pi * index / len(RADAR_AXES) for index in range(len(RADAR_AXES))]
    for index, family in enumerate(families, start=1):
        axes = figure.add_subplot(1, len(families), index, projection="polar")
        for label, values in per_run.items():
            if family not in values:
                continue
            radial = [chosen[axis].normalise(values[family][axis]) for axis in RADAR_AXES]
            axes.plot([*angles, angles[0]], [*radial, radial[0]], label=label, linewidth=1.5)
            axes.fill([*angles, angles[0]], [*radial, radial[0]], alpha=0.15)
        axes.set_xticks(angles)
        axes.set_xticklabels([_axis_label(axis, chosen[axis]) for axis in RADAR_AXES], fontsize=8)
        axes.set_ylim(0.0, 1.0)
        # Rings without numbers: each axis has its own scale, named in its label.
        axes.set_yticks([0.25, 0.5, 0.75, 1.0])
        axes.set_yticklabels([])
        axes.set_title(family, pad=18)
    figure.suptitle(OUTWARD_NOTE, fontsize=9)
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(runs), fontsize=8)
    return figure


def _axis_label(axis: str, chosen: RadarRange) -> str:
    """``"SR\n0 → 100 %"``: the axis and its scale from the centre out to the rim."""
    unit = "m" if axis == "DTS" else "%"
    return f"{axis}\n{chosen.centre:g} → {chosen.edge:g} {unit}"


def radius_sweep(
    traces: Sequence[EpisodeTrace],
    protocol: BenchmarkProtocol,
    radii: Sequence[float] = SWEEP_RADII,
) -> list[SweepPoint]:
    """Headline SR and OSR at each radius, scored and aggregated by the traces' ``protocol``
    as the report is.

    Raises:
        MetricsError: a benchmark whose success is not a radius (AGOS: the checker's
            verdict), or what ``BenchmarkProtocol.score_run`` refuses.
    """
    if not protocol.uses_radii:
        raise MetricsError(f"{protocol.title} success does not depend on a radius; no sweep")
    run = protocol.score_run(traces, radii)
    overall = run.overall.values
    return [
        SweepPoint(
            radius_m=radius,
            sr=_defined(overall[radius_key("sr", radius)], "SR"),
            osr=_defined(overall[radius_key("osr", radius)], "OSR"),
        )
        for radius in run.radii
    ]


def plot_radius_sweep(
    series: Mapping[str, Sequence[SweepPoint]], path: Path, primary_radius_m: float | None = None
) -> None:
    """SR and OSR (%) against the success radius, one pair of lines per series (a run, or
    each setting of a run whose benchmark reports settings apart), with the primary radius
    marked."""
    figure = agg_figure(6.0, 4.0)
    axes = figure.add_subplot()
    for name, points in series.items():
        radii = [point.radius_m for point in points]
        prefix = f"{name}: " if name else ""
        axes.plot(radii, [100.0 * point.sr for point in points], marker="o", label=f"{prefix}SR")
        axes.plot(radii, [100.0 * point.osr for point in points], marker="s", label=f"{prefix}OSR")
    if primary_radius_m is not None:
        axes.axvline(primary_radius_m, color="grey", linestyle="--", linewidth=1)
    axes.set_xlabel("success radius (m)")
    axes.set_ylabel("rate (%)")
    axes.set_ylim(bottom=0.0)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.savefig(path, dpi=100)


def write_plots(
    run: RunMetrics,
    protocol: BenchmarkProtocol,
    out_dir: Path,
    traces: Sequence[EpisodeTrace] = (),
    *,
    ranges: Mapping[str, RadarRange] | None = None,
    label: str = "this run",
) -> list[str]:
    """Write the plots a run of ``protocol``'s benchmark supports into ``out_dir``; return
    their file names.

    Benchmarks with radar charts (AerialDojo) get ``radar.png``, its legend naming the run
    ``label`` (e.g. its run id); those scored at radii (AerialDojo, CityNav) get
    ``radius_sweep.png`` when ``traces`` are given. Pass the names to the report to embed
    them.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if protocol.radar_chart:
        # A run of several settings its benchmark reports apart: a curve per setting.
        curves = (
            {
                f"{label}: {setting}": replace(run, by_family=families)
                for setting, families in run.by_setting_family.items()
            }
            if run.pools_settings
            else {label: run}
        )
        plot_radar(curves, out_dir / RADAR_PNG, ranges)
        written.append(RADAR_PNG)
    if traces and protocol.uses_radii:
        primary = run.radii[0] if run.radii else None
        by_setting: dict[str, list[EpisodeTrace]] = {}
        for trace in traces:
            by_setting.setdefault(trace.setting, []).append(trace)
        series = (
            {name: radius_sweep(members, protocol) for name, members in sorted(by_setting.items())}
            if run.pools_settings
            else {"": radius_sweep(traces, protocol)}
        )
        plot_radius_sweep(series, out_dir / RADIUS_SWEEP_PNG, primary)
        written.append(RADIUS_SWEEP_PNG)
    return written
