"""The AGOS camera rigs (AGOS-Bench "Sensors"): a nadir UAV camera; a UGV front camera for
driving and a six-view ring after STOP_OBSERVE."""

from __future__ import annotations

from collections.abc import Sequence

from aerialdojo.agos.vocabulary import STOP_OBSERVE
from aerialdojo.errors import ConfigError
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


def agos_rigs(agents: Sequence[str], width: int, height: int) -> dict[str, list[CameraSpec]]:
    """The rig of each AGOS agent: the UAV's nadir camera, the UGV's front view and ring.

    Raises:
        ConfigError: an agent other than ``uav`` and ``ugv``.
    """
    rigs = {"uav": uav_rig, "ugv": ugv_rig}
    unknown = sorted(set(agents) - set(rigs))
    if unknown:
        raise ConfigError(f"AGOS has rigs for uav and ugv only, not {unknown}")
    return {agent: rigs[agent](width, height) for agent in agents}


def observes_view(view: str, action: str) -> bool:
    """Whether an AGOS agent's observation right after ``action`` ("" after a reset) holds
    ``view``: the ring's views right after STOP_OBSERVE, every other view after anything
    else (the UGV's front view, the UAV's nadir view)."""
    return (view in RING_VIEWS) == (action == STOP_OBSERVE)


def current_views(rig: Sequence[CameraSpec], *, ring: bool) -> list[CameraSpec]:
    """The views of ``rig`` an agent observes now: right after STOP_OBSERVE (``ring``) or
    after anything else (``observes_view``)."""
    action = STOP_OBSERVE if ring else ""
    return [spec for spec in rig if observes_view(spec.name, action)]
