"""Reference-trajectory planners: Hybrid A* over the AerialDojo actions, and a voxel A* baseline.

Both search lazily: successors are pushed unchecked and the swept-sphere test of the motion
that reached a node runs only when the node is popped, so the many successors A* never
expands cost no collision query. A node found blocked is dropped without closing its cell.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

import numpy as np

from aerialdojo.actions import AERIALDOJO_ACTIONS, Action, target_pose
from aerialdojo.collector import cyclic_gc_paused
from aerialdojo.errors import ConfigError
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


@runtime_checkable
class MotionScreen(Protocol):
    """A cheaper test a collision world may offer beside its exact sweep
    (``tasks.capsules.CapsuleScreen``); the planners use it where it settles a query."""

    def motion_verdict(
        self, start: Sequence[float] | np.ndarray, motion: tuple[float, float, float], radius: float
    ) -> bool | None:
        """True if ``sweep_sphere(start, start + motion, radius)`` is certainly free, False
        if it certainly reports a contact, None if only the exact sweep can tell. The sphere
        is free at ``start`` (its first three numbers: a planner state may carry more)."""
        ...


class TriangleGrid(NamedTuple):
    """A screen's triangles for the compiled search (``hybrid_kernel.capsule_verdict``).

    ``bounds`` rows are each triangle's (min x, y, z, max x, y, z); the triangles of cell
    (column, row) are ``cell_triangles[cell_start[k]:cell_start[k + 1]]``, k = row *
    columns + column, cells of ``cell`` metres from ``origin`` (x, y).
    """

    triangles: np.ndarray
    bounds: np.ndarray
    cell_start: np.ndarray
    cell_triangles: np.ndarray
    origin: tuple[float, float]
    cell: float
    columns: int
    rows: int


@runtime_checkable
class TriangleScreen(Protocol):
    """A ``MotionScreen`` whose capsule tests the compiled search can make itself
    (``tasks.capsules.CapsuleScreen``): its triangles, margin and shrunk flyable box."""

    @property
    def margin_m(self) -> float:
        """How far from the contact distance a capsule test is trusted."""
        ...

    @property
    def inner_box(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The flyable box shrunk by the margin."""
        ...

    def triangle_grid(self) -> TriangleGrid:
        """The triangles on a grid."""
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


class _Successors(NamedTuple):
    """The successors of one expansion, one row each.

    ``labels`` name them for the space's ``successor``; ``keys`` are closed-set keys
    (``_CellGrid.keys``); ``to_go`` is the heuristic cost and ``length_to_go`` a lower bound
    of the length still to travel.
    """

    keys: np.ndarray
    step_cost: np.ndarray
    step_length: np.ndarray
    labels: np.ndarray
    to_go: np.ndarray
    length_to_go: np.ndarray


class _SearchSpace(Protocol[StateT]):
    cells: _CellGrid

    def expand(self, state: StateT) -> _Successors: ...

    def successor(self, state: StateT, label: int) -> StateT: ...

    def terminal_cost(self, state: StateT) -> float | None: ...

    def is_free(self, parent: StateT, label: int) -> bool: ...


#: The dense closed set of one search may take at most this many bytes.
_MAX_CLOSED_CELLS = 1 << 27


class _CellGrid:
    """The closed-set cells a search can reach, numbered for a dense closed set: one byte
    per cell, tested a row at a time and a whole expansion at once (a Python set of tuples
    cost more than the rest of the bookkeeping together).

    Args:
        horizontal_reach: cells either side of the start in x and in y.
        vertical_reach: cells either side of the start in z.
    """

    def __init__(self, horizontal_reach: int, vertical_reach: int) -> None:
        width, height = 2 * horizontal_reach + 1, 2 * vertical_reach + 1
        self.size = width * width * height
        self.horizontal_weights = np.array((width * height, height), dtype=np.float64)
        #: The number of the start's cell.
        self.first = float((horizontal_reach * width + horizontal_reach) * height + vertical_reach)

    @classmethod
    def around(
        cls,
        config: PlannerConfig,
        horizontal_cell: float,
        vertical_cell: float,
        longest_move: float,
    ) -> _CellGrid:
        """Every cell a node within the length cap, or one move beyond it, can fall in.

        Raises:
            ConfigError: that needs more than ``_MAX_CLOSED_CELLS`` cells (cells far
                smaller than the length cap).
        """
        reach = config.max_length_m + longest_move
        grid = cls(math.ceil(reach / horizontal_cell) + 2, math.ceil(reach / vertical_cell) + 2)
        if grid.size > _MAX_CLOSED_CELLS:
            raise ConfigError(
                f"planner: cell_m={config.cell_m} is too fine for max_length_m="
                f"{config.max_length_m}: the closed set would need {grid.size} cells"
            )
        return grid

    def keys(self, horizontal: np.ndarray, vertical: np.ndarray) -> np.ndarray:
        """The number of each cell from whole-valued offsets from the start's cell: (N, 2)
        in x and y, (N,) in z (exact in floats: every number stays far below 2**53)."""
        number = horizontal @ self.horizontal_weights
        number += vertical
        number += self.first
        return np.asarray(number.astype(np.int64))


@dataclass(frozen=True, slots=True)
class _SearchResult(Generic[StateT]):
    # (state, label of the step into it) from the start (label -1); None if not found.
    path: list[tuple[StateT, int]] | None
    length_m: float
    expansions: int
    collision_checks: int


@dataclass(frozen=True, slots=True)
class _Bundle:
    """The queued successors of one expanded node, best first.

    Table rows are [f, heuristic, cost, length, label]; only the bundle's next row sits in
    the heap, so an expansion costs one heap entry however many successors it has, and a
    row becomes Python values only when it reaches the heap.
    """

    parent: int
    table: np.ndarray
    keys: list[int]


# Heap entries: (f, heuristic, expansion, row index, row); row index -1 is the expansion's
# terminal entry. (expansion, row index) is unique, so rows themselves are never compared.
_Entry = tuple[float, float, int, int, list[float]]


def _entry(table: np.ndarray, expansion: int, index: int) -> _Entry:
    row: list[float] = table[index].tolist()
    return (row[0], row[1], expansion, index, row)


def _lazy_astar(
    space: _SearchSpace[StateT], start: StateT, start_key: int, config: PlannerConfig
) -> _SearchResult[StateT]:
    """A* with collision checks deferred to expansion and a cap on translational length.

    A route may end at any node within the goal tolerance, at the extra cost the space's
    ``terminal_cost`` charges for the remaining offset: such a node, once expanded, also
    queues a terminal entry priced at its exact total, and the search ends when a terminal
    entry is popped. Charging the offset, rather than treating the whole tolerance ball as
    free, lets the heuristic stay admissible without a slack that would widen the search.
    Ties on f go to the entry nearer the goal (smaller heuristic), then to the earlier one.

    Each expansion's successors are sorted once into a bundle whose best row alone is in
    the heap (it is replaced by the bundle's next row when popped). Entries leave the heap
    in exactly the order they would if every successor were pushed on its own, at a
    fraction of the heap and Python work: most successors are never popped.
    """
    with cyclic_gc_paused():
        return _search(space, start, start_key, config)


def _search(
    space: _SearchSpace[StateT], start: StateT, start_key: int, config: PlannerConfig
) -> _SearchResult[StateT]:
    states: list[StateT] = []
    parents: list[int] = []
    labels: list[int] = []
    lengths: list[float] = []
    terminals: dict[int, int] = {}
    closed = bytearray(space.cells.size)  # 1: closed
    closed_cells = np.frombuffer(closed, dtype=np.uint8)
    bundles = [_Bundle(parent=-1, table=np.array([[0.0, 0.0, 0.0, 0.0, -1.0]]), keys=[start_key])]
    heap = [_entry(bundles[0].table, 0, 0)]
    expansions = 0
    checks = 0
    # Bound once: the loop runs a few hundred thousand times per search.
    heappush, heappop, heapreplace = heapq.heappush, heapq.heappop, heapq.heapreplace
    expand, successor, is_free = space.expand, space.successor, space.is_free
    terminal_cost = space.terminal_cost
    max_length, max_expansions = config.max_length_m, config.max_expansions
    while heap and expansions < max_expansions:
        _, _, expansion, index, row = heap[0]
        if index < 0:
            end = walk = terminals[expansion]
            path = []
            while walk >= 0:
                path.append((states[walk], labels[walk]))
                walk = parents[walk]
            path.reverse()
            return _SearchResult(path, lengths[end], expansions, checks)
        bundle = bundles[expansion]
        keys = bundle.keys
        count = len(keys)
        # The bundle's next row not already closed takes its place (closed keys stay closed).
        following = index + 1
        while following < count and closed[keys[following]]:
            following += 1
        if following < count:
            heapreplace(heap, _entry(bundle.table, expansion, following))
        else:
            heappop(heap)
        key = keys[index]
        if closed[key]:
            continue
        label = int(row[4])
        if bundle.parent >= 0:
            parent = states[bundle.parent]
            checks += 1
            if not is_free(parent, label):
                continue
            state = successor(parent, label)
        else:
            state = start
        closed[key] = 1
        node = len(states)
        states.append(state)
        parents.append(bundle.parent)
        labels.append(label)
        lengths.append(row[3])
        expansions += 1
        offset_cost = terminal_cost(state)
        if offset_cost is not None:
            terminals[len(bundles)] = node
            heappush(heap, (row[2] + offset_cost, 0.0, len(bundles), -1, []))
        successors = expand(state)
        length = row[3] + successors.step_length
        cost = row[2] + successors.step_cost
        f = cost + successors.to_go
        order = np.flatnonzero(
            (length + successors.length_to_go < max_length)
            & (closed_cells.take(successors.keys) == 0)
        )
        # lexsort is stable: rows equal in f and heuristic keep their order.
        order = order[np.lexsort((successors.to_go[order], f[order]))]
        table = np.array((f, successors.to_go, cost, length, successors.labels)).T[order]
        # Appended even when empty: the bundle's index also numbers its terminal entry.
        bundles.append(_Bundle(parent=node, table=table, keys=successors.keys[order].tolist()))
        if len(order):
            heappush(heap, _entry(table, len(bundles) - 1, 0))
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
_LONGEST_MOVE_PER_AXIS = (_LONGEST_HORIZONTAL_M, _LONGEST_HORIZONTAL_M, _LONGEST_VERTICAL_M)
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


#: Rays a ``KnownRays`` keeps in total before it forgets the oldest starts' (about 250 bytes
#: each).
_MAX_KNOWN_RAYS = 1_000_000


class KnownRays:
    """What Hybrid A* searches found out about the rays from their start, kept for later
    searches from the same start in the same collision world.

    A scene's candidate pairs share starts (each object starts many pairs), and a search's
    positions are its start plus sums of the same displacements, so later searches from a
    start meet many of the same rays again. What is kept are facts of the collision world:
    sharing them changes no answer and no route, only how many queries are made.

    Args:
        max_rays: rays kept in total; the oldest starts' are forgotten beyond it.
    """

    def __init__(self, max_rays: int = _MAX_KNOWN_RAYS) -> None:
        self._world: CollisionWorld | None = None
        self._max_rays = max_rays
        self._by_start: dict[tuple[float, ...], dict[tuple[float, float, float, int], list[float]]]
        self._by_start = {}

    def from_start(
        self, world: CollisionWorld, start: Pose, radius: float
    ) -> dict[tuple[float, float, float, int], list[float]]:
        """The rays known from ``start`` at ``radius`` (a dict the search adds to).

        Raises:
            ConfigError: ``world`` is not the world of the rays already kept.
        """
        if self._world is None:
            self._world = world
        elif world is not self._world:
            raise ConfigError("KnownRays: one instance serves one collision world only")
        key = (start.x, start.y, start.z, start.yaw, radius)
        rays = self._by_start.pop(key, {})
        kept = sum(len(other) for other in self._by_start.values())
        while self._by_start and kept + len(rays) > self._max_rays:
            kept -= len(self._by_start.pop(next(iter(self._by_start))))
        self._by_start[key] = rays  # the most recent last
        return rays


# A Hybrid A* state: continuous position and a heading index (yaw = start yaw + step * index).
_HybridState = tuple[float, float, float, int]


#: The moves from every heading index: the same for every search (they are relative to the
#: start yaw).
_MACROS = [_macros_from(heading) for heading in range(_HEADINGS)]


@dataclass(frozen=True, slots=True)
class _MoveTables:
    """What the moves from each heading index do, for one start yaw and action cost; rows
    follow ``_MACROS``. Built once per start yaw: a scene plans many pairs from each start.

    ``displacement`` (headings, labels, 3), ``cost``, ``length`` and ``next_heading``
    (headings, labels) are the compiled search's tables; ``moves`` holds, per heading and
    label, the move's ray, its share of the ray and its displacement (as the capsule screen
    is asked about it; ``motions`` the same as an array); ``longest_move`` the displacement
    of each ray's longest move.
    """

    displacement: np.ndarray
    cost: np.ndarray
    length: np.ndarray
    next_heading: np.ndarray
    motions: np.ndarray
    longest_move: dict[int, np.ndarray]
    moves: list[list[tuple[int, float, tuple[float, float, float]]]]


@functools.lru_cache(maxsize=64)
def _move_tables(yaw: float, action_cost_m: float) -> _MoveTables:
    displacement, next_heading, cost, length = [], [], [], []
    for heading, macros in enumerate(_MACROS):
        heading_yaw = yaw + math.radians(_TURN_STEP_DEG * heading)
        # ``target_pose`` of a move of m metres from the origin is 0 + (unit step) * m, and the
        # unit step is that of a 1 m move: one call per direction serves every magnitude.
        unit_steps: dict[tuple[int, str], np.ndarray] = {}
        rows = []
        for macro in macros:
            direction = (macro.heading_change, macro.move.name)
            unit = unit_steps.get(direction)
            if unit is None:
                turned_yaw = heading_yaw + math.radians(_TURN_STEP_DEG * macro.heading_change)
                unit = unit_steps[direction] = target_pose(
                    Pose(0.0, 0.0, 0.0, turned_yaw), Action(macro.move.name, 1.0)
                ).position
            rows.append(0.0 + unit * macro.move.magnitude)
        displacement.append(np.array(rows))
        next_heading.append([(heading + m.heading_change) % _HEADINGS for m in macros])
        length.append(np.array([m.move.magnitude for m in macros]))
        cost.append(length[-1] + action_cost_m * np.array([m.turns + 1 for m in macros]))
    longest_move = {
        macro.ray: row
        for heading in range(_HEADINGS)
        for row, macro in zip(displacement[heading], _MACROS[heading], strict=True)
        if macro.share_of_ray == 1.0
    }
    longest_rows = {ray: row.tolist() for ray, row in longest_move.items()}
    moves = [
        [
            (
                macro.ray,
                macro.share_of_ray,
                _as_point([value * macro.share_of_ray for value in longest_rows[macro.ray]]),
            )
            for macro in macros
        ]
        for macros in _MACROS
    ]
    tables = _MoveTables(
        displacement=np.array(displacement),
        cost=np.array(cost),
        length=np.array(length),
        next_heading=np.array(next_heading, dtype=np.int64),
        motions=np.array([[motion for _, _, motion in row] for row in moves]),
        longest_move=longest_move,
        moves=moves,
    )
    for array in (
        tables.displacement,
        tables.cost,
        tables.length,
        tables.next_heading,
        tables.motions,
        *longest_move.values(),
    ):
        array.flags.writeable = False  # shared by every search from this yaw
    return tables


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
        *,
        known_rays: KnownRays | None = None,
    ) -> None:
        self._world = world
        self._goal_point = goal
        self.cells = _CellGrid.around(config, config.cell_m, 1.0, _LONGEST_HORIZONTAL_M)
        self._config = config
        self._radius = config.collision_radius_m
        self.macros = _MACROS
        self.tables = _move_tables(start.yaw, config.action_cost_m)
        self._longest_move = self.tables.longest_move
        self._moves = self.tables.moves
        self.params = self._search_constants(start, goal, bounds)
        # Per ray from a position: the largest share of its longest move known free and the
        # smallest known blocked; shared with earlier searches from the same start.
        self._known = (known_rays or KnownRays()).from_start(world, start, self._radius)
        self._screen = world if isinstance(world, MotionScreen) else None
        self.screen = self._compiled_screen(world)

    def _compiled_screen(self, world: CollisionWorld) -> tuple[np.ndarray, ...]:
        """The compiled search's capsule screen (``hybrid_kernel``'s ``screen`` layout and
        the grid's arrays), or a disabled one when ``world`` offers no triangles."""
        from aerialdojo.tasks import hybrid_kernel as kernel  # noqa: PLC0415

        screen = np.zeros(kernel.SCREEN)
        if not isinstance(world, TriangleScreen):
            empty = np.zeros(1, dtype=np.int64)
            return (screen, np.zeros((0, 3, 3)), np.zeros((0, 6)), empty, empty)
        grid = world.triangle_grid()
        margin = world.margin_m
        screen[kernel.S_ORIGIN_X : kernel.S_ORIGIN_Y + 1] = grid.origin
        screen[kernel.S_CELL] = grid.cell
        screen[kernel.S_COLUMNS], screen[kernel.S_ROWS] = grid.columns, grid.rows
        # No narrow capsule where the margin is wider than the radius (as the screen).
        narrow = self._radius - margin
        screen[kernel.S_NARROW_SQUARED] = narrow * narrow if narrow > 0.0 else -1.0
        screen[kernel.S_WIDE] = self._radius + margin
        low, high = world.inner_box
        screen[kernel.S_INNER_LOW : kernel.S_INNER_LOW + 3] = low
        screen[kernel.S_INNER_HIGH : kernel.S_INNER_HIGH + 3] = high
        screen[kernel.S_ENABLED] = 1.0
        return (screen, grid.triangles, grid.bounds, grid.cell_start, grid.cell_triangles)

    def _search_constants(self, start: Pose, goal: Point, bounds: Bounds | None) -> np.ndarray:
        """The compiled loop's ``params`` (``hybrid_kernel``'s layout)."""
        from aerialdojo.tasks import hybrid_kernel as kernel  # noqa: PLC0415

        config = self._config
        low, high = _bounds_arrays(bounds)
        margins = np.array(_LONGEST_MOVE_PER_AXIS) + 1e-6
        half_step = math.radians(_TURN_STEP_DEG) / 2.0
        tolerance = config.goal_tolerance_m
        params = np.zeros(kernel.PARAMS)
        params[kernel.GOAL : kernel.GOAL + 3] = goal
        params[kernel.ORIGIN : kernel.ORIGIN + 3] = (start.x, start.y, start.z)
        params[kernel.LOW : kernel.LOW + 3] = low
        params[kernel.HIGH : kernel.HIGH + 3] = high
        # Inside the bounds shrunk by the longest move and a micrometre no successor can
        # leave them: rounding is monotonic, so a successor is at least the position less a
        # whole move.
        params[kernel.INNER_LOW : kernel.INNER_LOW + 3] = low + margins
        params[kernel.INNER_HIGH : kernel.INNER_HIGH + 3] = high - margins
        params[kernel.START_YAW] = start.yaw
        params[kernel.HALF_STEP] = half_step
        params[kernel.COS_HALF_STEP] = math.cos(half_step)
        # Ending anywhere within the tolerance saves at most this much length or actions.
        params[kernel.ACTION_SLACK] = tolerance * math.hypot(
            1.0 / _LONGEST_HORIZONTAL_M, 1.0 / _LONGEST_VERTICAL_M
        )
        params[kernel.LENGTH_SLACK] = tolerance * math.hypot(1.0 / math.cos(half_step), 1.0)
        params[kernel.ACTION_COST] = config.action_cost_m
        params[kernel.TOLERANCE] = tolerance
        params[kernel.MAX_LENGTH] = config.max_length_m
        params[kernel.CELL] = config.cell_m
        params[kernel.LONGEST_HORIZONTAL] = _LONGEST_HORIZONTAL_M
        params[kernel.LONGEST_VERTICAL] = _LONGEST_VERTICAL_M
        params[kernel.WEIGHT_X : kernel.WEIGHT_Y + 1] = self.cells.horizontal_weights
        params[kernel.FIRST_CELL] = self.cells.first
        return params

    def within_tolerance(self, position: Sequence[float]) -> bool:
        """Whether a route may end at ``position`` (the goal tolerance, by ``math.dist``)."""
        return math.dist(position, self._goal_point) <= self._config.goal_tolerance_m

    def is_free(self, parent: _HybridState, label: int) -> bool:
        """Whether the move ``label`` from ``parent`` is free. Moves of 1, 3 and 5 m from one
        position in one direction share a ray: a free move frees the shorter ones, a blocked
        move blocks the longer ones, and one exact sweep of the longest decides all three."""
        ray, share, motion = self._moves[parent[3]][label]
        key = (parent[0], parent[1], parent[2], ray)
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = [0.0, math.inf]
        elif share <= known[0] or share >= known[1]:
            return share <= known[0]
        if self._screen is not None:
            verdict = self._screen.motion_verdict(parent, motion, self._radius)
            if verdict is not None:
                known[0 if verdict else 1] = share
                return verdict
        origin = np.array(parent[:3])
        hit = self._world.sweep_sphere(origin, origin + self._longest_move[ray], self._radius)
        contact = math.inf if hit is None else hit.fraction
        # Free exactly below the contact fraction: up to the float just under it.
        known[:] = [math.nextafter(contact, -math.inf), contact]
        return share < contact


#: Successor rows the compiled search starts with; doubled whenever it needs more.
_INITIAL_ROWS = 1 << 15


def _compiled_search(
    space: _HybridSpace, start: Pose, config: PlannerConfig
) -> _SearchResult[_HybridState]:
    """``_lazy_astar`` over ``space``, its loop compiled (``hybrid_kernel``): the same
    expansions in the same order, so the same route. The compiled loop asks back here for
    what Python keeps: collision checks (``space.is_free``) and the goal tolerance where a
    distance is too close to it to tell without ``math.dist``."""
    from aerialdojo.tasks import hybrid_kernel as kernel  # noqa: PLC0415

    tables = space.tables
    most = config.max_expansions + 2
    counters = np.zeros(kernel.COUNTERS, dtype=np.int64)
    counters[kernel.MAX_EXPANSIONS] = config.max_expansions
    params = space.params
    heap_f, heap_i = np.empty((2 * most, 2)), np.empty((2 * most, 2), dtype=np.int64)
    bundles = np.empty((most, 4), dtype=np.int64)
    rows_f, rows_i = np.empty((_INITIAL_ROWS, 4)), np.empty((_INITIAL_ROWS, 2), dtype=np.int64)
    nodes_f, nodes_i = np.empty((most, 5)), np.empty((most, 3), dtype=np.int64)
    closed = np.zeros(space.cells.size, dtype=np.uint8)
    # The start: node 0 (cost and length 0), and bundle 0 holding its one row.
    nodes_f[0] = (start.x, start.y, start.z, 0.0, 0.0)
    nodes_i[0] = (0, -1, -1)
    bundles[0] = (-1, 0, 1, -1)
    rows_f[0] = 0.0
    rows_i[0] = (-1, int(space.cells.keys(np.zeros((1, 2)), np.zeros(1))[0]))
    heap_f[0], heap_i[0] = 0.0, (0, 0)
    counters[kernel.BUNDLES], counters[kernel.ROWS], counters[kernel.HEAP_SIZE] = 1, 1, 1
    advance, is_free, within_tolerance = kernel.advance, space.is_free, space.within_tolerance
    needs_check, needs_terminal, needs_rows = (
        kernel.NEEDS_CHECK,
        kernel.NEEDS_TERMINAL,
        kernel.NEEDS_ROWS,
    )
    query = params[kernel.QUERY : kernel.QUERY + 3]
    heading_and_label = counters[kernel.QUERY_HEADING : kernel.QUERY_LABEL + 1]
    answer = kernel.ANSWER
    while True:
        status = advance(
            counters, params, tables.displacement, tables.cost, tables.length,
            tables.next_heading, heap_f, heap_i, bundles, rows_f, rows_i, nodes_f, nodes_i,
            closed, tables.motions, *space.screen,
        )  # fmt: skip
        if status == needs_check:
            x, y, z = query.tolist()
            heading, label = heading_and_label.tolist()
            counters[answer] = is_free((x, y, z, heading), label)
        elif status == needs_terminal:
            counters[answer] = within_tolerance(query.tolist())
        elif status == needs_rows:
            rows_f = np.concatenate((rows_f, np.empty_like(rows_f)))
            rows_i = np.concatenate((rows_i, np.empty_like(rows_i)))
        else:
            break
    expansions, checks = int(counters[kernel.EXPANSIONS]), int(counters[kernel.CHECKS])
    if status != kernel.FOUND:
        return _SearchResult(None, 0.0, expansions, checks)
    path: list[tuple[_HybridState, int]] = []
    walk = int(counters[kernel.RESULT])
    while walk >= 0:
        x, y, z = nodes_f[walk, :3].tolist()
        heading, parent, label = nodes_i[walk].tolist()
        path.append(((x, y, z, heading), label))
        walk = parent
    path.reverse()
    end = int(counters[kernel.RESULT])
    return _SearchResult(path, float(nodes_f[end, 3]), expansions, checks)


def plan_actions(
    world: CollisionWorld,
    start: Pose,
    goal: Sequence[float] | np.ndarray,
    *,
    config: PlannerConfig | None = None,
    bounds: Bounds | None = None,
    known_rays: KnownRays | None = None,
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
        known_rays: rays known from earlier searches in ``world`` (a scene's generation
            passes one to all its pairs); the search adds what it finds out.

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
    space = _HybridSpace(world, start, _as_point(goal), bounds, config, known_rays=known_rays)
    with cyclic_gc_paused():
        result = _compiled_search(space, start, config)
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


def _motion_is_free(
    world: CollisionWorld, start: np.ndarray, end: np.ndarray, radius: float
) -> bool:
    """The exact world's answer for one motion, from the world's screen where it settles it."""
    if isinstance(world, MotionScreen):
        motion = (end - start).tolist()
        verdict = world.motion_verdict(start, (motion[0], motion[1], motion[2]), radius)
        if verdict is not None:
            return verdict
    return world.sweep_sphere(start, end, radius) is None


def _fly(
    world: CollisionWorld, start: Pose, actions: Sequence[Action], radius: float
) -> tuple[list[Pose] | None, int]:
    """The poses ``actions`` lead through (None at the first blocked translation), and
    how many translations were checked."""
    poses = [start]
    checks = 0
    for action in actions:
        moved = target_pose(poses[-1], action)
        if (moved.x, moved.y, moved.z) != (poses[-1].x, poses[-1].y, poses[-1].z):
            checks += 1
            if not _motion_is_free(world, poses[-1].position, moved.position, radius):
                return None, checks
        poses.append(moved)
    return poses, checks


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
_NEIGHBOUR_ROWS: list[tuple[int, int, int]] = [tuple(row) for row in _NEIGHBOURS.tolist()]


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
        self._step = np.linalg.norm(_NEIGHBOURS, axis=1) * config.cell_m
        self.cells = _CellGrid.around(config, config.cell_m, config.cell_m, config.cell_m)

    def centre(self, voxel: _Voxel) -> Point:
        return _as_point(self._start + np.array(voxel) * self._config.cell_m)

    def expand(self, state: _Voxel) -> _Successors:
        voxels = np.array(state) + _NEIGHBOURS
        centres = self._start + voxels * self._config.cell_m
        inside = np.flatnonzero(np.all((centres >= self._low) & (centres <= self._high), axis=1))
        distance = np.linalg.norm(centres[inside] - self._goal, axis=1)
        return _Successors(
            keys=self.cells.keys(voxels[inside, :2].astype(np.float64), voxels[inside, 2]),
            step_cost=self._step[inside],
            step_length=self._step[inside],
            labels=inside,
            to_go=distance,
            length_to_go=np.maximum(0.0, distance - self._config.goal_tolerance_m),
        )

    def successor(self, state: _Voxel, label: int) -> _Voxel:
        dx, dy, dz = _NEIGHBOUR_ROWS[label]
        return (state[0] + dx, state[1] + dy, state[2] + dz)

    def terminal_cost(self, state: _Voxel) -> float | None:
        distance = math.dist(self.centre(state), self._goal)
        return distance if distance <= self._config.goal_tolerance_m else None

    def is_free(self, parent: _Voxel, label: int) -> bool:
        return _motion_is_free(
            self._world,
            np.array(self.centre(parent)),
            np.array(self.centre(self.successor(parent, label))),
            self._config.collision_radius_m,
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
    start_key = int(space.cells.keys(np.zeros((1, 2)), np.zeros(1))[0])
    result = _lazy_astar(space, (0, 0, 0), start_key, config)
    if result.path is None:
        return PointPlan(found=False, points=(), length_m=0.0, stats=_stats(result, began))
    points = tuple(space.centre(voxel) for voxel, _ in result.path)
    return PointPlan(
        found=True, points=points, length_m=result.length_m, stats=_stats(result, began)
    )
