"""Frame sets per second the bridge gets out of a simulator, against an in-run baseline.

``--sim carla_air`` (the default): every side talks to the fake AirSim server
(tests/fakes/airsim_server.py: real msgpack-rpc over TCP on 127.0.0.1) for the UAV's four
views, each a Scene image and a DepthPlanar float image at ``--size`` pixels square, with
CARLA-Air's capture timing: images render on the world's next synchronous tick, and a tick
takes one render frame of wall time (``--frame-ms``, on the CARLA stand-in world).

Value: ``CarlaAirBackend.observe("uav")``, which fetches on its image thread (reading the
answer straight into message buffers, ``sim.remote.airsim_wire``) while ticking the world
itself, decodes into RGB and metric depth arrays, stamps with CARLA's time and reads the pose,
then the bridge's conversion of every view to sensor_msgs/Image (``array_to_image``); DDS
publishing is measured by benchmarks/transport.py. The fake runs in a child process
(``--fake-in-process``: in this one), so its packing does not hold the GIL of the side
measured; the world's ticks reach it through a pipe.

Baseline (since 5 December): the simulator itself in lock step, as a synchronous-mode caller
must run it: the request on the wire, one tick, the whole answer received as it arrives and
parsed only as far as the wire needs (by the bridge's reader, each payload into a buffer of its
own and the floats to float32; no colour swap, no pose, no conversion to messages). CARLA-Air
in synchronous mode advances only when its client ticks, and AirSim renders a ``simGetImages``
request on the next game frame, so every frame set costs at least a tick plus the server's
answer after it; what the bridge takes beyond that is its own (docs/performance.md, "Remote
bridges, sixth pass").

Also printed: the raw client calling ``simGetImages`` in a loop while another thread ticks the
world back to back (the RESULT baseline until 5 December): each answer then travels while the
next frame renders, which a bridge can only match by ticking ahead of the agent, so that
ratio is capped by the server's answer latency, not by the bridge; and the unmodified airsim
client in lock step (it also unpacks every depth value
into a Python float). Rounds alternate; rates are medians over rounds.

    tools/run.sh .venv-carla-air/bin/python benchmarks/bridge_rate.py [--size 256] [--seconds 3]

Last line: RESULT bridge_uav_frame_sets_per_s_<size>px value=<bridge> baseline=<lock step> ratio=.

``--sim projectairsim``: the receiving side of the public ProjectAirSim server's image topics,
which push every capture: at 15 FPS a 1 s action brings 15 captures of the four views, each a
BGR scene image and a 32FC1 depth image, packed as core_sim packs them (msgpack-c 6.1: depth
floats with integral values as integers; depth quantised like the server's half-float render
target, so a few per cent of the values are integral). One observation = receiving those
``--captures`` sets and turning the newest into RGB and metric depth arrays and
sensor_msgs/Image. Value: the backend's path (``projectairsim_wire``: each frame read by its
header, the used images decoded once). Baseline: the client library's own path, which
unpacks every message into Python objects on its topic thread, then the decoding the backend
did before (``np.fromiter`` over the float list). Both in this process, from the same bytes;
the NNG transport, the same for both, is not part of it.

    tools/run.sh .venv-projectairsim/bin/python benchmarks/bridge_rate.py --sim projectairsim \
        --size 640

Last line: RESULT bridge_projectairsim_observations_per_s_<size>px value= baseline= ratio=.
"""

from __future__ import annotations

import argparse
import itertools
import json
import queue
import select
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src" / "aerialdojo"))
sys.path.insert(0, str(REPO / "tests"))

from aerialdojo.nodes.images import array_to_image  # noqa: E402
from aerialdojo.sim.backend import aerialdojo_uav_rig  # noqa: E402


def rate(work: Callable[[], object], seconds: float) -> float:
    """Calls of ``work`` per second over at least ``seconds`` (and at least two calls)."""
    count, started = 0, time.perf_counter()
    while count < 2 or time.perf_counter() - started < seconds:
        work()
        count += 1
    return count / (time.perf_counter() - started)


def raw_rate(client: Any, requests: list[Any], world: Any, seconds: float) -> float:
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


#: As the backend's ``_REPLY_WAIT_S``: the lock-step caller ticks again after this long
#: without an answer.
REPLY_WAIT_S = 0.05


def lockstep_rate(client: Any, requests: list[Any], world: Any, seconds: float) -> float:
    """simGetImages calls per second when the caller ticks the world itself: the request
    (written to the socket before ``call_async`` returns), one tick, the answer. A request
    the server reads only after that tick waits for the next one, so, as the backend does,
    another tick follows if no answer came within ``REPLY_WAIT_S`` (without it such a call
    waited out the client's 60 s timeout, and the run failed)."""
    import airsim  # noqa: PLC0415

    def one_set() -> None:
        reply = client.client.call_async("simGetImages", requests, "", False)
        world.tick()
        answered = threading.Event()

        def tick_again() -> None:
            while not answered.wait(REPLY_WAIT_S):
                world.tick()

        ticker = threading.Thread(target=tick_again, daemon=True)
        ticker.start()
        try:
            for raw in reply.get():  # what airsim's simGetImages makes of the answer
                airsim.ImageResponse.from_msgpack(raw)
        finally:
            answered.set()
            ticker.join()

    return rate(one_set, seconds)


def lockstep_floor_rate(
    port: int, requests: list[Any], world: Any, seconds: float
) -> tuple[float, float]:
    """Frame sets per second, and ticks a set, of the simulator itself in lock step: the
    request on the wire (a connection of its own), one tick, another only if no answer started
    within ``REPLY_WAIT_S`` after it, and the whole answer received, parsed only as far as the
    wire needs (``airsim_wire``'s reader, as the bridge reads it: each payload received into
    a zeroed array of its own, the float runs converted to float32; no colour swap, no
    message buffers, no pose, no conversion to messages). What the bridge takes beyond this
    is its own. As in the backend, a thread that lives for the whole run reads the answer as
    it arrives while the caller ticks (reading it only after the tick returned
    was slower, and starting a thread a set cost about 2 ms at load 3)."""
    from aerialdojo.sim.remote.airsim_wire import ImageReplyReader, request_bytes  # noqa: PLC0415

    msgids = itertools.count(1)
    first_frame = world.frame
    jobs: queue.Queue[tuple[int, threading.Event, threading.Event] | None] = queue.Queue()
    with socket.create_connection(("127.0.0.1", port), timeout=60.0) as connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        replies = ImageReplyReader(connection.recv_into)

        failures: list[Exception] = []

        def read_answers() -> None:
            while (job := jobs.get()) is not None:
                msgid, answering, answered = job
                try:
                    select.select([connection], [], [])
                    answering.set()
                    replies.image_reply(msgid)
                except Exception as error:  # raised again on the caller's thread
                    failures.append(error)
                finally:
                    answering.set()
                    answered.set()

        reader = threading.Thread(target=read_answers, daemon=True)
        reader.start()

        def one_set() -> None:
            msgid, answering, answered = next(msgids), threading.Event(), threading.Event()
            connection.sendall(request_bytes(msgid, "simGetImages", [requests, "", False]))
            jobs.put((msgid, answering, answered))
            world.tick()
            while not answering.wait(REPLY_WAIT_S):
                world.tick()
            answered.wait()
            if failures:
                raise failures[0]

        try:
            per_s = rate(one_set, seconds)
        finally:
            jobs.put(None)
            reader.join()
    return per_s, (world.frame - first_frame) / (next(msgids) - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", choices=("carla_air", "projectairsim"), default="carla_air")
    parser.add_argument("--size", type=int, default=256, help="image width and height, pixels")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each side")
    parser.add_argument(
        "--frame-ms", type=float, default=1000.0 / 60.0, help="wall time of one world tick"
    )
    parser.add_argument(
        "--captures", type=int, default=15, help="ProjectAirSim captures per observation"
    )
    parser.add_argument(
        "--fake-in-process",
        action="store_true",
        help="run the fake AirSim server in this process, as the benchmark did before: its "
        "packing then shares the GIL with the side measured",
    )
    parser.add_argument("--output", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    if args.sim == "projectairsim":
        projectairsim_rate(args)
    else:
        carla_air_rate(args)


def projectairsim_rate(args: argparse.Namespace) -> None:
    """Observations per second of the backend's receiving path against the client's own."""
    import msgpack  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from fakes.core_sim_msgpack import pack_image_message  # noqa: PLC0415

    from aerialdojo.sim.remote.projectairsim_wire import PackedImage, read_frame  # noqa: PLC0415

    size = args.size
    rng = np.random.default_rng(0)
    frames: list[bytes] = []
    for capture in range(args.captures):
        for view in aerialdojo_uav_rig(size, size):
            common = {
                "time_stamp": capture,
                "height": size,
                "width": size,
                "big_endian": False,
                "step": 1,
                "annotations": [],
                **dict.fromkeys(("pos_x", "pos_y", "pos_z", "rot_x", "rot_y", "rot_z"), 0.5),
                "rot_w": 1.0,
            }
            scene = rng.integers(0, 256, (size, size, 3), dtype=np.uint8).tobytes()
            depth = rng.uniform(5.0, 120.0, size * size).astype(np.float16).astype(np.float32)
            for topic, fields in (
                (f"{view.name}/scene_camera", {"encoding": "BGR", "data": scene, "data_float": []}),
                (
                    f"{view.name}/depth_planar_camera",
                    {"encoding": "32FC1", "data": b"", "data_float": depth},
                ),
            ):
                body = pack_image_message({**common, **fields})
                frames.append(msgpack.packb([2, topic, body], use_bin_type=False))
    integral = float(np.mean(depth == np.floor(depth)))

    def convert(views: dict[str, tuple[Any, Any]]) -> None:
        for rgb, depth in views.values():
            array_to_image(rgb, "rgb8")
            array_to_image(depth, "32FC1")

    def backend_path() -> None:
        newest: dict[str, PackedImage] = {}
        for raw in frames:
            _kind, topic, body = read_frame(raw)
            newest[topic] = PackedImage.read(body, topic)
        convert(
            {
                view: (
                    newest[f"{view}/scene_camera"].rgb(view),
                    newest[f"{view}/depth_planar_camera"].depth(view),
                )
                for view in ("front", "left", "right", "down")
            }
        )

    def client_path() -> None:
        newest: dict[str, dict[str, Any]] = {}
        for raw in frames:
            frame = msgpack.unpackb(raw, raw=True)
            newest[frame[1].decode()] = msgpack.unpackb(frame[2], raw=False)
        views = {}
        for view in ("front", "left", "right", "down"):
            colour, depth = newest[f"{view}/scene_camera"], newest[f"{view}/depth_planar_camera"]
            rgb = np.frombuffer(colour["data"], np.uint8).reshape(size, size, 3)[:, :, ::-1]
            floats = depth["data_float"]
            metres = np.fromiter(floats, np.float32, count=len(floats)).reshape(size, size)
            views[view] = (np.ascontiguousarray(rgb), metres)
        convert(views)

    client_rates, backend_rates = [], []
    for _ in range(args.rounds):
        client_rates.append(rate(client_path, args.seconds))
        backend_rates.append(rate(backend_path, args.seconds))
    client, backend = statistics.median(client_rates), statistics.median(backend_rates)
    print(
        f"views: 4 x (BGR scene + 32FC1 depth) at {size}x{size}, {args.captures} captures per "
        f"observation, {integral * 100.0:.1f} % of the depth values packed as integers"
    )
    print(f"client's receive path: {', '.join(f'{r:.2f}' for r in client_rates)} observations/s")
    print(f"backend's receive path: {', '.join(f'{r:.2f}' for r in backend_rates)} observations/s")
    if args.output is not None:
        args.output.write_text(
            json.dumps({"size": size, "client_per_s": client_rates, "backend_per_s": backend_rates})
        )
    print(
        f"RESULT bridge_projectairsim_observations_per_s_{size}px value={backend:.2f} "
        f"baseline={client:.2f} ratio={backend / client:.3f}"
    )


def _serve_fake_airsim(settings: dict[str, Any], ground_down: float, pipe: Any) -> None:
    """The child process of ``_FakeAirSimProcess``: serves, and ticks when told to."""
    from fakes.airsim_server import FakeAirSim  # noqa: PLC0415

    with FakeAirSim(settings, ground_down=ground_down) as server:
        pipe.send(server.port)
        while (seconds := pipe.recv()) is not None:
            server.tick(seconds)
            pipe.send(True)


class _FakeAirSimProcess:
    """The fake AirSim server in a child process, ticked through a pipe by the CARLA
    stand-in (the only call it makes on the server): the fake's packing of every answer then
    runs on its own interpreter, not under the GIL of the client or bridge measured, as a
    real server runs in a process of its own."""

    def __init__(self, settings: dict[str, Any], ground_down: float) -> None:
        import multiprocessing  # noqa: PLC0415

        context = multiprocessing.get_context("spawn")
        self._pipe, child_end = context.Pipe()
        self._process = context.Process(
            target=_serve_fake_airsim, args=(settings, ground_down, child_end), daemon=True
        )

    def __enter__(self) -> _FakeAirSimProcess:
        self._process.start()
        self.port = int(self._pipe.recv())
        return self

    def __exit__(self, *exc: object) -> None:
        self._pipe.send(None)
        self._process.join(10.0)

    def tick(self, seconds: float) -> None:
        self._pipe.send(seconds)
        self._pipe.recv()


def carla_air_rate(args: argparse.Namespace) -> None:
    """Frame sets per second of CarlaAirBackend.observe against raw simGetImages calls."""
    import airsim  # noqa: PLC0415
    from fakes import carla_standin  # noqa: PLC0415
    from fakes.airsim_server import FakeAirSim  # noqa: PLC0415

    from aerialdojo.geometry import Pose  # noqa: PLC0415
    from aerialdojo.sim.carla_air import CarlaAirBackend  # noqa: PLC0415
    from aerialdojo.sim.remote.airsim_settings import settings_for_rig  # noqa: PLC0415
    from aerialdojo.sim.remote.settings import CarlaAirSettings  # noqa: PLC0415

    rig = aerialdojo_uav_rig(args.size, args.size)
    requests = [
        request
        for spec in rig
        for request in (
            airsim.ImageRequest(spec.name, airsim.ImageType.Scene, False, False),
            airsim.ImageRequest(spec.name, airsim.ImageType.DepthPlanar, True, False),
        )
    ]
    settings = settings_for_rig(rig)
    server_context = (
        FakeAirSim(settings, ground_down=100.0)
        if args.fake_in_process
        else _FakeAirSimProcess(settings, ground_down=100.0)
    )
    with server_context as server:
        world = carla_standin.World(airsim=server, frame_s=args.frame_ms / 1000.0)
        raw_client = airsim.MultirotorClient(ip="127.0.0.1", port=server.port, timeout_value=60)
        backend = CarlaAirBackend(
            settings=CarlaAirSettings.from_parameters({"airsim_port": server.port}),
            rigs={"uav": rig},
            seconds_per_action=1.0,
            carla_client=carla_standin.Client(world),
        )
        backend.reset("Town10HD", {"uav": Pose(0.0, 0.0, 30.0, 0.0)})

        sets = 0

        def bridge_frame_set() -> None:
            nonlocal sets
            sets += 1
            observation = backend.observe("uav")
            for frame in observation.frames.values():
                array_to_image(frame.rgb, "rgb8")
                array_to_image(frame.depth, "32FC1")

        raw_rates, lockstep_rates, bridge_rates, ticks_per_set = [], [], [], []
        floor_rates, floor_ticks_per_set = [], []
        try:
            for _ in range(args.rounds):
                raw_rates.append(raw_rate(raw_client, requests, world, args.seconds))
                lockstep_rates.append(lockstep_rate(raw_client, requests, world, args.seconds))
                floor_rate, floor_ticks = lockstep_floor_rate(
                    server.port, requests, world, args.seconds
                )
                floor_rates.append(floor_rate)
                floor_ticks_per_set.append(floor_ticks)
                sets, ticks = 0, world.frame
                bridge_rates.append(rate(bridge_frame_set, args.seconds))
                ticks_per_set.append((world.frame - ticks) / sets)
        finally:
            backend.close()
            raw_client.client.close()
    raw, bridge = statistics.median(raw_rates), statistics.median(bridge_rates)
    lockstep, floor = statistics.median(lockstep_rates), statistics.median(floor_rates)
    print(
        f"views: {len(rig)} x (Scene + DepthPlanar float) at {args.size}x{args.size}, "
        f"world ticks of {args.frame_ms:.1f} ms, the fake server "
        f"{'in this process' if args.fake_in_process else 'in a child process'}"
    )
    print(
        f"raw simGetImages, the world ticking beside it: "
        f"{', '.join(f'{r:.2f}' for r in raw_rates)} calls/s (bridge / raw: {bridge / raw:.3f}, "
        "the RESULT ratio until 5 December)"
    )
    print(
        f"raw simGetImages in lock step: {', '.join(f'{r:.2f}' for r in lockstep_rates)} "
        f"calls/s (bridge / lock step: {bridge / lockstep:.3f})"
    )
    print(
        f"the simulator in lock step, answers received and nothing decoded: "
        f"{', '.join(f'{r:.2f}' for r in floor_rates)} sets/s, "
        f"{', '.join(f'{t:.2f}' for t in floor_ticks_per_set)} ticks a set"
    )
    print(
        f"bridge observe + conversion: {', '.join(f'{r:.2f}' for r in bridge_rates)} sets/s, "
        f"{', '.join(f'{t:.2f}' for t in ticks_per_set)} ticks a set"
    )
    if args.output is not None:
        args.output.write_text(
            json.dumps(
                {
                    "size": args.size,
                    "frame_ms": args.frame_ms,
                    "raw_per_s": raw_rates,
                    "lockstep_per_s": lockstep_rates,
                    "lockstep_floor_per_s": floor_rates,
                    "lockstep_floor_ticks_per_set": floor_ticks_per_set,
                    "bridge_per_s": bridge_rates,
                    "bridge_ticks_per_set": ticks_per_set,
                }
            )
        )
    print(
        f"RESULT bridge_uav_frame_sets_per_s_{args.size}px value={bridge:.2f} "
        f"baseline={floor:.2f} ratio={bridge / floor:.3f}"
    )


if __name__ == "__main__":
    main()
