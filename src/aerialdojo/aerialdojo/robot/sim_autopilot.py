"""The simulated drone: PX4's commander model (``px4_model``) flying the simulated body
(``sim_vehicle``), for both of ``sim_robot``'s drone contracts (MAVROS-shaped and px4_msgs).
ROS-free; the node only moves messages in and out.

What each mode does with the body: OFFBOARD follows the latest setpoint; Hold, Position,
Altitude and Stabilized hold where the vehicle is (the pilot's sticks are centred);
Land descends to the ground; Return flies back over the start; Termination, or disarming in
the air, drops the vehicle to the ground.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aerialdojo.robot.frames import Vec3
from aerialdojo.robot.px4_model import (
    NAV_AUTO_LAND,
    NAV_AUTO_RTL,
    NAV_OFFBOARD,
    NAV_POSCTL,
    NAV_TERMINATION,
    Px4Commander,
)
from aerialdojo.robot.sim_vehicle import SimBody, SimFault


def autopilot_time_us(now: float) -> int:
    """The autopilot clock of the model: the host's system time in microseconds. PX4's own
    clock is time since boot, and uXRCE-DDS's time sync shifts incoming stamps onto it, so
    this is the same comparison with the offset already applied."""
    return round(now * 1e6)


@dataclass
class SimAutopilot:
    """The commander model and the body, stepped together.

    Attributes:
        commander: PX4's commander model.
        body: the vehicle body.
        home: where the vehicle started (Return flies back over it).
    """

    commander: Px4Commander
    body: SimBody
    home: Vec3
    _setpoint: tuple[Vec3, float] | None = None
    _applied: tuple[int, bool] | None = None
    _faults_seen: set[SimFault] = field(default_factory=set)

    def on_setpoint(self, now: float, position: Vec3, yaw: float) -> None:
        """A position setpoint arrived from the companion (followed in OFFBOARD only:
        PX4 drops offboard setpoints in other modes)."""
        self._setpoint = (position, yaw)
        if self.commander.nav_state == NAV_OFFBOARD and self.commander.armed:
            self.body.command_position(now, position, yaw)

    def link_up(self) -> bool:
        """Whether the companion's messages reach the autopilot."""
        return SimFault.KEEPALIVE_LOSS not in self.body.faults

    def step(self, now: float) -> None:
        """Advance the commander and the body to ``now`` (seconds, system time)."""
        faults = self.body.faults
        if SimFault.RC_TAKEOVER in faults and SimFault.RC_TAKEOVER not in self._faults_seen:
            self.commander.switch_mode(NAV_POSCTL)
        if SimFault.RC_STICKS in faults:
            self.commander.sticks_moved()
        self._faults_seen = set(faults)
        # An odometry dropout is the link's (the autopilot still has its estimate); an
        # invalid estimator is the autopilot's own.
        self.commander.position_valid = SimFault.ESTIMATOR_INVALID not in faults
        self.commander.update(autopilot_time_us(now), self.body.battery)
        self._apply_mode(now)
        self.body.step(now)

    def _apply_mode(self, now: float) -> None:
        state = (self.commander.nav_state, self.commander.armed)
        if state == self._applied:
            return
        self._applied = state
        nav_state, armed = state
        x, y, z = self.body.position
        if not armed or nav_state == NAV_TERMINATION:
            self.body.position = (x, y, 0.0)
            self.body.hold()
        elif nav_state == NAV_OFFBOARD:
            if self._setpoint is not None:
                self.body.command_position(now, *self._setpoint)
            else:
                self.body.hold()
        elif nav_state == NAV_AUTO_LAND:
            self.body.land(now)
        elif nav_state == NAV_AUTO_RTL:
            self.body.command_position(now, (self.home[0], self.home[1], z), self.body.yaw)
        else:
            self.body.hold()
