"""What the metrics read about one finished episode: the executed path and how it ended."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from aerialdojo.errors import MetricsError

TERMINATION_STOPPED = "stopped"
TERMINATION_COLLIDED = "collided"
TERMINATION_BUDGET_EXHAUSTED = "budget_exhausted"
#: The agent's steps were refused more times in a row than the run allows (an illegal
#: action, asked again and again): its decision failure where the paper names no rule for it.
TERMINATION_INVALID_ACTION = "invalid_action"
#: The agent sent no action for the run's agent timeout and reported no fault of its own
#: services: its failure, scored.
TERMINATION_AGENT_TIMEOUT = "agent_timeout"
#: The agent's policy raised an error of its own instead of deciding (not a fault of the
#: services it depends on, which it reports as one): its failure, scored.
TERMINATION_AGENT_ERROR = "agent_error"
#: How an episode can end: the papers' Stop, collision or budget (AerialDojo-200K, section
#: 3.2 "Task execution"), and the agent's failures to act legally or at all
#: (docs/protocols/, issue 25).
TERMINATIONS = (
    TERMINATION_STOPPED,
    TERMINATION_COLLIDED,
    TERMINATION_BUDGET_EXHAUSTED,
    TERMINATION_INVALID_ACTION,
    TERMINATION_AGENT_TIMEOUT,
    TERMINATION_AGENT_ERROR,
)
POSITIONS_FROM_ACTIONS = "actions"
POSITIONS_FROM_POSE_TRACK = "pose_track"
POSITIONS_SOURCES = (POSITIONS_FROM_ACTIONS, POSITIONS_FROM_POSE_TRACK)

Point3 = tuple[float, float, float]
Point2 = tuple[float, float]


class ConvertedPositions(NamedTuple):
    """One trace's positions already converted and checked with others' (``convert_many``).

    Attributes:
        rows: the read-only (N >= 1, 3) array of finite floats (a view of the batch's).
        path: the same values as float triples.
    """

    rows: npt.NDArray[np.float64]
    path: tuple[Point3, ...]


#: Positions as given by a caller: an (N, 3) array, a sequence of (x, y, z) triples, or
#: converted with other traces' (``ConvertedPositions``).
PositionsLike = npt.NDArray[np.float64] | Sequence[Sequence[float]] | ConvertedPositions


def convert_many(many: Sequence[Any]) -> list[ConvertedPositions] | None:
    """The positions of many traces, as JSON records hold them (lists of triples of
    floats), converted and checked together: one array for all, and triples of the
    parsed floats themselves. One conversion per trace cost a merge of 200,000 records a
    sixth of its time.

    Returns:
        One entry per item of ``many``, the values ``EpisodeTrace`` would make of it; None
        unless every item is a non-empty list of lists of three finite floats (each trace
        then converts its own, and refuses what it must, as it always did).
    """
    counts = [len(positions) if type(positions) is list else 0 for positions in many]
    if not many or not all(counts):
        return None
    rows = list(itertools.chain.from_iterable(many))
    if set(map(type, rows)) != {list} or set(map(len, rows)) != {3}:
        return None
    values = list(itertools.chain.from_iterable(rows))
    if set(map(type, values)) != {float}:  # an int or a bool: converted by each trace
        return None
    array = np.fromiter(values, dtype=np.float64, count=len(values)).reshape(-1, 3)
    if not np.isfinite(array).all():
        return None
    array.setflags(write=False)
    triples = list(map(tuple, rows))
    ends = list(itertools.accumulate(counts))
    return [
        ConvertedPositions(array[start:end], tuple(triples[start:end]))
        for start, end in zip([0, *ends[:-1]], ends, strict=True)
    ]


def _converted(positions: PositionsLike, where: str) -> ConvertedPositions:
    """``positions`` as ``EpisodeTrace`` keeps them.

    Raises:
        MetricsError: not a non-empty sequence of finite numeric triples.
    """
    if isinstance(positions, ConvertedPositions):
        return positions
    try:
        rows = np.array(positions, dtype=np.float64)
    except (TypeError, ValueError) as error:  # ragged rows or non-numbers
        raise MetricsError(f"{where}: positions are not numeric triples: {error}") from error
    if rows.ndim != 2 or rows.shape[0] == 0 or rows.shape[1] != 3:
        raise MetricsError(f"{where}: positions must be (N>=1, 3), got shape {rows.shape}")
    if not np.isfinite(rows).all():
        raise MetricsError(f"{where}: positions contain non-finite values")
    rows.setflags(write=False)
    return ConvertedPositions(rows, tuple(map(tuple, rows.tolist())))


def _point3(value: Sequence[float], where: str) -> Point3:
    if len(value) != 3:
        raise MetricsError(f"{where}: expected (x, y, z), got {tuple(value)!r}")
    point = (float(value[0]), float(value[1]), float(value[2]))
    if not all(math.isfinite(c) for c in point):
        raise MetricsError(f"{where}: coordinates must be finite, got {point!r}")
    return point


@dataclass(frozen=True, kw_only=True)
class AgosCandidate:
    """One candidate region the UAV handed to the UGV (AGOS-Bench, appendix A.2.2).

    Attributes:
        candidate_id: the id the agents used for it.
        polygon_xy: ground footprint in the map frame, at least three (x, y) vertices in
            order; heights are dropped because the footprint lies on the ground.
        center: the candidate centre the UGV was sent to, map frame (for CErr, AGOS-Bench, appendix
        A.5).
    """

    candidate_id: str
    polygon_xy: tuple[Point2, ...]
    center: Point3

    def __post_init__(self) -> None:
        where = f"candidate {self.candidate_id!r}"
        vertices = tuple((float(x), float(y)) for x, y in self.polygon_xy)
        if len(vertices) < 3:
            raise MetricsError(f"{where}: polygon_xy needs >= 3 vertices, got {len(vertices)}")
        if not all(math.isfinite(c) for vertex in vertices for c in vertex):
            raise MetricsError(f"{where}: polygon_xy has non-finite vertices {vertices!r}")
        object.__setattr__(self, "polygon_xy", vertices)
        object.__setattr__(self, "center", _point3(self.center, f"{where}: center"))


@dataclass(frozen=True, kw_only=True)
class AgosRecord:
    """The air-ground part of an AGOS episode (AGOS-Bench, appendix A.2).

    Attributes:
        uav_decisions: K^UAV, logical UAV decision calls (DS, eq. 21).
        ugv_decisions: K^UGV, logical UGV decision calls.
        uav_budget: T_e, the UAV's own search budget in decision steps (ASE, eq. 11); in
            aerialdojo's runs the decisions the UAV was given of the budget both agents
            share, K^UAV (``protocols.agos.AgosTraceBuilder``); 0 when it made none.
        oracle_visible_uav_step: tau_e, the first UAV decision step (1-based) at which the
            target was oracle-visible from the UAV; None if it never was.
        candidates: candidate regions in the order the UAV proposed them (rank j = 1, 2, ...).
        confirmations: n^conf, CONFIRM actions the UGV executed.
        confirmation_valid: C_e, the episode ended with a CONFIRM the checker accepted
            (target visible in the six views, within 50 m, line of sight).
        ground_observation_support: O_e, the target appeared in the UGV's six-view ground
            observation at least once, as judged by the evaluator.
        candidate_workflow: the agents worked with structured candidates (AGOS-Agent);
            False for the Baseline, which has none, so that ACG is undefined for it
            (AGOS-Bench: "Baselines are omitted because they do not construct the structured
            candidate regions required to define ACG").
    """

    uav_decisions: int
    ugv_decisions: int
    uav_budget: int
    oracle_visible_uav_step: int | None
    candidates: tuple[AgosCandidate, ...] = ()
    confirmations: int = 0
    confirmation_valid: bool = False
    ground_observation_support: bool = False
    candidate_workflow: bool = True

    def check(self, episode_id: str) -> None:
        """Raise unless the record is self-consistent.

        Args:
            episode_id: named in the error message.

        Raises:
            MetricsError: a negative count or budget, tau outside [1, T_e], or a valid
                confirmation without any CONFIRM.
        """
        where = f"episode {episode_id!r}: agos"
        for name in ("uav_decisions", "ugv_decisions", "confirmations", "uav_budget"):
            if getattr(self, name) < 0:
                raise MetricsError(f"{where}.{name}={getattr(self, name)} must be >= 0")
        step = self.oracle_visible_uav_step
        if step is not None and not 1 <= step <= self.uav_budget:
            raise MetricsError(
                f"{where}.oracle_visible_uav_step={step} must lie in [1, {self.uav_budget}]"
            )
        if self.confirmation_valid and self.confirmations == 0:
            raise MetricsError(f"{where}: confirmation_valid is true but confirmations=0")
        if self.candidates and not self.candidate_workflow:
            raise MetricsError(f"{where}: candidates without the candidate workflow")


@dataclass(frozen=True, kw_only=True)
class EpisodeTrace:
    """One finished episode as the metrics see it: recorded facts, no simulator.

    The evaluator builds it from live events, the bag reader from a bag, the JSON-lines
    loader from a trajectory log; all three are scored by the same functions.

    Attributes:
        episode_id: unique within a run.
        benchmark: the benchmark's name; its protocol scores the trace and checks what only
            it knows (``protocols.BenchmarkProtocol.check_trace``: the name, and the
            air-ground record where, and only where, the benchmark is air-ground).
        scene: the map, e.g. ``"Mall_0"`` (the unit of AerialDojo's map-level averaging).
        family: scene family, e.g. ``"urban"``.
        setting: ``base``/``standard``/``long_horizon``, ``easy``/``mid``/``hard``, ...
        split: e.g. ``"test"``.
        positions: executed positions in order, map frame, metres, starting at the start
            position and ending where the episode ended (the Stop position, or the contact
            pose after a collision); for AGOS the UGV's. Given as an (N, 3) array, a
            sequence of triples or ``ConvertedPositions``; stored as a tuple of float
            triples.
        positions_source: ``"actions"``: one position per executed action but Stop, after the
            start; ``"pose_track"``: a robot's pose topic sampled between the episode's start
            and end (a bag scored with ``--pose-topic`` or a mapping), as many as it held.
        stop_called: the agent ended the episode itself (Stop; AGOS: CONFIRM).
        collided: a collision happened at any time.
        collision_step: the 1-based action step during which it happened; None without one.
        steps_used: actions executed, Stop included.
        action_budget: actions allowed.
        target: target anchor (AerialDojo), goal coordinates (CityNav) or target centre
            (AGOS), map frame.
        reference_length_m: L_i, the reference trajectory's translational length (> 0).
        termination: one of ``TERMINATIONS``.
        agos: the air-ground record (AGOS); None for the other benchmarks.
        conditions: what the episode was run under and which task group it belongs to,
            name -> value, e.g. ``{"distribution": "ood", "goal": "image", "observation":
            "front", "odometry": "off"}`` or ``{"mode": "agent", "ablation": "no_rgpp"}``;
            reports break results down by them (``metrics.aggregate``).
    """

    episode_id: str
    benchmark: str
    scene: str
    family: str
    setting: str
    split: str
    positions: PositionsLike
    stop_called: bool
    collided: bool
    collision_step: int | None
    steps_used: int
    action_budget: int
    target: Point3
    reference_length_m: float
    termination: str
    agos: AgosRecord | None = None
    conditions: Mapping[str, str] = field(default_factory=dict)
    positions_source: str = POSITIONS_FROM_ACTIONS

    def __post_init__(self) -> None:
        where = f"episode {self.episode_id!r}"
        rows, path = _converted(self.positions, where)
        object.__setattr__(self, "positions", path)
        # Kept beside the triples: the metrics measure the path with numpy, and converting
        # the triples back cost as much as scoring them (merges of 200,000 records).
        object.__setattr__(self, "_position_rows", rows)
        object.__setattr__(self, "target", _point3(self.target, f"{where}: target"))
        bad = {
            name: value
            for name, value in self.conditions.items()
            if not (isinstance(name, str) and name and isinstance(value, str) and value)
        }
        if bad:
            raise MetricsError(f"{where}: conditions must map names to non-empty text, got {bad}")
        object.__setattr__(self, "conditions", dict(sorted(self.conditions.items())))
        self._check_ending(where)
        if self.action_budget <= 0 or self.steps_used < 0:
            raise MetricsError(
                f"{where}: steps_used={self.steps_used} must be >= 0 and "
                f"action_budget={self.action_budget} > 0"
            )
        if not (math.isfinite(self.reference_length_m) and self.reference_length_m > 0.0):
            raise MetricsError(
                f"{where}: reference_length_m={self.reference_length_m} must be finite and > 0"
            )
        if self.agos is not None:
            self.agos.check(self.episode_id)

    def _check_ending(self, where: str) -> None:
        if self.positions_source not in POSITIONS_SOURCES:
            raise MetricsError(
                f"{where}: positions_source {self.positions_source!r} is not one of "
                f"{', '.join(POSITIONS_SOURCES)}"
            )
        if self.termination not in TERMINATIONS:
            raise MetricsError(
                f"{where}: termination {self.termination!r} is not one of {', '.join(TERMINATIONS)}"
            )
        if self.stop_called != (self.termination == TERMINATION_STOPPED):
            raise MetricsError(
                f"{where}: stop_called={self.stop_called} contradicts "
                f"termination={self.termination!r}"
            )
        if self.termination == TERMINATION_COLLIDED and not self.collided:
            raise MetricsError(f"{where}: termination 'collided' but collided=false")
        if self.collided != (self.collision_step is not None):
            raise MetricsError(
                f"{where}: collided={self.collided} needs collision_step "
                f"{'set' if self.collided else 'None'}, got {self.collision_step}"
            )
        if self.collision_step is not None and not 1 <= self.collision_step <= self.steps_used:
            raise MetricsError(
                f"{where}: collision_step={self.collision_step} must lie in "
                f"[1, steps_used={self.steps_used}]"
            )

    def __setstate__(self, state: dict[str, object]) -> None:
        """Unpickled (a merge's reader processes send their traces): the positions array
        stays read-only, as ``__post_init__`` left it."""
        self.__dict__.update(state)
        rows = state.get("_position_rows")
        if isinstance(rows, np.ndarray):
            rows.setflags(write=False)

    @property
    def path(self) -> tuple[Point3, ...]:
        """The executed positions as float triples (``positions`` after normalisation)."""
        return cast("tuple[Point3, ...]", self.positions)  # normalised in __post_init__

    @property
    def position_array(self) -> npt.NDArray[np.float64]:
        """The executed positions as a read-only (N, 3) float64 array, the same values as
        ``path``."""
        rows: npt.NDArray[np.float64] = self.__dict__["_position_rows"]
        return rows

    @property
    def final_position(self) -> Point3:
        """Where the episode ended: the Stop position, the contact pose or the last pose."""
        return self.path[-1]
