"""Protocol settings a run may choose where a paper itself varies them, with the paper's own
as the default (docs/protocols/). Light on purpose: the parameter table imports it.

AerialDojo-200K's sensors record four RGB-D views (section 3.1), but its evaluated prompt
gives the agent "the front-facing RGB-D inputs" and the observation interface "excludes GPS
measurements" (appendix A, section 3.1): the front view without odometry is the benchmark
protocol; four views and start-relative odometry remain selectable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The four onboard views of AerialDojo-200K, section 3.1.
AERIALDOJO_VIEWS = ("front", "left", "right", "down")
#: ``task_manager.observation`` -> the views an AerialDojo agent is given.
OBSERVATIONS: dict[str, tuple[str, ...]] = {"front": ("front",), "four_views": AERIALDOJO_VIEWS}
#: The evaluated prompt's setting (AerialDojo-200K, appendix A).
PAPER_OBSERVATION = "front"
PAPER_ODOMETRY = False


def aerialdojo_observation(settings: Mapping[str, Any]) -> tuple[tuple[str, ...], bool]:
    """The views and the odometry flag an AerialDojo agent is given under the task manager's
    ``settings`` (the paper's where they name none)."""
    views = OBSERVATIONS[str(settings.get("observation", PAPER_OBSERVATION))]
    return views, bool(settings.get("odometry", PAPER_ODOMETRY))


def on_off(flag: bool) -> str:
    """A flag as a condition value: ``"on"`` or ``"off"``."""
    return "on" if flag else "off"
