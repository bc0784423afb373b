"""AirSim settings as a user writes them for a camera rig (the fake AirSim server reads them the
way AirSim does: tests/fakes/airsim_server.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class _View(Protocol):
    name: str
    width: int
    height: int
    fov_deg: float
    offset: tuple[float, float, float]
    yaw_deg: float
    pitch_deg: float


def rig_settings(
    rig: Sequence[_View], physics_engine: str | None = "ExternalPhysicsEngine"
) -> dict[str, Any]:
    """Settings with one camera per view of ``rig``: Scene and DepthPlanar at its size and FOV,
    mounted as the view (AirSim's body frame is FRD, yaw clockwise)."""
    cameras = {
        view.name: {
            "CaptureSettings": [
                {
                    "ImageType": image_type,
                    "Width": view.width,
                    "Height": view.height,
                    "FOV_Degrees": view.fov_deg,
                }
                for image_type in (0, 1)
            ],
            "X": view.offset[0],
            "Y": -view.offset[1],
            "Z": -view.offset[2],
            "Pitch": view.pitch_deg,
            "Roll": 0.0,
            "Yaw": -view.yaw_deg,
        }
        for view in rig
    }
    settings: dict[str, Any] = {
        "SettingsVersion": 1.2,
        "SimMode": "Multirotor",
        "Vehicles": {"SimpleFlight": {"VehicleType": "SimpleFlight", "Cameras": cameras}},
    }
    if physics_engine is not None:
        settings["PhysicsEngineName"] = physics_engine
    return settings
