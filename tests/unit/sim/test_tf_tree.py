"""The tf tree the bridge publishes agrees with what the embedded renderer draws: a point seen
through a pixel, carried through map -> odom -> base_link -> optical frame and projected with
the camera's K, lands on that pixel."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraSpec, aerialdojo_uav_rig
from aerialdojo.sim.embedded.renderer import camera_origin, camera_rays, camera_rotation
from aerialdojo.tf_tree import (
    MAP_FRAME,
    agent_transforms,
    base_frame,
    camera_mount_transforms,
    odom_frame,
    optical_frame,
)

START = Pose(12.0, -4.0, 30.0, math.radians(35.0))
POSE = Pose(20.5, 3.0, 42.0, math.radians(-120.0))
RIG = [
    *aerialdojo_uav_rig(width=40, height=30, fov_deg=90.0),
    CameraSpec(
        name="tilted",
        width=32,
        height=24,
        fov_deg=70.0,
        offset=(0.4, -0.2, -0.3),
        yaw_deg=30.0,
        pitch_deg=-25.0,
    ),
]


def map_from_optical(spec: CameraSpec) -> np.ndarray:
    """The chain's 4x4 matrix from the view's optical frame to the map frame."""
    to_odom, to_base = agent_transforms("uav", POSE, START)
    mounts = {t.child: t for t in camera_mount_transforms("uav", RIG)}
    mount = mounts[optical_frame("uav", spec.name)]
    assert (to_odom.parent, to_odom.child) == (MAP_FRAME, odom_frame("uav"))
    assert (to_base.parent, to_base.child) == (odom_frame("uav"), base_frame("uav"))
    assert mount.parent == base_frame("uav")
    return to_odom.matrix() @ to_base.matrix() @ mount.matrix()


@pytest.mark.parametrize("spec", RIG, ids=[spec.name for spec in RIG])
def test_a_rendered_point_projects_onto_its_pixel_through_the_tf_chain(spec: CameraSpec) -> None:
    to_optical = np.linalg.inv(map_from_optical(spec))
    rays = camera_rays(spec) @ camera_rotation(POSE, spec).T
    origin = camera_origin(POSE, spec)
    k = spec.intrinsics()
    for row, column in ((0, 0), (spec.height - 1, 3), (spec.height // 2, spec.width - 1)):
        point = origin + 7.5 * rays[row * spec.width + column]
        x, y, z, _ = to_optical @ np.append(point, 1.0)
        assert z > 0.0  # in front of the camera
        pixel = k @ np.array((x / z, y / z, 1.0))
        np.testing.assert_allclose(pixel[:2], (column + 0.5, row + 0.5), atol=1e-6)


def test_the_down_view_looks_down_and_the_front_view_along_the_heading() -> None:
    down = map_from_optical(RIG[3])[:3, 2]
    front = map_from_optical(RIG[0])[:3, 2]
    np.testing.assert_allclose(down, (0.0, 0.0, -1.0), atol=1e-9)
    np.testing.assert_allclose(front, (math.cos(POSE.yaw), math.sin(POSE.yaw), 0.0), atol=1e-9)


def test_the_odometry_frame_is_the_episode_start() -> None:
    to_odom, to_base = agent_transforms("uav", START, START)
    np.testing.assert_allclose(to_base.matrix(), np.eye(4), atol=1e-12)
    np.testing.assert_allclose(to_odom.matrix()[:3, 3], (START.x, START.y, START.z))
