"""Test-only start-up hook (on PYTHONPATH in tests that run CARLA-Air processes): in a process
that has the carla and airsim clients and ``AERIALDOJO_FAKE_CARLA_AIR`` set, ``carla.Client``
serves the CARLA stand-in world, which shares its Unreal frames with a fake AirSim server
started in the same process (``fakes.carla_air_world``). CARLA's client cannot be faked at the
wire (LibCarla's RPC and streaming protocols), so the stand-in has to live where the client is."""

import importlib.util
import os

if os.environ.get("AERIALDOJO_FAKE_CARLA_AIR") and all(
    importlib.util.find_spec(name) is not None for name in ("carla", "airsim")
):
    from fakes.carla_air_world import install

    install(os.environ["AERIALDOJO_FAKE_CARLA_AIR"])
