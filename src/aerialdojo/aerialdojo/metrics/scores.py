"""Per-episode scores and the description of each metric they hold."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aerialdojo.metrics import spatial
from aerialdojo.metrics.trace import EpisodeTrace

KIND_RATE = "rate"  # a fraction in [0, 1]; reports print it in %
KIND_DISTANCE = "distance"  # metres
KIND_COUNT = "count"  # decision steps


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """How to name, print and read one metric.

    Attributes:
        key: key in scores and ``metrics.json``, e.g. ``"sr_3m"``.
        label: column heading, e.g. ``"SR@3m"``.
        kind: ``KIND_RATE``, ``KIND_DISTANCE`` or ``KIND_COUNT``.
        higher_is_better: direction of improvement (for comparisons and plots).
        conditional: averaged only over the episodes in its support (per-episode value None
            outside it); reports print the support next to it.
    """

    key: str
    label: str
    kind: str
    higher_is_better: bool
    conditional: bool = False

    @property
    def unit(self) -> str:
        """The unit reports print: ``%``, ``m`` or ``steps``."""
        return {KIND_RATE: "%", KIND_DISTANCE: "m", KIND_COUNT: "steps"}[self.kind]


def radius_key(name: str, radius_m: float) -> str:
    """Key of a radius-dependent metric, e.g. ``radius_key("sr", 3.0) == "sr_3m"``."""
    return f"{name}_{radius_m:g}m"


def radius_label(name: str, radius_m: float) -> str:
    """Label of a radius-dependent metric, e.g. ``"SR@3m"``."""
    return f"{name}@{radius_m:g}m"


def success_weighted_path_length(
    success: bool, reference_length_m: float, executed_length_m: float
) -> float:
    """SPL_i = sigma_i * L_i / max(L_i, l_i) (AerialDojo-200K, eq. 4).

    The max keeps it within [0, 1]: a path shorter than the reference earns no bonus, and a
    zero executed length (success without moving) gives exactly sigma_i.
    """
    if not success:
        return 0.0
    return reference_length_m / max(reference_length_m, executed_length_m)


@dataclass(frozen=True, kw_only=True)
class PathFacts:
    """Where an executed path went relative to its target; computed once per episode.

    Attributes:
        final_distance_m: ||p_final - p_target||_2 (DTS, NE).
        closest_approach_m: smallest distance between the path's segments and the target.
        executed_length_m: l, translational length of the path.
    """

    final_distance_m: float
    closest_approach_m: float
    executed_length_m: float

    @classmethod
    def of(cls, trace: EpisodeTrace) -> PathFacts:
        """The facts of ``trace``'s executed positions and target, measured once per trace
        and kept with it (pickled with it, too): a merge's reader processes measure the
        paths they read, and a report's radius sweep asks again at every radius."""
        facts: PathFacts | None = trace.__dict__.get(_FACTS_KEY)
        if facts is None:
            closest_m = spatial.closest_approach(
                trace.target, trace.path, position_array=trace.position_array
            )
            facts = cls._kept(trace, closest_m)
        return facts

    @classmethod
    def measure(cls, traces: Sequence[EpisodeTrace]) -> None:
        """``PathFacts.of`` of every trace not yet measured, the same values, their
        segments measured in one numpy pass (``spatial.segment_approaches``): one pass
        per trace cost a merge of 200,000 records a seventh of its time."""
        pending = [trace for trace in traces if _FACTS_KEY not in trace.__dict__]
        if not pending:
            return
        approaches = spatial.segment_approaches(
            np.array([trace.target for trace in pending], dtype=np.float64),
            np.concatenate([trace.position_array for trace in pending]),
            [len(trace.path) for trace in pending],
        )
        for trace, segments_m in zip(pending, approaches.tolist(), strict=True):
            cls._kept(trace, spatial.approach_with_positions(trace.target, trace.path, segments_m))

    @classmethod
    def _kept(cls, trace: EpisodeTrace, closest_approach_m: float) -> PathFacts:
        """The facts of ``trace`` with its closest approach measured, kept with it."""
        facts = cls(
            final_distance_m=final_distance(trace),
            closest_approach_m=closest_approach_m,
            executed_length_m=spatial.path_length(trace.path),
        )
        # The trace is frozen and its path and target never change: the facts cannot go
        # stale.
        trace.__dict__[_FACTS_KEY] = facts
        return facts


#: Where ``PathFacts.of`` keeps a trace's facts.
_FACTS_KEY = "_path_facts"


@dataclass(frozen=True, kw_only=True)
class EpisodeScore:
    """One episode's metric values and the facts they were computed from.

    Attributes:
        episode_id, benchmark, scene, family, setting, split: copied from the trace.
        termination: how the episode ended.
        steps_used: actions executed.
        final_distance_m: 3D distance from the final position to the target.
        closest_approach_m: smallest 3D distance between the executed path and the target.
        executed_length_m: l_i, translational length of the executed path.
        reference_length_m: L_i.
        values: metric key -> per-episode value; None where the episode lies outside a
            conditional metric's support (e.g. AGOS GVA with V_e = 0).
        conditions: copied from the trace (``EpisodeTrace.conditions``).
    """

    episode_id: str
    benchmark: str
    scene: str
    family: str
    setting: str
    split: str
    termination: str
    steps_used: int
    final_distance_m: float
    closest_approach_m: float
    executed_length_m: float
    reference_length_m: float
    values: Mapping[str, float | None]
    conditions: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_trace(
        cls, trace: EpisodeTrace, facts: PathFacts, values: Mapping[str, float | None]
    ) -> EpisodeScore:
        """Attach ``values`` to the facts of ``trace`` that every benchmark reports."""
        return cls(
            episode_id=trace.episode_id,
            benchmark=trace.benchmark,
            scene=trace.scene,
            family=trace.family,
            setting=trace.setting,
            split=trace.split,
            termination=trace.termination,
            steps_used=trace.steps_used,
            final_distance_m=facts.final_distance_m,
            closest_approach_m=facts.closest_approach_m,
            executed_length_m=facts.executed_length_m,
            reference_length_m=trace.reference_length_m,
            values=dict(values),
            conditions=dict(trace.conditions),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (``metrics.json`` ``episodes`` entries)."""
        return {
            "episode_id": self.episode_id,
            "benchmark": self.benchmark,
            "scene": self.scene,
            "family": self.family,
            "setting": self.setting,
            "split": self.split,
            "termination": self.termination,
            "steps_used": self.steps_used,
            "final_distance_m": self.final_distance_m,
            "closest_approach_m": self.closest_approach_m,
            "executed_length_m": self.executed_length_m,
            "reference_length_m": self.reference_length_m,
            "values": dict(self.values),
            "conditions": dict(self.conditions),
        }


def final_distance(trace: EpisodeTrace) -> float:
    """||p_final - p_target||_2 in 3D: DTS (AerialDojo-200K, section 3.3) and NE (AGOS-Bench,
    CityNav)."""
    return math.dist(trace.final_position, trace.target)
