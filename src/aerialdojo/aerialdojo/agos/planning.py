"""UGV motion on the road graph (AGOS-Bench, appendix A.1.2 and "Handoff"): the runtime road
options, road-graph path planning to a candidate (RGPP), and the drive a chosen anchor leads to."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aerialdojo.agos.roads import ANCHOR_JUNCTION, RoadNetwork
from aerialdojo.errors import InvalidActionError
from aerialdojo.geometry import Pose, wrap_angle

#: Height of the UGV's body frame above the road (its cameras sit there).
UGV_HEIGHT_M = 1.6
#: Forward options at about these road distances (A.1.2).
NEAR_OPTION_M = 10.0
FAR_OPTION_M = 30.0
#: A decision edge leaving within this angle of straight back is the backward option.
BACKWARD_ANGLE_RAD = math.radians(135.0)
#: RGPP serves a candidate from an anchor at most this far from its polygon.
SERVICE_RADIUS_M = 45.0

OPTION_FORWARD = "forward"
OPTION_JUNCTION_EXIT = "junction_exit"
OPTION_BACKWARD = "backward"


def road_waypoint_id(anchor: int) -> str:
    """The id agents use for a decision anchor, e.g. ``"R123"``."""
    return f"R{anchor}"


def parse_road_waypoint(waypoint_id: str, roads: RoadNetwork) -> int:
    """The anchor of a road waypoint id.

    Raises:
        InvalidActionError: malformed id, or not a decision anchor.
    """
    text = waypoint_id.strip()
    if not (text.startswith("R") and text[1:].isdigit()) or int(text[1:]) not in roads.anchor_kinds:
        raise InvalidActionError(f"{waypoint_id!r} is not a road waypoint (R<anchor>)")
    return int(text[1:])


@dataclass(frozen=True)
class RoadOption:
    """One legal UGV destination.

    Attributes:
        anchor: the decision anchor.
        kind: ``forward``, ``junction_exit`` or ``backward``.
        distance_m: road distance to it.
    """

    anchor: int
    kind: str
    distance_m: float

    @property
    def waypoint_id(self) -> str:
        return road_waypoint_id(self.anchor)


def _departure(roads: RoadNetwork, nodes: Sequence[int]) -> float:
    (x0, y0), (x1, y1) = roads.xy(nodes[0]), roads.xy(nodes[1])
    return math.atan2(y1 - y0, x1 - x0)


def road_options(roads: RoadNetwork, pose: Pose) -> list[RoadOption]:
    """O^G_t for a UGV at ``pose`` (on an anchor, heading ``pose.yaw``).

    Forward branches are the decision edges leaving within ``BACKWARD_ANGLE_RAD`` of the
    heading: each gives its next anchor (about 10 m; a junction exit when the edge crosses an
    intersection) and, going on straight, the anchor nearest to 30 m. The edge leaving most
    nearly backwards, if it exists in the direction of travel, is the backward option: the
    heading is where the route came from, so this is the route history's last anchor.
    """
    current = roads.nearest_anchor(pose.x, pose.y)
    options: dict[int, RoadOption] = {}
    backward: tuple[float, RoadOption] | None = None
    for edge in roads.decision_edges[current]:
        turn = abs(wrap_angle(_departure(roads, edge.fine_nodes) - pose.yaw))
        if turn > BACKWARD_ANGLE_RAD:
            option = RoadOption(edge.target, OPTION_BACKWARD, edge.length_m)
            if backward is None or turn > backward[0]:
                backward = (turn, option)
            continue
        crosses = roads.anchor_kinds[current] == ANCHOR_JUNCTION and (
            roads.anchor_kinds[edge.target] == ANCHOR_JUNCTION
            and edge.length_m > 2 * NEAR_OPTION_M - 1.0
        )
        options.setdefault(
            edge.target,
            RoadOption(
                edge.target, OPTION_JUNCTION_EXIT if crosses else OPTION_FORWARD, edge.length_m
            ),
        )
        far = _straight_on(
            roads, edge.target, _departure(roads, edge.fine_nodes[-2:]), edge.length_m
        )
        if far is not None:
            options.setdefault(far.anchor, far)
    if backward is not None:
        options.setdefault(backward[1].anchor, backward[1])
    return sorted(options.values(), key=lambda option: (option.distance_m, option.anchor))


def _straight_on(
    roads: RoadNetwork, anchor: int, heading: float, travelled: float
) -> RoadOption | None:
    """Continue straight from ``anchor`` until about ``FAR_OPTION_M``; stops at junctions."""
    best: RoadOption | None = None
    while travelled < FAR_OPTION_M - 5.0 and roads.anchor_kinds[anchor] != ANCHOR_JUNCTION:
        straight = [
            edge
            for edge in roads.decision_edges[anchor]
            if abs(wrap_angle(_departure(roads, edge.fine_nodes) - heading)) < math.radians(30.0)
        ]
        if not straight:
            break
        edge = straight[0]
        travelled += edge.length_m
        anchor = edge.target
        heading = _departure(roads, edge.fine_nodes[-2:])
        best = RoadOption(anchor, OPTION_FORWARD, travelled)
    if best is not None and abs(best.distance_m - FAR_OPTION_M) > 12.0:
        return None
    return best


@dataclass(frozen=True)
class Drive:
    """A UGV motion along the fine graph.

    Attributes:
        fine_nodes: the executed fine-node sequence, start to end.
        points: (x, y, z) of every fine node at the UGV's height.
        final_pose: the pose at the end, heading along the last segment.
        length_m: the driven length.
    """

    fine_nodes: tuple[int, ...]
    points: tuple[tuple[float, float, float], ...]
    final_pose: Pose
    length_m: float


def drive_to(
    roads: RoadNetwork, pose: Pose, anchor: int, ground_z: float, *, decision_graph: bool = False
) -> Drive:
    """The shortest directed drive from the UGV's fine node to ``anchor``: planned on the
    complete fine graph from the current fine node (A.1.2, a road waypoint), or with
    ``decision_graph`` the shortest Dijkstra route on the decision graph from the UGV's
    anchor, each edge's stored fine nodes driven ("Handoff": RGPP's route to a candidate's
    approach node). Their lengths are equal; on a tie they may take different nodes.

    Raises:
        InvalidActionError: ``anchor`` is unreachable.
    """
    start = roads.nearest_node(pose.x, pose.y)
    if decision_graph:
        first = roads.nearest_anchor(pose.x, pose.y)
        nodes = roads.fine_path(start, first)[:-1] + roads.expand(
            roads.decision_path(first, anchor)
        )
    else:
        nodes = roads.fine_path(start, anchor)
    z = ground_z + UGV_HEIGHT_M
    points = tuple((x, y, z) for x, y in (roads.xy(node) for node in nodes))
    yaw = pose.yaw if len(nodes) < 2 else _departure(roads, nodes[-2:])
    end = points[-1]
    return Drive(tuple(nodes), points, Pose(end[0], end[1], end[2], yaw), roads.path_length(nodes))


def polygon_distance(x: float, y: float, polygon: Sequence[tuple[float, float]]) -> float:
    """Horizontal distance from (x, y) to a convex polygon, 0 inside it."""
    vertices = np.asarray(polygon, dtype=np.float64)
    following = np.roll(vertices, -1, axis=0)
    edges = following - vertices
    to_point = np.asarray((x, y)) - vertices
    cross = edges[:, 0] * to_point[:, 1] - edges[:, 1] * to_point[:, 0]
    if np.all(cross >= 0.0) or np.all(cross <= 0.0):
        return 0.0
    t = np.clip(np.einsum("ij,ij->i", to_point, edges) / np.einsum("ij,ij->i", edges, edges), 0, 1)
    closest = vertices + edges * t[:, None]
    return float(np.min(np.hypot(closest[:, 0] - x, closest[:, 1] - y)))


@dataclass(frozen=True)
class ApproachPlan:
    """RGPP's answer: the approach anchor and the decision-graph route to it."""

    anchor: int
    route: tuple[int, ...]
    length_m: float


def plan_to_candidate(
    roads: RoadNetwork, pose: Pose, polygon: Sequence[tuple[float, float]]
) -> ApproachPlan | None:
    """Road-graph path planning: the serviceable approach anchor of a candidate polygon and
    the shortest Dijkstra route to it on the decision graph; None if no anchor within
    ``SERVICE_RADIUS_M`` of the polygon is reachable.

    The approach anchor is the reachable anchor closest to the polygon (inside it is
    closest), ties broken by the shorter route.
    """
    start = roads.nearest_anchor(pose.x, pose.y)
    distances = roads.decision_distances(start)
    best: tuple[float, float, int] | None = None
    for anchor, route_length in distances.items():
        gap = polygon_distance(*roads.xy(anchor), polygon)
        if gap <= SERVICE_RADIUS_M and (best is None or (gap, route_length) < best[:2]):
            best = (gap, route_length, anchor)
    if best is None:
        return None
    route = roads.decision_path(start, best[2])
    return ApproachPlan(best[2], tuple(route), best[1])
