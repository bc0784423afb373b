"""AGOS-Bench metrics per episode: SR, OSR, SPL, NE, ASE, ACG, GVA, DS, CErr (appendices A.2,
A.5)."""

from __future__ import annotations

import math

from aerialdojo.errors import MetricsError
from aerialdojo.metrics import spatial
from aerialdojo.metrics.scores import (
    KIND_COUNT,
    KIND_DISTANCE,
    KIND_RATE,
    EpisodeScore,
    MetricSpec,
    PathFacts,
    success_weighted_path_length,
)
from aerialdojo.metrics.trace import AgosRecord, EpisodeTrace, Point3

#: R, the benchmark spatial scale of ACG (AGOS-Bench, eq. 13).
ACG_SCALE_M = 50.0

#: The metrics ``score_episode`` returns, in report order.
METRIC_SPECS = (
    MetricSpec(key="sr", label="SR", kind=KIND_RATE, higher_is_better=True),
    MetricSpec(key="osr", label="OSR", kind=KIND_RATE, higher_is_better=True),
    MetricSpec(key="spl", label="SPL", kind=KIND_RATE, higher_is_better=True),
    MetricSpec(
        key="ne_m", label="NE", kind=KIND_DISTANCE, higher_is_better=False, conditional=True
    ),
    MetricSpec(key="ase", label="ASE", kind=KIND_RATE, higher_is_better=True),
    MetricSpec(key="acg", label="ACG", kind=KIND_RATE, higher_is_better=True, conditional=True),
    MetricSpec(key="gva", label="GVA", kind=KIND_RATE, higher_is_better=True, conditional=True),
    MetricSpec(key="ds", label="DS", kind=KIND_COUNT, higher_is_better=False),
    MetricSpec(key="ds_uav", label="DS-UAV", kind=KIND_COUNT, higher_is_better=False),
    MetricSpec(key="ds_ugv", label="DS-UGV", kind=KIND_COUNT, higher_is_better=False),
    MetricSpec(
        key="cerr_m", label="CErr", kind=KIND_DISTANCE, higher_is_better=False, conditional=True
    ),
)


def aerial_search_efficiency(record: AgosRecord) -> float:
    """ASE_e = (T_e - tau_e + 1) / T_e if the target became oracle-visible, else 0 (eq. 11).

    tau_e is 1-based: a target visible at the first UAV decision scores 1. T_e is the UAV's
    own search budget (``AgosRecord.uav_budget``).
    """
    tau = record.oracle_visible_uav_step
    if tau is None:
        return 0.0
    return (record.uav_budget - tau + 1) / record.uav_budget


def aerial_candidate_guidance(record: AgosRecord, target: Point3) -> float:
    """ACG_e = max_j [1 / log2(j + 1)] * R / (R + d_{e,j}), 0 without candidates (eq. 15).

    j is the candidate's 1-based rank in proposal order; d_{e,j} the horizontal distance from
    the target centre to the candidate's ground polygon, 0 when the centre lies inside it.
    """
    return max(
        (
            (1.0 / math.log2(rank + 1))
            * ACG_SCALE_M
            / (ACG_SCALE_M + spatial.polygon_distance_xy(target, candidate.polygon_xy))
            for rank, candidate in enumerate(record.candidates, start=1)
        ),
        default=0.0,
    )


def gva_included(record: AgosRecord) -> bool:
    """V_e = [O_e = 1 or F_e = 1], F_e = [C_e = 0 and n_conf > 0] (eqs. 17-18)."""
    invalid_confirmation = not record.confirmation_valid and record.confirmations > 0
    return record.ground_observation_support or invalid_confirmation


def candidate_error(record: AgosRecord, target: Point3) -> float | None:
    """CErr_e: 3D distance from the closest candidate centre to the target; None without one.

    AGOS-Bench, appendix A.5 defines CErr as "the mean Euclidean distance in meters from the
    candidate center to the ground-truth target location", one value per episode, and explains low
    CErr by long episodes in which the UAV "eventually annotate[s] candidates near the
    target": the episode's best candidate, which is what the minimum measures.
    """
    return min(
        (math.dist(candidate.center, target) for candidate in record.candidates), default=None
    )


def score_episode(trace: EpisodeTrace) -> EpisodeScore:
    """Score one AGOS episode; positions and lengths are the UGV's (AGOS-Bench, "Evaluation
    Metrics": SR, OSR, SPL and NE "are computed solely from the UGV trajectory and
    ground-level verification outcome").

    - SR_e = C_e, a CONFIRM the benchmark checker accepted (A.2.3): the checker already
      demands the target within 50 m, visible and in line of sight.
    - OSR_e = O_e, the ground-observation support: "this corresponds to the episode-level
      'osr' flag" (A.2.3).
    - SPL_e = C_e * L_e / max(L_e, l_e) with the UGV's reference and executed lengths.
    - NE_e = ||p_UGV,final - p_target||_2, only for episodes that ended with a CONFIRM (the
      UGV's stop); N/A without any. AGOS-Bench, Table 3 marks NE undefined ("-") for runs with
      no such episode, and its Table 4 totals (NE 129.9 m from 67.0/149.3/171.6 m over
      40/40/40 episodes) are support-weighted, which a mean over all episodes cannot give.
    - ASE_e (eq. 11), ACG_e (eq. 15; outside the support for the Baseline, which builds no
      candidates: "Baselines are omitted because they do not construct the structured
      candidate regions required to define ACG"), GVA: value C_e with V_e = 1, outside the
      support otherwise (eqs. 17-20; GVA-Support is the support count).
    - DS_e = K_UAV + K_UGV (eq. 21), with DS-UAV and DS-UGV (eq. 23).
    - CErr_e (A.5): see ``candidate_error``; episodes without candidates are outside its
      support.

    Args:
        trace: an AGOS episode (its ``agos`` record present).

    Returns:
        The score with one value per ``METRIC_SPECS`` key.

    Raises:
        MetricsError: ``trace`` is not an AGOS episode.
    """
    record = trace.agos
    if record is None:
        raise MetricsError(f"episode {trace.episode_id!r}: {trace.benchmark} trace, not AGOS")
    facts = PathFacts.of(trace)
    success = record.confirmation_valid
    values: dict[str, float | None] = {
        "sr": float(success),
        "osr": float(record.ground_observation_support),
        "spl": success_weighted_path_length(
            success, trace.reference_length_m, facts.executed_length_m
        ),
        "ne_m": facts.final_distance_m if trace.stop_called else None,
        "ase": aerial_search_efficiency(record),
        "acg": aerial_candidate_guidance(record, trace.target)
        if record.candidate_workflow
        else None,
        "gva": float(success) if gva_included(record) else None,
        "ds": float(record.uav_decisions + record.ugv_decisions),
        "ds_uav": float(record.uav_decisions),
        "ds_ugv": float(record.ugv_decisions),
        "cerr_m": candidate_error(record, trace.target),
    }
    return EpisodeScore.from_trace(trace, facts, values)
