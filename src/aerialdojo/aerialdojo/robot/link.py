"""What the robot backend needs of ROS, as a ROS-free protocol: one ``VehicleLink`` per agent.

The robot backend runs inside the bridge node's process but never imports rclpy. The bridge
builds the ROS half (``nodes.robot_link``) on its own node and hands it to the backend as a
``VehicleTransport`` (``sim.backend.BackendOptions.transport``); the backend asks it for one
link per agent and speaks to the safety gate, the vehicle's odometry, the collision signals
and the camera drivers only through these methods. Tests drive the backend with a link of
plain Python (``tests/unit/robot``); the end-to-end tests with the real ROS half.

Every time here is the link's own clock (``now``, seconds, monotonic): the robot's world
runs on wall time, and a scripted link runs on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from aerialdojo.geometry import Pose
from aerialdojo.robot.safety import FaultClass, GateState


@dataclass(frozen=True, kw_only=True)
class SafetyState:
    """The safety gate's latest ``SafetyStatus``.

    Attributes:
        state: the gate's state.
        fault_class: what its fault means (``NONE`` unless ``state`` is ``FAULT``).
        fault: the machine-readable reason, e.g. ``"deadman_lost"``.
        detail: the human-readable one, naming the value and the limit.
        received_s: when it arrived, on the link's clock.
    """

    state: GateState
    fault_class: FaultClass = FaultClass.NONE
    fault: str = ""
    detail: str = ""
    received_s: float = 0.0

    @property
    def description(self) -> str:
        """The fault as a report names it, e.g. ``deadman_lost: no heartbeat for 1.2 s``."""
        return ": ".join(filter(None, (self.fault, self.detail))) or self.state.name.lower()


@dataclass(frozen=True, kw_only=True)
class VehicleState:
    """The vehicle's latest odometry, in the site frame (ENU, REP-103/105 ``map``).

    Attributes:
        pose: position and yaw.
        speed_m_s: the norm of the linear velocity.
        received_s: when it arrived, on the link's clock.
    """

    pose: Pose
    speed_m_s: float
    received_s: float


@dataclass(frozen=True, kw_only=True)
class CameraTopics:
    """The driver topics of one camera view the bridge relays to the agent.

    Attributes:
        view: the agent's view name (``camera/<view>/...``).
        image: the driver's colour image (rgb8 or bgr8).
        depth: the driver's depth image aligned to the colour image (32FC1 metres or
            16UC1 millimetres, REP-118).
        camera_info: the colour camera's calibration.
    """

    view: str
    image: str
    depth: str
    camera_info: str


@dataclass(frozen=True, kw_only=True)
class LinkSettings:
    """Where one agent's vehicle is reached. Names without a leading ``/`` are relative to
    the agent's namespace (``safety/goal`` of the uav is ``/uav/safety/goal``).

    Attributes:
        goal_service: the gate's ``VehicleGoal`` service.
        hold_service: the gate's hold (``std_srvs/Trigger``).
        status_topic: the gate's ``SafetyStatus``.
        odometry_topic: the vehicle's ``nav_msgs/Odometry`` in the site frame.
        cameras: the driver topics relayed to the agent, one entry per view.
        contact_topic: a ``std_msgs/Bool`` contact sensor (true: touching); "" none.
        proximity_view: the view whose depth a proximity threshold watches; "" none.
        proximity_m: a valid depth closer than this counts as a collision; 0: off.
        mark_topic: the operator's collision mark (``std_msgs/Empty``).
        service_timeout_s: longest wait for the gate to answer a call.
    """

    goal_service: str = "safety/goal"
    hold_service: str = "safety/hold"
    status_topic: str = "safety/status"
    odometry_topic: str = "vehicle/odom"
    cameras: tuple[CameraTopics, ...] = ()
    contact_topic: str = ""
    proximity_view: str = ""
    proximity_m: float = 0.0
    mark_topic: str = "operator/collision"
    service_timeout_s: float = 2.0


class VehicleLink(Protocol):
    """One agent's vehicle as the robot backend reaches it. Thread-safe: the ROS half fills
    it from executor threads while the backend waits in a service callback."""

    def now(self) -> float:
        """The link's clock, seconds (monotonic)."""
        ...

    def stamp_s(self) -> float:
        """The time an observation set taken now is stamped with, seconds (the ROS clock:
        wall time on a robot)."""
        ...

    def wait(self, timeout_s: float) -> None:
        """Return when a new odometry, status, contact or frame arrives, or after
        ``timeout_s``."""
        ...

    def vehicle(self) -> VehicleState | None:
        """The latest odometry; None before the first."""
        ...

    def safety(self) -> SafetyState | None:
        """The gate's latest status; None before the first."""
        ...

    def send_goal(self, target: Pose, max_speed_m_s: float) -> str:
        """Ask the gate to go to ``target`` (site frame); "" when it accepted (and now
        streams it), else why it refused or did not answer (nothing was sent)."""
        ...

    def hold(self) -> str:
        """Ask the gate to hold at the current pose; "" when it did, else why not."""
        ...

    def collision(self) -> str:
        """What signalled a collision since the last ``clear_collisions`` ("" nothing): the
        contact topic, the depth proximity threshold, the operator's mark."""
        ...

    def clear_collisions(self) -> None:
        """Forget collision signals so far (a new motion or episode starts)."""
        ...

    def on_safety_change(self, listener: Callable[[SafetyState], None]) -> None:
        """Call ``listener`` with every change of the gate's status (from a ROS thread)."""
        ...

    def frames_missing(self, since_s: float) -> list[str]:
        """The driver topics with no message received after ``since_s`` (link clock): the
        observation set is complete when this is empty."""
        ...


@runtime_checkable
class VehicleTransport(Protocol):
    """What the bridge offers a backend that reaches vehicles through ROS."""

    def vehicle_link(self, agent: str, settings: LinkSettings) -> VehicleLink:
        """The link to ``agent``'s vehicle: subscriptions and clients made now.

        Raises:
            ConfigError: a topic or service name that is not a valid ROS name.
        """
        ...


def resolve(agent: str, name: str) -> str:
    """A topic or service name of ``settings`` as the bridge (namespace ``/``) uses it."""
    return name if name.startswith("/") else f"{agent}/{name}"
