"""The AGOS camera rigs (AGOS-Bench "Sensors"): a nadir UAV camera; a UGV front camera for
driving and a six-view ring after STOP_OBSERVE."""

from __future__ import annotations

from aerialdojo.sim.backend import CameraSpec

UAV_VIEW = "down"
UGV_FRONT_VIEW = "front"
#: The six panels of the UGV's 360-degree inspection and their headings (deg, CCW).
RING_VIEWS: dict[str, float] = {
    "ring_front": 0.0,
    "ring_front_left": 60.0,
    "ring_back_left": 120.0,
    "ring_back": 180.0,
    "ring_back_right": -120.0,
    "ring_front_right": -60.0,
}
UAV_FOV_DEG = 90.0
UGV_FRONT_FOV_DEG = 90.0
RING_FOV_DEG = 60.0


def uav_rig(width: int, height: int) -> list[CameraSpec]:
    """The UAV's nadir camera (pitch -90 deg, image top towards the body's forward axis)."""
    return [
        CameraSpec(name=UAV_VIEW, width=width, height=height, fov_deg=UAV_FOV_DEG, pitch_deg=-90.0)
    ]


def ugv_front(width: int, height: int) -> CameraSpec:
    """The UGV's forward driving camera."""
    return CameraSpec(name=UGV_FRONT_VIEW, width=width, height=height, fov_deg=UGV_FRONT_FOV_DEG)


def ugv_ring(width: int, height: int) -> list[CameraSpec]:
    """The six ring views that together see all around the UGV."""
    return [
        CameraSpec(name=name, width=width, height=height, fov_deg=RING_FOV_DEG, yaw_deg=yaw)
        for name, yaw in RING_VIEWS.items()
    ]


def ugv_rig(width: int, height: int) -> list[CameraSpec]:
    """Every UGV camera: the front view, then the ring."""
    return [ugv_front(width, height), *ugv_ring(width, height)]
