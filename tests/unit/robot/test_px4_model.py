"""The PX4 commander model of the simulated robot, against what PX4's source does
(``src/modules/commander``: offboardCheck.cpp, Commander.cpp, failsafe/failsafe.cpp,
failsafe/framework.cpp; commander_params.yaml). Each test names the behaviour."""

from __future__ import annotations

import pytest

from aerialdojo.errors import ConfigError
from aerialdojo.robot.px4_model import (
    NAV_ALTCTL,
    NAV_AUTO_LAND,
    NAV_AUTO_LOITER,
    NAV_AUTO_RTL,
    NAV_OFFBOARD,
    NAV_POSCTL,
    NAV_TERMINATION,
    PX4_CUSTOM_MAIN_MODE_OFFBOARD,
    RESULT_ACCEPTED,
    RESULT_TEMPORARILY_REJECTED,
    RESULT_UNSUPPORTED,
    VEHICLE_CMD_COMPONENT_ARM_DISARM,
    VEHICLE_CMD_DO_SET_MODE,
    Px4Commander,
    VehicleCommandRequest,
    autopilot_parameters,
)

S = 1_000_000  # one second, microseconds
SET_OFFBOARD = VehicleCommandRequest(
    VEHICLE_CMD_DO_SET_MODE, param1=1.0, param2=float(PX4_CUSTOM_MAIN_MODE_OFFBOARD)
)
ARM = VehicleCommandRequest(VEHICLE_CMD_COMPONENT_ARM_DISARM, param1=1.0)


def commander(**overrides: float) -> Px4Commander:
    return Px4Commander(
        autopilot_parameters([f"{k}={v}" for k, v in overrides.items()], "test"), armed=True
    )


def stream(model: Px4Commander, start_us: int, end_us: int, period_us: int = 50_000) -> None:
    """A keep-alive stamped with the sender's clock, which here is the autopilot's."""
    for t in range(start_us, end_us, period_us):
        model.on_proof_of_life(t, t)
        model.update(t, 1.0)


def test_offboard_is_refused_until_the_keepalive_has_streamed_over_a_second() -> None:
    model = commander()
    assert model.handle_command(0, SET_OFFBOARD) == RESULT_TEMPORARILY_REJECTED
    stream(model, 0, S // 2)
    assert model.handle_command(S // 2, SET_OFFBOARD) == RESULT_TEMPORARILY_REJECTED
    stream(model, S // 2, S + 200_000)
    assert model.handle_command(S + 200_000, SET_OFFBOARD) == RESULT_ACCEPTED
    assert model.nav_state == NAV_OFFBOARD


def test_liveness_uses_the_senders_timestamp_not_the_arrival() -> None:
    model = commander()
    # Arriving on time, but stamped with simulation time (seconds since a sim started):
    # always older than COM_OF_LOSS_T on the autopilot's clock.
    for t in range(100 * S, 102 * S, 50_000):
        model.on_proof_of_life(t, t - 100 * S)
    assert model.offboard_signal_lost(102 * S)
    assert model.handle_command(102 * S, SET_OFFBOARD) == RESULT_TEMPORARILY_REJECTED
    # A keep-alive with no control mode flag is no proof at all (offboardCheck.cpp).
    model.on_proof_of_life(103 * S, 103 * S, any_mode=False)
    assert model.offboard_signal_lost(103 * S)


@pytest.mark.parametrize(
    ("action", "mode"),
    [(0, NAV_POSCTL), (1, NAV_ALTCTL), (3, NAV_AUTO_RTL), (4, NAV_AUTO_LAND), (5, NAV_AUTO_LOITER),
     (6, NAV_TERMINATION)],
)  # fmt: skip
def test_keepalive_loss_runs_com_obl_rc_act_after_com_of_loss_t(action: int, mode: int) -> None:
    model = commander(COM_OBL_RC_ACT=action, COM_OF_LOSS_T=0.5)
    stream(model, 0, 2 * S)
    assert model.handle_command(2 * S, SET_OFFBOARD) == RESULT_ACCEPTED
    last = 2 * S - 50_000
    model.update(last + 450_000, 1.0)
    assert model.nav_state == NAV_OFFBOARD and not model.failsafe  # not yet COM_OF_LOSS_T
    model.update(last + 500_000, 1.0)
    assert model.nav_state == mode and model.failsafe
    # The fallback clears when the signal returns: the user's OFFBOARD comes back.
    stream(model, 3 * S, 3 * S + 100_000)
    assert model.nav_state == NAV_OFFBOARD and not model.failsafe


def test_com_obl_rc_act_disarm_disarms() -> None:
    model = commander(COM_OBL_RC_ACT=7)
    stream(model, 0, 2 * S)
    model.handle_command(2 * S, SET_OFFBOARD)
    model.update(4 * S, 1.0)
    assert not model.armed


def test_sticks_take_over_offboard_only_with_com_rc_override_bit_1() -> None:
    default = commander()  # COM_RC_OVERRIDE = 1: auto modes only
    stream(default, 0, 2 * S)
    default.handle_command(2 * S, SET_OFFBOARD)
    assert not default.sticks_moved() and default.nav_state == NAV_OFFBOARD
    enabled = commander(COM_RC_OVERRIDE=3)
    stream(enabled, 0, 2 * S)
    enabled.handle_command(2 * S, SET_OFFBOARD)
    assert enabled.sticks_moved() and enabled.nav_state == NAV_POSCTL
    # A mode switch by the pilot always wins, override or not.
    default.switch_mode(NAV_POSCTL)
    assert default.nav_state == NAV_POSCTL and default.user_intention == NAV_POSCTL


def test_arming_and_commands_are_acked_like_commander() -> None:
    model = Px4Commander(autopilot_parameters([], "test"))
    assert model.handle_command(0, ARM) == RESULT_ACCEPTED and model.armed
    wrong_target = VehicleCommandRequest(VEHICLE_CMD_COMPONENT_ARM_DISARM, 1.0, target_system=7)
    assert model.handle_command(0, wrong_target) is None  # not for this system: no ack
    assert model.handle_command(0, VehicleCommandRequest(22)) == RESULT_UNSUPPORTED
    odd = VehicleCommandRequest(VEHICLE_CMD_COMPONENT_ARM_DISARM, param1=0.5 + 2)
    assert model.handle_command(0, odd) == RESULT_UNSUPPORTED
    model.position_valid = False
    model.armed = False
    assert model.handle_command(0, ARM) == RESULT_TEMPORARILY_REJECTED


def test_arming_into_offboard_needs_the_signal() -> None:
    model = Px4Commander(autopilot_parameters([], "test"))
    stream(model, 0, 2 * S)
    assert model.handle_command(2 * S, SET_OFFBOARD) == RESULT_ACCEPTED
    assert model.handle_command(5 * S, ARM) == RESULT_TEMPORARILY_REJECTED  # signal gone
    stream(model, 5 * S, 6 * S)
    assert model.handle_command(6 * S, ARM) == RESULT_ACCEPTED


def test_critical_battery_runs_com_low_bat_act_only_when_worse_than_at_arming() -> None:
    model = commander(COM_LOW_BAT_ACT=2)
    model.update(0, 0.06)  # critical (BAT_CRIT_THR 0.07) after arming at full
    assert model.nav_state == NAV_AUTO_LAND and model.failsafe
    warn_only = commander()  # COM_LOW_BAT_ACT = 0: warning
    warn_only.update(0, 0.06)
    assert warn_only.nav_state == NAV_POSCTL and not warn_only.failsafe


def test_unknown_parameter_overrides_are_refused_by_name() -> None:
    with pytest.raises(ConfigError) as error:
        autopilot_parameters(["COM_OBL_RC_ACT=5", "NOPE=1", "COM_OF_LOSS_T=x"], "f: p")
    assert "f: p[1]" in str(error.value) and "f: p[2]" in str(error.value)
