"""The preflight check: parameter files as ground stations export them, each rule refusing
with the parameter named, and the command's exit status."""

from __future__ import annotations

from pathlib import Path

import pytest

from aerialdojo.cli import main
from aerialdojo.errors import ConfigError
from aerialdojo.geofence import Geofence
from aerialdojo.preflight import Session, preflight, read_parameter_file

GOOD = {
    "COM_OBL_RC_ACT": 5.0,
    "COM_OF_LOSS_T": 1.0,
    "COM_RC_OVERRIDE": 3.0,
    "COM_LOW_BAT_ACT": 3.0,
    "GF_ACTION": 2.0,
    "GF_MAX_HOR_DIST": 100.0,
    "GF_MAX_VER_DIST": 20.0,
}
FENCE = Geofence(polygon=((-48.0, -25.0), (-6.0, -25.0), (-6.0, 19.0)), min_z=0.5, max_z=12.0)
SESSION = Session(geofence=FENCE, battery_fraction=0.9, battery_per_minute=0.04, flight_minutes=10)


def qgc_file(path: Path, parameters: dict[str, float]) -> Path:
    """A QGroundControl export: vehicle id, component id, name, value, MAV_PARAM_TYPE."""
    lines = ["# Onboard parameters for Vehicle 1", "#", "# MAV ID\tCOMPONENT ID\tPARAM NAME\tVALUE"]
    for name, value in parameters.items():
        kind = 6 if value.is_integer() and name != "COM_OF_LOSS_T" else 9
        text = str(int(value)) if kind == 6 else f"{value:.6f}"
        lines.append(f"1\t1\t{name}\t{text}\t{kind}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_both_export_formats_read_the_same_parameters(tmp_path: Path) -> None:
    qgc = read_parameter_file(qgc_file(tmp_path / "v.params", GOOD))
    mavproxy = tmp_path / "v.parm"
    mavproxy.write_text("# MAVProxy\n" + "".join(f"{k} {v}\n" for k, v in GOOD.items()))
    assert qgc == GOOD == read_parameter_file(mavproxy)
    bad = tmp_path / "bad.params"
    bad.write_text("1\t1\tCOM_OF_LOSS_T\n1\t1\tGF_ACTION\tx\t6\n")
    with pytest.raises(ConfigError) as error:
        read_parameter_file(bad)
    assert f"{bad}:1:" in str(error.value) and f"{bad}:2: GF_ACTION" in str(error.value)


def test_a_well_set_autopilot_passes() -> None:
    assert all(check.passed for check in preflight("px4", GOOD, SESSION))


@pytest.mark.parametrize(
    ("name", "value", "check", "named"),
    [
        ("COM_OBL_RC_ACT", 0.0, "failsafe on offboard loss", "COM_OBL_RC_ACT = 0 (Position)"),
        ("COM_OBL_RC_ACT", 3.0, "failsafe on offboard loss", "COM_OBL_RC_ACT = 3 (Return)"),
        ("COM_OF_LOSS_T", 5.0, "offboard loss timeout", "COM_OF_LOSS_T = 5 s"),
        ("COM_RC_OVERRIDE", 1.0, "RC override in offboard", "COM_RC_OVERRIDE = 1 (bit 1 clear)"),
        ("GF_ACTION", 1.0, "geofence set", "GF_ACTION = 1"),
        ("GF_MAX_HOR_DIST", 0.0, "geofence set", "GF_MAX_HOR_DIST = 0 m"),
        ("GF_MAX_HOR_DIST", 40.0, "geofence set", "GF_MAX_HOR_DIST = 40 m"),  # inside the gate's
        ("GF_MAX_VER_DIST", 10.0, "geofence set", "GF_MAX_VER_DIST = 10 m"),
        ("COM_LOW_BAT_ACT", 0.0, "battery failsafe", "COM_LOW_BAT_ACT = 0"),
    ],
)
def test_each_wrong_parameter_is_refused_by_name(
    name: str, value: float, check: str, named: str
) -> None:
    checks = {c.name: c for c in preflight("px4", {**GOOD, name: value}, SESSION)}
    assert not checks[check].passed and named in checks[check].detail
    assert checks[check].fix
    assert [c.name for c in checks.values() if not c.passed] == [check]


def test_a_missing_parameter_is_a_failure_not_a_pass() -> None:
    parameters = {k: v for k, v in GOOD.items() if k != "COM_OBL_RC_ACT"}
    check = preflight("px4", parameters, SESSION)[0]
    assert not check.passed and "COM_OBL_RC_ACT not found" in check.detail


def test_the_battery_must_last_the_session_and_keep_the_reserve() -> None:
    short = Session(battery_fraction=0.6, battery_per_minute=0.04, flight_minutes=10)
    check = preflight("px4", GOOD, short)[-1]
    assert not check.passed and "20% left" in check.detail
    unknown = preflight("px4", GOOD, Session())[-1]
    assert not unknown.passed and "battery unknown" in unknown.detail
    unmeasured = preflight("px4", GOOD, Session(battery_fraction=1.0, flight_minutes=5))[-1]
    assert not unmeasured.passed and "--battery-per-minute" in unmeasured.fix


def test_the_command_refuses_a_wrong_failsafe_parameter(tmp_path: Path, capsys) -> None:
    wrong = qgc_file(tmp_path / "wrong.params", {**GOOD, "COM_OBL_RC_ACT": 0.0})
    args = ["preflight", "--suite", "alley_rehearsal", "--battery", "0.9", "--params"]
    assert main([*args, str(wrong)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  failsafe on offboard loss" in out and "COM_OBL_RC_ACT = 0 (Position)" in out
    assert "fix: set COM_OBL_RC_ACT to 4 (Land) or 5 (Hold)" in out
    assert "refused: failsafe on offboard loss" in out
    right = qgc_file(tmp_path / "right.params", GOOD)
    assert main([*args, str(right)]) == 0
    assert "6 of 6 checks passed" in capsys.readouterr().out
