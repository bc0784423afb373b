"""A model of PX4's commander for the simulated robot: what the real autopilot does with a
keep-alive, mode and arming requests, its offboard-loss failsafe and a pilot taking over.

The rule for fakes: every behaviour here names the PX4-Autopilot source it follows (read
file by file, at the versions the search index holds), and the model refuses what PX4
refuses. Times are the autopilot's clock in microseconds, like ``hrt_absolute_time()``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from aerialdojo.errors import ConfigError

#: ``vehicle_status`` navigation states used here (px4_msgs ``msg/VehicleStatus.msg``, the
#: same numbers in release/1.16 and 1.18).
NAV_MANUAL = 0
NAV_ALTCTL = 1
NAV_POSCTL = 2
NAV_AUTO_LOITER = 4
NAV_AUTO_RTL = 5
NAV_TERMINATION = 13
NAV_OFFBOARD = 14
NAV_STAB = 15
NAV_AUTO_LAND = 18
#: MAVROS' names of those modes (mavros_msgs ``msg/State.msg`` ``MODE_PX4_*``).
MODE_NAMES = {
    NAV_MANUAL: "MANUAL",
    NAV_ALTCTL: "ALTCTL",
    NAV_POSCTL: "POSCTL",
    NAV_AUTO_LOITER: "AUTO.LOITER",
    NAV_AUTO_RTL: "AUTO.RTL",
    NAV_TERMINATION: "TERMINATION",
    NAV_OFFBOARD: "OFFBOARD",
    NAV_STAB: "STABILIZED",
    NAV_AUTO_LAND: "AUTO.LAND",
}

#: MAVLink MAV_STATE values of the HEARTBEAT's system_status.
MAV_STATE_STANDBY = 3
MAV_STATE_ACTIVE = 4
MAV_STATE_CRITICAL = 5
MAV_STATE_EMERGENCY = 6
MAV_STATE_FLIGHT_TERMINATION = 7

ARMING_STATE_DISARMED = 1
ARMING_STATE_ARMED = 2

#: ``vehicle_command`` numbers and results (px4_msgs ``msg/VehicleCommand.msg``,
#: ``msg/VehicleCommandAck.msg``; MAVLink's MAV_CMD and MAV_RESULT).
VEHICLE_CMD_DO_SET_MODE = 176
VEHICLE_CMD_COMPONENT_ARM_DISARM = 400
RESULT_ACCEPTED = 0
RESULT_TEMPORARILY_REJECTED = 1
RESULT_DENIED = 2
RESULT_UNSUPPORTED = 3
#: MAVLink base-mode flag and PX4 custom main mode (``src/modules/commander/px4_custom_mode.h``).
MODE_FLAG_CUSTOM_MODE_ENABLED = 1
PX4_CUSTOM_MAIN_MODE_POSCTL = 3
PX4_CUSTOM_MAIN_MODE_OFFBOARD = 6

#: The parameters the model reads, with PX4's defaults: ``src/modules/commander/
#: commander_params.yaml`` (COM_*), ``src/lib/battery/battery_params_common.c`` (BAT_*),
#: ``src/modules/navigator/geofence_params`` (GF_*; 0 m disables a limit), MAV_SYS_ID 1.
PX4_DEFAULT_PARAMETERS: dict[str, float] = {
    "COM_OF_LOSS_T": 1.0,
    "COM_OBL_RC_ACT": 0.0,
    "COM_RC_OVERRIDE": 1.0,
    "COM_LOW_BAT_ACT": 0.0,
    "COM_FAIL_ACT_T": 5.0,
    "BAT_LOW_THR": 0.15,
    "BAT_CRIT_THR": 0.07,
    "BAT_EMERGEN_THR": 0.05,
    "GF_ACTION": 2.0,
    "GF_MAX_HOR_DIST": 0.0,
    "GF_MAX_VER_DIST": 0.0,
    "MAV_SYS_ID": 1.0,
}
#: Which parameters are integers on the autopilot (the rest are floats).
INTEGER_PARAMETERS = frozenset(
    {"COM_OBL_RC_ACT", "COM_RC_OVERRIDE", "COM_LOW_BAT_ACT", "GF_ACTION", "MAV_SYS_ID"}
)

#: COM_OBL_RC_ACT -> the mode PX4 falls back to on offboard loss (``failsafe/failsafe.cpp``
#: ``fromOffboardLossActParam``: 0 Position, 1 Altitude, 2 Stabilized, 3 Return, 4 Land,
#: 5 Hold, 6 Terminate, 7 Disarm; unknown values fall to Position like its ``default:``).
OFFBOARD_LOSS_MODES = {
    0: NAV_POSCTL,
    1: NAV_ALTCTL,
    2: NAV_STAB,
    3: NAV_AUTO_RTL,
    4: NAV_AUTO_LAND,
    5: NAV_AUTO_LOITER,
    6: NAV_TERMINATION,
}
OFFBOARD_LOSS_DISARM = 7
#: COM_LOW_BAT_ACT -> the mode at critical and at emergency battery
#: (``failsafe.cpp`` ``fromBatteryWarningActParam``: 2 Land, 3 Return then Land; 0 warns).
LOW_BATTERY_MODES = {2: (NAV_AUTO_LAND, NAV_AUTO_LAND), 3: (NAV_AUTO_RTL, NAV_AUTO_LAND)}
#: COM_RC_OVERRIDE bit 1: sticks override offboard (``commander_params.yaml``).
RC_OVERRIDE_OFFBOARD_BIT = 2
#: PX4 engages offboard only after the proof of life has streamed for more than a second
#: (``docs/en/flight_modes/offboard.md``, v1.16). ``offboardCheck.cpp`` itself asks only for
#: recent data; the model keeps the documented, stricter rule, so a sender that satisfies
#: the model satisfies either.
OFFBOARD_ENTRY_US = 1_000_000


class BatteryWarning(enum.IntEnum):
    """``battery_status`` warning levels (px4_msgs ``msg/BatteryStatus.msg``)."""

    NONE = 0
    LOW = 1
    CRITICAL = 2
    EMERGENCY = 3


def autopilot_parameters(overrides: Sequence[str], where: str) -> dict[str, float]:
    """PX4's defaults with ``NAME=VALUE`` overrides.

    Raises:
        ConfigError: an entry that is not NAME=number, or a name the model does not know.
    """
    parameters = dict(PX4_DEFAULT_PARAMETERS)
    problems = []
    for index, entry in enumerate(overrides):
        name, sep, value = entry.partition("=")
        if not sep or name not in parameters:
            problems.append(
                f"{where}[{index}]: {entry!r} is not NAME=VALUE with NAME one of "
                f"{', '.join(sorted(parameters))}"
            )
            continue
        try:
            parameters[name] = float(value)
        except ValueError:
            problems.append(f"{where}[{index}]: {value!r} is not a number")
    if problems:
        raise ConfigError(*problems)
    return parameters


@dataclass(frozen=True)
class VehicleCommandRequest:
    """The fields of a ``VehicleCommand`` the model reads."""

    command: int
    param1: float = 0.0
    param2: float = 0.0
    target_system: int = 1
    target_component: int = 1


@dataclass
class Px4Commander:
    """PX4's commander as far as an offboard companion meets it.

    Attributes:
        parameters: the autopilot's parameters (``autopilot_parameters``).
        armed: arming state.
        nav_state: the active mode.
        user_intention: the mode the user (or a command) selected; a failsafe overrides
            ``nav_state`` while its condition lasts (``failsafe/framework.cpp``).
        failsafe: a failsafe action is active.
        position_valid: the estimator has a local position (``failsafe_flags``).
    """

    parameters: dict[str, float]
    armed: bool = False
    nav_state: int = NAV_POSCTL
    user_intention: int = NAV_POSCTL
    failsafe: bool = False
    failsafe_cause: str = ""
    position_valid: bool = True
    battery_warning: BatteryWarning = BatteryWarning.NONE
    _last_proof_us: int | None = None
    _stream_since_us: int | None = None
    _offboard_flags: bool = False
    _battery_at_arming: BatteryWarning = BatteryWarning.NONE
    _battery_mode: int | None = None
    acks: list[tuple[int, int]] = field(default_factory=list)

    @property
    def _loss_us(self) -> int:
        return round(self.parameters["COM_OF_LOSS_T"] * 1e6)

    # -- the proof of life ----------------------------------------------------------------

    def on_proof_of_life(self, now_us: int, timestamp_us: int, any_mode: bool = True) -> None:
        """An ``offboard_control_mode`` arrived stamped ``timestamp_us`` by its sender.

        Liveness compares the *sender's* timestamp with the autopilot's clock:
        ``hrt_absolute_time() < offboard_control_mode.timestamp + COM_OF_LOSS_T``, and a
        message with no control flag set is no proof at all (``HealthAndArmingChecks/checks/
        offboardCheck.cpp``). uXRCE-DDS shifts the stamp by the session's time offset on
        the way in (``uxrce_dds_client/dds_topics.h.em``: ``ucdr_deserialize_*(...,
        time_offset_us)``), so a sender stamping with ROS system time is recent, one
        stamping with simulation time or zero is not. Over MAVLink the receiver stamps the
        message on arrival (``mavlink/mavlink_receiver.cpp``): pass ``now_us``.
        """
        if not self._signal_ok(now_us):
            self._stream_since_us = None
        self._last_proof_us = timestamp_us
        self._offboard_flags = any_mode
        if self._signal_ok(now_us) and self._stream_since_us is None:
            self._stream_since_us = now_us

    def _signal_ok(self, now_us: int) -> bool:
        return (
            self._last_proof_us is not None
            and self._offboard_flags
            and now_us < self._last_proof_us + self._loss_us
        )

    def offboard_signal_lost(self, now_us: int) -> bool:
        """``failsafe_flags.offboard_control_signal_lost`` (``offboardCheck.cpp``); a
        position setpoint also needs a valid local position there."""
        return not (self._signal_ok(now_us) and self.position_valid)

    def _offboard_can_start(self, now_us: int) -> bool:
        return (
            not self.offboard_signal_lost(now_us)
            and self._stream_since_us is not None
            and now_us - self._stream_since_us > OFFBOARD_ENTRY_US
        )

    # -- commands -------------------------------------------------------------------------

    def handle_command(self, now_us: int, request: VehicleCommandRequest) -> int | None:
        """The ack result of a ``VehicleCommand``, None where PX4 ignores it.

        ``Commander::handle_command`` (``src/modules/commander/Commander.cpp``): commands
        for another system or component are not handled (no ack); DO_SET_MODE with the
        custom-mode flag selects the mode (OFFBOARD is custom main mode 6) and is
        TEMPORARILY_REJECTED when the mode cannot run; COMPONENT_ARM_DISARM with param1 1
        arms, 0 disarms, TEMPORARILY_REJECTED when refused; anything else is UNSUPPORTED.
        """
        system = int(self.parameters["MAV_SYS_ID"])
        if request.target_system not in (0, system) or request.target_component not in (0, 1):
            return None
        if request.command == VEHICLE_CMD_DO_SET_MODE:
            result = self._set_mode(now_us, request)
        elif request.command == VEHICLE_CMD_COMPONENT_ARM_DISARM:
            result = self._arm_disarm(now_us, round(request.param1))
        else:
            result = RESULT_UNSUPPORTED
        self.acks.append((request.command, result))
        return result

    def _set_mode(self, now_us: int, request: VehicleCommandRequest) -> int:
        if not round(request.param1) & MODE_FLAG_CUSTOM_MODE_ENABLED:
            return RESULT_ACCEPTED  # base modes only: nothing the model changes
        main_mode = round(request.param2)
        if main_mode == PX4_CUSTOM_MAIN_MODE_OFFBOARD:
            if not self._offboard_can_start(now_us):
                return RESULT_TEMPORARILY_REJECTED
            self.user_intention = NAV_OFFBOARD
        elif main_mode == PX4_CUSTOM_MAIN_MODE_POSCTL:
            self.user_intention = NAV_POSCTL
        else:
            return RESULT_TEMPORARILY_REJECTED
        self._clear_failsafe()
        self.nav_state = self.user_intention
        return RESULT_ACCEPTED

    def _arm_disarm(self, now_us: int, action: int) -> int:
        if action == 1:
            # Arming needs the intended mode to be able to run: a position mode needs a
            # local position, offboard its signal (``HealthAndArmingChecks``; failsafe
            # ``modeCanRun``).
            if not self.position_valid:
                return RESULT_TEMPORARILY_REJECTED
            if self.user_intention == NAV_OFFBOARD and self.offboard_signal_lost(now_us):
                return RESULT_TEMPORARILY_REJECTED
            if not self.armed:
                self._battery_at_arming = self.battery_warning
            self.armed = True
            return RESULT_ACCEPTED
        if action == 0:
            self.armed = False
            return RESULT_ACCEPTED
        return RESULT_UNSUPPORTED  # an ARM_DISARM param1 that is neither (Commander.cpp)

    # -- the pilot -------------------------------------------------------------------------

    def switch_mode(self, nav_state: int) -> None:
        """The pilot's mode switch (RC or ground station): always obeyed, and it clears a
        failsafe whose clear condition is a mode change (``failsafe/framework.cpp``)."""
        self.user_intention = nav_state
        self._clear_failsafe()
        self.nav_state = nav_state

    def sticks_moved(self) -> bool:
        """The pilot moved the sticks past COM_RC_STICK_OV. In offboard this takes over to
        Position mode only with COM_RC_OVERRIDE bit 1 set (``Commander.cpp``: "Pilot took
        over using sticks"). Returns whether it took over."""
        override = int(self.parameters["COM_RC_OVERRIDE"]) & RC_OVERRIDE_OFFBOARD_BIT
        if self.armed and self.nav_state == NAV_OFFBOARD and override:
            self.switch_mode(NAV_POSCTL)
            return True
        return False

    # -- the failsafe state machine -----------------------------------------------------

    def update(self, now_us: int, battery_fraction: float) -> None:
        """Run the failsafe checks at ``now_us`` (``failsafe/failsafe.cpp``
        ``checkStateAndMode``)."""
        self.battery_warning = self._battery_level(battery_fraction)
        if not self.armed:
            self.failsafe = False
            self.nav_state = self.user_intention
            return
        if self.user_intention == NAV_OFFBOARD and self.offboard_signal_lost(now_us):
            # The mode fallback: immediate (allowUserTakeover(Always): no COM_FAIL_ACT_T
            # hold), and cleared when the signal returns (ActionOptions' default
            # WhenConditionClears, ``failsafe/framework.h``), back to the user's OFFBOARD.
            action = round(self.parameters["COM_OBL_RC_ACT"])
            if action == OFFBOARD_LOSS_DISARM:
                self.armed = False
                self._enter_failsafe(NAV_POSCTL, "offboard loss: disarm")
                return
            self._enter_failsafe(
                OFFBOARD_LOSS_MODES.get(action, NAV_POSCTL), "offboard control signal lost"
            )
            return
        low_battery = self._battery_failsafe_mode()
        if low_battery is not None:
            self._enter_failsafe(low_battery, f"battery {self.battery_warning.name.lower()}")
            return
        self._clear_failsafe()
        self.nav_state = self.user_intention

    def _battery_level(self, fraction: float) -> BatteryWarning:
        p = self.parameters
        if fraction < p["BAT_EMERGEN_THR"]:
            return BatteryWarning.EMERGENCY
        if fraction < p["BAT_CRIT_THR"]:
            return BatteryWarning.CRITICAL
        if fraction < p["BAT_LOW_THR"]:
            return BatteryWarning.LOW
        return BatteryWarning.NONE

    def _battery_failsafe_mode(self) -> int | None:
        """COM_LOW_BAT_ACT at critical and emergency, only where the warning is worse than
        at arming (``failsafe.cpp``: ``warning_worse_than_at_arming``)."""
        if self.battery_warning <= self._battery_at_arming:
            return None
        modes = LOW_BATTERY_MODES.get(round(self.parameters["COM_LOW_BAT_ACT"]))
        if modes is None or self.battery_warning < BatteryWarning.CRITICAL:
            return None
        return modes[0] if self.battery_warning == BatteryWarning.CRITICAL else modes[1]

    def _enter_failsafe(self, nav_state: int, cause: str) -> None:
        self.failsafe = True
        self.failsafe_cause = cause
        self.nav_state = nav_state

    def _clear_failsafe(self) -> None:
        self.failsafe = False
        self.failsafe_cause = ""


def parameter_value(parameters: Mapping[str, float], name: str) -> float | int:
    """A parameter as the autopilot types it (integers for enums and bitmasks)."""
    value = parameters[name]
    return round(value) if name in INTEGER_PARAMETERS else value
