"""AirSim's ``settings.json`` for the UAV of a CARLA-Air run, and what a server's settings lack.

In AirSim the settings file decides what the API cannot change (``AirSimSettings.hpp``,
``PawnSimApi.cpp``): which cameras exist (an unknown name is an RPC error), the size of every
image type (the request carries none), the camera's field of view, the camera mounts, and the
physics engine. The FOV is the camera component's for every image type: CARLA-Air's
``PIPCamera.cpp`` copies the cine camera's ``FieldOfView`` over each capture's
(``copyCameraSettingsToSceneCapture``), and only an ``ImageType: -1`` entry sets it
(``updateCameraSetting``); per-type ``FOV_Degrees`` are overwritten. CARLA-Air's shipped
file has cameras ``0`` and ``front_center`` only, Scene images at 1280x960, and no physics
engine, so a multirotor gets ``FastPhysicsEngine``, which drops a teleported drone under
gravity between steps. The backend reads the server's settings (``getSettingsString``) and
refuses to run on settings that do not match its rig.
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
#: AirSim's capture default size (``CaptureSetting`` in AirSimSettings.hpp).
DEFAULT_SIZE = (256, 144)
#: ``ImageType`` of the camera component's own settings (its FOV is every capture's).
CAMERA_COMPONENT = -1
SHIPPED_SETTINGS = "config/carla_air/settings.json"
SHIPPED_AGOS_SETTINGS = "config/carla_air/settings_agos.json"
SETTINGS_FIX = (
    f"install {SHIPPED_SETTINGS} (written for config/carla_air.yaml; {SHIPPED_AGOS_SETTINGS} "
    "for config/carla_air_agos.yaml; for other image sizes "
    "write one with `aerialdojo doctor --config <run config> --airsim-settings FILE`) where "
    "CARLA-Air reads it and restart CARLA-Air. It takes the first of: a -settings argument, "
    "settings.json beside the executable (CarlaUE4/Binaries/Linux), in the launch "
    "directory, ~/Documents/AirSim/settings.json (SimWorldGameMode.cpp GetSettingsText); "
    "carlaAir.sh copies its own to the last only when none exists there"
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
                {"ImageType": CAMERA_COMPONENT, "FOV_Degrees": spec.fov_deg},
                *(
                    {"ImageType": image_type, "Width": spec.width, "Height": spec.height}
                    for image_type in (SCENE, DEPTH_PLANAR)
                ),
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
        if size != (spec.width, spec.height):
            problems.append(
                f"camera {spec.name!r} renders {label} at {size[0]}x{size[1]}, "
                f"the rig asks for {spec.width}x{spec.height}"
            )
    own = captures.get(CAMERA_COMPONENT, {})
    if "FOV_Degrees" not in own:
        problems.append(
            f"camera {spec.name!r} has no ImageType -1 entry with FOV_Degrees: every image "
            "type renders with the cine camera's default FOV, not the rig's "
            f"{spec.fov_deg:g} deg (PIPCamera.cpp overwrites per-type FOV_Degrees)"
        )
    elif not math.isclose(float(own["FOV_Degrees"]), spec.fov_deg, abs_tol=_MOUNT_TOLERANCE):
        problems.append(
            f"camera {spec.name!r} has an FOV of {float(own['FOV_Degrees']):g} deg, the rig "
            f"{spec.fov_deg:g}"
        )
    for key, wanted in _mount(spec).items():
        found = float(camera.get(key, 0.0))
        if not math.isclose(found, wanted, abs_tol=_MOUNT_TOLERANCE):
            problems.append(f"camera {spec.name!r} has {key} {found:g}, the rig {wanted:g}")
    return problems
