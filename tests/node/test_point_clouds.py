"""Depth as sensor_msgs/PointCloud2 per view (``sim_bridge.publish_point_clouds``): off by
default, and when on, every depth pixel with a return is one point of the view's cloud."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aerialdojo_interfaces.srv import SimReset
from rostest import RosClient, first_mini_reset, running, specs_for
from sensor_msgs.msg import CameraInfo, Image, PointCloud2

from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.qos import SENSOR_QOS

pytestmark = pytest.mark.ros


def _reset(client: RosClient) -> None:
    request = first_mini_reset()
    answer = client.call(SimReset, "/sim/reset", request)
    assert answer.success, answer.message


def test_each_view_publishes_its_depth_as_a_point_cloud(tmp_path: Path) -> None:
    client = RosClient()
    try:
        clouds = client.collect(PointCloud2, "/uav/camera/down/points", SENSOR_QOS)
        depths = client.collect(Image, "/uav/camera/down/depth", SENSOR_QOS)
        infos = client.collect(CameraInfo, "/uav/camera/down/camera_info", SENSOR_QOS)
        bridge = {"image_width": 32, "image_height": 24, "publish_point_clouds": True}
        with running(specs_for({"sim_bridge": bridge}), tmp_path):
            _reset(client)
            assert client.spin_until(lambda: clouds and depths and infos, timeout_s=60)
        cloud, depth_msg = clouds[-1], depths[-1]
        assert cloud.header.stamp == depth_msg.header.stamp
        assert cloud.header.frame_id == "uav/down_optical_frame"
        assert [(f.name, f.offset, f.datatype) for f in cloud.fields] == [
            ("x", 0, 7),
            ("y", 4, 7),
            ("z", 8, 7),
        ]
        points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(-1, 3)
        depth = image_to_array(depth_msg)
        returns = np.isfinite(depth) & (depth > 0)
        assert cloud.width == len(points) == int(returns.sum()) > 0
        # z is the planar depth; x and y project back onto their pixels through K.
        assert np.allclose(np.sort(points[:, 2]), np.sort(depth[returns]), rtol=1e-6)
        k = np.array(infos[-1].k).reshape(3, 3)
        pixels = (points / points[:, 2:3]) @ k.T
        rows, columns = np.nonzero(returns)
        assert np.allclose(pixels[:, 0], columns + 0.5, atol=1e-3)
        assert np.allclose(pixels[:, 1], rows + 0.5, atol=1e-3)
    finally:
        client.close()


def test_point_clouds_are_off_by_default(tmp_path: Path) -> None:
    client = RosClient()
    try:
        depths = client.collect(Image, "/uav/camera/down/depth", SENSOR_QOS)
        bridge = {"image_width": 16, "image_height": 16}
        with running(specs_for({"sim_bridge": bridge}), tmp_path):
            _reset(client)
            assert client.spin_until(lambda: depths, timeout_s=60)
            topics = dict(client.node.get_topic_names_and_types())
        assert "/uav/camera/down/depth" in topics
        assert not any(topic.endswith("/points") for topic in topics)
    finally:
        client.close()
