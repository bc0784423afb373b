"""sensor_msgs/Image and CompressedImage messages built from numpy pixels (rclpy messages, no
DDS): header, one copy of the pixels, big-endian marking, and what the codec reads back; and
a frame's CameraInfo as a stamped copy of its camera's."""

from __future__ import annotations

import tracemalloc

import numpy as np
from builtin_interfaces.msg import Time
from sensor_msgs.msg import Image
from std_msgs.msg import Header

from aerialdojo.image_codec import compressed_to_array, image_to_array, message_array
from aerialdojo.nodes.conversions import camera_info_msg, stamped_camera_info
from aerialdojo.nodes.images import array_to_compressed, array_to_image
from aerialdojo.sim.backend import CameraSpec


def _pixels(height: int, width: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)


def test_an_image_owns_its_pixels_and_carries_its_header() -> None:
    pixels = _pixels(6, 5)
    message = array_to_image(pixels, "rgb8", Header(frame_id="front_optical_frame"))
    pixels[0, 0, 0] ^= 0xFF  # the bridge may reuse its render buffer after publishing

    assert message.header.frame_id == "front_optical_frame"
    decoded = image_to_array(message)
    assert decoded[0, 0, 0] != pixels[0, 0, 0]
    assert np.shares_memory(decoded, np.frombuffer(message.data, dtype=np.uint8))


def test_big_endian_pixels_are_marked_and_read_back() -> None:
    depth = np.linspace(0.5, 80.0, 12, dtype=np.float32).reshape(4, 3)
    marked = array_to_image(depth.astype(">f4"), "32FC1")
    assert marked.is_bigendian == 1
    np.testing.assert_array_equal(image_to_array(marked), depth)


def test_a_compressed_image_carries_its_header_and_decodes() -> None:
    pixels = _pixels(12, 9)
    message = array_to_compressed(pixels, "rgb8", Header(frame_id="left_optical_frame"))
    assert message.header.frame_id == "left_optical_frame"
    assert message.format == "rgb8; png compressed rgb8"
    decoded, encoding = compressed_to_array(message)
    assert encoding == "rgb8"
    np.testing.assert_array_equal(decoded, pixels)


def _image_and_allocated_bytes(rgb: np.ndarray) -> tuple[Image, int]:
    """``array_to_image(rgb)`` and the peak bytes Python allocated while making it."""
    array_to_image(rgb[:1, :1], "rgb8")  # a first message may load its type support
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        message = array_to_image(rgb, "rgb8")
        return message, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_a_full_size_image_costs_one_copy_of_its_pixels() -> None:
    rgb = _pixels(640, 640)
    message, allocated = _image_and_allocated_bytes(rgb)
    assert rgb.nbytes <= allocated < 1.2 * rgb.nbytes  # the array's growth slack, no second copy
    np.testing.assert_array_equal(image_to_array(message), rgb)


def test_pixels_rendered_into_a_message_array_are_taken_without_a_copy() -> None:
    rgb = message_array((640, 640, 3), np.uint8)
    rgb[...] = _pixels(640, 640)
    message, allocated = _image_and_allocated_bytes(rgb)
    assert allocated < 0.01 * rgb.nbytes
    assert np.shares_memory(image_to_array(message), rgb)
    # A view that is not the whole buffer is copied as before.
    part = array_to_image(rgb[:10], "rgb8")
    assert not np.shares_memory(image_to_array(part), rgb)
    np.testing.assert_array_equal(image_to_array(part), rgb[:10])


def test_a_stamped_camera_info_is_the_fresh_message_and_leaves_the_calibration_alone() -> None:
    spec = CameraSpec(name="down", width=40, height=30, fov_deg=70.0, pitch_deg=-90.0)
    calibration = camera_info_msg(spec, "uav/down_optical")
    header = Header(stamp=Time(sec=12, nanosec=500_000_000), frame_id="uav/down_optical")

    info = stamped_camera_info(calibration, header)

    fresh = camera_info_msg(spec, "uav/down_optical")
    fresh.header.stamp = header.stamp
    assert info == fresh
    assert calibration.header.stamp == Time()  # the next frame's copy starts from it again
