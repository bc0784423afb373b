"""Episodes and decisions for referee tests on a real town."""

from __future__ import annotations

import math

from aerialdojo.agos.episodes import AgosEpisode
from aerialdojo.agos.grid import Region
from aerialdojo.agos.planning import UGV_HEIGHT_M, drive_to, parse_road_waypoint
from aerialdojo.agos.protocol import AgosReferee
from aerialdojo.agos.town import Town
from aerialdojo.agos.vocabulary import (
    GO_TO_CANDIDATE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    UAV,
)
from aerialdojo.geometry import Pose
from aerialdojo.protocols.referee import PlannedStep, SimOutcome, StepRequest, Verdict


def episode_for(town: Town, ugv_anchor: int, *, target_id: str) -> AgosEpisode:
    target = town.vehicle(target_id)
    x, y = target.centroid[:2]
    ax, ay = town.map.roads.xy(ugv_anchor)
    region = Region(-200.0, -200.0, 200.0, 200.0)
    node = town.map.uav_grid.nearest_active(x, y, region)
    return AgosEpisode(
        episode_id="AgosTown_1-easy-0099",
        scene="AgosTown_1",
        split="test",
        setting="easy",
        region=region,
        uav_start=Pose(node.x, node.y, node.z, math.pi / 2),
        ugv_start=Pose(ax, ay, UGV_HEIGHT_M, 0.0),
        target_object_id=target_id,
        target_name=target.name,
        target_center=target.centroid,
        reference_length_m=100.0,
    )


def orange_target(town: Town) -> str:
    return next(v.object_id for v in town.vehicles if v.colour == "orange")


def far_anchor(town: Town, target_id: str) -> int:
    centre = town.vehicle(target_id).centroid
    roads = town.map.roads
    return max(roads.anchors, key=lambda a: math.dist(roads.xy(a), centre[:2]))


def plan(
    referee: AgosReferee, agent: str, action: str, argument: str = "", message: str = ""
) -> PlannedStep:
    return referee.plan(
        StepRequest(agent=agent, action=action, argument=argument, teammate_message=message)
    )


def run_decision(
    referee: AgosReferee, agent: str, action: str, argument: str = "", message: str = ""
) -> Verdict:
    """Plan a decision, move the agent as the simulator would, and apply it."""
    step = plan(referee, agent, action, argument, message)
    assert step.command is not None
    pose = referee.state.poses[agent]
    if action in (MOVE_TO_ROAD_WAYPOINT, GO_TO_CANDIDATE):
        anchor = parse_road_waypoint(step.command.argument, referee.town.map.roads)
        pose = drive_to(
            referee.town.map.roads, pose, anchor, 0.0, decision_graph=action == GO_TO_CANDIDATE
        ).final_pose
    elif action == MOVE_TO_UAV_WAYPOINT:
        waypoint = referee.town.map.uav_grid.waypoint(argument)
        pose = Pose(waypoint.x, waypoint.y, waypoint.z, pose.yaw)
    return referee.apply(step, SimOutcome(pose=pose))


def succeeded(verdict: Verdict) -> bool:
    """The decision ended the episode with a CONFIRM the checker accepted."""
    return verdict.facts is not None and bool(verdict.facts.get("verdict", {}).get("valid"))


def target_cell(referee: AgosReferee) -> str:
    """The nadir cell the target lies in, seen from the UAV's start (north-up)."""
    uav = referee.state.poses[UAV]
    x, y = referee.target.centroid[:2]
    column = int((-(x - uav.x) + 80.0) // 32.0)  # image left is west (-x) when facing north
    row = int((-(y - uav.y) + 80.0) // 32.0)
    return f"{'ABCDE'[row]}{column + 1}"
