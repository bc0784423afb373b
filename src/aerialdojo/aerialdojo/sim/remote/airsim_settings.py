"""AirSim's ``settings.json`` for the UAV of a CARLA-Air run, and what a server's settings lack.

In AirSim the settings file decides what the API cannot change (``AirSimSettings.hpp``,
``PawnSimApi.cpp``): which cameras exist (an unknown name is an RPC error), the size and FOV
of every image type (the request carries neither), the camera mounts, and the physics
engine. CARLA-Air's shipped file has cameras ``0`` and ``front_center`` only, Scene images at
1280x960, and no physics engine, so a multirotor gets ``FastPhysicsEngine``, which drops a
teleported drone under gravity between steps. The backend reads the server's settings
(``getSettingsString``) and refuses to run on settings that do not match its rig.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from aerialdojo.sim.backend import CameraSpec

#: AirSim image types the backend requests per view (``airsim.ImageType``).
SCENE, DEPTH_PLANAR = 0, 1
#: The physics engine that leaves a placed drone where it was placed.
EXTERNAL_PHYSICS = "ExternalPhysicsEngine"
#: A multirotor's engine when the settings name none (AirSimSettings.hpp).
DEFAULT_MULTIROTOR_PHYSICS = "FastPhysicsEngine"
#: AirSim's capture defaults (``CaptureSetting`` in AirSimSettings.hpp).
DEFAULT_SIZE, DEFAULT_FOV_DEG = (256, 144), 90.0
SHIPPED_SETTINGS = "config/carla_air/settings.json"
SETTINGS_FIX = (
    f"install {SHIPPED_SETTINGS} (written for config/carla_air.yaml; for other image sizes "
    "write one with `aerialdojo doctor --config <run config> --airsim-settings FILE`) as "
    "~/Documents/AirSim/settings.json on the CARLA-Air host and restart CARLA-Air "
    "(carlaAir.sh copies its own there only when none exists)"
)
_MOUNT_TOLERANCE = 1e-3


def _mount(spec: CameraSpec) -> dict[str, float]:
    """The camera's pose in AirSim's body frame (FRD, metres; degrees, yaw clockwise)."""
    forward, left, up = spec.offset
    return {
        "X": forward,
        "Y": -left + 0.0,
        "Z": -up + 0.0,
        "Pitch": spec.pitch_deg,
        "Roll": 0.0,
        "Yaw": -spec.yaw_deg + 0.0,
    }


def settings_for_rig(rig: Sequence[CameraSpec], vehicle: str = "SimpleFlight") -> dict[str, Any]:
    """AirSim settings giving a SimpleFlight multirotor one camera per view of ``rig`` (Scene
    and DepthPlanar at the view's size and FOV), with the external physics engine."""
    cameras = {
        spec.name: {
            "CaptureSettings": [
                {
                    "ImageType": image_type,
                    "Width": spec.width,
                    "Height": spec.height,
                    "FOV_Degrees": spec.fov_deg,
                }
                for image_type in (SCENE, DEPTH_PLANAR)
            ],
            **_mount(spec),
        }
        for spec in rig
    }
    return {
        "SettingsVersion": 1.2,
        "SimMode": "Multirotor",
        "PhysicsEngineName": EXTERNAL_PHYSICS,
        "Vehicles": {
            vehicle: {"VehicleType": "SimpleFlight", "AutoCreate": True, "Cameras": cameras}
        },
    }


def settings_problems(
    settings: Mapping[str, Any], rig: Sequence[CameraSpec], vehicle: str = ""
) -> list[str]:
    """What keeps these AirSim settings from serving ``rig`` on ``vehicle`` ("": the first
    vehicle); empty when nothing does."""
    problems = []
    engine = settings.get("PhysicsEngineName") or DEFAULT_MULTIROTOR_PHYSICS
    if engine != EXTERNAL_PHYSICS:
        problems.append(
            f"PhysicsEngineName is {engine!r}, whose physics drops a teleported drone between "
            f"steps ({EXTERNAL_PHYSICS} keeps it where it was placed)"
        )
    vehicles = settings.get("Vehicles") or {}
    name = vehicle or next(iter(vehicles), "")
    if name not in vehicles:
        return [*problems, f"no vehicle {name!r} in Vehicles ({', '.join(vehicles) or 'none'})"]
    cameras = vehicles[name].get("Cameras") or {}
    for spec in rig:
        if spec.name not in cameras:
            problems.append(
                f"camera {spec.name!r} is not among the cameras of {name!r} "
                f"({', '.join(cameras) or 'none'}), and asking for it is an RPC error"
            )
            continue
        problems += _camera_problems(spec, cameras[spec.name])
    return problems


def _camera_problems(spec: CameraSpec, camera: Mapping[str, Any]) -> list[str]:
    problems = []
    captures = {int(c.get("ImageType", SCENE)): c for c in camera.get("CaptureSettings", [])}
    for image_type, label in ((SCENE, "Scene"), (DEPTH_PLANAR, "DepthPlanar")):
        capture = captures.get(image_type, {})
        size = (
            int(capture.get("Width", DEFAULT_SIZE[0])),
            int(capture.get("Height", DEFAULT_SIZE[1])),
        )
        fov = float(capture.get("FOV_Degrees", DEFAULT_FOV_DEG))
        if size != (spec.width, spec.height):
            problems.append(
                f"camera {spec.name!r} renders {label} at {size[0]}x{size[1]}, "
                f"the rig asks for {spec.width}x{spec.height}"
            )
        if not math.isclose(fov, spec.fov_deg, abs_tol=_MOUNT_TOLERANCE):
            problems.append(
                f"camera {spec.name!r} has a {label} FOV of {fov:g} deg, the rig {spec.fov_deg:g}"
            )
    for key, wanted in _mount(spec).items():
        found = float(camera.get(key, 0.0))
        if not math.isclose(found, wanted, abs_tol=_MOUNT_TOLERANCE):
            problems.append(f"camera {spec.name!r} has {key} {found:g}, the rig {wanted:g}")
    return problems
