"""Every action a robot can do, as poses in the episode frame: the embedded simulator's own
kinematics for AerialDojo-200K and CityNav, AGOS-Bench's grid flights and road drives, cut at
the site's geofence and split into legs the safety gate accepts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.actions import (
    AERIALDOJO_ACTIONS,
    CITYNAV_ACTIONS,
    Action,
    aerialdojo_choices,
    target_pose,
)
from aerialdojo.agos import vocabulary as agos
from aerialdojo.agos.planning import drive_to, road_options
from aerialdojo.agos.town import town_map
from aerialdojo.errors import InvalidActionError
from aerialdojo.geofence import Geofence
from aerialdojo.geometry import Pose
from aerialdojo.robot.motions import (
    FENCE_STEP_M,
    MotionWorld,
    fence_cut,
    path_length,
    plan_motion,
    split_legs,
    turn_angle,
)

START = Pose(1.0, 2.0, 3.0, math.radians(30.0))
YARD = Geofence(polygon=((0.0, 0.0), (20.0, 0.0), (20.0, 20.0), (0.0, 20.0)), min_z=0.5, max_z=10.0,
                margin=0.5)  # fmt: skip


@pytest.mark.parametrize("action", aerialdojo_choices(), ids=lambda a: f"{a.name}{a.magnitude:g}")
def test_aerialdojo_actions_end_where_the_embedded_simulator_puts_them(action: Action) -> None:
    plan = plan_motion(START, action, "", MotionWorld("Alley_0"))
    if action.name == "Stop":
        assert plan.waypoints == () and plan.target is None
        return
    assert plan.waypoints == (target_pose(START, action),)
    assert not plan.geofenced


def test_citynav_actions_are_the_same_motions_with_its_magnitudes() -> None:
    for kind in CITYNAV_ACTIONS:
        for magnitude in kind.magnitudes:
            action = Action(kind.name, magnitude)
            plan = plan_motion(START, action, "", MotionWorld("CityNav_0"))
            assert plan.target == target_pose(START, action)
    assert {kind.name for kind in CITYNAV_ACTIONS} <= {kind.name for kind in AERIALDOJO_ACTIONS}


def test_the_agos_ugv_drives_every_fine_node_of_the_road_path_and_ends_as_the_simulator() -> None:
    town = town_map("AgosTown_0")
    anchor = next(iter(town.roads.anchor_kinds))
    x, y = town.roads.xy(anchor)
    start = Pose(x, y, town.ground_z + 1.6, 0.0)
    option = road_options(town.roads, start)[-1]
    plan = plan_motion(
        start, Action(agos.MOVE_TO_ROAD_WAYPOINT), option.waypoint_id, MotionWorld("AgosTown_0")
    )
    drive = drive_to(town.roads, start, option.anchor, town.ground_z)
    assert len(plan.waypoints) == len(drive.points) >= 2
    for pose, point in zip(plan.waypoints, drive.points, strict=True):
        assert (pose.x, pose.y, pose.z) == pytest.approx(point)
    assert plan.target == drive.final_pose
    # Each intermediate node is approached heading along the road towards it.
    previous = start
    for pose in plan.waypoints[:-1]:
        if math.hypot(pose.x - previous.x, pose.y - previous.y) > 1e-6:
            assert pose.yaw == pytest.approx(math.atan2(pose.y - previous.y, pose.x - previous.x))
        previous = pose
    assert path_length(start, plan.waypoints) == pytest.approx(drive.length_m)
    # GO_TO_CANDIDATE reaches the approach anchor the task manager's RGPP chose the same way.
    candidate = plan_motion(
        start, Action(agos.GO_TO_CANDIDATE), option.waypoint_id, MotionWorld("AgosTown_0")
    )
    assert candidate == plan


def test_the_agos_uav_flies_to_its_grid_waypoint_at_its_altitude() -> None:
    town = town_map("AgosTown_0")
    waypoint = next(iter(town.uav_grid.waypoints.values()))
    start = Pose(0.0, 0.0, waypoint.z, 1.0)
    plan = plan_motion(
        start, Action(agos.MOVE_TO_UAV_WAYPOINT), waypoint.waypoint_id, MotionWorld("AgosTown_0")
    )
    assert plan.waypoints == (Pose(waypoint.x, waypoint.y, waypoint.z, 1.0),)


@pytest.mark.parametrize(
    "name",
    [agos.STOP_OBSERVE, agos.CONFIRM, agos.REJECT, agos.WAIT, agos.ANNOTATE_CANDIDATE,
     agos.NO_RELIABLE_CANDIDATE],
)  # fmt: skip
def test_agos_decisions_that_move_nothing_plan_no_motion(name: str) -> None:
    plan = plan_motion(START, Action(name), "B3", MotionWorld("AgosTown_0"))
    assert plan.waypoints == ()


def test_an_action_no_robot_can_do_and_a_road_action_off_a_town_are_refused() -> None:
    with pytest.raises(InvalidActionError, match="cannot execute 'Fly'"):
        plan_motion(START, Action("Fly"), "", MotionWorld("Alley_0"))
    with pytest.raises(InvalidActionError, match=r"need an AGOS town's map.*Alley_0"):
        plan_motion(START, Action(agos.MOVE_TO_ROAD_WAYPOINT), "R4", MotionWorld("Alley_0"))
    with pytest.raises(InvalidActionError, match="not a road waypoint"):
        plan_motion(START, Action(agos.MOVE_TO_ROAD_WAYPOINT), "R", MotionWorld("AgosTown_0"))


def test_a_move_across_the_fence_stops_inside_its_margin_and_says_so() -> None:
    start = Pose(17.0, 10.0, 2.0, 0.0)  # 2.5 m from the margin of the east edge
    plan = plan_motion(start, Action("MoveForward", 5.0), "", MotionWorld("yard"), fence=YARD)
    assert plan.geofenced
    (end,) = plan.waypoints
    assert YARD.contains(end.position)
    assert 19.5 - FENCE_STEP_M <= end.x <= 19.5
    assert (end.y, end.z, end.yaw) == (10.0, 2.0, 0.0)
    # Up through the ceiling: cut below its margin.
    high = Pose(10.0, 10.0, 8.5, 0.0)
    up = plan_motion(high, Action("MoveUp", 2.0), "", MotionWorld("yard"), fence=YARD)
    assert up.geofenced
    assert up.target is not None and 9.5 - FENCE_STEP_M <= up.target.z <= 9.5
    # Well inside, and a turn at the margin: nothing is cut.
    inside = plan_motion(Pose(5, 5, 2, 0), Action("MoveForward", 5.0), "", MotionWorld("yard"),
                         fence=YARD)  # fmt: skip
    assert not inside.geofenced and inside.target == Pose(10.0, 5.0, 2.0, 0.0)
    edge = Pose(19.5, 10.0, 2.0, 0.0)
    assert not plan_motion(edge, Action("TurnLeft", 15.0), "", MotionWorld("yard"),
                           fence=YARD).geofenced  # fmt: skip


def test_a_path_is_cut_where_it_first_leaves_a_concave_fence() -> None:
    # A U: the leg from one arm to the other crosses the gap between them.
    fence = Geofence(
        polygon=((0, 0), (30, 0), (30, 20), (20, 20), (20, 5), (10, 5), (10, 20), (0, 20)),
        min_z=0.0, max_z=10.0, margin=0.5,
    )  # fmt: skip
    start = Pose(5.0, 12.0, 2.0, 0.0)
    waypoints, cut = fence_cut(start, (Pose(25.0, 12.0, 2.0, 0.0),), fence)
    assert cut
    (end,) = waypoints
    assert 9.5 - FENCE_STEP_M <= end.x <= 9.5
    # A start outside the fence moves nowhere.
    assert fence_cut(Pose(15.0, 12.0, 2.0, 0.0), (start,), fence) == ((), True)


def test_long_legs_are_split_into_equal_legs_the_gate_accepts() -> None:
    start = Pose(0.0, 0.0, 2.0, 0.5)
    legs = split_legs(start, (Pose(12.0, 0.0, 2.0, 1.0), Pose(12.0, 3.0, 2.0, 1.0)), 5.0)
    assert [(p.x, p.y) for p in legs] == [(4.0, 0.0), (8.0, 0.0), (12.0, 0.0), (12.0, 3.0)]
    assert [p.yaw for p in legs] == [0.5, 0.5, 1.0, 1.0]
    steps = np.diff([(start.x, start.y), *((p.x, p.y) for p in legs)], axis=0)
    assert max(np.linalg.norm(steps, axis=1)) <= 5.0
    # Exactly the cap is one leg.
    assert split_legs(start, (Pose(5.0, 0.0, 2.0, 0.5),), 5.0) == (Pose(5.0, 0.0, 2.0, 0.5),)
    assert turn_angle(start, legs) == pytest.approx(0.5)
