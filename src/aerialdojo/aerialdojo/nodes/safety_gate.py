"""The safety gate node: the only publisher of a robot's keep-alive and setpoints.

Between the robot backend and the vehicle (docs/robots.md, "Safety gate"), in the agent's
namespace. Serves ``safety/goal`` (VehicleGoal), ``safety/hold``, ``safety/estop``,
``safety/clear`` and ``safety/engage`` (std_srvs/Trigger); listens to ``safety/estop_lock``
(std_msgs/Bool, true = stop) and the operator's heartbeat ``safety/deadman``
(std_msgs/Empty); publishes ``safety/status`` (SafetyStatus, latched) on every change and at
``status_rate_hz``. The logic is ``aerialdojo.robot.safety.SafetyCore``; the vehicle's own
messages are its adapter's (``aerialdojo.robot.vehicles``).

Executors: the command timer, the e-stop service and the lock topic are this node's only
entities, spun by a single-threaded executor on a thread of their own, so an e-stop is
never interleaved with a keep-alive, no keep-alive follows it, and no flood of other
callbacks queues it. Odometry, the autopilot's state, the operator's heartbeat and the
goal and operator requests live on a second node, ``<name>_io``, on a single-threaded
executor beside it: its callbacks all take the core's lock anyway, and rclpy's
multi-threaded executor would run hot beside the e-stop's thread
(``aerialdojo.nodes.spinning.run_with_realtime_thread``). The e-stop's thread runs in the
real-time class at ``realtime_priority`` and the process's other threads at a boosted nice
value, where the system allows it: on a loaded machine it otherwise waits to be scheduled
and then for the GIL. One lock guards the core, held briefly: a goal's limits are checked
outside it. ``benchmarks/safety.py`` measures the stop latency under a flood of those
inputs.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable

from aerialdojo_interfaces.msg import SafetyStatus
from aerialdojo_interfaces.srv import VehicleGoal
from rclpy.node import Node
from std_msgs.msg import Bool, Empty
from std_srvs.srv import Trigger

from aerialdojo.geometry import yaw_from_quaternion
from aerialdojo.nodes.common import announce_node, declare_node_parameters, parameters_of
from aerialdojo.nodes.qos import SERVICE_QOS, latched_qos
from aerialdojo.nodes.spinning import RealtimeNodes, run_with_realtime_thread, steady_clock
from aerialdojo.nodes.vehicles.base import VehicleSink
from aerialdojo.robot.config import limits_from_parameters
from aerialdojo.robot.safety import (
    Fault,
    GateOutput,
    OdometrySample,
    SafetyCore,
    VehicleReport,
    check_goal,
)
from aerialdojo.robot.vehicles import adapter_class
from aerialdojo.tf_tree import MAP_FRAME

#: The gate's status: every change matters to the backend, and a console that opens late
#: must see the latched fault.
STATUS_QOS = latched_qos(depth=1)


class SafetyGate(Node):
    """Wires a ``SafetyCore`` and one vehicle adapter onto the contract's topics and
    services."""

    def __init__(self) -> None:
        super().__init__("safety_gate")
        declare_node_parameters(self, "safety_gate")
        announce_node(self)
        values = parameters_of(self, "safety_gate")
        limits = limits_from_parameters(values, "safety_gate")
        self._lock = threading.Lock()
        self._published_version = -1
        # The command timer and the emergency path live on this node, alone on an executor
        # and a thread of their own (``main``); everything else on the ``_io`` node beside it.
        self.io = Node(
            f"{self.get_name()}_io",
            namespace=self.get_namespace(),
            context=self.context,
            use_global_arguments=False,  # the launcher's __node:= names this node only
        )
        callbacks = self.io.default_callback_group
        sink = VehicleSink(
            odometry=self._locked(self._on_odometry),
            vehicle=self._locked(self._on_vehicle),
            refused=self._locked(self._on_refused),
            clock=time.monotonic,
        )
        self._status_pub = self.create_publisher(SafetyStatus, "safety/status", STATUS_QOS)
        self._adapter = adapter_class(str(values["vehicle"]))(self.io, values, sink, callbacks)
        self._core = SafetyCore(limits, reports_vehicle=self._adapter.reports_vehicle)
        self._limits = limits
        #: The SCHED_FIFO priority of the command timer's and the e-stop's thread (``main``).
        self.realtime_priority = int(values["realtime_priority"])
        self.io.create_service(VehicleGoal, "safety/goal", self._on_goal, qos_profile=SERVICE_QOS)
        for name, handler in (
            ("safety/hold", self._on_hold),
            ("safety/clear", self._on_clear),
            ("safety/engage", self._on_engage),
        ):
            self.io.create_service(Trigger, name, handler, qos_profile=SERVICE_QOS)
        self.io.create_subscription(Empty, "safety/deadman", self._on_deadman, 10)
        self.io.create_timer(
            1.0 / float(values["status_rate_hz"]), self._on_status_timer, clock=steady_clock()
        )
        self.create_service(Trigger, "safety/estop", self._on_estop, qos_profile=SERVICE_QOS)
        self.create_subscription(Bool, "safety/estop_lock", self._on_estop_lock, latched_qos(1))
        self.create_timer(1.0 / float(values["rate_hz"]), self._on_tick, clock=steady_clock())
        self._publish_status(force=True)
        self.get_logger().info(
            f"safety gate ready: vehicle {values['vehicle']}, speed cap "
            f"{limits.max_speed_m_s:g} m/s, step cap {limits.max_step_m:g} m, fence margin "
            f"{limits.geofence.margin:g} m; keep-alive at {values['rate_hz']:g} Hz once engaged"
        )

    def _locked(self, handler: Callable[..., None]) -> Callable[..., None]:
        def run(*args: object) -> None:
            with self._lock:
                handler(*args)
                self._publish_status()

        return run

    # -- inputs (under the lock) --------------------------------------------------------

    def _on_odometry(self, sample: OdometrySample) -> None:
        self._core.on_odometry(sample)

    def _on_vehicle(self, report: VehicleReport) -> None:
        self._core.on_vehicle(report)

    def _on_refused(self, reason: str) -> None:
        self._apply(self._core.latch(time.monotonic(), Fault("vehicle_refused", reason)))

    def _on_deadman(self, _msg: Empty) -> None:
        with self._lock:
            self._core.on_deadman(time.monotonic())

    # -- the command timer and the emergency path (realtime group) ---------------------

    def _on_tick(self) -> None:
        with self._lock:
            self._apply(self._core.step(time.monotonic()))
            self._publish_status()

    def _on_estop(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self._apply(self._core.estop(time.monotonic(), "e-stop requested (safety/estop)"))
            self._publish_status()
        response.success = True
        response.message = "e-stop latched: hold sent, keep-alive stopped"
        return response

    def _on_estop_lock(self, msg: Bool) -> None:
        with self._lock:
            self._apply(self._core.set_estop_lock(time.monotonic(), bool(msg.data)))
            self._publish_status()

    def _apply(self, output: GateOutput) -> None:
        if output.setpoint is not None:
            self._adapter.send(output)
        if output.hold and not output.keepalive and self._core.fault is not None:
            fault = self._core.fault
            self.get_logger().warning(
                f"fault {fault.name} ({fault.fault_class.name.lower()}): {fault.detail}; hold "
                "sent, keep-alive stopped"
            )

    # -- requests -------------------------------------------------------------------------

    def _on_goal(
        self, request: VehicleGoal.Request, response: VehicleGoal.Response
    ) -> VehicleGoal.Response:
        target = request.target
        reason = None
        if target.header.frame_id != MAP_FRAME:
            reason = (
                f"target frame {target.header.frame_id!r} is not {MAP_FRAME!r} (the site "
                "frame); the gate converts nothing by guess"
            )
        q = target.pose.orientation
        norm = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
        if reason is None and not 0.9 < norm < 1.1:
            reason = f"target orientation is not a unit quaternion (norm {norm:g})"
        speed = request.max_speed_m_s or self._limits.max_speed_m_s
        if reason is None:
            p = target.pose.position
            goal = (float(p.x), float(p.y), float(p.z))
            yaw = yaw_from_quaternion(q.x, q.y, q.z, q.w)
            # The limits are checked outside the lock: an e-stop never waits for them.
            with self._lock:
                start, reason = self._core.goal_start(time.monotonic())
            if start is not None:
                reason = check_goal(self._limits, start.position, goal, yaw, float(speed))
                if reason is None:
                    with self._lock:
                        reason = self._core.begin_goal(
                            time.monotonic(), start, goal, yaw, float(speed)
                        )
                        self._publish_status()
        response.accepted = reason is None
        response.reason = reason or ""
        if reason is not None:
            self.get_logger().info(f"goal refused: {reason}")
        return response

    def _trigger(
        self, action: Callable[[float], str | None], done: str, response: Trigger.Response
    ) -> Trigger.Response:
        with self._lock:
            reason = action(time.monotonic())
            self._publish_status()
        response.success = reason is None
        response.message = done if reason is None else reason
        return response

    def _on_hold(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        return self._trigger(self._core.hold, "holding; keep-alive continues", response)

    def _on_clear(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        return self._trigger(self._core.clear, "cleared: STANDBY, engage again", response)

    def _on_engage(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        def engage(now: float) -> str | None:
            reason = self._core.engage(now)
            if reason is None:
                self._adapter.engage()
            return reason

        return self._trigger(engage, "engaged: keep-alive streaming, holding", response)

    # -- status ---------------------------------------------------------------------------

    def _on_status_timer(self) -> None:
        with self._lock:
            self._publish_status(force=True)

    def _publish_status(self, force: bool = False) -> None:
        """Publish the status if it changed (or ``force``); the caller holds the lock."""
        core = getattr(self, "_core", None)
        if core is None or (not force and core.version == self._published_version):
            return
        self._published_version = core.version
        fault = core.fault
        self._status_pub.publish(
            SafetyStatus(
                stamp=self.get_clock().now().to_msg(),
                state=int(core.state),
                fault_class=int(fault.fault_class) if fault else SafetyStatus.FAULT_NONE,
                fault=fault.name if fault else "",
                detail=fault.detail if fault else "",
            )
        )

    def destroy_node(self) -> None:
        if hasattr(self, "_adapter"):
            self._adapter.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    # A thread holding the GIL hands it over after the switch interval: 1 ms instead of
    # Python's 5 bounds how long a busy callback can delay the e-stop's thread.
    sys.setswitchinterval(0.001)

    def make_nodes() -> RealtimeNodes:
        gate = SafetyGate()
        return RealtimeNodes(gate, [gate.io], fifo_priority=gate.realtime_priority)

    run_with_realtime_thread(make_nodes, args=args)


if __name__ == "__main__":
    main()
