"""``RobotBackend``: the episode on a real (or simulated) robot, behind the simulator interface.

The task manager, the referees, the agents and the scoring do not know they drive a robot.
For every accepted action the backend:

1. plans the poses the action leads through in the episode frame (``robot.motions``), from
   the episode's *nominal* pose (the task's start, then each action's target), so that the
   arrival tolerance of one step does not carry into the next; a plan that would leave the
   site's geofence stops at it, as an embedded scene's motion stops at its world's edge;
2. sends each pose to the agent's safety gate (``safety/goal``), which refuses before
   sending or streams it to the autopilot;
3. completes the step on arrival (position, speed and heading within tolerances) inside a
   time allowance from the distance and the speed cap, and once a complete set of fresh
   frames has arrived from the camera drivers (the bridge relays it to the agent).

How an attempt can end here, and whose it is:

- a collision signal (a contact topic, a depth proximity threshold, the operator's mark):
  the robot holds and the step reports a collision: the agent's, scored by its rules;
- a missed arrival, stale odometry, a gate that refuses a goal inside the fence or stops
  answering, frames that never come: the robot holds first, then ``SimulatorFaultError``:
  an infrastructure failure, never scored, rerun;
- a fault of the gate of class INTERVENTION (e-stop, dead-man, pilot takeover, low
  battery, fence breach): ``SafetyInterventionError``, an operator/safety intervention,
  counted and reported, never scored, rerun; of class INFRASTRUCTURE: an infrastructure
  failure. The gate has already held the vehicle and stopped its keep-alive. A fault while
  the agent thinks is reported through ``BackendOptions.report_fault`` and ends the attempt
  at once.

The backend never imports rclpy: it reaches each vehicle through a ``robot.link.VehicleLink``
the bridge builds (``nodes.robot_link``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from aerialdojo.actions import Action
from aerialdojo.errors import (
    ConfigError,
    SafetyInterventionError,
    SimulatorFaultError,
    UnknownSceneError,
)
from aerialdojo.geometry import Pose
from aerialdojo.robot.link import (
    SafetyState,
    VehicleLink,
    VehicleState,
    VehicleTransport,
)
from aerialdojo.robot.motions import MotionWorld, path_length, plan_motion, turn_angle
from aerialdojo.robot.safety import FaultClass, GateState
from aerialdojo.robot.settings import ROBOT_VIEWS, RobotSettings
from aerialdojo.sim.backend import (
    BackendFault,
    BackendOptions,
    CameraSpec,
    MotionOutcome,
    Observation,
    SimulatorBackend,
)

#: Longest wait between two looks at the vehicle while a motion runs (the link wakes the
#: backend earlier on every message).
POLL_S = 0.05
#: The gate publishes its status at >= 2 Hz; silence for this long means it is gone.
GATE_SILENCE_S = 1.5
#: Longest wait for a held vehicle to come to rest after a collision signal.
SETTLE_AFTER_HOLD_S = 3.0


class RobotBackend(SimulatorBackend):
    """Flies (or drives) a suite's episodes on robots, one safety gate per agent.

    Args:
        rigs: camera rig per agent (``camera_rigs``).
        links: each agent's vehicle link.
        settings: tolerances, allowance, topics, the site's geofence and scenes.
        report_fault: where faults found between steps go.

    Raises:
        ConfigError: an agent without a link, or an empty rig.
    """

    @classmethod
    def camera_rigs(
        cls, agents: Sequence[str], width: int, height: int, fov_deg: float
    ) -> dict[str, list[CameraSpec]]:
        """One forward RGB-D camera per robot (``settings.ROBOT_VIEWS``): its images and
        calibration are the driver's own, relayed; the spec only names the view."""
        return {
            agent: [CameraSpec(name=view, width=width, height=height, fov_deg=fov_deg)]
            for agent in agents
            for view in ROBOT_VIEWS
        }

    @classmethod
    def from_options(cls, options: BackendOptions) -> RobotBackend:
        """The backend of the bridge's options: the suite's site, and a link per agent from
        the bridge's transport.

        Raises:
            ConfigError: bad ``robot_*`` settings, a suite not built from a surveyed site
                (it carries no geofence), or no ROS transport (not inside the bridge).
        """
        settings = RobotSettings.from_parameters(options.parameters)
        transport = options.transport
        if not isinstance(transport, VehicleTransport):
            raise ConfigError(
                "the robot backend reaches its vehicles through the bridge's ROS transport; "
                "run it in the sim_bridge node"
            )
        links = {agent: transport.vehicle_link(agent, settings.link) for agent in options.agents}
        return cls(
            rigs=options.rigs(cls),
            links=links,
            settings=settings,
            report_fault=options.report_fault,
        )

    def __init__(
        self,
        *,
        rigs: Mapping[str, Sequence[CameraSpec]],
        links: Mapping[str, VehicleLink],
        settings: RobotSettings,
        report_fault: Callable[[BackendFault], None] | None = None,
    ) -> None:
        # An action takes the robot's time, not a fixed simulated one.
        super().__init__(rigs=rigs, seconds_per_action=1.0)
        unlinked = sorted(set(rigs) - set(links))
        if unlinked:
            raise ConfigError(f"agents {unlinked} have no vehicle link")
        self._links = dict(links)
        self._settings = settings
        self._fence = settings.fence
        self._scenes = list(settings.scenes)
        self._report_fault = report_fault
        self._nominal: dict[str, Pose] = {}
        self._world: MotionWorld | None = None
        self._faulted: set[str] = set()
        for agent, link in self._links.items():
            link.on_safety_change(partial(self._on_safety_change, agent))

    # -- the SimulatorBackend interface -----------------------------------------------------

    def scenes(self) -> list[str]:
        return list(self._scenes)

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Start an episode where the operator placed each robot: its gate must be engaged
        and holding, its odometry fresh, its cameras streaming. The robot is not moved; the
        task manager compares the measured pose (``observe``) with the task's start.

        Raises:
            UnknownSceneError: a scene the suite's site is not.
            ConfigError: an agent without a camera rig.
            SafetyInterventionError, SimulatorFaultError: a gate in fault or not engaged,
                no fresh odometry or frames.
        """
        if scene not in self._scenes:
            raise UnknownSceneError(
                f"scene {scene!r} is not the robot's site; the suite's scenes: "
                f"{', '.join(self._scenes)}"
            )
        self._check_rigged(poses)
        self._nominal = {}
        for agent in poses:
            link = self._link(agent)
            self._check_gate(link)
            self._fresh_vehicle(link)
            link.clear_collisions()
        self._world = MotionWorld(scene)
        self._nominal = dict(poses)
        self._faulted -= set(poses)
        for agent in poses:
            self._await_frames(self._link(agent), self._link(agent).now())

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Do one accepted action on ``agent``'s robot.

        Raises:
            InvalidActionError: an action a robot cannot do, or an argument naming nothing.
            SafetyInterventionError: the gate stopped the robot for an intervention.
            SimulatorFaultError: a missed arrival, a refused goal, stale odometry, a gate
                that stopped the robot for a failure or stopped answering, frames that never
                came; the robot holds.
        """
        link = self._link(agent)
        start = self._nominal.get(agent)
        if start is None or self._world is None:
            raise SimulatorFaultError(f"agent {agent!r} has not been placed by a reset")
        self._check_gate(link)
        collision = link.collision()
        if collision:  # the operator marked one while the agent thought
            return self._collided(agent, collision)
        plan = plan_motion(
            start,
            action,
            argument,
            self._world,
            fence=self._fence,
            max_leg_m=self._settings.max_leg_m,
        )
        if plan.target is None:
            return self._outcome_in_place(agent, start)
        distance, turn = path_length(start, plan.waypoints), turn_angle(start, plan.waypoints)
        allowance_s = self._settings.allowance.seconds(distance, turn)
        deadline = link.now() + allowance_s
        vehicle = self._fresh_vehicle(link)
        for index, waypoint in enumerate(plan.waypoints):
            final = index == len(plan.waypoints) - 1
            refused = link.send_goal(waypoint, self._settings.allowance.speed_m_s)
            if refused:
                self._check_gate(link)  # a gate in fault refuses everything: that is why
                raise SimulatorFaultError(
                    f"the safety gate refused the goal {_pose_text(waypoint)}: {refused}"
                    f"{_held(link)}"
                )
            while True:
                self._check_gate(link)
                collision = link.collision()
                if collision:
                    return self._collided(agent, collision)
                vehicle = self._fresh_vehicle(link)
                if final:
                    missed = self._settings.tolerance.misses(vehicle, waypoint)
                    if not missed:
                        break
                elif self._settings.tolerance.passed(vehicle, waypoint):
                    break
                else:
                    missed = [f"waypoint {index + 1} of {len(plan.waypoints)} not passed"]
                if link.now() > deadline:
                    raise SimulatorFaultError(
                        f"arrival missed: after {allowance_s:.1f} s, the allowance for "
                        f"{distance:.2f} m and {math.degrees(turn):.0f} deg, the robot at "
                        f"{_pose_text(vehicle.pose)} is {'; '.join(missed)} "
                        f"(target {_pose_text(plan.target)}){_held(link)}"
                    )
                link.wait(POLL_S)
        self._nominal[agent] = plan.target
        self._await_frames(link, link.now())
        # Where the robot is as the frames the agent gets were taken, not at the arrival.
        vehicle = self._fresh_vehicle(link)
        return MotionOutcome(pose=self._scored_pose(vehicle, plan.target), geofenced=plan.geofenced)

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation:
        """Where ``agent``'s robot is now (its odometry in the site frame), stamped with the
        ROS clock; its frames are the drivers', which the bridge relays."""
        link = self._link(agent)
        vehicle = self._fresh_vehicle(link)
        nominal = self._nominal.get(agent, vehicle.pose)
        return Observation(sim_time_s=link.stamp_s(), pose=self._scored_pose(vehicle, nominal))

    # -- helpers ------------------------------------------------------------------------------

    def _link(self, agent: str) -> VehicleLink:
        try:
            return self._links[agent]
        except KeyError:
            raise ConfigError(
                f"agent {agent!r} has no vehicle link; linked: {sorted(self._links)}"
            ) from None

    def _check_gate(self, link: VehicleLink) -> None:
        """Raise unless the gate is engaged, answering and not in fault."""
        safety = link.safety()
        if safety is None:
            raise SimulatorFaultError("no status from the safety gate: is it running?")
        silent_s = link.now() - safety.received_s
        if silent_s > GATE_SILENCE_S:
            raise SimulatorFaultError(
                f"no status from the safety gate for {silent_s:.1f} s (it publishes at >= 2 Hz)"
            )
        if safety.state is GateState.FAULT:
            raise _fault_error(safety)
        if safety.state is GateState.STANDBY:
            raise SimulatorFaultError(
                "the safety gate is not engaged: the operator engages it (consent to arm and "
                "enter offboard) at the console before the episode starts"
            )

    def _fresh_vehicle(self, link: VehicleLink) -> VehicleState:
        """The vehicle's odometry, or hold and raise when it is missing or stale."""
        vehicle = link.vehicle()
        timeout_s = self._settings.odometry_timeout_s
        if vehicle is None:
            raise SimulatorFaultError(
                f"no odometry on {self._settings.link.odometry_topic}: the robot's position "
                "is unknown"
            )
        age_s = link.now() - vehicle.received_s
        if age_s > timeout_s:
            raise SimulatorFaultError(
                f"stale odometry: none for {age_s:.2f} s (limit {timeout_s:g} s){_held(link)}"
            )
        return vehicle

    def _await_frames(self, link: VehicleLink, since_s: float) -> None:
        """Wait until every camera topic has a frame received after ``since_s``."""
        deadline = since_s + self._settings.frame_timeout_s
        while missing := link.frames_missing(since_s):
            if link.now() > deadline:
                raise SimulatorFaultError(
                    f"no fresh frames within {self._settings.frame_timeout_s:g} s on "
                    f"{', '.join(missing)}"
                )
            link.wait(POLL_S)

    def _outcome_in_place(self, agent: str, nominal: Pose) -> MotionOutcome:
        """An action that moves nothing: fresh frames of where the robot is."""
        link = self._link(agent)
        self._await_frames(link, link.now())
        return MotionOutcome(pose=self._scored_pose(self._fresh_vehicle(link), nominal))

    def _collided(self, agent: str, signal: str) -> MotionOutcome:
        """Hold, let the vehicle come to rest, and report the collision where it stopped."""
        link = self._link(agent)
        refused = link.hold()
        if refused:
            raise SimulatorFaultError(
                f"a collision ({signal}) and the gate refused to hold: {refused}"
            )
        deadline = link.now() + SETTLE_AFTER_HOLD_S
        vehicle = self._fresh_vehicle(link)
        while vehicle.speed_m_s >= self._settings.tolerance.speed_m_s and link.now() < deadline:
            link.wait(POLL_S)
            vehicle = self._fresh_vehicle(link)
        self._nominal[agent] = vehicle.pose
        return MotionOutcome(
            pose=self._scored_pose(vehicle, vehicle.pose), collided=True, collision_object=signal
        )

    def _scored_pose(self, vehicle: VehicleState, nominal: Pose) -> Pose:
        """The measured pose the episode is scored with; a ground robot's height is the
        episode's (its camera height in the benchmark), not its odometry's."""
        pose = vehicle.pose
        if self._settings.tolerance.planar:
            return Pose(pose.x, pose.y, nominal.z, pose.yaw)
        return pose

    def _on_safety_change(self, agent: str, safety: SafetyState) -> None:
        """Report a gate entering fault while an episode runs, once per fault."""
        if safety.state is not GateState.FAULT:
            self._faulted.discard(agent)
            return
        if agent in self._faulted or agent not in self._nominal:
            return
        self._faulted.add(agent)
        if self._report_fault is not None:
            error = _fault_error(safety)
            self._report_fault(
                BackendFault(
                    agent=agent,
                    reason=str(error),
                    intervention=isinstance(error, SafetyInterventionError),
                )
            )


def _fault_error(safety: SafetyState) -> SimulatorFaultError | SafetyInterventionError:
    """What a gate fault means for the attempt, by the class the gate gave it."""
    if safety.fault_class is FaultClass.INTERVENTION:
        return SafetyInterventionError(f"operator/safety intervention: {safety.description}")
    return SimulatorFaultError(f"the safety gate stopped the robot: {safety.description}")


def _held(link: VehicleLink) -> str:
    """Hold the vehicle; what a failure message adds about it ("" when the gate held)."""
    refused = link.hold()
    return f"; the gate did not hold: {refused}" if refused else "; holding"


def _pose_text(pose: Pose) -> str:
    return f"({pose.x:.2f}, {pose.y:.2f}, {pose.z:.2f}, yaw {math.degrees(pose.yaw):.0f} deg)"
