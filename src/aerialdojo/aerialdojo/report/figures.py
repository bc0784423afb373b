"""Matplotlib figures for the report, matplotlib imported on the first one drawn.

Importing matplotlib costs about half a second a process; a merge's reader processes import
the report's modules (the caller's script or CLI does) and never draw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def agg_figure(width_in: float, height_in: float) -> Figure:
    """A figure of ``width_in`` by ``height_in`` inches, laid out by matplotlib's constrained
    layout and drawn by the Agg canvas (no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    figure = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(figure)
    return figure
