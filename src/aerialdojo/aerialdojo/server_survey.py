"""``aerialdojo tasks from-server``: a suite of a running simulator server's own world.

It builds the bridge's backend from a run config (as ``aerialdojo doctor`` does, in the
backend's venv), surveys the server's world through it (``sites.from_server``: objects, starts,
a photograph of each target), writes the site file and photographs into ``--out``, and builds
the suite there as ``aerialdojo tasks from-site`` does (docs/simulators.md, docs/sites.md).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from aerialdojo.errors import ConfigError

#: Defaults of the survey: vehicles and props as targets, buildings as landmarks (CARLA's
#: semantic labels; ProjectAirSim's levels name their actors freely: pass your own).
DEFAULT_TARGETS = r"(?i)^(vehicles|car|truck|bus|static|dynamic)$|car|truck|crate|barrel"
DEFAULT_LANDMARKS = r"(?i)^buildings$|building|tower"


def add_parser(tasks_commands: Any) -> None:
    """Add ``from-server`` to the ``aerialdojo tasks`` subcommands."""
    parser = tasks_commands.add_parser(
        "from-server",
        help="build an AerialDojo-format suite of a running simulator server's own world",
        description=__doc__,
    )
    _arguments(parser)
    parser.set_defaults(handler=command)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, required=True, help="run config YAML")
    parser.add_argument("--out", type=Path, required=True, help="suite directory to write")
    parser.add_argument("--scene", help="scene to survey (default: the backend's first)")
    parser.add_argument("--name", help="suite name (default: <scene>_survey, lower case)")
    parser.add_argument("--targets", default=DEFAULT_TARGETS, help="regex of target objects")
    parser.add_argument("--landmarks", default=DEFAULT_LANDMARKS, help="regex of landmarks")
    parser.add_argument(
        "--altitude", type=float, default=30.0, help="start altitude where starts are free"
    )
    parser.add_argument("--max-targets", type=int, default=8, help="at most this many targets")
    parser.add_argument("--max-starts", type=int, default=4, help="at most this many starts")
    parser.add_argument(
        "--image-size", type=int, default=640, help="longest side of the reference images"
    )


def command(args: argparse.Namespace) -> int:
    """Survey the server and build the suite; exit status 0 when the suite was written."""
    from aerialdojo.doctor import (  # noqa: PLC0415
        remote_backend,
        remote_bridge,
        rerun_in_backend_venv,
    )
    from aerialdojo.sites.build import build_site_suite  # noqa: PLC0415
    from aerialdojo.sites.from_server import SurveyOptions, survey_server  # noqa: PLC0415
    from aerialdojo.sites.site import load_site  # noqa: PLC0415

    _specs, bridge = remote_bridge(args.config)
    argv = _argv(args)
    code = rerun_in_backend_venv(bridge, "aerialdojo.server_survey", argv)
    if code is not None:
        return code
    try:
        targets, landmarks = re.compile(args.targets), re.compile(args.landmarks)
    except re.error as error:
        raise ConfigError(f"--targets/--landmarks: not a regular expression: {error}") from error
    backend = remote_backend(bridge)
    try:
        scene = args.scene or backend.scenes()[0]
        name = args.name or re.sub(r"[^a-z0-9_]", "_", f"{scene.lower()}_survey")
        options = SurveyOptions(
            name=name,
            targets=targets,
            landmarks=landmarks,
            altitude_m=args.altitude,
            max_targets=args.max_targets,
            max_starts=args.max_starts,
            agent=str(_agents(bridge)[0]),
        )
        site_path = survey_server(cast("Any", backend), scene, args.out, options)
    finally:
        backend.close()
    recorded = " ".join(shlex.quote(part) for part in ["aerialdojo", "tasks", "from-server", *argv])
    built = build_site_suite(
        load_site(site_path), args.out, command=recorded, image_size=args.image_size
    )
    for message in built.messages():
        print(message, file=sys.stderr)
    suite = built.suite
    print(
        f"{suite.path}: {len(suite.episodes) // 2} task(s) of {scene}, "
        f"{len(suite.episodes)} episodes"
    )
    return 0


def _agents(bridge: Any) -> list[str]:
    agents = bridge.parameters["agents"]
    assert isinstance(agents, list)  # validated against the parameter table
    return [str(agent) for agent in agents]


def _argv(args: argparse.Namespace) -> list[str]:
    """The options of ``args`` as a command line (to run again, and to record)."""
    argv = ["--config", str(args.config), "--out", str(args.out)]
    for option in ("scene", "name", "targets", "landmarks", "altitude", "max_targets"):
        value = getattr(args, option)
        if value is not None:
            argv += [f"--{option.replace('_', '-')}", str(value)]
    return [*argv, "--max-starts", str(args.max_starts), "--image-size", str(args.image_size)]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m aerialdojo.server_survey``: ``tasks from-server`` in this interpreter."""
    parser = argparse.ArgumentParser(prog="aerialdojo tasks from-server", description=__doc__)
    _arguments(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from aerialdojo.doctor import run_handler  # noqa: PLC0415

    return run_handler(command, args, "aerialdojo tasks from-server")


if __name__ == "__main__":
    sys.exit(main())
