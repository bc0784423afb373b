"""CityNav per-episode metrics: NE, SR, OSR and SPL at a spherical radius (CityNav, section 3.2)."""

from __future__ import annotations

from collections.abc import Sequence

from aerialdojo.metrics.scores import (
    KIND_DISTANCE,
    KIND_RATE,
    EpisodeScore,
    MetricSpec,
    PathFacts,
    radius_key,
    radius_label,
    success_weighted_path_length,
)
from aerialdojo.metrics.trace import EpisodeTrace

#: "within a 20-meter spherical radius of the goal coordinates" (CityNav, section 3.2).
SUCCESS_RADIUS_M = 20.0
DEFAULT_RADII = (SUCCESS_RADIUS_M,)


def metric_specs(radii: Sequence[float] = DEFAULT_RADII) -> tuple[MetricSpec, ...]:
    """The metrics ``score_episode`` returns, in report order (NE, then SR/OSR/SPL per radius)."""
    return (
        MetricSpec(key="ne_m", label="NE", kind=KIND_DISTANCE, higher_is_better=False),
        *(
            MetricSpec(
                key=radius_key(name, radius),
                label=radius_label(name.upper(), radius),
                kind=KIND_RATE,
                higher_is_better=True,
            )
            for radius in radii
            for name in ("sr", "osr", "spl")
        ),
    )


def score_episode(trace: EpisodeTrace, radii: Sequence[float] = DEFAULT_RADII) -> EpisodeScore:
    """Score one CityNav episode at every radius in ``radii`` (CityNav, section 3.2).

    - NE_i = ||p_stop - p_goal||_2, 3D, from "the agent's stopping point": the final
      position, whether the episode ended by Stop or by running out of budget (key ``ne_m``).
    - SR_i = 1 if NE_i <= r: "the agent stops within a 20-meter spherical radius". The paper
      sets no Stop or collision condition, so none is added; inclusive, 3D.
    - OSR_i = 1 if "at least one point during navigation meets the success criteria",
      checked along every executed segment with the same 3D distance as SR.
    - SPL_i = SR_i * L_i / max(L_i, l_i): "SR weighted by the ratio of the optimal path
      length to the actual path taken" (CityNav, section 3.2, after its reference [1] on
      evaluating embodied navigation agents). L_i is the episode's reference length: the
      shortest path over the six actions to within 10 m of the goal (``citynav.reference``;
      docs/protocols/citynav.md, C11).

    Args:
        trace: a CityNav episode.
        radii: success radii in metres.

    Returns:
        The score with one value per ``metric_specs(radii)`` key.
    """
    facts = PathFacts.of(trace)
    values: dict[str, float | None] = {"ne_m": facts.final_distance_m}
    for radius in radii:
        success = facts.final_distance_m <= radius
        values[radius_key("sr", radius)] = float(success)
        values[radius_key("osr", radius)] = float(facts.closest_approach_m <= radius)
        values[radius_key("spl", radius)] = success_weighted_path_length(
            success, trace.reference_length_m, facts.executed_length_m
        )
    return EpisodeScore.from_trace(trace, facts, values)
