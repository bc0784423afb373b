"""The capsule screen in front of the exact collision world, and the planner's search order:
the speed-ups of task generation must not change a single answer or route."""

from __future__ import annotations

import heapq
import itertools

import numpy as np
import pytest
from task_worlds import BoxWorld

from aerialdojo.geometry import Pose
from aerialdojo.sim.embedded.collision import CollisionWorld
from aerialdojo.tasks import hybrid_kernel as kernel
from aerialdojo.tasks import planner
from aerialdojo.tasks.capsules import CapsuleScreen
from aerialdojo.tasks.planner import PlannerConfig, plan_actions

BOUNDS = ((-20.0, -20.0, 0.0), (20.0, 20.0, 12.0))
BOXES = [
    ((4.0, -6.0, 0.0), (5.0, 6.0, 9.0)),
    ((-8.0, 3.0, 0.0), (-5.0, 9.0, 3.0)),
    ((-3.0, -9.0, 2.0), (3.0, -7.0, 2.5)),  # a floating slab
]
RADIUS = 0.25


def _exact_world(boxes: list[tuple[tuple[float, ...], tuple[float, ...]]]) -> CollisionWorld:
    """The embedded simulator's exact swept-sphere world over the boxes and the ground."""
    triangles = BoxWorld(boxes).triangles  # type: ignore[arg-type]
    return CollisionWorld(
        triangles,
        np.zeros(len(triangles), dtype=np.int64),
        ["geometry"],
        bounds_min=BOUNDS[0],
        bounds_max=BOUNDS[1],
    )


@pytest.fixture(scope="module")
def world() -> CollisionWorld:
    return _exact_world(BOXES)


def _near_surface_starts(world: CollisionWorld, rng: np.random.Generator, count: int) -> np.ndarray:
    """Free starts, most of them within a few centimetres of touching distance of a box face
    or the ground, where a capsule test is closest to being wrong."""
    starts = []
    while len(starts) < count:
        low, high = (np.array(corner) for corner in BOXES[rng.integers(len(BOXES))])
        axis, side = rng.integers(3), rng.integers(2)
        point = rng.uniform(low, high)
        offset = RADIUS + rng.choice([rng.uniform(0.0, 0.02), rng.uniform(0.0, 2.0)])
        point[axis] = (high if side else low)[axis] + (offset if side else -offset)
        if world.sphere_is_free(point, RADIUS):
            starts.append(point)
    return np.array(starts)


def test_capsule_verdicts_agree_with_the_exact_sweep(world: CollisionWorld) -> None:
    screen = CapsuleScreen(world, world.triangles, *BOUNDS)
    rng = np.random.default_rng(7)
    verdicts: list[bool | None] = []
    for start in _near_surface_starts(world, rng, 3000):
        direction = rng.normal(size=3)
        motion = direction / np.linalg.norm(direction) * rng.choice([1.0, 2.0, 3.0, 5.0])
        verdict = screen.motion_verdict(start, (motion[0], motion[1], motion[2]), RADIUS)
        exact_free = world.sweep_sphere(start, start + motion, RADIUS) is None
        assert verdict is None or verdict == exact_free, (start.tolist(), motion.tolist())
        verdicts.append(verdict)
    assert verdicts.count(True) > 300 and verdicts.count(False) > 300
    # Only motions whose clearance is within a millimetre of the radius are left undecided.
    assert verdicts.count(None) < 0.02 * len(verdicts)


def test_motions_leaving_the_flyable_box_are_left_to_the_exact_world(
    world: CollisionWorld,
) -> None:
    screen = CapsuleScreen(world, world.triangles, *BOUNDS)
    start = np.array((0.0, 0.0, 11.0))
    assert screen.motion_verdict(start, (0.0, 0.0, 2.0), RADIUS) is None
    assert world.sweep_sphere(start, start + np.array((0.0, 0.0, 2.0)), RADIUS) is not None
    assert screen.motion_verdict(start, (0.0, 0.0, 0.5), RADIUS) is True


def test_compiled_capsule_verdicts_agree_with_the_exact_sweep(world: CollisionWorld) -> None:
    """The compiled search's own capsule tests (segment-triangle distances on a grid, not
    FCL) settle what they settle as the exact sweep does, and leave as little open."""
    screen = CapsuleScreen(world, world.triangles, *BOUNDS)
    config = PlannerConfig(collision_radius_m=RADIUS)
    arrays = planner._HybridSpace(screen, Pose(0.0, 0.0, 2.0, 0.0), (9.0, 0.0, 2.0), BOUNDS,
                                  config).screen  # fmt: skip
    rng = np.random.default_rng(11)
    verdicts = []
    for start in _near_surface_starts(world, rng, 3000):
        direction = rng.normal(size=3)
        motion = direction / np.linalg.norm(direction) * rng.choice([1.0, 2.0, 3.0, 5.0])
        verdict = kernel.capsule_verdict(*arrays, *start.tolist(), *motion.tolist())
        exact_free = world.sweep_sphere(start, start + motion, RADIUS) is None
        assert verdict < 0 or verdict == exact_free, (start.tolist(), motion.tolist())
        verdicts.append(verdict)
    assert verdicts.count(1) > 300 and verdicts.count(0) > 300
    assert verdicts.count(-1) < 0.02 * len(verdicts)
    # A motion leaving the flyable box is the exact world's to decide.
    assert kernel.capsule_verdict(*arrays, 0.0, 0.0, 11.0, 0.0, 0.0, 2.0) == -1
    assert kernel.capsule_verdict(*arrays, 0.0, 0.0, 11.0, 0.0, 0.0, 0.5) == 1


def _reference_lazy_astar(space: planner._SearchSpace, start: object, start_key: int,
                          config: PlannerConfig) -> planner._SearchResult:  # fmt: skip
    """The search as first written: every successor pushed on its own, ties broken by
    (f, heuristic, push order). The bundled search must pop in exactly this order."""
    states, parents, labels, lengths, costs = [start], [-1], [-1], [0.0], [0.0]
    keys = [start_key]
    closed: set[int] = set()
    tie = itertools.count()
    heap = [(0.0, 0.0, next(tie), 0, False)]
    expansions = checks = 0
    while heap and expansions < config.max_expansions:
        *_, node, terminal = heapq.heappop(heap)
        if terminal:
            path, walk = [], node
            while walk >= 0:
                path.append((states[walk], labels[walk]))
                walk = parents[walk]
            return planner._SearchResult(path[::-1], lengths[node], expansions, checks)
        if keys[node] in closed:
            continue
        if parents[node] >= 0:
            checks += 1
            if not space.is_free(states[parents[node]], labels[node]):
                continue
        closed.add(keys[node])
        offset_cost = space.terminal_cost(states[node])
        if offset_cost is not None:
            heapq.heappush(heap, (costs[node] + offset_cost, 0.0, next(tie), node, True))
        expansions += 1
        successors = space.expand(states[node])
        for row in range(len(successors.keys)):
            key = int(successors.keys[row])
            length = lengths[node] + float(successors.step_length[row])
            if key in closed or length + successors.length_to_go[row] >= config.max_length_m:
                continue
            cost = costs[node] + float(successors.step_cost[row])
            states.append(space.successor(states[node], int(successors.labels[row])))
            parents.append(node)
            labels.append(int(successors.labels[row]))
            lengths.append(length)
            costs.append(cost)
            keys.append(key)
            to_go = float(successors.to_go[row])
            heapq.heappush(heap, (cost + to_go, to_go, next(tie), len(states) - 1, False))
    return planner._SearchResult(None, 0.0, expansions, checks)


class _NumpyHybridSpace:
    """The Hybrid A* space stated in numpy, one expansion at a time, as ``planner`` ran it
    before its loop was compiled (``hybrid_kernel``): positions, closed-set keys, costs and
    the polygonal heuristic of every successor, from the compiled search's own tables."""

    def __init__(self, space: planner._HybridSpace) -> None:
        params = space.params
        self._space = space
        self.cells = space.cells
        self._goal = params[kernel.GOAL : kernel.GOAL + 3]
        self._origin = params[kernel.ORIGIN : kernel.ORIGIN + 3]
        self._low, self._high = (
            params[kernel.LOW : kernel.LOW + 3],
            params[kernel.HIGH : kernel.HIGH + 3],
        )
        self._inner = (params[kernel.INNER_LOW : kernel.INNER_LOW + 3].tolist(),
                       params[kernel.INNER_HIGH : kernel.INNER_HIGH + 3].tolist())  # fmt: skip
        self._params = params
        self._tables = space.tables

    def keys(self, positions: np.ndarray) -> np.ndarray:
        offset = positions - self._origin
        horizontal = offset[:, :2] / self._params[kernel.CELL]
        horizontal += 0.5
        return self.cells.keys(np.floor(horizontal, out=horizontal), np.rint(offset[:, 2]))

    def _metric(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        half = self._params[kernel.HALF_STEP]
        delta = self._goal - positions
        dx, dy = delta[:, 0], delta[:, 1]
        past = np.arctan2(dy, dx)
        past -= self._params[kernel.START_YAW]
        np.mod(past, 2.0 * half, out=past)
        past -= half
        polygonal = np.cos(past, out=past)
        polygonal *= np.hypot(dx, dy)
        polygonal /= self._params[kernel.COS_HALF_STEP]
        return polygonal, np.abs(delta[:, 2])

    def expand(self, state: tuple[float, float, float, int]) -> planner._Successors:
        heading = state[3]
        positions = self._tables.displacement[heading] + state[:3]
        labels = np.arange(positions.shape[0])
        (x_low, y_low, z_low), (x_high, y_high, z_high) = self._inner
        if not (x_low < state[0] < x_high and y_low < state[1] < y_high
                and z_low < state[2] < z_high):  # fmt: skip
            labels = np.flatnonzero(
                np.all((positions >= self._low) & (positions <= self._high), axis=1)
            )
            positions = positions[labels]
        polygonal, vertical = self._metric(positions)
        params = self._params
        actions = polygonal / params[kernel.LONGEST_HORIZONTAL]
        actions += vertical / params[kernel.LONGEST_VERTICAL]
        actions -= params[kernel.ACTION_SLACK]
        np.maximum(actions, 0.0, out=actions)
        offset = polygonal + vertical
        to_go = params[kernel.ACTION_COST] * actions
        to_go += offset
        return planner._Successors(
            keys=self.keys(positions),
            step_cost=self._tables.cost[heading][labels],
            step_length=self._tables.length[heading][labels],
            labels=labels,
            to_go=to_go,
            length_to_go=np.maximum(offset - params[kernel.LENGTH_SLACK], 0.0),
        )

    def successor(self, state: tuple[float, float, float, int], label: int) -> tuple:
        dx, dy, dz = self._tables.displacement[state[3]][label].tolist()
        heading = int(self._tables.next_heading[state[3]][label])
        return (state[0] + dx, state[1] + dy, state[2] + dz, heading)

    def terminal_cost(self, state: tuple[float, float, float, int]) -> float | None:
        if not self._space.within_tolerance(state[:3]):
            return None
        polygonal, vertical = self._metric(np.array([state[:3]]))
        return float(polygonal[0] + vertical[0])

    def is_free(self, parent: tuple[float, float, float, int], label: int) -> bool:
        return self._space.is_free(parent, label)


@pytest.mark.parametrize(
    ("start", "goal"),
    [
        (Pose(0.0, 0.0, 2.0, 0.0), (10.0, 0.0, 2.0)),  # through the tall wall's gap region
        (Pose(-12.0, 6.0, 1.0, 1.2), (-2.0, 8.0, 4.0)),  # over the low block
        (Pose(0.0, -12.0, 1.0, 2.0), (1.0, -4.0, 3.5)),  # under or around the slab
        (Pose(8.0, 8.0, 5.0, -2.5), (-10.0, -14.0, 1.5)),
        # The 5 m move ends exactly at the goal tolerance: math.dist decides, not the kernel.
        (Pose(-15.0, -15.0, 5.0, 0.0), (-9.0, -15.0, 5.0)),
    ],
)
def test_bundled_search_pops_in_the_order_of_one_entry_per_successor(
    world: CollisionWorld, start: Pose, goal: tuple[float, float, float]
) -> None:
    config = PlannerConfig()

    def space() -> planner._HybridSpace:
        screen = CapsuleScreen(world, world.triangles, *BOUNDS)
        return planner._HybridSpace(screen, start, goal, BOUNDS, config)

    bundled = planner._compiled_search(space(), start, config)
    reference_space = _NumpyHybridSpace(space())
    origin = (start.x, start.y, start.z, 0)
    start_key = int(reference_space.keys(np.array([origin[:3]]))[0])
    reference = _reference_lazy_astar(reference_space, origin, start_key, config)
    assert reference.path is not None
    assert bundled == reference


def test_planning_through_the_screen_gives_the_same_plan(world: CollisionWorld) -> None:
    start, goal = Pose(0.0, 0.0, 2.0, 0.0), (10.0, 1.0, 2.0)
    exact = plan_actions(world, start, goal, bounds=BOUNDS)
    screen = CapsuleScreen(world, world.triangles, *BOUNDS)
    screened = plan_actions(screen, start, goal, bounds=BOUNDS)
    assert exact.found
    assert screened.actions == exact.actions and screened.poses == exact.poses
    assert screened.stats.expansions == exact.stats.expansions
    assert screen.exact_sweeps < exact.stats.collision_checks / 20
