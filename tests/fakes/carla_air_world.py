"""One fixed CARLA-Air world of the fakes for whole-graph tests: the CARLA stand-in world
(``carla_standin``) with a parked car and a building on its street, sharing its Unreal frames
with a fake AirSim server (``airsim_server``) whose settings serve the UAV rig. ``install``
makes ``carla.Client`` serve it in this process (see ``inject/sitecustomize.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import carla

from aerialdojo.sim.remote.airsim_settings import settings_for_rig
from aerialdojo.sim.remote.rigs import benchmark_rigs
from fakes import carla_standin
from fakes.airsim_server import FakeAirSim

#: Town10HD: the ground (CARLA z = 0) lies at AirSim down 27.45 (the map offset's dz).
GROUND_DOWN = 27.45
PARKED_CAR = carla_standin.Obstacle(
    "SM_Car_Parked", (20.0, 6.0, 0.0), (24.0, 8.0, 1.5), carla.CityObjectLabel.Car
)
HOUSE = carla_standin.Obstacle(
    "BP_House_3", (0.0, 20.0, 0.0), (10.0, 30.0, 12.0), carla.CityObjectLabel.Buildings
)
_SERVED: list[Any] = []  # keeps the fake AirSim server alive with the process


def install(spec: str) -> None:
    """Start the world described by ``spec`` (JSON: ``airsim_port``, ``width``, ``height``,
    ``fov_deg``; ``benchmark``: whose UAV rig AirSim's settings serve, ``aerialdojo`` by
    default; ``journal``: a file to list the actors spawned and destroyed) and let
    ``carla.Client`` serve it."""
    options = json.loads(spec)
    rigs = benchmark_rigs(
        options.get("benchmark", "aerialdojo"),
        ["uav"],
        options["width"],
        options["height"],
        options.get("fov_deg", 90.0),
    )
    rig = rigs["uav"]
    airsim = FakeAirSim(settings_for_rig(rig), ground_down=GROUND_DOWN)
    airsim.start(port=int(options["airsim_port"]))
    journal = Path(options["journal"]) if options.get("journal") else None
    world = carla_standin.World(airsim=airsim, obstacles=(PARKED_CAR, HOUSE), journal=journal)
    _SERVED.append(airsim)

    def client(host: str, port: int, *args: Any, **kwargs: Any) -> carla_standin.Client:
        del host, port, args, kwargs
        return carla_standin.Client(world)

    carla.Client = client
