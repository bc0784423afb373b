"""Radar ranges and radius sweeps computed right, and real PNGs written with Agg."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.trace import AgosRecord, EpisodeTrace
from aerialdojo.protocols import protocol
from aerialdojo.protocols.scoring import score_run
from aerialdojo.report.plots import (
    FIGURE5_RANGES,
    FIXED_RANGES,
    OUTWARD_NOTE,
    RadarRange,
    plot_radar,
    radar_figure,
    radar_values,
    radius_sweep,
    write_plots,
)

Factory = Callable[..., EpisodeTrace]


def _traces(make_trace: Factory) -> list[EpisodeTrace]:
    # Stops 1, 4 and 12 m from the anchor; the last one collides on its way out.
    return [
        make_trace(episode_id="a"),
        make_trace(episode_id="b", positions=((10, 0, 10), (4, 0, 10))),
        make_trace(
            episode_id="c",
            scene="Mountain_0",
            family="natural",
            positions=((10, 0, 10), (12, 0, 10)),
            stop_called=False,
            collided=True,
            collision_step=1,
            termination="collided",
        ),
    ]


def test_figure5_ranges_put_better_values_outward() -> None:
    assert FIGURE5_RANGES["SR"].normalise(2.5) == 0.5
    assert FIGURE5_RANGES["OSR"].normalise(30.0) == 1.0  # clipped at the edge
    assert FIGURE5_RANGES["DTS"].normalise(10.0) == 0.75
    assert FIGURE5_RANGES["CR"].normalise(58.96) == pytest.approx(0.4104)
    assert RadarRange(centre=0.0, edge=5.0).normalise(-1.0) == 0.0


def test_radar_values(make_trace: Factory) -> None:
    values = radar_values(score_run(_traces(make_trace)))
    assert values["urban"] == {"SR": 50.0, "OSR": 50.0, "SPL": 50.0, "DTS": 2.5, "CR": 0.0}
    assert values["natural"]["CR"] == 100.0


def test_the_radar_has_fixed_ranges_says_outward_is_better_and_names_the_run(
    make_trace: Factory,
) -> None:
    # Issue 16, item 4: an automatic range showed an all-zero run as "SR 0-1 %" with a full
    # polygon, nothing said outward is better, and the legend said "run".
    failed = make_trace(
        positions=((40.0, 0.0, 10.0), (30.0, 0.0, 10.0)),
        stop_called=False,
        collided=True,
        collision_step=1,
        termination="collided",
    )
    figure = radar_figure({"20261201-180305": score_run([failed])})
    assert figure.get_suptitle() == OUTWARD_NOTE
    legend = figure.legends[0]
    assert [text.get_text() for text in legend.get_texts()] == ["20261201-180305"]
    axes = figure.axes[0]
    assert [label.get_text() for label in axes.get_xticklabels()] == [
        "SR\n0 → 100 %", "OSR\n0 → 100 %", "SPL\n0 → 100 %", "DTS\n40 → 0 m", "CR\n100 → 0 %"
    ]  # fmt: skip
    radial = axes.lines[0].get_ydata()[:5]
    # Nothing found and everything hit: every point at the centre but DTS (30 of 40 m).
    assert list(radial) == pytest.approx([0.0, 0.0, 0.0, 0.25, 0.0])
    assert FIXED_RANGES["CR"].normalise(0.0) == 1.0  # no collisions: the rim


def test_radar_refuses_other_benchmarks_and_radii(make_trace: Factory) -> None:
    with pytest.raises(MetricsError, match="citynav"):
        radar_values(score_run([make_trace(benchmark="citynav")]))
    with pytest.raises(MetricsError, match="not 7 m"):
        radar_values(score_run([make_trace()]), radius_m=7.0)


def test_radius_sweep_grows_with_the_radius(make_trace: Factory) -> None:
    points = radius_sweep(_traces(make_trace), protocol("aerialdojo"))
    assert [point.radius_m for point in points] == [float(r) for r in range(1, 21)]
    by_radius = {point.radius_m: point for point in points}
    # Equal weights: urban = mean(Mall_0) over its two episodes; natural never succeeds.
    assert (by_radius[1.0].sr, by_radius[3.0].sr, by_radius[4.0].sr) == (0.25, 0.25, 0.5)
    # OSR: the collided episode passes 10 m from the anchor at its start.
    assert by_radius[10.0].osr == 1.0
    assert all(point.sr <= point.osr for point in points)
    assert all(a.osr <= b.osr for a, b in itertools.pairwise(points))


def test_plots_are_real_pngs(make_trace: Factory, tmp_path: Path) -> None:
    traces = _traces(make_trace)
    run = score_run(traces)
    assert write_plots(run, protocol("aerialdojo"), tmp_path, traces) == [
        "radar.png",
        "radius_sweep.png",
    ]
    for name in ("radar.png", "radius_sweep.png"):
        with Image.open(tmp_path / name) as image:
            pixels = np.asarray(image.convert("L"))
        assert pixels.shape[0] >= 300 and pixels.shape[1] >= 500
        assert pixels.std() > 5.0  # something was drawn
    plot_radar({"first": run, "second": run}, tmp_path / "two.png", FIGURE5_RANGES)
    assert (tmp_path / "two.png").stat().st_size > 0


def test_agos_runs_get_no_radius_plots(make_trace: Factory, tmp_path: Path) -> None:
    record = AgosRecord(
        uav_decisions=1, ugv_decisions=1, uav_budget=10, oracle_visible_uav_step=None
    )
    agos_trace = make_trace(benchmark="agos", agos=record)
    with pytest.raises(MetricsError, match="AGOS"):
        radius_sweep([agos_trace], protocol("agos"))
    agos_run = score_run([agos_trace])
    assert write_plots(agos_run, protocol("agos"), tmp_path, [agos_trace]) == []
