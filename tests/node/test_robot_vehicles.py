"""Each vehicle adapter against the simulated robot over real DDS: the PX4 adapter on PX4's
versioned topics (setpoints only in OFFBOARD, offboard and arming after the consent), the
ground robot closed on its odometry, and the preflight reading MAVROS' parameters live."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from nav_msgs.msg import Odometry
from robot_graph import START, needs, px4_topic, robot_graph, robot_specs

from aerialdojo.nodes.vehicles.base import DRIVER_QOS

pytestmark = pytest.mark.ros


def test_px4_topics_carry_the_message_versions_of_the_release(tmp_path) -> None:
    needs("px4_msgs")
    from px4_msgs.msg import VehicleStatus

    # Literal names, not our own derivation: release/1.18 publishes vehicle_status_v4,
    # battery_status_v1 and vehicle_command_ack_v1; release/1.16 vehicle_status_v1.
    expected = {
        4: {"/fmu/out/vehicle_status_v4", "/fmu/out/battery_status_v1",
            "/fmu/out/vehicle_command_ack_v1"},
        1: {"/fmu/out/vehicle_status_v1", "/fmu/out/battery_status",
            "/fmu/out/vehicle_command_ack"},
    }[VehicleStatus.MESSAGE_VERSION]  # fmt: skip
    expected |= {"/fmu/in/offboard_control_mode", "/fmu/in/trajectory_setpoint",
                 "/fmu/in/vehicle_command", "/fmu/out/vehicle_odometry"}  # fmt: skip
    specs = robot_specs("px4", {"vehicle": "px4", "require_deadman": False})
    with robot_graph(tmp_path, specs) as gate:

        def endpoints(name: str) -> int:
            node = gate.node
            return len(node.get_publishers_info_by_topic(name)) + len(
                node.get_subscriptions_info_by_topic(name)
            )

        def met() -> bool:
            names = {name for name, _ in gate.node.get_topic_names_and_types()}
            # The gate and the robot meet on each: a publisher and a subscription.
            return expected <= names and all(endpoints(name) >= 2 for name in expected)

        gate.wait_for(met, 30.0, f"the gate and the robot on {sorted(expected)}")


def test_px4_gate_flies_after_consent_and_sends_setpoints_only_in_offboard(tmp_path) -> None:
    needs("px4_msgs")
    from px4_msgs.msg import VehicleCommand, VehicleCommandAck, VehicleStatus

    specs = robot_specs("px4", {"vehicle": "px4", "require_deadman": False})
    with robot_graph(tmp_path, specs) as gate:
        commands = gate.collect(VehicleCommand, "/fmu/in/vehicle_command", 10)
        acks = gate.collect(
            VehicleCommandAck, px4_topic("out", "vehicle_command_ack", VehicleCommandAck),
            DRIVER_QOS,
        )  # fmt: skip
        status = gate.collect(
            VehicleStatus, px4_topic("out", "vehicle_status", VehicleStatus), DRIVER_QOS
        )
        odometry = gate.collect(Odometry, "vehicle/odom", DRIVER_QOS)
        gate.wait_for(lambda: bool(odometry), 30.0, "vehicle/odom republished in ENU")
        assert math.dist(_xyz(odometry[-1]), START) < 0.2
        gate.spin_for(2.0)
        assert commands == [], "nothing asked of PX4 before the operator's consent"
        gate.engage()
        gate.wait_for(lambda: len(acks) >= 2, 20.0, "acks of the mode request and arming")
        assert [c.command for c in commands] == [
            VehicleCommand.VEHICLE_CMD_DO_SET_MODE,
            VehicleCommand.VEHICLE_CMD_COMPONENT_ARM_DISARM,
        ]
        assert commands[0].param1 == 1.0 and commands[0].param2 == 6.0  # custom, OFFBOARD
        assert all(a.result == VehicleCommandAck.VEHICLE_CMD_RESULT_ACCEPTED for a in acks)
        offboard = VehicleStatus.NAVIGATION_STATE_OFFBOARD
        gate.wait_for(lambda: status[-1].nav_state == offboard, 5.0, "OFFBOARD in the status")
        goal = (START[0] - 2.0, START[1] + 3.0, START[2] + 1.0)
        # The gate reads the same status on its own subscription: refused until it has.
        gate.wait_for(lambda: gate.goal(goal, yaw=math.pi / 2).accepted, 10.0, "the goal taken")
        gate.wait_for(lambda: math.dist(_xyz(odometry[-1]), goal) < 0.1, 20.0, "the goal")
        yaw = _yaw(odometry[-1])
        assert math.cos(yaw - math.pi / 2) > 0.999, "ENU yaw round trip through NED"
    log = (tmp_path / "logs" / "sim_robot.log").read_text()
    assert "outside OFFBOARD" not in log, "a TrajectorySetpoint went out before OFFBOARD"


def test_ground_robot_drives_to_the_goal_on_its_odometry(tmp_path) -> None:
    specs = robot_specs(
        "ugv",
        {
            "vehicle": "ugv",
            "require_deadman": False,
            "max_speed_m_s": 0.8,
            "odom_topic": "/odom",
            "cmd_vel_topic": "/cmd_vel",
            # On Python 3.10 the gate once in four runs heard no odometry for 1.5 s while the
            # base drove (stale-odometry fault; open in issue 27). This test is about driving.
            "odometry_timeout_s": 3.0,
        },  # the base's, not the agent's
        # The rehearsal site's band (floor 0.5 m + margin) is a drone's: the base rides high.
        {"start_position_m": [START[0], START[1], 1.2]},
    )
    with robot_graph(tmp_path, specs) as gate:
        odometry = gate.collect(Odometry, "/odom", DRIVER_QOS)
        gate.engage()
        goal = (START[0] + 3.0, START[1] + 1.0, 1.2)
        assert gate.goal(goal, yaw=math.pi / 2).accepted
        gate.wait_for(
            lambda: bool(odometry) and math.dist(_xyz(odometry[-1]), goal) < 0.1
            and math.cos(_yaw(odometry[-1]) - math.pi / 2) > 0.99,
            40.0, "the ground robot at the goal, facing north",
        )  # fmt: skip


def test_preflight_reads_mavros_parameters_live(tmp_path) -> None:
    robot = {"autopilot_parameters": ["COM_OBL_RC_ACT=5", "COM_RC_OVERRIDE=3",
                                       "COM_LOW_BAT_ACT=3", "GF_MAX_HOR_DIST=100",
                                       "GF_MAX_VER_DIST=20"]}  # fmt: skip
    command = [sys.executable, "-m", "aerialdojo.cli", "preflight", "--mavros", "/mavros",
               "--suite", "alley_rehearsal", "--timeout", "30"]  # fmt: skip
    with robot_graph(tmp_path, robot_specs("mavros", {"state_topic": ""}, robot)):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "battery 100%" in done.stdout and "6 of 6 checks passed" in done.stdout
    with robot_graph(tmp_path / "default", robot_specs("mavros", {"state_topic": ""})):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "COM_OBL_RC_ACT = 0 (Position)" in done.stdout  # PX4's default is refused


def _xyz(msg: Odometry) -> tuple[float, float, float]:
    p = msg.pose.pose.position
    return (p.x, p.y, p.z)


def _yaw(msg: Odometry) -> float:
    q = msg.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
