"""E2A against the analytic nadir case: a cell's ground footprint from FOV and altitude."""

from __future__ import annotations

import math

import pytest

from aerialdojo.agos.grid import cell_of_pixel, parse_cell
from aerialdojo.agos.projection import pixel_to_ground, project_cell
from aerialdojo.errors import InvalidActionError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraSpec


def _size(ground_z: float) -> dict[str, float]:
    """Image size and ground height keywords of ``project_cell``."""
    return {"width": 200, "height": 200, "ground_z": ground_z}


SPEC = CameraSpec(name="down", width=200, height=200, fov_deg=90.0, pitch_deg=-90.0)


def test_a_90_degree_camera_at_80_m_sees_160_m_and_each_cell_is_32_m() -> None:
    # tan(45 deg) * 80 m = 80 m either side of nadir; five cells across: 32 m each.
    pose = Pose(10.0, -20.0, 80.0, 0.0)  # facing +x: image top is +x, image left is +y
    centre = project_cell("C3", pose, SPEC.intrinsics(), **_size(0.0))
    assert centre.center == pytest.approx((10.0, -20.0, 0.0))
    xs = [x for x, _ in centre.polygon]
    ys = [y for _, y in centre.polygon]
    assert (min(xs), max(xs), min(ys), max(ys)) == pytest.approx((-6.0, 26.0, -36.0, -4.0))

    top_left = project_cell("A1", pose, SPEC.intrinsics(), **_size(0.0))
    # Two cells forward (+x) and two cells left (+y) of the centre cell.
    assert top_left.center == pytest.approx((10.0 + 64.0, -20.0 + 64.0, 0.0))
    bottom_right = project_cell("E5", pose, SPEC.intrinsics(), **_size(0.0))
    assert bottom_right.center == pytest.approx((10.0 - 64.0, -20.0 - 64.0, 0.0))


def test_yaw_rotates_the_footprint_and_ground_height_shrinks_it() -> None:
    north = Pose(0.0, 0.0, 80.0, math.pi / 2)  # image top is +y (north), image left is -x
    cell = project_cell("A3", north, SPEC.intrinsics(), **_size(0.0))
    assert cell.center == pytest.approx((0.0, 64.0, 0.0), abs=1e-9)
    raised = project_cell("A3", north, SPEC.intrinsics(), **_size(40.0))
    assert raised.center == pytest.approx((0.0, 32.0, 40.0), abs=1e-9)
    assert pixel_to_ground(0.0, 100.0, north, SPEC.intrinsics(), 0.0) == pytest.approx((-80.0, 0.0))


def test_polygon_is_counter_clockwise_and_cells_round_trip() -> None:
    cell = project_cell("B4", Pose(0.0, 0.0, 80.0, 0.3), SPEC.intrinsics(), **_size(0.0))
    corners = cell.polygon
    area = sum(
        x0 * y1 - x1 * y0
        for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True)
    )
    assert area / 2.0 == pytest.approx(32.0 * 32.0)
    assert cell_of_pixel(130.0, 30.0, 200, 200) == "A4"
    assert parse_cell("e5") == (4, 4)


@pytest.mark.parametrize("bad", ["F1", "A6", "A0", "3C", "", "A10"])
def test_bad_cells_and_a_camera_below_ground_are_refused(bad: str) -> None:
    with pytest.raises(InvalidActionError, match=r"A1 \.\. E5"):
        parse_cell(bad)
    with pytest.raises(InvalidActionError, match="not above the ground"):
        project_cell("C3", Pose(0.0, 0.0, 5.0, 0.0), SPEC.intrinsics(), **_size(5.0))
