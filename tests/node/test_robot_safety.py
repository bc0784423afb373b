"""The safety gate and the simulated robot as real processes over real DDS: the safety
behaviours of issue 27's "Must show", asserted on the robot's own wire.

- geofence, speed and step refusals happen before anything is sent;
- the e-stop holds, stops the keep-alive, and the PX4 model's failsafe (COM_OBL_RC_ACT)
  fires COM_OF_LOSS_T after the last keep-alive;
- dead-man loss, RC takeover (mode switch and sticks), low battery, stale odometry and a
  vehicle that stops following each latch their fault with its class.
"""

from __future__ import annotations

import math
import os
import time

import pytest
from aerialdojo_interfaces.msg import SafetyStatus
from geometry_msgs.msg import PoseStamped
from robot_graph import START, needs, px4_topic, robot_graph, robot_specs

from aerialdojo.nodes.vehicles.base import DRIVER_QOS
from aerialdojo.scheduling import BOOSTED_NICE

pytestmark = pytest.mark.ros

INTERVENTION = SafetyStatus.FAULT_INTERVENTION
INFRASTRUCTURE = SafetyStatus.FAULT_INFRASTRUCTURE
MAVROS_SETPOINTS = "/mavros/setpoint_position/local"
#: The gate without a dead-man and without mode watching: the refusals in isolation.
PLAIN_MAVROS = {"vehicle": "mavros", "require_deadman": False, "state_topic": ""}


def position(msg: PoseStamped) -> tuple[float, float, float]:
    p = msg.pose.position
    return (p.x, p.y, p.z)


def test_refusals_happen_before_anything_is_sent(tmp_path) -> None:
    with robot_graph(tmp_path, robot_specs("mavros", PLAIN_MAVROS)) as gate:
        setpoints = gate.collect(PoseStamped, MAVROS_SETPOINTS, 50)
        gate.wait_for(lambda: gate.state() == SafetyStatus.STATE_STANDBY, 30.0, "STANDBY")
        # Not engaged: refused, and the wire stays silent.
        answer = gate.goal((START[0], START[1] + 2.0, START[2]))
        assert not answer.accepted and "STANDBY" in answer.reason
        gate.spin_for(1.0)
        assert setpoints == []

        gate.engage()
        gate.spin_for(1.0)
        hold = position(setpoints[-1])
        assert math.dist(hold, START) < 0.2
        refusals = {
            "geofence": (START[0] + 9.0, START[1], START[2]),  # east of the fence at x = -6
            "floor": (START[0], START[1], 0.8),  # floor 0.5 m + margin 0.5
        }
        for limit, goal in refusals.items():
            answer = gate.goal(goal)
            assert not answer.accepted, limit
            assert "geofence" in answer.reason, answer.reason
        answer = gate.goal((START[0], START[1] + 2.0, START[2]), speed=5.0)
        assert not answer.accepted and "speed cap 1 m/s" in answer.reason
        answer = gate.goal((START[0], START[1] - 11.0, START[2]))
        assert not answer.accepted and "step-size cap 10 m" in answer.reason
        gate.spin_for(1.5)
        streamed_since = [position(msg) for msg in setpoints]
        assert streamed_since and all(math.dist(p, hold) < 1e-9 for p in streamed_since), (
            "a refused goal must not move the stream"
        )
        # The same wire shows an accepted goal at once: the assertion above could fail.
        setpoints.clear()
        assert gate.goal((START[0], START[1] + 2.0, START[2])).accepted
        gate.wait_for(
            lambda: any(math.dist(position(m), hold) > 0.5 for m in setpoints), 10.0, "a ramp"
        )
        assert gate.state() == SafetyStatus.STATE_MOVING or gate.state() == SafetyStatus.STATE_READY


def test_estop_holds_stops_the_keepalive_and_px4_failsafe_fires(tmp_path) -> None:
    needs("px4_msgs")
    from px4_msgs.msg import OffboardControlMode, TrajectorySetpoint, VehicleStatus

    loss_s = 1.0
    specs = robot_specs(
        "px4",
        {"vehicle": "px4", "require_deadman": False},
        {"autopilot_parameters": ["COM_OBL_RC_ACT=5", f"COM_OF_LOSS_T={loss_s}"]},
    )
    with robot_graph(tmp_path, specs) as gate:
        keepalive = gate.collect(OffboardControlMode, "/fmu/in/offboard_control_mode", 100)
        setpoints = gate.collect(TrajectorySetpoint, "/fmu/in/trajectory_setpoint", 100)
        status = gate.collect(
            VehicleStatus, px4_topic("out", "vehicle_status", VehicleStatus), DRIVER_QOS
        )
        gate.engage()
        offboard = VehicleStatus.NAVIGATION_STATE_OFFBOARD
        gate.wait_for(
            lambda: bool(status) and status[-1].nav_state == offboard,
            20.0, "OFFBOARD after the consent",
        )  # fmt: skip
        # The gate learns the mode from its adapter's report, a hop after this client saw
        # it, and refuses goals until then ("not under the gate's control yet").
        gate.wait_for(
            lambda: gate.goal((START[0], START[1] + 4.0, START[2])).accepted,
            10.0, "the goal accepted once the gate sees OFFBOARD",
        )  # fmt: skip
        gate.spin_for(1.5)  # mid-move

        requested_us = time.time_ns() // 1000  # the adapter stamps in system time, µs
        answer = gate.trigger("estop")
        assert answer.success
        gate.wait_for(lambda: gate.fault() == ("estop", INTERVENTION), 5.0, "the e-stop fault")
        gate.wait_for(
            lambda: status[-1].nav_state == VehicleStatus.NAVIGATION_STATE_AUTO_LOITER,
            loss_s + 5.0, "PX4's Hold (COM_OBL_RC_ACT=5) after COM_OF_LOSS_T",
        )  # fmt: skip
        assert status[-1].failsafe
        # Judged by the sender's stamps, a second after the stop: the order this client
        # happens to take messages of different topics in is not the order they were sent
        # (a loaded client takes the fault status before the hold sent ahead of it).
        hold = max(setpoints, key=lambda m: m.timestamp)
        assert hold.timestamp >= requested_us, "no setpoint (no hold) after the e-stop request"
        assert list(hold.velocity) == [0.0, 0.0, 0.0], "the last setpoint is a hold at rest"
        last_keepalive_us = max(msg.timestamp for msg in keepalive)
        assert last_keepalive_us < hold.timestamp, "the keep-alive stopped at the e-stop"
        first_hold = next(
            m for m in status if m.nav_state == VehicleStatus.NAVIGATION_STATE_AUTO_LOITER
        )
        # The failsafe fired on the keep-alive's absence: not before COM_OF_LOSS_T after
        # its last stamp, and within the model's status period and load after it.
        waited_s = (first_hold.timestamp - last_keepalive_us) / 1e6
        assert loss_s <= waited_s < loss_s + 2.0, waited_s
        assert not gate.goal((START[0], START[1] + 1.0, START[2])).accepted


def test_the_gate_runs_its_emergency_thread_realtime_and_its_other_threads_boosted(
    tmp_path,
) -> None:
    gate_values = {**PLAIN_MAVROS, "realtime_priority": 7}
    with robot_graph(tmp_path, robot_specs("mavros", gate_values)) as gate:
        setpoints = gate.collect(PoseStamped, MAVROS_SETPOINTS, 50)
        gate.engage()
        # The keep-alive comes from the realtime thread's timer: the thread has set itself up.
        gate.wait_for(lambda: bool(setpoints), 10.0, "the keep-alive")
        process = gate.processes["safety_gate"]
        refused = [line for line in process.log_path.read_text().splitlines() if "refused" in line]
        if refused:
            pytest.skip(f"this machine refuses the gate real-time scheduling: {refused[0]}")
        pid = process.process.pid
        tasks = [int(task) for task in os.listdir(f"/proc/{pid}/task")]
        threads = {
            task: (os.sched_getscheduler(task), os.sched_getparam(task).sched_priority)
            for task in tasks
        }
        realtime = [task for task, (policy, _) in threads.items() if policy == os.SCHED_FIFO]
        assert len(realtime) == 1, threads
        assert threads[realtime[0]][1] == 7
        others = set(threads) - set(realtime)
        assert others and {os.getpriority(os.PRIO_PROCESS, task) for task in others} == {
            BOOSTED_NICE
        }
        # That thread still stops the robot.
        assert gate.trigger("estop").success
        gate.wait_for(lambda: gate.fault() == ("estop", INTERVENTION), 5.0, "the e-stop fault")


def _mavros_gate(**gate: object) -> dict[str, object]:
    return {"vehicle": "mavros", "require_deadman": True, **gate}


def test_deadman_loss_is_an_intervention(tmp_path) -> None:
    needs("mavros_msgs")
    with robot_graph(tmp_path, robot_specs("mavros", _mavros_gate())) as gate:
        setpoints = gate.collect(PoseStamped, MAVROS_SETPOINTS, 50)
        answer = gate.trigger("engage")
        assert not answer.success and "deadman_lost" in answer.message
        gate.start_heartbeat()
        gate.engage()
        gate.spin_for(1.0)
        gate.stop_heartbeat()
        gate.wait_for(lambda: gate.fault() is not None, 10.0, "a fault")
        assert gate.fault() == ("deadman_lost", INTERVENTION)
        assert "operator heartbeat silent" in gate.status[-1].detail
        gate.spin_for(0.5)  # the hold and the status travel on two topics, in any order
        count = len(setpoints)
        gate.spin_for(1.0)
        assert len(setpoints) == count, "no setpoint after the fault's hold"


@pytest.mark.parametrize(
    ("contract", "fault", "expected", "fault_class"),
    [
        ("mavros", "rc_takeover", "rc_takeover", INTERVENTION),
        ("mavros", "odometry_dropout", "odometry_stale", INFRASTRUCTURE),
        ("mavros", "estimator_invalid", "estimator_invalid", INFRASTRUCTURE),
        ("mavros", "fence_breach", "fence_breach", INTERVENTION),
        ("px4", "low_battery", "battery_low", INTERVENTION),
        ("px4", "rc_sticks", "rc_takeover", INTERVENTION),
        ("px4", "rc_takeover", "rc_takeover", INTERVENTION),
        ("px4", "motor_failure", "vehicle_not_following", INFRASTRUCTURE),
    ],
)
def test_each_injected_fault_ends_in_its_fault_class(
    tmp_path, contract: str, fault: str, expected: str, fault_class: int
) -> None:
    needs("px4_msgs" if contract == "px4" else "mavros_msgs")
    gate_values = _mavros_gate() if contract == "mavros" else {"vehicle": "px4"}
    gate_values["require_deadman"] = True
    # The heartbeat is required, as on a robot, but this test is about the other faults: a
    # loaded machine once held this client's 10 Hz heartbeat back past 1 s, and the gate
    # rightly faulted on the dead-man before the injected fault (test_deadman_loss_is_an_
    # intervention holds the 1 s default).
    gate_values["deadman_timeout_s"] = 3.0
    if fault == "motor_failure":
        gate_values.update(tracking_timeout_s=1.0, tracking_error_m=0.5)
    with robot_graph(tmp_path, robot_specs(contract, gate_values)) as gate:
        gate.start_heartbeat()
        gate.engage()
        # Under the gate's control first (OFFBOARD), so a mode change is a takeover.
        gate.wait_for(lambda: gate.goal(START).accepted, 30.0, "goals accepted in OFFBOARD")
        if fault == "motor_failure":
            assert gate.goal((START[0], START[1] + 3.0, START[2])).accepted
        gate.inject(fault)
        gate.wait_for(lambda: gate.fault() is not None, 20.0, f"a fault after {fault}")
        assert gate.fault() == (expected, fault_class), gate.status[-1].detail
