"""Hybrid A* over the AerialDojo actions and the voxel A* baseline, on hand-made box worlds."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from task_worlds import BoxWorld

from aerialdojo.actions import STOP, Action, check_action, target_pose
from aerialdojo.geometry import Pose
from aerialdojo.tasks.planner import (
    ActionPlan,
    PlannerConfig,
    direct_route,
    path_length,
    plan_actions,
    plan_grid,
)

OPEN_BOUNDS = ((-40.0, -40.0, 0.0), (40.0, 40.0, 10.0))


def assert_flyable(
    plan: ActionPlan, world: BoxWorld, start: Pose, goal: Sequence[float], radius: float
) -> None:
    """Legal actions whose kinematics give the poses, every translation free, ending near goal."""
    assert plan.found
    assert plan.poses[0] == start
    assert len(plan.poses) == len(plan.actions) + 1
    pose = start
    fresh = BoxWorld(world.boxes)  # no state shared with the planner's queries
    for action, recorded in zip(plan.actions, plan.poses[1:], strict=True):
        check_action(action)
        assert action.name != STOP
        moved = target_pose(pose, action)
        assert moved == recorded
        if moved.position.tolist() != pose.position.tolist():
            assert fresh.sweep_sphere(pose.position, moved.position, radius) is None
        pose = moved
    assert pose.distance_to(goal) <= PlannerConfig().goal_tolerance_m
    assert plan.length_m == pytest.approx(path_length(plan.poses))


def test_open_space_route_is_nearly_the_shortest_possible() -> None:
    world = BoxWorld()
    start, goal = Pose(0.0, 0.0, 2.0, 0.4), (23.0, -9.0, 5.0)
    plan = plan_actions(world, start, goal, bounds=OPEN_BOUNDS)
    assert_flyable(plan, world, start, goal, 0.25)
    # Horizontal and vertical moves are separate actions: L >= dxy + |dz| (less the tolerance).
    lower_bound = math.hypot(23.0, 9.0) + 3.0 - math.sqrt(2.0) * PlannerConfig().goal_tolerance_m
    assert lower_bound <= plan.length_m <= lower_bound + 3.0


def test_goal_behind_needs_a_quarter_turn_and_a_sideways_move() -> None:
    world = BoxWorld()
    start, goal = Pose(0.0, 0.0, 2.0, 0.0), (-10.0, 0.0, 2.0)
    plan = plan_actions(world, start, goal, bounds=OPEN_BOUNDS)
    assert_flyable(plan, world, start, goal, 0.25)
    turns = [action for action in plan.actions if action.name.startswith("Turn")]
    assert len(turns) == 6  # 90 deg: then MoveLeft or MoveRight points backwards
    assert len({action.name for action in turns}) == 1
    assert 10.0 - PlannerConfig().goal_tolerance_m <= plan.length_m <= 10.0


def test_wall_forces_a_detour() -> None:
    world = BoxWorld([((4.0, -6.0, 0.0), (5.0, 6.0, 20.0))])
    start, goal = Pose(0.0, 0.0, 2.0, 0.0), (10.0, 0.0, 2.0)
    plan = plan_actions(world, start, goal, bounds=OPEN_BOUNDS)
    assert_flyable(plan, world, start, goal, 0.25)
    # Around either end of the wall, grown by the radius: at least 2 * hypot(4.5, 6.25) - tol.
    assert plan.length_m >= 2 * math.hypot(4.5, 6.25) - 1.0
    assert plan.length_m / math.dist(start.position, goal) >= 1.05


def test_collision_radius_decides_whether_a_slot_is_passable() -> None:
    # A wall with a 0.6 m slot: a 0.25 m sphere fits through, a 0.35 m one must go around.
    wall = [((4.0, -8.0, 0.0), (5.0, -0.3, 20.0)), ((4.0, 0.3, 0.0), (5.0, 8.0, 20.0))]
    world = BoxWorld(wall)
    start, goal = Pose(0.0, 0.0, 2.0, 0.0), (10.0, 0.0, 2.0)
    small = plan_actions(world, start, goal, bounds=OPEN_BOUNDS)
    wide = plan_actions(
        world, start, goal, config=PlannerConfig(collision_radius_m=0.35), bounds=OPEN_BOUNDS
    )
    assert_flyable(small, world, start, goal, 0.25)
    assert_flyable(wide, world, start, goal, 0.35)
    assert small.length_m == pytest.approx(10.0, abs=1.0)
    assert wide.length_m > 20.0


def test_unreachable_goal_is_reported_not_found() -> None:
    cage = [
        ((8.0, -3.0, 0.0), (9.0, 3.0, 9.0)),
        ((12.0, -3.0, 0.0), (13.0, 3.0, 9.0)),
        ((8.0, -3.0, 0.0), (13.0, -2.0, 9.0)),
        ((8.0, 2.0, 0.0), (13.0, 3.0, 9.0)),
        ((8.0, -3.0, 8.0), (13.0, 3.0, 9.0)),
    ]
    world = BoxWorld(cage)
    capped = PlannerConfig(max_expansions=3000)
    plan = plan_actions(
        world,
        Pose(0.0, 0.0, 2.0, 0.0),
        (10.5, 0.0, 2.0),
        bounds=OPEN_BOUNDS,
        config=capped,
    )
    assert not plan.found
    assert plan.actions == ()
    assert 0 < plan.stats.expansions <= 3000
    grid = plan_grid(world, (0.0, 0.0, 2.0), (10.5, 0.0, 2.0), bounds=OPEN_BOUNDS, config=capped)
    assert not grid.found
    assert 0 < grid.stats.expansions <= 3000


def test_routes_at_or_over_the_length_cap_are_not_returned() -> None:
    world = BoxWorld()
    start, goal = Pose(0.0, 0.0, 2.0, 0.0), (30.0, 0.0, 2.0)
    assert plan_actions(world, start, goal, bounds=OPEN_BOUNDS).found
    capped = plan_actions(
        world, start, goal, bounds=OPEN_BOUNDS, config=PlannerConfig(max_length_m=25.0)
    )
    assert not capped.found


def test_start_in_collision_is_not_planned() -> None:
    world = BoxWorld([((-1.0, -1.0, 0.0), (1.0, 1.0, 4.0))])
    plan = plan_actions(world, Pose(0.0, 0.0, 2.0, 0.0), (10.0, 0.0, 2.0), bounds=OPEN_BOUNDS)
    assert not plan.found
    assert plan.stats.expansions == 0


def test_grid_baseline_finds_a_free_polyline_around_the_wall() -> None:
    world = BoxWorld([((4.0, -6.0, 0.0), (5.0, 6.0, 20.0))])
    plan = plan_grid(world, (0.0, 0.0, 2.0), (10.0, 0.0, 2.0), bounds=OPEN_BOUNDS)
    assert plan.found
    assert math.dist(plan.points[-1], (10.0, 0.0, 2.0)) <= PlannerConfig().goal_tolerance_m
    fresh = BoxWorld(world.boxes)
    for a, b in zip(plan.points, plan.points[1:], strict=False):
        assert fresh.sweep_sphere(np.array(a), np.array(b), 0.25) is None
    polyline = sum(math.dist(a, b) for a, b in zip(plan.points, plan.points[1:], strict=False))
    assert plan.length_m == pytest.approx(polyline)
    assert plan.length_m >= 2 * math.hypot(4.5, 6.25) - 1.0


def test_actions_are_the_agents_own() -> None:
    plan = plan_actions(BoxWorld(), Pose(0.0, 0.0, 2.0, 1.0), (-6.0, 7.0, 1.0), bounds=OPEN_BOUNDS)
    assert plan.found
    assert {action.name for action in plan.actions} <= {
        "MoveForward",
        "MoveLeft",
        "MoveRight",
        "MoveUp",
        "MoveDown",
        "TurnLeft",
        "TurnRight",
    }
    assert all(isinstance(action, Action) for action in plan.actions)


def test_direct_route_in_open_space_is_flyable_and_straight() -> None:
    world = BoxWorld()
    start, goal = Pose(0.0, 0.0, 2.0, 0.3), (23.0, -9.0, 5.4)
    route = direct_route(world, start, goal, bounds=OPEN_BOUNDS)
    assert_flyable(route, world, start, goal, 0.25)
    assert route.stats.expansions == 0
    # Two legs bracketing the bearing are at most 1/cos(7.5 deg) longer than the distance.
    horizontal = math.hypot(23.0, 9.0)
    assert route.length_m <= horizontal / math.cos(math.radians(7.5)) + 3.0 + 2.0
    assert route.length_m >= plan_actions(world, start, goal, bounds=OPEN_BOUNDS).length_m - 1e-9


def test_direct_route_is_not_found_through_a_wall_or_out_of_bounds() -> None:
    wall = BoxWorld([((4.0, -6.0, 0.0), (5.0, 6.0, 20.0))])
    start = Pose(0.0, 0.0, 2.0, 0.0)
    assert not direct_route(wall, start, (10.0, 0.0, 2.0), bounds=OPEN_BOUNDS).found
    low_ceiling = ((-40.0, -40.0, 0.0), (40.0, 40.0, 3.0))
    assert direct_route(BoxWorld(), start, (10.0, 0.0, 2.5), bounds=low_ceiling).found
    assert not direct_route(BoxWorld(), start, (10.0, 0.0, 6.0), bounds=low_ceiling).found
