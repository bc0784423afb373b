"""The public ProjectAirSim server's topic wire format: frames, image headers read without the
pixels, pixels decoded once, depth arrays packed as core_sim's msgpack-c packs them (integral
floats as integers), and NNG's silent refusal of a peer of the other protocol.

Runs in .venv-projectairsim (msgpack, pynng); test_backend_venvs.py runs it there.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("pynng", reason="needs .venv-projectairsim (tools/bootstrap_backend.sh)")

import msgpack
import pynng
from fakes.core_sim_msgpack import pack_floats, pack_image_message

from aerialdojo.errors import SimulatorFaultError
from aerialdojo.sim.remote.diagnostics import captured_pose_of_ned
from aerialdojo.sim.remote.projectairsim_wire import (
    FRAME_MESSAGE,
    PackedImage,
    read_frame,
    subscribe_frame,
    unsubscribe_all_frame,
)

RGB = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)


def _message(**fields: object) -> dict[str, object]:
    return {
        "time_stamp": 123_000_000,
        "height": 2,
        "width": 3,
        "encoding": "BGR",
        "big_endian": False,
        "step": 1,
        "data": RGB[:, :, ::-1].tobytes(),
        "pos_x": 1.0,
        "pos_y": 2.5,
        "pos_z": -10.0,
        "rot_w": 1.0,
        "rot_x": 0.0,
        "rot_y": 0.0,
        "rot_z": 0.0,
        "annotations": [],
        "data_float": [],
        **fields,
    }


def test_frames_are_arrays_of_type_topic_body() -> None:
    assert msgpack.unpackb(subscribe_frame("/a")) == [0, "/a", ""]
    assert msgpack.unpackb(unsubscribe_all_frame()) == [3, "", ""]
    # core_sim packs topic and body as str (msgpack-c std::string), not bin.
    raw = msgpack.packb([FRAME_MESSAGE, "/a", b"\x01\x02".decode("latin-1")], use_bin_type=False)
    kind, topic, body = read_frame(raw)
    assert (kind, topic) == (FRAME_MESSAGE, "/a") and len(body) == 2


def test_a_scene_image_is_read_by_its_header_and_decoded_once() -> None:
    image = PackedImage.read(pack_image_message(_message()), "front")
    assert (image.time_stamp, image.width, image.height, image.encoding) == (
        123_000_000,
        3,
        2,
        "BGR",
    )
    assert image.position_ned == (1.0, 2.5, -10.0)  # 1.0 and -10.0 arrive as integers
    rgb = image.rgb("front")
    assert np.array_equal(rgb, RGB) and rgb.flags.c_contiguous
    assert image.rgb("front") is rgb
    short = PackedImage.read(pack_image_message(_message(data=b"\x00" * 17)), "front")
    with pytest.raises(SimulatorFaultError, match=r"front: 17 bytes for a 3x2 BGR image"):
        short.rgb("front")
    with pytest.raises(SimulatorFaultError, match="front: not an image message"):
        PackedImage.read(msgpack.packb({"width": 3}), "front")


@pytest.mark.parametrize("integral", [False, True], ids=["floats only", "with integers"])
def test_depth_floats_as_core_sim_packs_them(integral: bool) -> None:
    # 65504 is where the half-float depth target saturates; 0 is no hit.
    values = [2.25, 0.0, 65504.0, 7.5, 1.125, 3.0] if integral else [2.25, 7.5, 1.125] * 2
    body = pack_image_message(_message(encoding="32FC1", data=b"", data_float=values))
    kinds = {type(v).__name__ for v in msgpack.unpackb(body)["data_float"]}
    assert kinds == ({"float", "int"} if integral else {"float"})
    depth = PackedImage.read(body, "down").depth("down")
    assert depth.dtype == np.float32 and depth.shape == (2, 3)
    expected = np.asarray(values, np.float32).reshape(2, 3)
    expected[(expected == 0.0) | (expected >= 65504.0)] = np.inf
    assert np.array_equal(depth, expected)
    wrong = pack_image_message(_message(encoding="32FC1", data=b"", data_float=values[:5]))
    with pytest.raises(SimulatorFaultError, match=r"down: 5 depth values for a 3x2 image"):
        PackedImage.read(wrong, "down").depth("down")
    with pytest.raises(SimulatorFaultError, match="depth encoding 'BGR'"):
        PackedImage.read(pack_image_message(_message()), "down").depth("down")


def test_msgpack_c_packs_integral_floats_as_the_smallest_integer() -> None:
    values = np.array([0.0, 127.0, 128.0, 65535.0, 65536.0, -1.0, -200.0, 0.5, np.inf])
    assert msgpack.unpackb(pack_floats(values)) == [
        0,
        127,
        128,
        65535,
        65536,
        -1,
        -200,
        0.5,
        np.inf,
    ]
    assert pack_floats(np.array([128.0]))[1:] == b"\xcc\x80"
    assert pack_floats(np.array([0.5]))[1:] == b"\xca\x3f\x00\x00\x00"


def test_the_camera_pose_of_a_frame_in_the_map_frame() -> None:
    # Facing east (NED yaw +90 deg) and pitched down 90 deg, 10 m up at north 2, east 1.
    half = np.sqrt(0.5)
    yaw_east = (half, 0.0, 0.0, half)
    pose = captured_pose_of_ned((2.0, 1.0, -10.0), yaw_east)
    assert (pose.x, pose.y, pose.z) == (1.0, 2.0, 10.0)
    assert pose.yaw_deg == pytest.approx(0.0) and pose.pitch_deg == pytest.approx(0.0)
    pitched = (half, 0.0, -half, 0.0)  # pitch -90: looking down
    assert captured_pose_of_ned((0.0, 0.0, 0.0), pitched).pitch_deg == pytest.approx(-90.0)


@pytest.mark.parametrize(("server", "client"), [(pynng.Pair0, pynng.Pair1), (None, pynng.Pair0)])
def test_nng_refuses_a_peer_of_the_other_protocol_without_an_error(server, client) -> None:
    """Why the backend checks the topic socket with a round trip: the dial succeeds, then
    no frame can be sent (the public server is pair1 polyamorous, topic_manager.cpp)."""
    listening = server(recv_timeout=100) if server else pynng.Pair1(polyamorous=True)
    address = "tcp://127.0.0.1:0"
    listener = listening.listen(address)
    port = int(str(listener.local_address).rsplit(":", 1)[1])
    dialling = client(send_timeout=300)
    try:
        dialling.dial(f"tcp://127.0.0.1:{port}", block=True)  # no error
        started = time.monotonic()
        with pytest.raises(pynng.Timeout):
            dialling.send(b"frame")
        assert time.monotonic() - started < 2.0
    finally:
        dialling.close()
        listening.close()
