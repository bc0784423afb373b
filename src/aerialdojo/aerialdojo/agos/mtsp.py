"""Expert search trajectories (AGOS-Bench, "Expert Dataset" and A.3): the UAV-UGV coverage
problem as an open-route mTSP that minimises the makespan, solved as a MILP with HiGHS
(``scipy.optimize.milp``), and a greedy nearest-neighbour baseline.

Each vehicle's graph is the metric closure of its waypoints (travel time between any two
nodes is the shortest-path time), so that a route that visits every node once exists even on
a road network with dead ends; the route between consecutive nodes is the shortest path.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

from aerialdojo.agos.grid import Region
from aerialdojo.agos.schedule import UAV_SPEED_MPS, UGV_SPEED_MPS
from aerialdojo.agos.town import TownMap
from aerialdojo.errors import ConfigError

#: Waypoints whose visible ranges overlap by at least this IoU are paired (eq. 24).
PAIRING_IOU = 0.8
#: The discovery radius of AGOS-Bench, appendix A.3: a platform within it of the target has found
#: it.
DISCOVERY_RADIUS_M = 50.0


@dataclass(frozen=True)
class VehicleGraph:
    """One vehicle's waypoint graph G^k as the MILP sees it.

    Attributes:
        name: ``uav`` or ``ugv``.
        nodes: (n, 2) waypoint positions; node 0 is the start s_k.
        times: (n, n) travel times t_ij in seconds (shortest-path times; diagonal unused).
        visible_half_m: half the side of the square each waypoint's visible range spans.
    """

    name: str
    nodes: np.ndarray
    times: np.ndarray
    visible_half_m: float

    def __post_init__(self) -> None:
        count = len(self.nodes)
        if count < 2 or self.times.shape != (count, count):
            raise ConfigError(
                f"{self.name}: need >= 2 nodes and an n x n time matrix, got {count} nodes "
                f"and times of shape {self.times.shape}"
            )
        if not np.isfinite(self.times).all():
            raise ConfigError(f"{self.name}: some waypoint cannot be reached from another")


#: Half side of the square a waypoint's visible range covers: the UAV's grid cell, and an
#: equal square around a UGV anchor.
UAV_VISIBLE_HALF_M = 20.0
UGV_VISIBLE_HALF_M = 20.0


def region_problem(
    town: TownMap,
    region: Region,
    uav_start: Sequence[float],
    ugv_start: Sequence[float],
    *,
    uav_speed_mps: float = UAV_SPEED_MPS,
    ugv_speed_mps: float = UGV_SPEED_MPS,
) -> tuple[VehicleGraph, VehicleGraph]:
    """The two vehicle graphs of a region: active UAV grid nodes with straight-flight times,
    decision anchors inside the region with directed road-route times; each vehicle's start
    is its node nearest to its start position.

    Raises:
        ConfigError: the region holds fewer than two nodes of a vehicle.
    """
    grid = town.uav_grid.active(region)
    points = np.asarray([(w.x, w.y) for w in grid])
    if len(points) < 2:
        raise ConfigError(f"region {region} holds {len(points)} UAV waypoints; need >= 2")
    first = int(np.argmin(np.hypot(*(points - np.asarray(uav_start[:2])).T)))
    points = np.concatenate((points[[first]], np.delete(points, first, axis=0)))
    flight = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    uav = VehicleGraph("uav", points, flight / uav_speed_mps, UAV_VISIBLE_HALF_M)

    roads = town.roads
    anchors = [a for a in roads.anchors if region.contains(*roads.xy(a))]
    if len(anchors) < 2:
        raise ConfigError(f"region {region} holds {len(anchors)} road anchors; need >= 2")
    start = min(anchors, key=lambda a: math.dist(roads.xy(a), ugv_start[:2]))
    anchors = [start, *(a for a in anchors if a != start)]
    times = np.empty((len(anchors), len(anchors)))
    for row, anchor in enumerate(anchors):
        reach = roads.decision_distances(anchor)
        times[row] = [reach.get(other, math.inf) / ugv_speed_mps for other in anchors]
    ugv = VehicleGraph("ugv", np.asarray([roads.xy(a) for a in anchors]), times, UGV_VISIBLE_HALF_M)
    return uav, ugv


def square_iou(a: Sequence[float], half_a: float, b: Sequence[float], half_b: float) -> float:
    """IoU of two axis-aligned squares given by centre and half side."""
    overlap_x = max(0.0, min(a[0] + half_a, b[0] + half_b) - max(a[0] - half_a, b[0] - half_b))
    overlap_y = max(0.0, min(a[1] + half_a, b[1] + half_b) - max(a[1] - half_a, b[1] - half_b))
    intersection = overlap_x * overlap_y
    union = 4 * half_a**2 + 4 * half_b**2 - intersection
    return intersection / union


def pairs(
    uav: VehicleGraph, ugv: VehicleGraph, threshold: float = PAIRING_IOU
) -> list[tuple[int, int]]:
    """Calculate_Pair (eq. 24): (i, j) with IoU(S_i^uav, S_j^ugv) >= ``threshold``."""
    return [
        (i, j)
        for i, a in enumerate(uav.nodes)
        for j, b in enumerate(ugv.nodes)
        if square_iou(a, uav.visible_half_m, b, ugv.visible_half_m) >= threshold
    ]


@dataclass(frozen=True)
class Route:
    """One vehicle's open route: node indices in visiting order and arrival times."""

    nodes: tuple[int, ...]
    arrivals: tuple[float, ...]

    @property
    def completion_s(self) -> float:
        return self.arrivals[-1]


@dataclass(frozen=True)
class Solution:
    """A coverage plan.

    Attributes:
        routes: per vehicle name.
        makespan_s: T_max.
        solve_s: wall time spent solving.
        optimal: the MILP proved optimality (False for the greedy baseline or a time-out).
    """

    routes: dict[str, Route]
    makespan_s: float
    solve_s: float
    optimal: bool


def _timed(graph: VehicleGraph, order: Sequence[int]) -> Route:
    arrivals = [0.0]
    for a, b in itertools.pairwise(order):
        arrivals.append(arrivals[-1] + float(graph.times[a, b]))
    return Route(tuple(order), tuple(arrivals))


def check_coverage(uav: VehicleGraph, ugv: VehicleGraph, solution: Solution) -> list[str]:
    """Every violated constraint of eqs. 38-41 (empty: the plan covers the region)."""
    problems = []
    paired = pairs(uav, ugv)
    shared_uav = {i for i, _ in paired}
    shared_ugv = {j for _, j in paired}
    visited = {name: set(route.nodes) for name, route in solution.routes.items()}
    for graph, shared in ((uav, shared_uav), (ugv, shared_ugv)):
        route = solution.routes[graph.name]
        if route.nodes[0] != 0:
            problems.append(f"{graph.name} does not start at its start node")
        if len(set(route.nodes)) != len(route.nodes):
            problems.append(f"{graph.name} visits a node twice")
        missing = sorted(set(range(len(graph.nodes))) - shared - visited[graph.name])
        if missing:
            problems.append(f"{graph.name} misses its exclusive nodes {missing}")
    for i, j in paired:
        if i not in visited[uav.name] and j not in visited[ugv.name]:
            problems.append(f"pair (uav {i}, ugv {j}) is visited by neither")
    return problems


def solve_milp(uav: VehicleGraph, ugv: VehicleGraph, time_limit_s: float = 60.0) -> Solution:
    """Minimise T_max subject to eqs. 36-55 of AGOS-Bench, appendix A.3.

    Added to the paper's constraints, because an open route leaves its start and never
    returns: the start has exactly one outgoing and no incoming edge.

    Raises:
        ConfigError: the MILP is infeasible or found no solution within the time limit.
    """
    graphs = (uav, ugv)
    index: dict[tuple[str, str, int, int], int] = {}
    for graph in graphs:
        n = len(graph.nodes)
        for i in range(n):
            for j in range(n):
                if i != j:
                    index[("x", graph.name, i, j)] = len(index)
        for kind in ("y", "z", "u"):
            for i in range(n):
                index[(kind, graph.name, i, 0)] = len(index)
    t_max = len(index)
    count = t_max + 1
    rows: list[tuple[dict[int, float], float, float]] = []

    def x(name: str, i: int, j: int) -> int:
        return index[("x", name, i, j)]

    def var(kind: str, name: str, i: int) -> int:
        return index[(kind, name, i, 0)]

    paired = pairs(uav, ugv)
    shared = {uav.name: {i for i, _ in paired}, ugv.name: {j for _, j in paired}}
    for graph in graphs:
        name, n = graph.name, len(graph.nodes)
        others = range(1, n)
        # (36)-(37): T_k = sum t_ij x_ij <= T_max.
        completion = {
            x(name, i, j): float(graph.times[i, j]) for i in range(n) for j in range(n) if i != j
        }
        rows.append(({**completion, t_max: -1.0}, -math.inf, 0.0))
        rows.append(({var("y", name, 0): 1.0}, 1.0, 1.0))  # (38)
        for i in others:  # (39)-(40): exclusive nodes are visited by their vehicle
            if i not in shared[name]:
                rows.append(({var("y", name, i): 1.0}, 1.0, 1.0))
        rows.append(({var("z", name, i): 1.0 for i in range(n)}, 1.0, 1.0))  # (42)
        for i in range(n):  # (43)
            rows.append(({var("z", name, i): 1.0, var("y", name, i): -1.0}, -math.inf, 0.0))
        rows.append(({var("z", name, 0): 1.0}, 0.0, 0.0))  # (44)
        rows.append(({x(name, 0, j): 1.0 for j in others}, 1.0, 1.0))  # open route: leave s
        rows.append(({x(name, j, 0): 1.0 for j in others}, 0.0, 0.0))  # ... never return
        for i in others:
            incoming = {x(name, j, i): 1.0 for j in range(n) if j != i}
            rows.append(({**incoming, var("y", name, i): -1.0}, 0.0, 0.0))  # (45)
            outgoing = {x(name, i, j): 1.0 for j in range(n) if j != i}
            rows.append(
                ({**outgoing, var("y", name, i): -1.0, var("z", name, i): 1.0}, 0.0, 0.0)
            )  # (46)
        rows.append(({var("u", name, 0): 1.0}, 0.0, 0.0))  # (47)
        for i in others:  # (48)
            rows.append(({var("u", name, i): 1.0, var("y", name, i): -1.0}, 0.0, math.inf))
            rows.append(({var("u", name, i): 1.0, var("y", name, i): -(n - 1.0)}, -math.inf, 0.0))
        for i in range(n):  # (49): u_j >= u_i + 1 - n (1 - x_ij), j != s
            for j in others:
                if i != j:
                    rows.append(
                        (
                            {var("u", name, j): 1.0, var("u", name, i): -1.0, x(name, i, j): -n},
                            1.0 - n,
                            math.inf,
                        )
                    )
    for i, j in paired:  # (41)
        rows.append(({var("y", uav.name, i): 1.0, var("y", ugv.name, j): 1.0}, 1.0, math.inf))

    matrix = lil_matrix((len(rows), count))
    lower, upper = np.empty(len(rows)), np.empty(len(rows))
    for row, (coefficients, low, high) in enumerate(rows):
        for column, value in coefficients.items():
            matrix[row, column] = value
        lower[row], upper[row] = low, high
    cost = np.zeros(count)
    cost[t_max] = 1.0
    integrality = np.ones(count)
    high_bounds = np.ones(count)
    for (kind, name, _, _), column in index.items():
        if kind == "u":
            integrality[column] = 0
            high_bounds[column] = len(next(g for g in graphs if g.name == name).nodes) - 1
    integrality[t_max] = 0
    high_bounds[t_max] = np.inf
    started = time.perf_counter()
    result = milp(
        cost,
        constraints=LinearConstraint(matrix.tocsr(), lower, upper),
        integrality=integrality,
        bounds=Bounds(np.zeros(count), high_bounds),
        options={"time_limit": time_limit_s},
    )
    solve_s = time.perf_counter() - started
    if result.x is None:
        raise ConfigError(f"mTSP MILP found no solution: {result.message}")
    routes = {}
    for graph in graphs:
        successor = {
            i: j
            for (kind, name, i, j), column in index.items()
            if kind == "x" and name == graph.name and result.x[column] > 0.5
        }
        order = [0]
        while order[-1] in successor:
            order.append(successor[order[-1]])
        routes[graph.name] = _timed(graph, order)
    makespan = max(route.completion_s for route in routes.values())
    return Solution(routes, makespan, solve_s, optimal=result.status == 0)


def solve_greedy(uav: VehicleGraph, ugv: VehicleGraph) -> Solution:
    """Nearest-neighbour baseline: the vehicle that is free first moves to its nearest node
    still needed (its exclusive nodes, or a pair neither vehicle has covered)."""
    started = time.perf_counter()
    paired = pairs(uav, ugv)
    graphs = {uav.name: uav, ugv.name: ugv}
    partner: dict[tuple[str, int], set[int]] = {}
    for i, j in paired:
        partner.setdefault((uav.name, i), set()).add(j)
        partner.setdefault((ugv.name, j), set()).add(i)
    visited = {name: {0} for name in graphs}
    orders = {name: [0] for name in graphs}
    clocks = dict.fromkeys(graphs, 0.0)
    other = {uav.name: ugv.name, ugv.name: uav.name}

    def needed(name: str, node: int) -> bool:
        if node in visited[name]:
            return False
        partners = partner.get((name, node))
        if not partners:
            return True
        # A shared node is needed only while some pair of it is still uncovered.
        return any(p not in visited[other[name]] for p in partners)

    while True:
        moves = []
        for name, graph in graphs.items():
            here = orders[name][-1]
            options = [n for n in range(len(graph.nodes)) if needed(name, n)]
            if options:
                best = min(options, key=lambda n: (graph.times[here, n], n))
                moves.append((clocks[name], name, best))
        if not moves:
            break
        _, name, node = min(moves)
        clocks[name] += float(graphs[name].times[orders[name][-1], node])
        orders[name].append(node)
        visited[name].add(node)
    routes = {name: _timed(graphs[name], orders[name]) for name in graphs}
    for name, graph in graphs.items():
        if len(routes[name].nodes) == 1:  # every vehicle leaves its start (eq. 44)
            nearest = min(range(1, len(graph.nodes)), key=lambda n: graph.times[0, n])
            routes[name] = _timed(graph, [0, nearest])
    makespan = max(route.completion_s for route in routes.values())
    return Solution(routes, makespan, time.perf_counter() - started, optimal=False)


def discovery_time(
    solution: Solution,
    graphs: Sequence[VehicleGraph],
    target_xy: Sequence[float],
    radius_m: float = DISCOVERY_RADIUS_M,
) -> float | None:
    """t_f: the first arrival of any platform within ``radius_m`` of the target."""
    times = [
        arrival
        for graph in graphs
        for node, arrival in zip(
            solution.routes[graph.name].nodes, solution.routes[graph.name].arrivals, strict=True
        )
        if math.dist(graph.nodes[node], target_xy) <= radius_m
    ]
    return min(times, default=None)


def truncate(route: Route, t_f: float) -> Route:
    """Tra^k: the waypoints reached no later than ``t_f``."""
    kept = [k for k, arrival in enumerate(route.arrivals) if arrival <= t_f]
    return Route(tuple(route.nodes[k] for k in kept), tuple(route.arrivals[k] for k in kept))
