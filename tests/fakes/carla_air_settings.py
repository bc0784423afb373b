"""CARLA-Air's shipped AirSim settings, as the fake AirSim server starts with them."""

from __future__ import annotations

from typing import Any

#: CARLA-Air's shipped AirSim settings (CarlaAir_Release/install/settings.json, copied to
#: ~/Documents/AirSim/settings.json by carlaAir.sh when none exists).
STOCK_CARLA_AIR_SETTINGS: dict[str, Any] = {
    "SettingsVersion": 1.2,
    "SimMode": "Multirotor",
    "Vehicles": {
        "SimpleFlight": {
            "VehicleType": "SimpleFlight",
            "AutoCreate": True,
            "Cameras": {
                "0": {
                    "CaptureSettings": [{"ImageType": 0, "Width": 1280, "Height": 960}],
                    "X": 0.5,
                    "Y": 0.0,
                    "Z": 0.1,
                    "Pitch": 0.0,
                    "Roll": 0.0,
                    "Yaw": 0.0,
                },
                "front_center": {
                    "CaptureSettings": [
                        {"ImageType": 0, "Width": 1280, "Height": 960, "FOV_Degrees": 90}
                    ],
                    "X": 0.2,
                    "Y": 0.0,
                    "Z": -0.1,
                    "Pitch": 0.0,
                    "Roll": 0.0,
                    "Yaw": 0.0,
                },
            },
        }
    },
}
