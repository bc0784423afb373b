"""``aerialdojo preflight``: check an autopilot's own failsafes before a robot session
(docs/robots.md, "Preflight").

The autopilot is the last layer under the safety gate: when the gate stops the keep-alive
the autopilot's offboard-loss failsafe must hold or land the vehicle, its own geofence must
stand outside the gate's, the pilot's sticks must be able to take over, its battery failsafe
must act, and the battery must last the session. The command reads what it can (a ground
station's parameter export, or MAVROS live through ``nodes/parameter_client.py``) and
refuses unless every rule passes, each naming the parameter, the value found and the values
allowed. Exit status 0 when every check passed, 1 otherwise. The rules are ROS-free.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.doctor import Check, format_table
from aerialdojo.errors import ConfigError
from aerialdojo.geofence import Geofence

Parameters = Mapping[str, float]


@dataclass(frozen=True, kw_only=True)
class Session:
    """What the robot is about to do, for the rules that depend on it.

    Attributes:
        geofence: the gate's fence (site frame), or None where none was given.
        home: where the autopilot's home (its fence's centre) is, site frame x, y.
        battery_fraction: the battery now (0-1), or None where unknown.
        battery_per_minute: the fraction one minute of flight uses (measured on a test
            flight), or None.
        flight_minutes: the session's planned flight time.
        battery_reserve: what must be left at the end (the gate's min_battery_fraction).
        max_offboard_loss_s: the longest COM_OF_LOSS_T accepted.
    """

    geofence: Geofence | None = None
    home: tuple[float, float] = (0.0, 0.0)
    battery_fraction: float | None = None
    battery_per_minute: float | None = None
    flight_minutes: float = 0.0
    battery_reserve: float = 0.3
    max_offboard_loss_s: float = 1.0


def read_parameter_file(path: Path) -> dict[str, float]:
    """An autopilot's parameters exported by a ground station: QGroundControl's ``.params``
    (tab separated: vehicle id, component id, name, value, type; ``#`` comments) or
    MAVProxy's / Mission Planner's ``.parm`` (name and value, space or comma separated), the
    formats MAVROS' ``mavros/param.py`` reads too.

    Raises:
        ConfigError: unreadable, or a line of neither format (named by line number).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the parameter file: {error}") from error
    parameters: dict[str, float] = {}
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = next(csv.reader([line], delimiter="\t")) if "\t" in line else None
        if fields is None or len(fields) == 1:
            fields = line.replace(",", " ").split()
        if len(fields) == 5:
            name, value = fields[2].strip(), fields[3].strip()
        elif len(fields) == 2:
            name, value = fields[0].strip(), fields[1].strip()
        else:
            problems.append(f"{path}:{number}: not a QGroundControl or MAVProxy parameter line")
            continue
        try:
            parameters[name] = float(value)
        except ValueError:
            problems.append(f"{path}:{number}: {name} = {value!r} is not a number")
    if problems:
        raise ConfigError(*problems)
    return parameters


Rule = Callable[[Parameters, Session], Check]


def _missing(name: str, check: str) -> Check:
    return Check(check, False, f"{name} not found", f"read the autopilot's {name}")


def offboard_loss_action(parameters: Parameters, session: Session) -> Check:
    """COM_OBL_RC_ACT is Land (4) or Hold (5) (``commander_params.yaml``; the default 0,
    Position mode, leaves a vehicle nobody flies hovering under a pilot's centred sticks)."""
    name = "COM_OBL_RC_ACT"
    if name not in parameters:
        return _missing(name, "failsafe on offboard loss")
    value = round(parameters[name])
    names = {0: "Position", 1: "Altitude", 2: "Stabilized", 3: "Return", 4: "Land", 5: "Hold",
             6: "Terminate", 7: "Disarm"}  # fmt: skip
    return Check(
        "failsafe on offboard loss",
        value in (4, 5),
        f"{name} = {value} ({names.get(value, 'unknown')})",
        f"set {name} to 4 (Land) or 5 (Hold)",
    )


def offboard_loss_timeout(parameters: Parameters, session: Session) -> Check:
    """0 < COM_OF_LOSS_T <= the session's limit: how long a lost keep-alive goes unanswered."""
    name = "COM_OF_LOSS_T"
    if name not in parameters:
        return _missing(name, "offboard loss timeout")
    value = parameters[name]
    return Check(
        "offboard loss timeout",
        0.0 < value <= session.max_offboard_loss_s,
        f"{name} = {value:g} s",
        f"set {name} to at most {session.max_offboard_loss_s:g} s",
    )


def rc_override(parameters: Parameters, session: Session) -> Check:
    """COM_RC_OVERRIDE bit 1 set: moving the sticks takes over in offboard (default 1: auto
    modes only)."""
    name = "COM_RC_OVERRIDE"
    if name not in parameters:
        return _missing(name, "RC override in offboard")
    value = round(parameters[name])
    return Check(
        "RC override in offboard",
        bool(value & 2),
        f"{name} = {value} (bit 1 {'set' if value & 2 else 'clear'})",
        f"set bit 1 of {name} (e.g. 3: auto modes and offboard)",
    )


def geofence(parameters: Parameters, session: Session) -> Check:
    """The autopilot's fence is set (GF_ACTION acts: Hold, Return, Terminate or Land;
    GF_MAX_HOR_DIST and GF_MAX_VER_DIST > 0) and stands outside the gate's fence, so the
    gate refuses first and the autopilot catches what escapes it."""
    names = ("GF_ACTION", "GF_MAX_HOR_DIST", "GF_MAX_VER_DIST")
    missing = [name for name in names if name not in parameters]
    if missing:
        return _missing(", ".join(missing), "geofence set")
    action = round(parameters["GF_ACTION"])
    horizontal, vertical = parameters["GF_MAX_HOR_DIST"], parameters["GF_MAX_VER_DIST"]
    found = (
        f"GF_ACTION = {action}, GF_MAX_HOR_DIST = {horizontal:g} m, "
        f"GF_MAX_VER_DIST = {vertical:g} m"
    )
    if action in (0, 1) or horizontal <= 0.0 or vertical <= 0.0:
        return Check(
            "geofence set", False, found,
            "set GF_ACTION to 2 (Hold) or 5 (Land) and GF_MAX_HOR_DIST, GF_MAX_VER_DIST > 0",
        )  # fmt: skip
    fence = session.geofence
    if fence is not None:
        reach = max(math.dist(session.home, vertex) for vertex in fence.polygon)
        if horizontal < reach or vertical < fence.max_z:
            return Check(
                "geofence set", False, found,
                f"the autopilot's fence must enclose the gate's: GF_MAX_HOR_DIST >= {reach:.1f} m "
                f"(the farthest fence vertex from home), GF_MAX_VER_DIST >= {fence.max_z:g} m",
            )  # fmt: skip
    return Check("geofence set", True, found)


def battery_action(parameters: Parameters, session: Session) -> Check:
    """COM_LOW_BAT_ACT acts at critical battery: 2 (Land) or 3 (Return, then Land); the
    default 0 only warns."""
    name = "COM_LOW_BAT_ACT"
    if name not in parameters:
        return _missing(name, "battery failsafe")
    value = round(parameters[name])
    return Check(
        "battery failsafe",
        value in (2, 3),
        f"{name} = {value}",
        f"set {name} to 2 (Land) or 3 (Return, then Land)",
    )


def battery_budget(parameters: Parameters, session: Session) -> Check:
    """The battery now, less the session's use, keeps the reserve."""
    if session.battery_fraction is None:
        return Check("battery for the session", False, "battery unknown",
                     "pass --battery (0-1) or read it live (--mavros)")  # fmt: skip
    use = (session.battery_per_minute or 0.0) * session.flight_minutes
    left = session.battery_fraction - use
    found = (
        f"battery {session.battery_fraction:.0%}, session uses {use:.0%} "
        f"({session.flight_minutes:g} min), {left:.0%} left"
    )
    if session.flight_minutes > 0.0 and session.battery_per_minute is None:
        return Check("battery for the session", False, found,
                     "pass --battery-per-minute, measured on a test flight")  # fmt: skip
    return Check(
        "battery for the session",
        left >= session.battery_reserve,
        found,
        f"charge or swap the battery: {session.battery_reserve:.0%} must be left",
    )


#: The rules per autopilot (the parameter names are PX4's); another autopilot registers its
#: own list.
AUTOPILOT_RULES: dict[str, Sequence[Rule]] = {
    "px4": (
        offboard_loss_action,
        offboard_loss_timeout,
        geofence,
        rc_override,
        battery_action,
        battery_budget,
    ),
}


def preflight(autopilot: str, parameters: Parameters, session: Session) -> list[Check]:
    """Every rule of ``autopilot`` against its parameters.

    Raises:
        ConfigError: an autopilot without rules.
    """
    rules = AUTOPILOT_RULES.get(autopilot)
    if rules is None:
        raise ConfigError(
            f"--autopilot {autopilot!r}: no preflight rules; known: {', '.join(AUTOPILOT_RULES)}"
        )
    return [rule(parameters, session) for rule in rules]


# -- command line --------------------------------------------------------------------------


def add_parser(commands: Any) -> None:
    """Add the ``preflight`` subcommand to the ``aerialdojo`` command line."""
    parser = commands.add_parser(
        "preflight",
        help="check the autopilot's failsafes, fence and battery before a robot session",
        description=__doc__,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--params", type=Path, metavar="FILE",
        help="parameters exported by QGroundControl (.params) or MAVProxy (.parm)",
    )  # fmt: skip
    source.add_argument(
        "--mavros", metavar="NAMESPACE",
        help="read the parameters and battery live from MAVROS, e.g. /mavros",
    )  # fmt: skip
    parser.add_argument(
        "--autopilot", default="px4", choices=sorted(AUTOPILOT_RULES),
        help="whose parameter names the rules use",
    )  # fmt: skip
    fence = parser.add_mutually_exclusive_group()
    fence.add_argument("--suite", default="", help="suite built from the site (its geofence)")
    fence.add_argument("--site", default="", help="site file (its geofence)")
    parser.add_argument(
        "--home", default="0,0", metavar="X,Y",
        help="the autopilot's home in the site frame, metres (its fence's centre)",
    )  # fmt: skip
    parser.add_argument("--battery", type=float, help="battery now, 0-1 (--mavros reads it)")
    parser.add_argument(
        "--battery-per-minute", type=float, help="battery fraction a minute of flight uses"
    )
    parser.add_argument("--minutes", type=float, default=0.0, help="the session's flight time")
    parser.add_argument(
        "--reserve", type=float, default=0.3,
        help="battery left at the end, at least (the gate's min_battery_fraction)",
    )  # fmt: skip
    parser.add_argument(
        "--max-offboard-loss-s", type=float, default=1.0,
        help="the longest COM_OF_LOSS_T accepted, seconds",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=10.0, help="wait for MAVROS, seconds")
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """Run the checks; 0 when all passed."""
    battery = args.battery
    if args.params is not None:
        parameters = read_parameter_file(args.params)
        source = str(args.params)
    else:
        from aerialdojo.nodes.parameter_client import read_mavros  # noqa: PLC0415 - rclpy

        parameters, live_battery = read_mavros(args.mavros, args.timeout)
        battery = live_battery if battery is None else battery
        source = f"MAVROS {args.mavros}"
    from aerialdojo.robot.config import load_geofence  # noqa: PLC0415 - loads suites

    geofence = (
        load_geofence(args.site, args.suite, "aerialdojo preflight --site/--suite")
        if args.site or args.suite
        else None
    )
    session = Session(
        geofence=geofence,
        home=_xy(args.home),
        battery_fraction=battery,
        battery_per_minute=args.battery_per_minute,
        flight_minutes=args.minutes,
        battery_reserve=args.reserve,
        max_offboard_loss_s=args.max_offboard_loss_s,
    )
    checks = preflight(args.autopilot, parameters, session)
    print(f"aerialdojo preflight: {source} ({args.autopilot}, {len(parameters)} parameters)")
    print(format_table(checks))
    failed = [check.name for check in checks if not check.passed]
    if failed:
        print(f"refused: {', '.join(failed)}")
    return 1 if failed else 0


def _xy(text: str) -> tuple[float, float]:
    try:
        x, y = (float(part) for part in text.split(","))
    except ValueError:
        raise ConfigError(f"--home {text!r}: expected X,Y in metres") from None
    return (x, y)
