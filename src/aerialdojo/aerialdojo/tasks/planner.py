"""Reference-trajectory planners: Hybrid A* over the AerialDojo actions, and a voxel A* baseline.

Both search lazily: successors are pushed unchecked and the swept-sphere test of the motion
that reached a node runs only when the node is popped, so the many successors A* never
expands cost no collision query. A node found blocked is dropped without closing its cell.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np

from aerialdojo.actions import AERIALDOJO_ACTIONS, Action, target_pose
from aerialdojo.geometry import Pose


class SweepHit(Protocol):
    """The first contact of a swept sphere."""

    @property
    def fraction(self) -> float:
        """Where along the motion the contact is: 0 at its start, 1 at its end."""
        ...


class CollisionWorld(Protocol):
    """The collision queries a planner needs (the embedded simulator's collision world)."""

    def sweep_sphere(self, start: np.ndarray, end: np.ndarray, radius: float) -> SweepHit | None:
        """The first contact of a sphere moved from ``start`` to ``end``, or None if free."""
        ...

    def sphere_is_free(self, center: np.ndarray, radius: float) -> bool:
        """Whether a sphere at ``center`` touches no geometry."""
        ...


@dataclass(frozen=True, kw_only=True)
class PlannerConfig:
    """Parameters shared by both planners.

    Attributes:
        collision_radius_m: radius of the swept sphere (AerialDojo-200K: 0.25 m).
        goal_tolerance_m: a route ends once it is this close to the goal; the discrete
            actions cannot hit an arbitrary anchor exactly.
        cell_m: horizontal edge of a closed-set cell (Hybrid A*) or voxel edge (grid A*).
        action_cost_m: cost of every action on top of its translation, so that among routes
            of similar length the one with fewer actions (and turns) wins.
        max_length_m: routes this long or longer are pruned (the paper keeps L < 100 m).
        max_expansions: give up after this many expansions.
    """

    collision_radius_m: float = 0.25
    goal_tolerance_m: float = 1.0
    cell_m: float = 1.0
    action_cost_m: float = 0.2
    max_length_m: float = 100.0
    max_expansions: int = 50_000


@dataclass(frozen=True, kw_only=True)
class SearchStats:
    """What a search cost.

    Attributes:
        expansions: nodes popped, found free and expanded.
        collision_checks: swept-sphere queries made.
        seconds: wall-clock time of the search.
    """

    expansions: int
    collision_checks: int
    seconds: float


@dataclass(frozen=True, kw_only=True)
class ActionPlan:
    """A Hybrid A* result.

    Attributes:
        found: whether a route to the goal was found.
        actions: the legal actions from the start (empty if not found).
        poses: the start and the pose after each action, from ``actions.target_pose``.
        length_m: translational length L of the route.
        stats: what the search cost.
    """

    found: bool
    actions: tuple[Action, ...]
    poses: tuple[Pose, ...]
    length_m: float
    stats: SearchStats


@dataclass(frozen=True, kw_only=True)
class PointPlan:
    """A grid A* result: voxel-centre waypoints, not executable by the discrete actions.

    Attributes:
        found: whether a route to the goal was found.
        points: waypoints from the start (empty if not found).
        length_m: polyline length of the route.
        stats: what the search cost.
    """

    found: bool
    points: tuple[tuple[float, float, float], ...]
    length_m: float
    stats: SearchStats


def path_length(poses: Sequence[Pose]) -> float:
    """Translational length L of a pose sequence (AerialDojo-200K, eq. 2); turns add nothing."""
    return sum(math.dist((a.x, a.y, a.z), (b.x, b.y, b.z)) for a, b in itertools.pairwise(poses))


Point = tuple[float, float, float]
Bounds = tuple[Point, Point]
StateT = TypeVar("StateT")

# One successor: (state, closed-set key, step cost, step length, label, heuristic cost,
# lower bound of the length still to go).
_Successor = tuple[StateT, Hashable, float, float, int, float, float]


class _SearchSpace(Protocol[StateT]):
    def expand(self, state: StateT) -> list[_Successor[StateT]]: ...

    def terminal_cost(self, state: StateT) -> float | None: ...

    def is_free(self, parent: StateT, state: StateT, label: int) -> bool: ...


@dataclass(frozen=True, slots=True)
class _SearchResult(Generic[StateT]):
    # (state, label of the step into it) from the start (label -1); None if not found.
    path: list[tuple[StateT, int]] | None
    length_m: float
    expansions: int
    collision_checks: int


def _lazy_astar(
    space: _SearchSpace[StateT], start: StateT, start_key: Hashable, config: PlannerConfig
) -> _SearchResult[StateT]:
    """A* with collision checks deferred to expansion and a cap on translational length.

    A route may end at any node within the goal tolerance, at the extra cost the space's
    ``terminal_cost`` charges for the remaining offset: such a node, once expanded, also
    queues a terminal entry priced at its exact total, and the search ends when a terminal
    entry is popped. Charging the offset, rather than treating the whole tolerance ball as
    free, lets the heuristic stay admissible without a slack that would widen the search.
    Ties on f go to the entry nearer the goal (smaller heuristic).
    """
    states: list[StateT] = [start]
    parents = [-1]
    labels = [-1]
    lengths = [0.0]
    costs = [0.0]
    keys: list[Hashable] = [start_key]
    closed: set[Hashable] = set()
    tie = itertools.count()
    heap = [(0.0, 0.0, next(tie), 0, False)]
    expansions = 0
    checks = 0
    while heap and expansions < config.max_expansions:
        *_, node, terminal = heapq.heappop(heap)
        if terminal:
            path = []
            walk = node
            while walk >= 0:
                path.append((states[walk], labels[walk]))
                walk = parents[walk]
            path.reverse()
            return _SearchResult(path, lengths[node], expansions, checks)
        if keys[node] in closed:
            continue
        state = states[node]
        if parents[node] >= 0:
            checks += 1
            if not space.is_free(states[parents[node]], state, labels[node]):
                continue
        closed.add(keys[node])
        offset_cost = space.terminal_cost(state)
        if offset_cost is not None:
            heapq.heappush(heap, (costs[node] + offset_cost, 0.0, next(tie), node, True))
        expansions += 1
        for successor, key, step_cost, step_length, label, to_go, length_to_go in space.expand(
            state
        ):
            if key in closed:
                continue
            length = lengths[node] + step_length
            if length + length_to_go >= config.max_length_m:
                continue
            cost = costs[node] + step_cost
            states.append(successor)
            parents.append(node)
            labels.append(label)
            lengths.append(length)
            costs.append(cost)
            keys.append(key)
            heapq.heappush(heap, (cost + to_go, to_go, next(tie), len(states) - 1, False))
    return _SearchResult(None, 0.0, expansions, checks)


def _stats(result: _SearchResult[StateT] | None, began: float) -> SearchStats:
    return SearchStats(
        expansions=result.expansions if result else 0,
        collision_checks=result.collision_checks if result else 0,
        seconds=time.perf_counter() - began,
    )


def _as_point(point: Sequence[float] | np.ndarray) -> Point:
    return (float(point[0]), float(point[1]), float(point[2]))


def _bounds_arrays(bounds: Bounds | None) -> tuple[np.ndarray, np.ndarray]:
    if bounds is None:
        return np.full(3, -np.inf), np.full(3, np.inf)
    return np.asarray(bounds[0], dtype=np.float64), np.asarray(bounds[1], dtype=np.float64)


def _kind(name: str) -> tuple[float, ...]:
    return next(kind.magnitudes for kind in AERIALDOJO_ACTIONS if kind.name == name)


_TURN_STEP_DEG = _kind("TurnLeft")[0]
#: Every reachable yaw is the start yaw plus a multiple of the turn step: 24 headings.
_HEADINGS = round(360.0 / _TURN_STEP_DEG)
_QUARTER = _HEADINGS // 4
_HORIZONTAL_MAGNITUDES = _kind("MoveForward")
_VERTICAL_MAGNITUDES = _kind("MoveUp")
_LONGEST_HORIZONTAL_M = max(_HORIZONTAL_MAGNITUDES)
_LONGEST_VERTICAL_M = max(_VERTICAL_MAGNITUDES)
_RAY_UP = _HEADINGS
_RAY_DOWN = _HEADINGS + 1


@dataclass(frozen=True, slots=True)
class _Macro:
    """Turns (``turns`` times ``turn``, possibly none) then one translation.

    ``ray`` names the line the translation runs along: a horizontal direction index
    (relative to the start yaw), or ``_RAY_UP`` / ``_RAY_DOWN``.
    """

    turn: str
    turns: int
    move: Action
    heading_change: int
    ray: int

    @property
    def share_of_ray(self) -> float:
        """The move's length over the longest move along the same ray."""
        vertical = self.ray in (_RAY_UP, _RAY_DOWN)
        return self.move.magnitude / (_LONGEST_VERTICAL_M if vertical else _LONGEST_HORIZONTAL_M)

    def actions(self) -> list[Action]:
        return [Action(self.turn, _TURN_STEP_DEG)] * self.turns + [self.move]


def _facing(heading: int, direction: int, magnitude: float) -> _Macro:
    """Move ``magnitude`` along direction index ``direction`` from heading index ``heading``
    with the fewest turns: forward, or left or right of the turned heading.

    Direction index d means yaw = start yaw + d * step. MoveLeft goes a quarter turn
    counter-clockwise of the heading, MoveRight a quarter turn clockwise.
    """
    options = []
    for move, offset in (("MoveForward", 0), ("MoveLeft", _QUARTER), ("MoveRight", -_QUARTER)):
        needed = (direction - offset - heading) % _HEADINGS  # counter-clockwise steps
        if needed <= _HEADINGS // 2:
            options.append((needed, "TurnLeft", needed, move))
        if needed >= _HEADINGS // 2:
            options.append((_HEADINGS - needed, "TurnRight", -(_HEADINGS - needed), move))
    turns, turn, change, move = min(options)
    return _Macro(turn, turns, Action(move, magnitude), change, direction)


def _vertical(magnitude: float) -> _Macro:
    """Climb (positive) or descend (negative) by ``|magnitude|`` without turning."""
    move, ray = ("MoveUp", _RAY_UP) if magnitude > 0 else ("MoveDown", _RAY_DOWN)
    return _Macro("TurnLeft", 0, Action(move, abs(magnitude)), 0, ray)


def _macros_from(heading: int) -> list[_Macro]:
    """From heading index ``heading``: every horizontal direction and magnitude, then every
    vertical move."""
    horizontal = [
        _facing(heading, direction, magnitude)
        for direction in range(_HEADINGS)
        for magnitude in _HORIZONTAL_MAGNITUDES
    ]
    vertical = [_vertical(sign * m) for sign in (1.0, -1.0) for m in _VERTICAL_MAGNITUDES]
    return horizontal + vertical


# A Hybrid A* state: continuous position and a heading index (yaw = start yaw + step * index).
_HybridState = tuple[float, float, float, int]


class _HybridSpace:
    """The AerialDojo actions from continuous positions and exact headings.

    A successor is one translation, preceded by the fewest turns that make it available
    (MoveLeft and MoveRight reach quarter-turn directions without turning). The closed set
    bins positions only: horizontally in ``cell_m`` cells, vertically in whole metres, which
    is exact because vertical moves are whole metres. Dropping the heading from the key
    gives up a little optimality in the number of turns for a 24-fold smaller search.

    Objective: L + action_cost_m * (number of actions) + M(offset left at the end), where
    M(v) = N(v_xy) + |v_z| and N is the norm whose unit ball is the 24-gon of the horizontal
    directions (|v| cos(t - 7.5 deg) / cos 7.5 deg, t degrees past the nearest direction).
    Horizontal and vertical moves are separate actions and horizontal ones run along those
    24 directions, so travel covering a displacement d is at least M(d); M being a norm,
    M(goal - p) never overestimates travel plus final offset. The action term adds at least
    (N / 5 + |v_z| / 2, less what the goal tolerance can save) actions.
    """

    def __init__(
        self,
        world: CollisionWorld,
        start: Pose,
        goal: Point,
        bounds: Bounds | None,
        config: PlannerConfig,
    ) -> None:
        self._world = world
        self._start = start
        self._goal = np.asarray(goal)
        self._low, self._high = _bounds_arrays(bounds)
        self._config = config
        tolerance = config.goal_tolerance_m
        self._half_step = math.radians(_TURN_STEP_DEG) / 2.0
        # Ending anywhere within the tolerance saves at most this much length or actions.
        self._length_slack = tolerance * math.hypot(1.0 / math.cos(self._half_step), 1.0)
        self._action_slack = tolerance * math.hypot(
            1.0 / _LONGEST_HORIZONTAL_M, 1.0 / _LONGEST_VERTICAL_M
        )
        self.macros = [_macros_from(heading) for heading in range(_HEADINGS)]
        self._displacement: list[np.ndarray] = []
        self._heading: list[np.ndarray] = []
        self._cost: list[np.ndarray] = []
        self._length: list[np.ndarray] = []
        for heading, macros in enumerate(self.macros):
            yaw = start.yaw + math.radians(_TURN_STEP_DEG * heading)
            rows = []
            for macro in macros:
                turned = Pose(
                    0.0, 0.0, 0.0, yaw + math.radians(_TURN_STEP_DEG * macro.heading_change)
                )
                rows.append(target_pose(turned, macro.move).position)
            self._displacement.append(np.array(rows))
            self._heading.append(
                np.array([(heading + m.heading_change) % _HEADINGS for m in macros])
            )
            self._length.append(np.array([m.move.magnitude for m in macros]))
            self._cost.append(
                self._length[-1] + config.action_cost_m * np.array([m.turns + 1 for m in macros])
            )
        self._longest_move = {
            macro.ray: displacement
            for heading in range(_HEADINGS)
            for displacement, macro in zip(
                self._displacement[heading], self.macros[heading], strict=True
            )
            if macro.share_of_ray == 1.0
        }
        # Contact fraction (inf: free) of the longest move along a ray from a position.
        self._contacts: dict[tuple[float, float, float, int], float] = {}

    def key(self, position: np.ndarray) -> list[tuple[int, int, int]]:
        offset = position - np.array((self._start.x, self._start.y, self._start.z))
        cells = np.floor(offset[:, :2] / self._config.cell_m + 0.5).astype(np.int64)
        levels = np.rint(offset[:, 2]).astype(np.int64)
        return list(zip(cells[:, 0].tolist(), cells[:, 1].tolist(), levels.tolist(), strict=True))

    def _metric(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N of the horizontal, |vertical|) offset from each position to the goal."""
        delta = self._goal - positions
        horizontal = np.hypot(delta[:, 0], delta[:, 1])
        past_direction = np.mod(
            np.arctan2(delta[:, 1], delta[:, 0]) - self._start.yaw, 2.0 * self._half_step
        )
        polygonal = (
            horizontal * np.cos(past_direction - self._half_step) / math.cos(self._half_step)
        )
        return polygonal, np.abs(delta[:, 2])

    def lower_bounds(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(heuristic cost, lower bound of the length still to travel) of each position."""
        polygonal, vertical = self._metric(positions)
        actions = np.maximum(
            0.0,
            polygonal / _LONGEST_HORIZONTAL_M + vertical / _LONGEST_VERTICAL_M - self._action_slack,
        )
        offset = polygonal + vertical
        heuristic = offset + self._config.action_cost_m * actions
        return heuristic, np.maximum(0.0, offset - self._length_slack)

    def expand(self, state: _HybridState) -> list[_Successor[_HybridState]]:
        heading = state[3]
        positions = np.array(state[:3]) + self._displacement[heading]
        labels = np.flatnonzero(
            np.all((positions >= self._low) & (positions <= self._high), axis=1)
        )
        positions = positions[labels]
        to_go, length_to_go = self.lower_bounds(positions)
        states = [
            (x, y, z, turned)
            for (x, y, z), turned in zip(
                positions.tolist(), self._heading[heading][labels].tolist(), strict=True
            )
        ]
        return list(
            zip(
                states,
                self.key(positions),
                self._cost[heading][labels].tolist(),
                self._length[heading][labels].tolist(),
                labels.tolist(),
                to_go.tolist(),
                length_to_go.tolist(),
                strict=True,
            )
        )

    def terminal_cost(self, state: _HybridState) -> float | None:
        if math.dist(state[:3], self._goal) > self._config.goal_tolerance_m:
            return None
        polygonal, vertical = self._metric(np.array([state[:3]]))
        return float(polygonal[0] + vertical[0])

    def is_free(self, parent: _HybridState, state: _HybridState, label: int) -> bool:
        """Whether the move into ``state`` is free. Moves of 1, 3 and 5 m from one position in
        one direction share a ray: one sweep of the longest decides all three."""
        macro = self.macros[parent[3]][label]
        key = (parent[0], parent[1], parent[2], macro.ray)
        contact = self._contacts.get(key)
        if contact is None:
            origin = np.array(parent[:3])
            hit = self._world.sweep_sphere(
                origin, origin + self._longest_move[macro.ray], self._config.collision_radius_m
            )
            contact = math.inf if hit is None else hit.fraction
            self._contacts[key] = contact
        return bool(macro.share_of_ray < contact)


def plan_actions(
    world: CollisionWorld,
    start: Pose,
    goal: Sequence[float] | np.ndarray,
    *,
    config: PlannerConfig | None = None,
    bounds: Bounds | None = None,
) -> ActionPlan:
    """Hybrid A* (Dolgov et al. 2008) over the AerialDojo actions, collision-radius aware.

    Every translation is swept with ``world.sweep_sphere`` at ``config.collision_radius_m``;
    turns in place sweep nothing. The returned poses are recomputed from the actions with
    ``actions.target_pose``, the kinematics a simulator executes.

    Args:
        world: the collision queries.
        start: start pose (map frame).
        goal: goal position (the target anchor).
        config: planner parameters (default ``PlannerConfig()``).
        bounds: optional (min, max) corners of the flyable region.

    Returns:
        The plan; ``found`` is False when no route shorter than ``config.max_length_m``
        was found within ``config.max_expansions``, or the start is in collision.
    """
    config = config or PlannerConfig()
    began = time.perf_counter()
    if not world.sphere_is_free(start.position, config.collision_radius_m):
        return ActionPlan(
            found=False, actions=(), poses=(start,), length_m=0.0, stats=_stats(None, began)
        )
    space = _HybridSpace(world, start, _as_point(goal), bounds, config)
    origin: _HybridState = (start.x, start.y, start.z, 0)
    result = _lazy_astar(space, origin, space.key(np.array([origin[:3]]))[0], config)
    if result.path is None:
        return ActionPlan(
            found=False, actions=(), poses=(start,), length_m=0.0, stats=_stats(result, began)
        )
    actions: list[Action] = []
    for (previous, _), (_, label) in itertools.pairwise(result.path):
        actions.extend(space.macros[previous[3]][label].actions())
    poses = [start]
    for action in actions:
        poses.append(target_pose(poses[-1], action))
    return ActionPlan(
        found=True,
        actions=tuple(actions),
        poses=tuple(poses),
        length_m=path_length(poses),
        stats=_stats(result, began),
    )


def _pieces(length: int, magnitudes: tuple[float, ...]) -> list[float]:
    """A whole number of metres as the fewest moves of the given magnitudes (largest first;
    the action sets always include 1 m)."""
    pieces = []
    for magnitude in sorted(magnitudes, reverse=True):
        count, length = divmod(length, int(magnitude))
        pieces += [magnitude] * count
    return pieces


def _legs_to(start: Pose, goal: Point, tolerance: float) -> tuple[int, int, int, int, int] | None:
    """The shortest whole-metre horizontal legs along the two directions bracketing the
    goal's bearing, with a whole-metre climb, that end within ``tolerance``, as
    (first direction, metres, second direction, metres, climb); None if none do."""
    step = math.radians(_TURN_STEP_DEG)
    dx, dy, dz = goal[0] - start.x, goal[1] - start.y, goal[2] - start.z
    distance = math.hypot(dx, dy)
    bearing = math.atan2(dy, dx) - start.yaw
    first = math.floor(bearing / step)
    past = bearing - first * step
    along_first = distance * math.sin(step - past) / math.sin(step)
    along_second = distance * math.sin(past) / math.sin(step)
    first_yaw, second_yaw = start.yaw + first * step, start.yaw + (first + 1) * step
    rows: list[tuple[int, tuple[int, int, int, int, int]]] = []
    for a in {math.floor(along_first), math.ceil(along_first)}:
        for b in {math.floor(along_second), math.ceil(along_second)}:
            for climb in {math.floor(dz), math.ceil(dz)}:
                x = a * math.cos(first_yaw) + b * math.cos(second_yaw)
                y = a * math.sin(first_yaw) + b * math.sin(second_yaw)
                if math.dist((x, y, climb), (dx, dy, dz)) <= tolerance:
                    legs = (first % _HEADINGS, a, (first + 1) % _HEADINGS, b, climb)
                    rows.append((a + b + abs(climb), legs))
    return min(rows)[1] if rows else None


def _fly(
    world: CollisionWorld, start: Pose, actions: Sequence[Action], radius: float
) -> tuple[list[Pose] | None, int]:
    """The poses ``actions`` lead through (None at the first blocked translation), and
    how many sweeps that took."""
    poses = [start]
    sweeps = 0
    for action in actions:
        moved = target_pose(poses[-1], action)
        if (moved.x, moved.y, moved.z) != (poses[-1].x, poses[-1].y, poses[-1].z):
            sweeps += 1
            if world.sweep_sphere(poses[-1].position, moved.position, radius) is not None:
                return None, sweeps
        poses.append(moved)
    return poses, sweeps


def direct_route(
    world: CollisionWorld,
    start: Pose,
    goal: Sequence[float] | np.ndarray,
    *,
    config: PlannerConfig | None = None,
    bounds: Bounds | None = None,
) -> ActionPlan:
    """The plainest route, no search: the whole-metre climb or descent and at most two
    straight legs along the directions that bracket the goal's bearing, in the first order
    (climb first or last, either leg first) whose every translation is free.

    A free direct route bounds the shortest route from above: if it is already within the
    paper's detour ratio, the pair is near-straight whatever a search would find.

    Args:
        world: the collision queries.
        start: start pose.
        goal: goal position.
        config: planner parameters (collision radius, goal tolerance).
        bounds: optional (min, max) corners of the flyable region.

    Returns:
        The route; ``found`` is False if every ordering collides or leaves ``bounds``, or no
        whole-metre legs end within the goal tolerance.
    """
    config = config or PlannerConfig()
    began = time.perf_counter()
    goal_point = _as_point(goal)
    checks = 0
    legs_found = _legs_to(start, goal_point, config.goal_tolerance_m)
    if legs_found is not None:
        first, a, second, b, climb = legs_found
        legs = [(first, a), (second, b)]
        for climb_first, legs_in_order in itertools.product((True, False), (legs, legs[::-1])):
            macros: list[_Macro] = []
            heading = 0
            for direction, metres in legs_in_order:
                for magnitude in _pieces(metres, _HORIZONTAL_MAGNITUDES):
                    macros.append(_facing(heading, direction, magnitude))
                    heading = (heading + macros[-1].heading_change) % _HEADINGS
            climbs = [
                _vertical(math.copysign(m, climb))
                for m in _pieces(abs(climb), _VERTICAL_MAGNITUDES)
            ]
            macros = climbs + macros if climb_first else macros + climbs
            actions = [action for macro in macros for action in macro.actions()]
            poses, swept = _fly(world, start, actions, config.collision_radius_m)
            checks += swept
            low, high = _bounds_arrays(bounds)
            if poses is not None and all(
                np.all(low <= pose.position) and np.all(pose.position <= high) for pose in poses
            ):
                stats = SearchStats(
                    expansions=0, collision_checks=checks, seconds=time.perf_counter() - began
                )
                return ActionPlan(
                    found=True,
                    actions=tuple(actions),
                    poses=tuple(poses),
                    length_m=path_length(poses),
                    stats=stats,
                )
    stats = SearchStats(expansions=0, collision_checks=checks, seconds=time.perf_counter() - began)
    return ActionPlan(found=False, actions=(), poses=(start,), length_m=0.0, stats=stats)


_Voxel = tuple[int, int, int]
_NEIGHBOURS = np.array(
    [offset for offset in itertools.product((-1, 0, 1), repeat=3) if offset != (0, 0, 0)]
)


class _GridSpace:
    """A 26-connected voxel grid whose origin voxel is centred on the start; Euclidean
    steps and heuristic."""

    def __init__(
        self,
        world: CollisionWorld,
        start: Point,
        goal: Point,
        bounds: Bounds | None,
        config: PlannerConfig,
    ) -> None:
        self._world = world
        self._start = np.asarray(start)
        self._goal = np.asarray(goal)
        self._low, self._high = _bounds_arrays(bounds)
        self._config = config
        self._step = (np.linalg.norm(_NEIGHBOURS, axis=1) * config.cell_m).tolist()

    def centre(self, voxel: _Voxel) -> Point:
        return _as_point(self._start + np.array(voxel) * self._config.cell_m)

    def expand(self, state: _Voxel) -> list[_Successor[_Voxel]]:
        voxels = np.array(state) + _NEIGHBOURS
        centres = self._start + voxels * self._config.cell_m
        inside = np.all((centres >= self._low) & (centres <= self._high), axis=1)
        distance = np.linalg.norm(centres - self._goal, axis=1)
        to_go = distance.tolist()
        length_to_go = np.maximum(0.0, distance - self._config.goal_tolerance_m).tolist()
        rows = voxels.tolist()
        successors: list[_Successor[_Voxel]] = []
        for i in np.flatnonzero(inside).tolist():
            voxel = (rows[i][0], rows[i][1], rows[i][2])
            step = self._step[i]
            successors.append((voxel, voxel, step, step, i, to_go[i], length_to_go[i]))
        return successors

    def terminal_cost(self, state: _Voxel) -> float | None:
        distance = math.dist(self.centre(state), self._goal)
        return distance if distance <= self._config.goal_tolerance_m else None

    def is_free(self, parent: _Voxel, state: _Voxel, label: int) -> bool:
        return (
            self._world.sweep_sphere(
                np.array(self.centre(parent)),
                np.array(self.centre(state)),
                self._config.collision_radius_m,
            )
            is None
        )


def plan_grid(
    world: CollisionWorld,
    start: Sequence[float] | np.ndarray,
    goal: Sequence[float] | np.ndarray,
    *,
    config: PlannerConfig | None = None,
    bounds: Bounds | None = None,
) -> PointPlan:
    """Plain A* on a 26-connected voxel grid: the baseline of ``benchmarks/planner.py``.

    Same collision queries, goal tolerance, length cap and lazy checking as
    ``plan_actions``, with a Euclidean heuristic and no action set: its routes cannot be
    flown by the discrete actions.

    Args:
        world: the collision queries.
        start: start position.
        goal: goal position.
        config: planner parameters (``cell_m`` is the voxel edge; ``action_cost_m`` unused).
        bounds: optional (min, max) corners of the flyable region.

    Returns:
        The plan; ``found`` is False as for ``plan_actions``.
    """
    config = config or PlannerConfig()
    began = time.perf_counter()
    start_point = _as_point(start)
    if not world.sphere_is_free(np.array(start_point), config.collision_radius_m):
        return PointPlan(found=False, points=(), length_m=0.0, stats=_stats(None, began))
    space = _GridSpace(world, start_point, _as_point(goal), bounds, config)
    result = _lazy_astar(space, (0, 0, 0), (0, 0, 0), config)
    if result.path is None:
        return PointPlan(found=False, points=(), length_m=0.0, stats=_stats(result, began))
    points = tuple(space.centre(voxel) for voxel, _ in result.path)
    return PointPlan(
        found=True, points=points, length_m=result.length_m, stats=_stats(result, began)
    )
