"""Road graphs: directed fine edges, decision anchors, planning, UGV options and RGPP."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from aerialdojo.agos.planning import (
    OPTION_BACKWARD,
    drive_to,
    plan_to_candidate,
    polygon_distance,
    road_options,
)
from aerialdojo.agos.roads import (
    ANCHOR_CRUISE,
    ANCHOR_DEAD_END,
    ANCHOR_JUNCTION,
    Street,
    build_road_network,
)
from aerialdojo.agos.town import Town
from aerialdojo.errors import InvalidActionError
from aerialdojo.geometry import Pose

# A T: a two-way street west-east, a one-way street running north from its middle to a
# dead end, so the dead end cannot be left.
T_STREETS = [
    Street((-60.0, 0.0), (0.0, 0.0)),
    Street((0.0, 0.0), (60.0, 0.0)),
    Street((0.0, 0.0), (0.0, 40.0), one_way=True),
]


def test_fine_graph_follows_the_direction_of_travel() -> None:
    roads = build_road_network(T_STREETS)
    junction = roads.nearest_node(0.0, 0.0)
    north_end = roads.nearest_node(0.0, 40.0)
    assert roads.anchor_kinds[north_end] == ANCHOR_DEAD_END
    up = roads.fine_path(junction, north_end)
    assert roads.follows_directed_edges(up)
    assert roads.path_length(up) == pytest.approx(40.0)
    spacing = [roads.distance(a, b) for a, b in itertools.pairwise(up)]
    assert max(spacing) <= 2.0 + 1e-9
    with pytest.raises(InvalidActionError, match="cannot be reached"):
        roads.fine_path(north_end, junction)


def test_decision_anchors_are_about_10_m_apart_with_junction_entries() -> None:
    roads = build_road_network(T_STREETS)
    kinds = roads.anchor_kinds
    junction_anchors = sorted(roads.xy(a) for a in roads.anchors if kinds[a] == ANCHOR_JUNCTION)
    np.testing.assert_allclose(junction_anchors, [(-6.0, 0.0), (0.0, 6.0), (6.0, 0.0)])
    west = sorted(x for a in roads.anchors if roads.xy(a)[1] == 0.0 and (x := roads.xy(a)[0]) < 0)
    gaps = np.diff(west)
    assert all(8.0 <= gap <= 12.0 for gap in gaps), west
    assert kinds[roads.nearest_node(-60.0, 0.0)] == ANCHOR_DEAD_END
    assert ANCHOR_CRUISE in kinds.values()
    for edges in roads.decision_edges.values():
        for edge in edges:
            assert roads.follows_directed_edges(edge.fine_nodes)
            assert edge.fine_nodes[0] == edge.source and edge.fine_nodes[-1] == edge.target


def test_every_planned_path_in_a_town_follows_directed_edges(town: Town) -> None:
    roads = town.map.roads
    rng = np.random.default_rng(3)
    one_way = [s for s in town.map.streets if s.one_way]
    assert one_way, "the town should have one-way streets"
    for _ in range(25):
        a, b = (int(x) for x in rng.choice(roads.anchors, 2, replace=False))
        route = roads.decision_path(a, b)
        fine = roads.expand(route)
        assert fine[0] == a and fine[-1] == b
        assert roads.follows_directed_edges(fine)
        direct = roads.fine_path(a, b)
        assert roads.follows_directed_edges(direct)
        assert roads.path_length(direct) == pytest.approx(roads.path_length(fine))


def test_options_offer_near_far_and_backward_anchors(town: Town) -> None:
    roads = town.map.roads
    street = next(s for s in town.map.streets if not s.one_way and s.length > 80)
    heading = math.atan2(street.end[1] - street.start[1], street.end[0] - street.start[0])
    middle = roads.nearest_anchor(*((np.asarray(street.start) + street.end) / 2.0))
    pose = Pose(*roads.xy(middle), 1.6, heading)
    options = road_options(roads, pose)
    distances = sorted(o.distance_m for o in options if o.kind != OPTION_BACKWARD)
    assert distances[0] == pytest.approx(10.0, abs=2.5)
    assert any(abs(d - 30.0) <= 6.0 for d in distances)
    backward = [o for o in options if o.kind == OPTION_BACKWARD]
    assert len(backward) == 1 and backward[0].distance_m == pytest.approx(10.0, abs=2.5)
    behind = roads.xy(backward[0].anchor)
    assert (behind[0] - pose.x) * math.cos(heading) + (behind[1] - pose.y) * math.sin(heading) < 0
    for option in options:
        drive = drive_to(roads, pose, option.anchor, 0.0)
        assert roads.follows_directed_edges(drive.fine_nodes)
        assert drive.length_m == pytest.approx(option.distance_m, abs=0.5)


def test_rgpp_serves_a_polygon_from_the_nearest_reachable_anchor(town: Town) -> None:
    roads = town.map.roads
    start = Pose(*roads.xy(roads.anchors[0]), 1.6, 0.0)
    square = ((-100.0, -100.0), (-70.0, -100.0), (-70.0, -70.0), (-100.0, -70.0))
    plan = plan_to_candidate(roads, start, square)
    assert plan is not None
    gaps = [polygon_distance(*roads.xy(a), square) for a in roads.anchors]
    assert polygon_distance(*roads.xy(plan.anchor), square) == pytest.approx(min(gaps))
    assert plan.route[0] == roads.nearest_anchor(start.x, start.y) and plan.route[-1] == plan.anchor
    assert roads.follows_directed_edges(roads.expand(plan.route))
    # GO_TO_CANDIDATE drives that decision-graph route ("computes a shortest Dijkstra path on
    # the decision graph"), as long as the fine graph's shortest path.
    drive = drive_to(roads, start, plan.anchor, 0.0, decision_graph=True)
    assert list(drive.fine_nodes) == roads.expand(plan.route)
    assert drive.length_m == pytest.approx(plan.length_m)
    assert drive.length_m == pytest.approx(drive_to(roads, start, plan.anchor, 0.0).length_m)
    far_away = ((900.0, 900.0), (930.0, 900.0), (930.0, 930.0))
    assert plan_to_candidate(roads, start, far_away) is None


def test_polygon_distance_is_zero_inside_and_euclidean_outside() -> None:
    square = ((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0))
    assert polygon_distance(5.0, 5.0, square) == 0.0
    assert polygon_distance(13.0, 14.0, square) == pytest.approx(5.0)
    assert polygon_distance(-2.0, 5.0, square) == pytest.approx(2.0)
