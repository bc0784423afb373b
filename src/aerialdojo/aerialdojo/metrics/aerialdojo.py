"""AerialDojo-200K metrics per episode: SR, OSR, SPL at any radius, DTS and CR (section 3.3)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from aerialdojo.metrics.scores import (
    KIND_DISTANCE,
    KIND_RATE,
    EpisodeScore,
    MetricSpec,
    PathFacts,
    final_distance,
    radius_key,
    radius_label,
    success_weighted_path_length,
)
from aerialdojo.metrics.trace import EpisodeTrace

#: The prompt's and the primary success radius (AerialDojo-200K, section 4.1).
PRIMARY_RADIUS_M = 3.0
#: The supplementary threshold the paper also reports.
SUPPLEMENTARY_RADIUS_M = 5.0
DEFAULT_RADII = (PRIMARY_RADIUS_M, SUPPLEMENTARY_RADIUS_M)


def metric_specs(radii: Sequence[float] = DEFAULT_RADII) -> tuple[MetricSpec, ...]:
    """The metrics ``score_episode`` returns, in report order (SR, OSR, SPL per radius)."""
    per_radius = tuple(
        spec
        for radius in radii
        for spec in (
            MetricSpec(
                key=radius_key("sr", radius),
                label=radius_label("SR", radius),
                kind=KIND_RATE,
                higher_is_better=True,
            ),
            MetricSpec(
                key=radius_key("osr", radius),
                label=radius_label("OSR", radius),
                kind=KIND_RATE,
                higher_is_better=True,
            ),
            MetricSpec(
                key=radius_key("spl", radius),
                label=radius_label("SPL", radius),
                kind=KIND_RATE,
                higher_is_better=True,
            ),
        )
    )
    return (
        *per_radius,
        MetricSpec(key="dts_m", label="DTS", kind=KIND_DISTANCE, higher_is_better=False),
        MetricSpec(key="cr", label="CR", kind=KIND_RATE, higher_is_better=False),
    )


def is_success(trace: EpisodeTrace, radius_m: float) -> bool:
    """sigma_i: an explicit Stop within ``radius_m`` of the anchor, no collision at any
    time, within the action budget (AerialDojo-200K, section 3.2 "Task execution" and 3.3 SR).

    The radius is inclusive: a Stop at exactly ``radius_m`` (3D) succeeds.
    """
    return _ended_validly(trace) and final_distance(trace) <= radius_m


def _ended_validly(trace: EpisodeTrace) -> bool:
    return trace.stop_called and not trace.collided and trace.steps_used <= trace.action_budget


def score_episode(trace: EpisodeTrace, radii: Sequence[float] = DEFAULT_RADII) -> EpisodeScore:
    """Score one AerialDojo episode at every radius in ``radii``.

    Per radius r (keys ``sr_<r>m``, ``osr_<r>m``, ``spl_<r>m``):
      - SR_i = sigma_i (``is_success``).
      - OSR_i = 1 if the executed path ever comes within r of the anchor, checked along
        every segment between consecutive positions, "regardless of its final stopping
        decision or subsequent failure" (AerialDojo-200K, section 3.3): a collision after entering
        keeps it.
      - SPL_i = sigma_i * L_i / max(L_i, l_i) (AerialDojo-200K, eq. 4), L_i the reference length,
        l_i the executed translational length (eq. 2).

    Radius-free: DTS_i = ||p_final - p_anchor||_2, without subtracting the radius (key
    ``dts_m``); CR_i = 1 if any collision happened (key ``cr``).

    Args:
        trace: an AerialDojo episode.
        radii: success radii in metres.

    Returns:
        The score with one value per ``metric_specs(radii)`` key.
    """
    facts = PathFacts.of(trace)
    ended_validly = _ended_validly(trace)
    values: dict[str, float | None] = {}
    for radius, (sr, osr, spl) in _radius_keys(tuple(radii)):
        success = ended_validly and facts.final_distance_m <= radius
        values[sr] = float(success)
        values[osr] = float(facts.closest_approach_m <= radius)
        values[spl] = success_weighted_path_length(
            success, trace.reference_length_m, facts.executed_length_m
        )
    values["dts_m"] = facts.final_distance_m
    values["cr"] = float(trace.collided)
    return EpisodeScore.from_trace(trace, facts, values)


@functools.cache
def _radius_keys(radii: tuple[float, ...]) -> tuple[tuple[float, tuple[str, str, str]], ...]:
    """The keys of each radius's SR, OSR and SPL: formatted once per run, not per episode
    (a tenth of scoring 200,000 episodes)."""
    return tuple(
        (radius, (radius_key("sr", radius), radius_key("osr", radius), radius_key("spl", radius)))
        for radius in radii
    )
