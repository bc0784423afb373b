"""``aerialdojo preflight``: check an autopilot's own failsafes before a robot session.

It reads what it can (an exported parameter file, or MAVROS live) and refuses, naming the
parameter, unless: the failsafe on offboard loss is Hold or Land, the offboard-loss timeout
is short, the autopilot's geofence is set and encloses the gate's, the pilot's sticks can
take over in offboard, the battery failsafe acts, and the battery lasts the session.
Exit status 0 when every check passed, 1 otherwise (docs/robots.md, "Preflight").
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aerialdojo.doctor import format_table
from aerialdojo.errors import ConfigError
from aerialdojo.robot.config import load_geofence
from aerialdojo.robot.preflight import AUTOPILOT_RULES, Session, preflight, read_parameter_file


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
