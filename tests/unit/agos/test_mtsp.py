"""The mTSP expert (AGOS-Bench, appendix A.3): coverage, pairing, open routes without subtours,
makespan optimality on cases small enough to enumerate, and the greedy baseline it beats."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from aerialdojo.agos import mtsp
from aerialdojo.agos.grid import Region
from aerialdojo.agos.town import Town
from aerialdojo.errors import ConfigError


def _graph(name: str, points: list[tuple[float, float]], speed: float) -> mtsp.VehicleGraph:
    nodes = np.asarray(points, dtype=float)
    times = np.hypot(*(nodes[:, None, :] - nodes[None, :, :]).transpose(2, 0, 1)) / speed
    return mtsp.VehicleGraph(name, nodes, times, 20.0)


def _best_makespan(uav: mtsp.VehicleGraph, ugv: mtsp.VehicleGraph) -> float:
    """Enumerate every split and order of the nodes (tiny instances only)."""
    best = math.inf
    n_a, n_g = len(uav.nodes), len(ugv.nodes)
    for mask_a in itertools.product((0, 1), repeat=n_a - 1):
        for mask_g in itertools.product((0, 1), repeat=n_g - 1):
            chosen_a = [i + 1 for i, keep in enumerate(mask_a) if keep]
            chosen_g = [j + 1 for j, keep in enumerate(mask_g) if keep]
            if not chosen_a or not chosen_g:
                continue
            plan = mtsp.Solution(
                {
                    "uav": mtsp.Route((0, *chosen_a), (0.0,)),
                    "ugv": mtsp.Route((0, *chosen_g), (0.0,)),
                },
                0.0,
                0.0,
                False,
            )
            if mtsp.check_coverage(uav, ugv, plan):
                continue
            times = []
            for graph, chosen in ((uav, chosen_a), (ugv, chosen_g)):
                times.append(
                    min(
                        sum(graph.times[a, b] for a, b in itertools.pairwise((0, *order)))
                        for order in itertools.permutations(chosen)
                    )
                )
            best = min(best, max(times))
    return best


def test_square_iou_and_pairing_at_80_percent() -> None:
    assert mtsp.square_iou((0, 0), 20, (0, 0), 20) == pytest.approx(1.0)
    assert mtsp.square_iou((0, 0), 20, (4, 0), 20) == pytest.approx(36 / 44)
    assert mtsp.square_iou((0, 0), 20, (5, 0), 20) < 0.8
    assert mtsp.square_iou((0, 0), 20, (50, 0), 20) == 0.0
    uav = _graph("uav", [(0, 0), (40, 0)], 10.0)
    ugv = _graph("ugv", [(100, 0), (41, 2), (80, 0)], 5.0)
    assert mtsp.pairs(uav, ugv) == [(1, 1)]


def test_milp_matches_enumeration_and_beats_or_ties_greedy() -> None:
    # The UGV is slow; the UAV should take the shared node (40, 0), leaving the UGV less.
    uav = _graph("uav", [(0, 0), (40, 0), (80, 0), (0, 40)], 10.0)
    ugv = _graph("ugv", [(40, 2), (40, 60), (80, 60), (0, 40)], 4.0)
    assert mtsp.pairs(uav, ugv) == [(1, 0), (3, 3)]
    solution = mtsp.solve_milp(uav, ugv)
    assert solution.optimal and mtsp.check_coverage(uav, ugv, solution) == []
    assert solution.makespan_s == pytest.approx(_best_makespan(uav, ugv))
    greedy = mtsp.solve_greedy(uav, ugv)
    assert mtsp.check_coverage(uav, ugv, greedy) == []
    assert solution.makespan_s <= greedy.makespan_s + 1e-9
    for route in solution.routes.values():  # one open path from the start: no subtours
        assert route.nodes[0] == 0 and len(set(route.nodes)) == len(route.nodes)
        assert list(route.arrivals) == sorted(route.arrivals)


def test_greedy_is_beaten_where_nearest_first_goes_the_wrong_way() -> None:
    # Nearest-first takes the UAV east to 10 m, on to 30 m, then back to -11 m (71 m);
    # sweeping west first and then east flies 11 + 41 = 52 m.
    uav = _graph("uav", [(0, 0), (10, 0), (-11, 0), (30, 0)], 10.0)
    ugv = _graph("ugv", [(0, 500), (40, 500)], 10.0)
    solution = mtsp.solve_milp(uav, ugv)
    greedy = mtsp.solve_greedy(uav, ugv)
    assert solution.makespan_s == pytest.approx(_best_makespan(uav, ugv))
    assert (solution.makespan_s, greedy.makespan_s) == pytest.approx((5.2, 7.1))


def test_discovery_truncates_the_trajectories() -> None:
    uav = _graph("uav", [(0, 0), (40, 0), (80, 0), (120, 0)], 10.0)
    ugv = _graph("ugv", [(0, 300), (40, 300)], 10.0)
    solution = mtsp.solve_milp(uav, ugv)
    t_f = mtsp.discovery_time(solution, (uav, ugv), (120.0, 10.0))
    assert t_f == pytest.approx(8.0)  # the UAV reaches (80, 0), 41 m from the target, at 8 s
    kept = mtsp.truncate(solution.routes["uav"], t_f)
    assert kept.nodes == (0, 1, 2) and kept.completion_s == pytest.approx(8.0)
    assert mtsp.discovery_time(solution, (uav, ugv), (900.0, 900.0)) is None


def test_region_problem_on_a_town(town: Town) -> None:
    region = Region(20.0, 20.0, 120.0, 120.0)
    uav, ugv = mtsp.region_problem(town.map, region, (20.0, 20.0), (120.0, 120.0))
    assert all(region.contains(*p) for p in uav.nodes) and all(
        region.contains(*p) for p in ugv.nodes
    )
    assert math.dist(ugv.nodes[0], (120.0, 120.0)) == min(
        math.dist(p, (120.0, 120.0)) for p in ugv.nodes
    )
    solution = mtsp.solve_milp(uav, ugv, time_limit_s=30.0)
    assert mtsp.check_coverage(uav, ugv, solution) == []
    assert solution.makespan_s <= mtsp.solve_greedy(uav, ugv).makespan_s + 1e-6
    with pytest.raises(ConfigError, match="holds 0 UAV waypoints"):
        mtsp.region_problem(town.map, Region(500.0, 500.0, 510.0, 510.0), (0, 0), (0, 0))
