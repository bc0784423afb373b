"""The ROS half of the robot backend, built on the bridge's node (``backends.BackendEntry.
transport``): one ``RosVehicleLink`` per agent behind the ROS-free ``robot.link`` protocol,
and the observation relay.

Per agent (names relative to its namespace unless absolute, ``robot.link.LinkSettings``):
the safety gate's ``safety/goal``, ``safety/hold`` and ``safety/status``, the vehicle's
odometry, a contact topic and the operator's collision mark; per camera view the driver's
image, depth and camera_info. Drivers publish best effort (``DRIVER_QOS``), so every
subscription here is best effort, which matches reliable writers too.

The relay keeps the latest frame of every camera topic; when the bridge publishes an
observation set (after a step arrived, and only once every topic has a frame received since
the arrival) it takes them, converted to what agents read (rgb8, 32FC1 metres: REP-118,
with a 16UC1 driver's 0 "no return" as NaN), and publishes them under the agent's namespace
with the set's one stamp. The agent node is the simulator's, unchanged.

Every callback runs in one reentrant group, away from the bridge's services: the backend
waits for arrival inside ``/sim/execute`` while odometry and statuses keep arriving.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from aerialdojo_interfaces.msg import SafetyStatus
from aerialdojo_interfaces.srv import VehicleGoal
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Bool, Empty, Header
from std_srvs.srv import Trigger

from aerialdojo.geometry import Pose, yaw_from_quaternion
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.common import wait_for_future
from aerialdojo.nodes.conversions import pose_msg
from aerialdojo.nodes.images import array_to_image
from aerialdojo.nodes.qos import latched_qos
from aerialdojo.nodes.vehicles.base import DRIVER_QOS
from aerialdojo.robot.link import (
    LinkSettings,
    SafetyState,
    VehicleState,
    resolve,
)
from aerialdojo.robot.safety import FaultClass, GateState
from aerialdojo.tf_tree import MAP_FRAME

#: Longest wait for the gate's service to appear before a call is given up.
SERVICE_WAIT_S = 1.0


@dataclass
class RelayedView:
    """One view's frames as the agent reads them, stamp and frame id left to the bridge."""

    image: Image
    depth: Image
    camera_info: CameraInfo


@dataclass
class _Received:
    message: object
    at_s: float


class RosVehicleLink:
    """One agent's vehicle over ROS (``robot.link.VehicleLink``)."""

    def __init__(
        self, node: Node, agent: str, settings: LinkSettings, group: ReentrantCallbackGroup
    ) -> None:
        self._node = node
        self._settings = settings
        self._changed = threading.Condition()
        self._vehicle: VehicleState | None = None
        self._safety: SafetyState | None = None
        self._listeners: list[Callable[[SafetyState], None]] = []
        self._collision = ""
        self._contact_topic = "/" + resolve(agent, settings.contact_topic).lstrip("/")
        self._frames: dict[str, _Received] = {}
        self._topics = {
            camera.view: tuple(
                resolve(agent, name) for name in (camera.image, camera.depth, camera.camera_info)
            )
            for camera in settings.cameras
        }
        self._goal: Client = node.create_client(
            VehicleGoal, resolve(agent, settings.goal_service), callback_group=group
        )
        self._hold: Client = node.create_client(
            Trigger, resolve(agent, settings.hold_service), callback_group=group
        )
        subscribe = node.create_subscription
        subscribe(
            Odometry, resolve(agent, settings.odometry_topic), self._on_odometry, DRIVER_QOS,
            callback_group=group,
        )  # fmt: skip
        # The gate's status is reliable and latched (the gate's STATUS_QOS): a late
        # subscription still sees a latched fault.
        subscribe(
            SafetyStatus, resolve(agent, settings.status_topic), self._on_status, latched_qos(1),
            callback_group=group,
        )  # fmt: skip
        subscribe(
            Empty, resolve(agent, settings.mark_topic), self._on_mark, 10, callback_group=group
        )
        if settings.contact_topic:
            subscribe(
                Bool, resolve(agent, settings.contact_topic), self._on_contact, DRIVER_QOS,
                callback_group=group,
            )  # fmt: skip
        for view, topics in self._topics.items():
            for topic, msg_type in zip(topics, (Image, Image, CameraInfo), strict=True):
                subscribe(
                    msg_type, topic, self._frame_callback(view, topic), DRIVER_QOS,
                    callback_group=group,
                )  # fmt: skip

    # -- robot.link.VehicleLink -------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic()

    def stamp_s(self) -> float:
        return float(self._node.get_clock().now().nanoseconds) / 1e9

    def wait(self, timeout_s: float) -> None:
        with self._changed:
            self._changed.wait(timeout_s)

    def vehicle(self) -> VehicleState | None:
        return self._vehicle

    def safety(self) -> SafetyState | None:
        return self._safety

    def send_goal(self, target: Pose, max_speed_m_s: float) -> str:
        request = VehicleGoal.Request(
            target=PoseStamped(header=Header(frame_id=MAP_FRAME), pose=pose_msg(target)),
            max_speed_m_s=max_speed_m_s,
        )
        answer = self._call(self._goal, request)
        if isinstance(answer, str):
            return answer
        return "" if answer.accepted else answer.reason or "refused without a reason"

    def hold(self) -> str:
        answer = self._call(self._hold, Trigger.Request())
        if isinstance(answer, str):
            return answer
        return "" if answer.success else answer.message or "refused without a reason"

    def collision(self) -> str:
        return self._collision

    def clear_collisions(self) -> None:
        self._collision = ""

    def on_safety_change(self, listener: Callable[[SafetyState], None]) -> None:
        self._listeners.append(listener)

    def frames_missing(self, since_s: float) -> list[str]:
        return [
            topic
            for topics in self._topics.values()
            for topic in topics
            if topic not in self._frames or self._frames[topic].at_s <= since_s
        ]

    # -- the relay ------------------------------------------------------------------------

    def relayed_views(self) -> dict[str, RelayedView]:
        """The latest frames of every view that has all three, converted for agents."""
        views = {}
        for view, (image, depth, info) in self._topics.items():
            if not all(topic in self._frames for topic in (image, depth, info)):
                continue
            # Copies (sharing the pixels): the bridge restamps them while the latest frames
            # stay as the drivers sent them.
            views[view] = RelayedView(
                image=copy.copy(_as_rgb8(self._frames[image].message)),  # type: ignore[arg-type]
                depth=copy.copy(_as_metres(self._frames[depth].message)),  # type: ignore[arg-type]
                camera_info=copy.copy(self._frames[info].message),  # type: ignore[arg-type]
            )
        return views

    # -- callbacks ------------------------------------------------------------------------

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _on_odometry(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        v = msg.twist.twist.linear
        self._vehicle = VehicleState(
            pose=Pose(float(p.x), float(p.y), float(p.z), yaw_from_quaternion(q.x, q.y, q.z, q.w)),
            speed_m_s=math.sqrt(float(v.x) ** 2 + float(v.y) ** 2 + float(v.z) ** 2),
            received_s=self.now(),
        )
        self._notify()

    def _on_status(self, msg: SafetyStatus) -> None:
        previous = self._safety
        state = SafetyState(
            state=GateState(msg.state),
            fault_class=FaultClass(msg.fault_class),
            fault=msg.fault,
            detail=msg.detail,
            received_s=self.now(),
        )
        self._safety = state
        if previous is None or (previous.state, previous.fault) != (state.state, state.fault):
            for listener in self._listeners:
                listener(state)
        self._notify()

    def _on_mark(self, _msg: Empty) -> None:
        self._collision = self._collision or "the operator marked a collision"
        self._notify()

    def _on_contact(self, msg: Bool) -> None:
        if msg.data and not self._collision:
            self._collision = f"contact on {self._contact_topic}"
        self._notify()

    def _frame_callback(self, view: str, topic: str) -> Callable[[object], None]:
        watch = (
            view == self._settings.proximity_view
            and self._settings.proximity_m > 0.0
            and topic == self._topics[view][1]
        )

        def store(msg: object) -> None:
            self._frames[topic] = _Received(msg, self.now())
            if watch:
                self._check_proximity(view, msg)  # type: ignore[arg-type]
            self._notify()

        return store

    def _check_proximity(self, view: str, depth: Image) -> None:
        nearest = _nearest_m(depth)
        limit = self._settings.proximity_m
        if nearest < limit and not self._collision:
            self._collision = f"depth proximity: {nearest:.2f} m < {limit:g} m in view {view}"

    def _call(self, client: Client, request: object) -> object | str:
        """The answer of a gate service, or why there is none."""
        if not client.wait_for_service(timeout_sec=SERVICE_WAIT_S):
            return f"{client.srv_name} is not served (is the safety gate running?)"
        future = client.call_async(request)
        if not wait_for_future(future, self._settings.service_timeout_s, self._node.context):
            client.remove_pending_request(future)
            return f"{client.srv_name} did not answer within {self._settings.service_timeout_s:g} s"
        return future.result()


class RosVehicleTransport:
    """What the bridge offers the robot backend (``robot.link.VehicleTransport``): links on
    its node, and the frames they relay."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._group = ReentrantCallbackGroup()
        self._links: dict[str, RosVehicleLink] = {}

    def vehicle_link(self, agent: str, settings: LinkSettings) -> RosVehicleLink:
        link = RosVehicleLink(self._node, agent, settings, self._group)
        self._links[agent] = link
        return link

    def relayed_views(self, agent: str) -> dict[str, RelayedView]:
        """The frames relayed to ``agent`` for the observation set being published."""
        link = self._links.get(agent)
        return link.relayed_views() if link is not None else {}


def _as_rgb8(image: Image) -> Image:
    """A colour image as agents read it (rgb8)."""
    if image.encoding == "rgb8":
        return image
    pixels = image_to_array(image)
    if image.encoding == "bgr8":
        pixels = pixels[:, :, ::-1]
    return array_to_image(np.ascontiguousarray(pixels), "rgb8", image.header)


def _as_metres(depth: Image) -> Image:
    """A depth image as agents read it: 32FC1 metres; a 16UC1 driver's millimetres, with its
    0 (no return) as NaN (REP-118)."""
    if depth.encoding == "32FC1":
        return depth
    millimetres = image_to_array(depth).astype(np.float32)
    metres = np.where(millimetres > 0.0, millimetres / 1000.0, np.nan).astype(np.float32)
    return array_to_image(metres, "32FC1", depth.header)


def _nearest_m(depth: Image) -> float:
    """The nearest valid return of a depth image, metres (inf when none)."""
    values = image_to_array(depth).astype(np.float32)
    if depth.encoding == "16UC1":
        values = np.where(values > 0.0, values / 1000.0, np.nan)
    valid = values[np.isfinite(values) & (values > 0.0)]
    return float(valid.min()) if valid.size else math.inf
