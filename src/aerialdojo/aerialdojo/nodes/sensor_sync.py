"""An agent's own sensor topics, collected by stamp into observation sets.

Every view of one step carries the stamp that step returned, so an agent waits until each
view it needs (image, depth, camera_info) and its odometry of that stamp have arrived. Shared
by the AerialDojo and AGOS agent nodes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.subscription import Subscription
from sensor_msgs.msg import CameraInfo, Image

from aerialdojo.agents.observation import ViewData
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.common import time_ns
from aerialdojo.nodes.conversions import intrinsics_from_msg, pose_from_msg
from aerialdojo.nodes.qos import (
    SENSOR_QOS,
    STATE_QOS,
    subscription_without_events,
    unreachable_publishers,
)

KINDS = ("image", "depth", "camera_info")


class ObservationSync:
    """Subscribes to ``camera/<view>/{image,depth,camera_info}`` and ``odom`` (relative to
    the node's namespace) and hands out complete observation sets by stamp.

    Args:
        node: the agent node.
        views: every view the agent's rig publishes.
        on_message: called after each message is stored (the agent tries to act).
    """

    def __init__(self, node: Node, views: Sequence[str], on_message: Callable[[], None]) -> None:
        self._node = node
        self._on_message = on_message
        self._frames: dict[int, dict[tuple[str, str], Any]] = defaultdict(dict)
        self._odometry: dict[int, Odometry] = {}
        self._subscriptions: list[Subscription] = [
            subscription_without_events(
                node,
                msg_type,
                f"camera/{view}/{kind}",
                lambda msg, key=(view, kind): self._store_frame(key, msg),
                SENSOR_QOS,
            )
            for view in views
            for kind, msg_type in zip(KINDS, (Image, Image, CameraInfo), strict=True)
        ]
        self._subscriptions.append(
            subscription_without_events(node, Odometry, "odom", self._store_odometry, STATE_QOS)
        )

    def _store_frame(self, key: tuple[str, str], msg: Image | CameraInfo) -> None:
        self._frames[time_ns(msg.header.stamp)][key] = msg
        self._on_message()

    def _store_odometry(self, msg: Odometry) -> None:
        self._odometry[time_ns(msg.header.stamp)] = msg
        self._on_message()

    @property
    def publishers_matched(self) -> bool:
        """Every sensor topic has a publisher: the bridge is up and serves this agent.

        An agent takes no task before this holds, so the task manager starts episodes only for
        agents whose sensors are wired. Frames the bridge published before it matched this
        agent still arrive: sensor and state topics are transient local (``sensor_qos``).
        """
        # Node.count_publishers: Subscription.get_publisher_count is newer than Humble (Iron).
        return all(
            self._node.count_publishers(subscription.topic_name) > 0
            for subscription in self._subscriptions
        )

    def unreachable_publishers(self) -> list[str]:
        """Why a publisher now on a sensor topic cannot reach this agent (a QoS or type
        mismatch, ``qos.unreachable_publishers``); empty when every one can."""
        return [
            problem
            for subscription in self._subscriptions
            for problem in unreachable_publishers(self._node, subscription)
        ]

    def observation(
        self, stamp_ns: int, views: Sequence[str]
    ) -> tuple[Pose, dict[str, ViewData]] | None:
        """The odometry pose and ``views`` of ``stamp_ns``, or None until all have arrived."""
        frames = self._frames.get(stamp_ns, {})
        if stamp_ns not in self._odometry or any(
            (view, kind) not in frames for view in views for kind in KINDS
        ):
            return None
        data = {
            view: ViewData(
                rgb=image_to_array(frames[(view, "image")]),
                depth=image_to_array(frames[(view, "depth")]),
                intrinsics=intrinsics_from_msg(frames[(view, "camera_info")]),
            )
            for view in views
        }
        return pose_from_msg(self._odometry[stamp_ns].pose.pose), data

    def starvation(self, expected_ns: int | None, waited_s: float, timeout_s: float) -> str:
        """Why an agent that waited ``waited_s`` for the set of ``expected_ns`` has none yet,
        once that is longer than ``timeout_s`` ("" while all is well)."""
        if not self.publishers_matched:
            return "waiting for the camera and odometry publishers"
        if expected_ns is None or waited_s <= timeout_s:
            return ""
        return "; ".join(
            [
                f"no complete observation set for stamp {expected_ns} ns after "
                f"{waited_s:.0f} s; have {sorted(self._frames.get(expected_ns, {}))}",
                *self.unreachable_publishers(),
            ]
        )

    def forget_before(self, stamp_ns: int) -> None:
        """Drop everything stamped before ``stamp_ns``."""
        for old in [stamp for stamp in self._frames if stamp < stamp_ns]:
            del self._frames[old]
        for old in [stamp for stamp in self._odometry if stamp < stamp_ns]:
            del self._odometry[old]
