"""Expert trajectories: the MILP mTSP's makespan against the greedy nearest-neighbour
baseline on the same small regions, and the time each takes to solve.

Regions are 100 m squares of the AGOS towns (about 4-9 UAV waypoints and 15-25 road anchors,
the size HiGHS proves optimal within seconds), with start positions drawn from a seeded
generator. The figure is the mean makespan (lower is better) of each method over the regions.

Usage: tools/run.sh python benchmarks/mtsp.py [--regions 6] [--seed 0] [--time-limit 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "aerialdojo"))

from aerialdojo.agos import mtsp
from aerialdojo.agos.grid import Region
from aerialdojo.agos.town import TOWN_NAMES, town_map
from aerialdojo.errors import ConfigError

REGION_M = 100.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regions", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=30.0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    milp_makespans, greedy_makespans, milp_times, greedy_times = [], [], [], []
    print(f"{'town':<11} {'region':<22} {'uav':>3} {'ugv':>3} {'pairs':>5} "
          f"{'greedy s':>9} {'milp s':>8} {'solve s':>8} optimal")  # fmt: skip
    while len(milp_makespans) < args.regions:
        town = town_map(TOWN_NAMES[len(milp_makespans) % len(TOWN_NAMES)])
        corner = rng.uniform(-190.0, 190.0 - REGION_M, 2)
        region = Region(corner[0], corner[1], corner[0] + REGION_M, corner[1] + REGION_M)
        starts = rng.uniform(corner, corner + REGION_M, (2, 2))
        try:
            uav, ugv = mtsp.region_problem(town, region, starts[0], starts[1])
        except ConfigError:
            continue  # too few waypoints in this draw
        if len(ugv.nodes) > 24:
            continue  # beyond what the MILP proves optimal in seconds
        greedy = mtsp.solve_greedy(uav, ugv)
        exact = mtsp.solve_milp(uav, ugv, time_limit_s=args.time_limit)
        for solution in (greedy, exact):
            problems = mtsp.check_coverage(uav, ugv, solution)
            assert not problems, problems
        milp_makespans.append(exact.makespan_s)
        greedy_makespans.append(greedy.makespan_s)
        milp_times.append(exact.solve_s)
        greedy_times.append(greedy.solve_s)
        label = f"({corner[0]:.0f}, {corner[1]:.0f})+{REGION_M:.0f}"
        print(
            f"{town.name:<11} {label:<22} {len(uav.nodes):>3} {len(ugv.nodes):>3} "
            f"{len(mtsp.pairs(uav, ugv)):>5} {greedy.makespan_s:>9.1f} {exact.makespan_s:>8.1f} "
            f"{exact.solve_s:>8.2f} {exact.optimal}"
        )
    greedy_ms = statistics.median(greedy_times) * 1e3
    print(
        f"solve time: MILP median {statistics.median(milp_times):.2f} s "
        f"(max {max(milp_times):.2f} s), greedy median {greedy_ms:.2f} ms"
    )
    value, baseline = statistics.mean(milp_makespans), statistics.mean(greedy_makespans)
    print(
        f"RESULT mtsp_mean_makespan_s value={value:.2f} baseline={baseline:.2f} "
        f"ratio={value / baseline:.3f}"
    )


if __name__ == "__main__":
    main()
