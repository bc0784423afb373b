"""Frame sets per second the bridge gets out of AirSim, against the server's raw rate.

Both sides talk to the fake AirSim server (tests/fakes/airsim_server.py: real msgpack-rpc
over TCP on 127.0.0.1) through the unmodified ``airsim`` client, for the UAV's four views,
each a Scene image and a DepthPlanar float image at ``--size`` pixels square, with CARLA-Air's
capture timing: images render on the world's next synchronous tick, and a tick takes one
render frame of wall time (``--frame-ms``, on the CARLA stand-in world).

Baseline: the raw client calling ``simGetImages`` with the same eight requests in a loop on
one thread while another thread ticks the world back to back (the most a caller of the
client can get from such a server). Value: ``CarlaAirBackend.observe("uav")``, which fetches on
its image thread while ticking the world itself, decodes into RGB and metric depth arrays,
stamps with CARLA's time and reads the pose, then the bridge's conversion of every view to
sensor_msgs/Image (``array_to_image``); DDS publishing is measured by benchmarks/transport.py.
Rounds of both alternate; rates are medians over rounds.

    tools/run.sh .venv-carla-air/bin/python benchmarks/bridge_rate.py [--size 256] [--seconds 3]

Last line: RESULT bridge_uav_frame_sets_per_s_<size>px value=<bridge> baseline=<raw> ratio=.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src" / "aerialdojo"))
sys.path.insert(0, str(REPO / "tests"))

import airsim  # noqa: E402
from fakes import carla_standin  # noqa: E402
from fakes.airsim_server import FakeAirSim  # noqa: E402

from aerialdojo.geometry import Pose  # noqa: E402
from aerialdojo.nodes.images import array_to_image  # noqa: E402
from aerialdojo.sim.backend import aerialdojo_uav_rig  # noqa: E402
from aerialdojo.sim.carla_air import CarlaAirBackend  # noqa: E402
from aerialdojo.sim.remote.airsim_settings import settings_for_rig  # noqa: E402
from aerialdojo.sim.remote.settings import CarlaAirSettings  # noqa: E402


def rate(work: Callable[[], object], seconds: float) -> float:
    """Calls of ``work`` per second over at least ``seconds`` (and at least two calls)."""
    count, started = 0, time.perf_counter()
    while count < 2 or time.perf_counter() - started < seconds:
        work()
        count += 1
    return count / (time.perf_counter() - started)


def raw_rate(
    client: airsim.MultirotorClient,
    requests: list[airsim.ImageRequest],
    world: carla_standin.World,
    seconds: float,
) -> float:
    """simGetImages calls per second with the world ticking back to back beside them."""
    running = threading.Event()
    running.set()

    def tick() -> None:
        while running.is_set():
            world.tick()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        return rate(lambda: client.simGetImages(requests), seconds)
    finally:
        running.clear()
        ticker.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="image width and height, pixels")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each side")
    parser.add_argument(
        "--frame-ms", type=float, default=1000.0 / 60.0, help="wall time of one world tick"
    )
    parser.add_argument("--output", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()

    rig = aerialdojo_uav_rig(args.size, args.size)
    requests = [
        request
        for spec in rig
        for request in (
            airsim.ImageRequest(spec.name, airsim.ImageType.Scene, False, False),
            airsim.ImageRequest(spec.name, airsim.ImageType.DepthPlanar, True, False),
        )
    ]
    with FakeAirSim(settings_for_rig(rig), ground_down=100.0) as server:
        world = carla_standin.World(airsim=server, frame_s=args.frame_ms / 1000.0)
        raw_client = airsim.MultirotorClient(ip="127.0.0.1", port=server.port, timeout_value=60)
        backend = CarlaAirBackend(
            settings=CarlaAirSettings.from_parameters({"airsim_port": server.port}),
            rigs={"uav": rig},
            seconds_per_action=1.0,
            carla_client=carla_standin.Client(world),
        )
        backend.reset("Town10HD", {"uav": Pose(0.0, 0.0, 30.0, 0.0)})

        def bridge_frame_set() -> None:
            observation = backend.observe("uav")
            for frame in observation.frames.values():
                array_to_image(frame.rgb, "rgb8")
                array_to_image(frame.depth, "32FC1")

        raw_rates, bridge_rates = [], []
        try:
            for _ in range(args.rounds):
                raw_rates.append(raw_rate(raw_client, requests, world, args.seconds))
                bridge_rates.append(rate(bridge_frame_set, args.seconds))
        finally:
            backend.close()
            raw_client.client.close()
    raw, bridge = statistics.median(raw_rates), statistics.median(bridge_rates)
    print(
        f"views: {len(rig)} x (Scene + DepthPlanar float) at {args.size}x{args.size}, "
        f"world ticks of {args.frame_ms:.1f} ms"
    )
    print(f"raw simGetImages: {', '.join(f'{r:.2f}' for r in raw_rates)} calls/s")
    print(f"bridge observe + conversion: {', '.join(f'{r:.2f}' for r in bridge_rates)} sets/s")
    if args.output is not None:
        args.output.write_text(
            json.dumps(
                {
                    "size": args.size,
                    "frame_ms": args.frame_ms,
                    "raw_per_s": raw_rates,
                    "bridge_per_s": bridge_rates,
                }
            )
        )
    print(
        f"RESULT bridge_uav_frame_sets_per_s_{args.size}px value={bridge:.2f} "
        f"baseline={raw:.2f} ratio={bridge / raw:.3f}"
    )


if __name__ == "__main__":
    main()
