"""The OpenDRIVE reader against curves with known closed forms, lane offsets and widths, and
lane connectivity through road links and junctions (small hand-written maps)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import fresnel

from aerialdojo.opendrive import OpenDriveError, lane_graph, parse_opendrive


def _map(roads: str, junctions: str = "") -> bytes:
    header = '<?xml version="1.0"?><OpenDRIVE><header revMajor="1" revMinor="4"/>'
    return f"{header}{roads}{junctions}</OpenDRIVE>".encode()


def _road(
    road_id: str,
    geometry: str,
    length: float,
    *,
    junction: str = "-1",
    link: str = "",
    lanes: str = "",
    offset: str = "",
) -> str:
    lanes = lanes or (
        '<left><lane id="1" type="driving">'
        '<width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></left>'
        '<center><lane id="0" type="none"/></center>'
        '<right><lane id="-1" type="driving"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane>'
        '<lane id="-2" type="shoulder"><width sOffset="0" a="2" b="0" c="0" d="0"/></lane></right>'
    )
    return (
        f'<road id="{road_id}" length="{length}" junction="{junction}"><link>{link}</link>'
        f'<planView><geometry s="0" x="0" y="0" hdg="0" length="{length}">{geometry}</geometry>'
        f'</planView><lanes>{offset}<laneSection s="0">{lanes}</laneSection></lanes></road>'
    )


def _reference(geometry: str, length: float, s: float) -> tuple[float, float, float]:
    drive = parse_opendrive(_map(_road("1", geometry, length)), "test")
    return drive.roads["1"].reference(s)


def test_a_line_and_an_arc_follow_their_closed_forms() -> None:
    assert _reference("<line/>", 10.0, 4.0) == pytest.approx((4.0, 0.0, 0.0))
    radius = 20.0
    x, y, heading = _reference(f'<arc curvature="{1 / radius}"/>', 30.0, 15.0)
    angle = 15.0 / radius
    assert (x, y, heading) == pytest.approx(
        (radius * math.sin(angle), radius * (1 - math.cos(angle)), angle)
    )


def test_a_clothoid_from_a_straight_matches_fresnels_integrals() -> None:
    # Curvature from 0 to 0.05 over 40 m: heading s^2 / (2 A^2) with A^2 = 40 / 0.05.
    length, end_curvature = 40.0, 0.05
    scale = math.sqrt(length / end_curvature)
    x, y, heading = _reference(f'<spiral curvStart="0" curvEnd="{end_curvature}"/>', length, 30.0)
    sine, cosine = fresnel(30.0 / (scale * math.sqrt(math.pi)))
    factor = scale * math.sqrt(math.pi)
    assert (x, y) == pytest.approx((factor * cosine, factor * sine), abs=1e-6)
    assert heading == pytest.approx(30.0**2 / (2 * scale**2))


def test_a_clothoid_of_constant_curvature_is_an_arc() -> None:
    spiral = _reference('<spiral curvStart="0.02" curvEnd="0.02"/>', 50.0, 25.0)
    arc = _reference('<arc curvature="0.02"/>', 50.0, 25.0)
    assert spiral == pytest.approx(arc, abs=1e-9)


def test_poly3_and_param_poly3_are_measured_along_their_arc_length() -> None:
    # v = 0.01 u^2: the point 10 m along the curve lies short of u = 10 by the curve's bend.
    x, y, heading = _reference('<poly3 a="0" b="0" c="0.01" d="0"/>', 20.0, 10.0)

    def arc_to(u: float) -> float:
        return (u * math.sqrt(1 + (0.02 * u) ** 2) + math.asinh(0.02 * u) / 0.02) / 2

    assert arc_to(x) == pytest.approx(10.0, abs=1e-4)
    assert y == pytest.approx(0.01 * x * x, abs=1e-6)
    assert heading == pytest.approx(math.atan(0.02 * x), abs=1e-6)
    # The same parabola as a parametric cubic over p in [0, 1] (u = 20 p, v = 4 p^2).
    px, py, ph = _reference(
        '<paramPoly3 aU="0" bU="20" cU="0" dU="0" aV="0" bV="0" cV="4" dV="0" '
        'pRange="normalized"/>',
        arc_to(20.0),
        10.0,
    )
    assert (px, py, ph) == pytest.approx((x, y, heading), abs=1e-4)


def test_lane_centres_take_the_lane_offset_and_the_inner_lanes_widths() -> None:
    road = _road(
        "1",
        "<line/>",
        10.0,
        offset='<laneOffset s="0" a="0.5" b="0" c="0" d="0"/>',
    )
    drive = parse_opendrive(_map(road), "test")
    road_1 = drive.roads["1"]
    section = road_1.sections[0]
    assert road_1.lane_point(section, 1, 2.0)[:2] == pytest.approx((2.0, 0.5 + 1.75))
    assert road_1.lane_point(section, -1, 2.0)[:2] == pytest.approx((2.0, 0.5 - 1.75))
    assert road_1.lane_point(section, -2, 2.0)[:2] == pytest.approx((2.0, 0.5 - 3.5 - 1.0))


def test_lanes_travel_on_the_right_and_link_through_roads_and_a_junction() -> None:
    # Road 1 (0..20 m east) ends in junction 9, whose connecting road 2 (an arc turning
    # left) leads into road 3, entered at its end and driven against its reference line.
    roads = (
        _road("1", "<line/>", 20.0, link='<successor elementType="junction" elementId="9"/>')
        + '<road id="2" length="10" junction="9"><link>'
        '<predecessor elementType="road" elementId="1" contactPoint="end"/>'
        '<successor elementType="road" elementId="3" contactPoint="end"/></link>'
        '<planView><geometry s="0" x="20" y="0" hdg="0" length="10"><line/></geometry>'
        '</planView><lanes><laneSection s="0"><center><lane id="0" type="none"/></center>'
        '<right><lane id="-1" type="driving"><link><predecessor id="-1"/><successor id="1"/></link>'
        '<width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right></laneSection></lanes></road>'
        + '<road id="3" length="10" junction="-1"><link>'
        '<successor elementType="road" elementId="2" contactPoint="end"/></link>'
        '<planView><geometry s="0" x="40" y="0" hdg="3.141592653589793" length="10"><line/>'
        '</geometry></planView><lanes><laneSection s="0"><left><lane id="1" type="driving">'
        '<width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></left>'
        '<center><lane id="0" type="none"/></center></laneSection></lanes></road>'
    )
    junction = (
        '<junction id="9"><connection id="0" incomingRoad="1" connectingRoad="2" '
        'contactPoint="start"><laneLink from="-1" to="-1"/></connection></junction>'
    )
    graph = lane_graph(parse_opendrive(_map(roads, junction), "test"), spacing_m=2.0)
    assert graph.successors[("1", 0, -1)] == (("2", 0, -1),)
    assert graph.successors[("2", 0, -1)] == (("3", 0, 1),)
    assert graph.successors[("1", 0, 1)] == ()  # road 1 has no predecessor
    assert graph.lanes[("2", 0, -1)].in_junction
    first = graph.lanes[("3", 0, 1)].points
    # Lane 1 of road 3 travels against its reference line (west to east here): it starts at
    # the end of road 3, where road 2 ends.
    assert first[0, 3] == pytest.approx(0.0, abs=1e-9)
    assert first[0, 0] == pytest.approx(30.0) and first[-1, 0] < 40.0
    exit_1 = graph.lanes[("1", 0, -1)].points[-1, :2]
    assert np.hypot(*(graph.lanes[("2", 0, -1)].points[0, :2] - exit_1)) <= 2.0 + 1e-9


def test_a_link_against_the_direction_of_travel_is_skipped_and_said() -> None:
    roads = _road(
        "1", "<line/>", 20.0,
        link='<successor elementType="road" elementId="2" contactPoint="end"/>',
        lanes='<center><lane id="0" type="none"/></center><right><lane id="-1" type="driving">'
        '<link><successor id="-1"/></link>'
        '<width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>',
    ) + _road("2", "<line/>", 20.0)  # fmt: skip
    graph = lane_graph(parse_opendrive(_map(roads), "test"))
    assert graph.successors[("1", 0, -1)] == ()
    assert any("against its travel" in note for note in graph.unmatched)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"<notxml", "not XML"),
        (b"<Other/>", "not <OpenDRIVE>"),
        (b'<!DOCTYPE x [<!ENTITY a "b">]><OpenDRIVE/>', "document type"),
        (_map(_road("1", "<clothoid/>", 10.0)), "<clothoid>"),
        (_map(_road("1", '<arc curvature="nan"/>', 10.0)), "not finite"),
    ],
)
def test_files_the_reader_cannot_use_are_refused_with_the_reason(
    text: bytes, expected: str
) -> None:
    with pytest.raises(OpenDriveError, match=expected):
        parse_opendrive(text, "map.xodr")
