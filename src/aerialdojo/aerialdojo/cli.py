"""``aerialdojo`` command line: run evaluations, score bags and logs, inspect scenes and tasks."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aerialdojo.errors import (
    AerialDojoError,
    ConfigError,
    DomainTakenError,
    MetricsError,
    TaskFileError,
)
from aerialdojo.run_contract import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    RUN_CONFIG,
    run_id_problem,
)

if TYPE_CHECKING:
    from rich.console import Console

    from aerialdojo.graph import NodeSpec

RADIUS_HELP = (
    "success radius in metres, the first the primary one; repeat for several (--radius 3 "
    "--radius 5; default: the benchmark's, AerialDojo-200K 3 and 5 m, CityNav 20 m)"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aerialdojo`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    # SIGINT and SIGTERM (a job scheduler, a CI timeout) end the command like Ctrl-C does:
    # its clean-up runs (nodes stopped in order, the report written, shared memory removed).
    # SIGINT too: a shell starts background commands with it ignored, and so would they be.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.default_int_handler)
    try:
        return int(args.handler(args))
    except AerialDojoError as error:
        print(f"aerialdojo: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except OSError as error:
        # A full disk or a vanished directory while writing: said plainly, no traceback.
        where = f"{error.filename}: " if error.filename else ""
        print(f"aerialdojo: error: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_FAILED


class _DefaultsShown(argparse.HelpFormatter):
    """Help that states each option's default (argparse's ArgumentDefaultsHelpFormatter also
    prints the meaningless ``None`` and ``False``); help that names its default already is
    left as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default in (None, False, argparse.SUPPRESS)
            or isinstance(default, bool)
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


def _show_defaults(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` and every sub-command's parser the help that states defaults."""
    parser.formatter_class = _DefaultsShown
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _show_defaults(sub)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aerialdojo", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "eval",
        help="run an evaluation: start the node graph, one process per node",
        description="Run an evaluation: validate the whole configuration (every node's "
        "parameters, the suite, the filter, the run directory), then start the node graph, "
        "one process per node, and leave the report, metrics and bag in <output>/<run id>/.",
        epilog="Overrides: uav_agent.policy=oracle task_manager.filter='split=test' "
        "evaluator.success_radii_m=[3,5] (values read as YAML; `aerialdojo params` lists "
        "every parameter); they are saved in the run's config.yaml.",
    )
    run.add_argument(
        "overrides",
        nargs="*",
        metavar="NODE.PARAM=VALUE",
        help="set a node parameter over the config's, validated like the config",
    )
    run.add_argument(
        "--config",
        type=Path,
        help="run config YAML (default: the shipped config/eval.yaml, AerialDojo on the "
        "embedded simulator)",
    )
    run.add_argument("--episodes", type=int, help="run at most this many of the selected episodes")
    run.add_argument(
        "--output", type=Path, help="directory for <run id>/ (default: the config's, runs)"
    )
    run.add_argument(
        "--run-id",
        help="name of the run directory, which must not exist (default: the UTC time, "
        "e.g. 20261201-180500, with -2, -3... if taken)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        help="stop the nodes after this many seconds and report what ended",
    )
    run.add_argument(
        "--replay-transcripts",
        type=Path,
        metavar="RUN_DIR",
        help="replay the model replies recorded in RUN_DIR/transcripts instead of asking a "
        "server (same actions, same metrics.json)",
    )
    run.add_argument(
        "--live",
        action="store_true",
        help="serve the run to the Foxglove app while it runs (WebSocket on 127.0.0.1; layout: "
        "config/foxglove/aerialdojo.json)",
    )
    run.add_argument(
        "--live-port", type=int, default=8765, help="port of the --live server (0: any free one)"
    )
    sharded = run.add_argument_group("sharded runs (docs/scale.md)")
    sharded.add_argument(
        "--workers",
        type=int,
        help="run the episodes on this many worker graphs at once, each in its own ROS domain "
        "(1: in this process; more: on Ray); the same command with the same --run-id resumes",
    )
    sharded.add_argument(
        "--ray-address", help="run the workers on this Ray cluster (auto, HOST:PORT)"
    )
    sharded.add_argument(
        "--worker-resources",
        default="CPU=1",
        help="what Ray reserves per worker, e.g. CPU=2,GPU=1 (default CPU=1)",
    )
    run.set_defaults(handler=_cmd_eval)

    console = commands.add_parser(
        "console",
        help="the operator's console of a robot run, in a terminal of its own: each episode "
        "before it starts, placing, engaging and starting it, the dead-man heartbeat "
        "(docs/robots.md)",
        description="The operator's console of a robot run (the operator_console node, "
        "interactive unless the config says otherwise), with the parameters the run's config "
        "gives it: run it beside `aerialdojo eval --config config/robot_<vehicle>.yaml` or "
        "`ros2 launch aerialdojo robot.launch.py`, in the same ROS_DOMAIN_ID. Closing it stops "
        "the heartbeat, and the safety gates stop the robots.",
    )
    console.add_argument(
        "overrides", nargs="*", metavar="NODE.PARAM=VALUE", help="as for aerialdojo eval"
    )
    console.add_argument("--config", type=Path, required=True, help="the robot run's config")
    console.set_defaults(handler=_cmd_console)

    replay = commands.add_parser(
        "evaluate-bag",
        help="recompute a run's metrics from its bag alone, or score a robot's bag through a "
        "mapping file (docs/replay.md)",
    )
    replay.add_argument(
        "bags",
        type=Path,
        nargs="+",
        metavar="BAG",
        help="rosbag2 directory (runs/<id>/bag); several (a run, then its reruns) are scored "
        "as one run, a later attempt of an episode superseding an earlier one; with --map, "
        "one or more of a robot's bags (SQLite3 or MCAP)",
    )
    replay.add_argument("--radius", type=float, action="append", help=RADIUS_HELP)
    replay.add_argument("--out", type=Path, help="write metrics.json and report.md here")
    replay.add_argument(
        "--task-file",
        "--task",
        type=Path,
        help="suite.json with the episodes' targets, for bags whose events carry no ground truth",
    )
    replay.add_argument(
        "--map",
        type=Path,
        help="mapping YAML for a bag recorded by another stack: pose source, collision and "
        "stop signals, episode cuts (needs --task)",
    )
    replay.add_argument(
        "--pose-topic", help="score positions from this pose topic (e.g. a robot's /uav/odom)"
    )
    replay.add_argument(
        "--pose-frame",
        choices=("map", "start"),
        default="start",
        help="frame of --pose-topic: the map, or odometry starting at each episode's start",
    )
    replay.set_defaults(handler=_cmd_evaluate_bag)

    log = commands.add_parser(
        "metrics", help="score a JSON-lines trajectory log from any harness (docs/metrics.md)"
    )
    log.add_argument("log", type=Path, help="trajectory log, one episode per line")
    log.add_argument("--radius", type=float, action="append", help=RADIUS_HELP)
    log.add_argument("--out", type=Path, help="write the full report and plots here")
    log.set_defaults(handler=_cmd_metrics)

    diff = commands.add_parser(
        "compare",
        help="per-metric deltas between two run directories, several runs laid out like "
        "their paper's results table, or agents' sim runs against their robot runs",
        description="Compare runs. With two run directories (A then B): every metric of A, "
        "of B and B - A, per scope, with warnings where the runs scored different episodes "
        "or families. With NAME=RUN_DIR pairs: one row per run, laid out like the paper's "
        "results table (AGOS-Bench Tables 3 and 4). With --sim and --real: each agent's "
        "simulated and robot runs of one suite side by side per episode, and the rank "
        "correlation of agents between sim and real per metric (docs/sites.md).",
    )
    diff.add_argument(
        "runs",
        nargs="*",
        metavar="RUN",
        help="two run directories (A then B; e.g. a simulated run and a robot's bag scored "
        "with evaluate-bag --map), or NAME=RUN_DIR pairs (e.g. full=runs/a no_e2a=runs/b) for "
        "the results-table layout (AGOS-Bench Table 4)",
    )
    diff.add_argument(
        "--out",
        type=Path,
        help="also write compare.md and overlay.png (both runs' paths per shared episode) here",
    )
    diff.add_argument(
        "--task",
        type=Path,
        help="the runs' suite: the overlay draws its scenes and reference paths",
    )
    diff.add_argument(
        "--sim",
        nargs="+",
        metavar="NAME=RUN_DIR",
        help="each agent's simulated run (a bare RUN_DIR is named by its position: 1, 2, ...)",
    )
    diff.add_argument(
        "--real",
        nargs="+",
        metavar="NAME=RUN_DIR",
        help="each agent's robot run of the same suite, named as in --sim",
    )
    diff.set_defaults(handler=_cmd_compare)

    replay_video = commands.add_parser(
        "replay", help="render an episode's recorded camera views as a video with a HUD"
    )
    replay_video.add_argument("run", type=Path, help="a run directory (runs/<id>) or its bag")
    replay_video.add_argument("--episode", required=True, help="episode id")
    replay_video.add_argument("--video", type=Path, required=True, help="MP4 file to write (H.264)")
    replay_video.add_argument(
        "--fps", type=float, default=2.0, help="frames (recorded observation sets) per second"
    )
    replay_video.set_defaults(handler=_cmd_replay)

    scenes = commands.add_parser(
        "scenes", help="the embedded simulator's scenes: AerialDojo scenes and AGOS towns"
    )
    scenes_commands = scenes.add_subparsers(dest="scenes_command", required=True)
    scenes_commands.add_parser(
        "list", help="print every scene: name, benchmark, family, distribution"
    ).set_defaults(handler=_cmd_scenes_list)

    render = commands.add_parser(
        "render", help="write a PNG montage of a scene's views (AerialDojo scene or AGOS town)"
    )
    render.add_argument("--scene", required=True, help="scene name, e.g. Mall_0 or AgosTown_1")
    render.add_argument("--out", type=Path, required=True, help="PNG file to write")
    render.add_argument(
        "--seed", type=int, default=0, help="scene generation seed (AerialDojo scenes; default 0)"
    )
    render.add_argument(
        "--size", type=int, default=320, help="pixels per side of each view (default 320)"
    )
    render.set_defaults(handler=_cmd_render)

    tasks = commands.add_parser("tasks", help="generate, inspect and validate task suites")
    tasks_commands = tasks.add_subparsers(dest="tasks_command", required=True)
    generate = tasks_commands.add_parser(
        "generate",
        help="generate a suite: AerialDojo scenes (Hybrid A* references) or AGOS towns",
        description=(
            "Generate a task suite into --out (suite.json and its images). AerialDojo "
            "scenes get object-goal tasks with Hybrid A* reference trajectories "
            "(docs/tasks.md); AGOS towns get search-handoff-verify episodes (docs/agos.md). "
            "Shows progress per scene; --workers shards the scenes over Ray."
        ),
    )
    generate.add_argument(
        "--out", type=Path, required=True, help="suite directory to write (created if missing)"
    )
    generate.add_argument(
        "--scenes",
        nargs="+",
        required=True,
        metavar="SCENE",
        help="AerialDojo scenes or AGOS towns (aerialdojo scenes list); 'all' for every "
        "AerialDojo scene",
    )
    generate.add_argument("--name", help="suite name (default: the --out directory's name)")
    generate.add_argument(
        "--seed", type=int, default=0, help="candidate order and splits (default 0)"
    )
    generate.add_argument(
        "--workers",
        type=int,
        default=1,
        help="scenes generated in parallel on a local Ray instance (default 1: in this process)",
    )
    generate.add_argument(
        "--ray-address", help="generate on this Ray cluster instead (auto, or HOST:PORT)"
    )
    aerialdojo_options = generate.add_argument_group("AerialDojo scenes")
    aerialdojo_options.add_argument(
        "--per-scene", type=int, help="navigation tasks per scene (default: every one found)"
    )
    aerialdojo_options.add_argument(
        "--max-candidates", type=int, help="candidate pairs planned per scene (default: all)"
    )
    aerialdojo_options.add_argument(
        "--record-views", action="store_true", help="record the four views along each reference"
    )
    agos_options = generate.add_argument_group("AGOS towns")
    agos_options.add_argument(
        "--per-setting", type=int, help="episodes per setting, easy, mid and hard (default 2)"
    )
    agos_options.add_argument(
        "--split", choices=("train", "val", "test"), help="split of every episode (default test)"
    )
    agos_options.add_argument(
        "--extra-rule",
        action="append",
        metavar="NAME",
        help="also apply a generation rule AGOS-Bench does not give (repeatable): "
        "no_neutral_targets, no_same_colour_easy_mid, ugv_start_60m_away, "
        "uav_start_out_of_view (docs/agos.md); none by default",
    )
    generate.set_defaults(handler=_cmd_tasks_generate)
    from_site = tasks_commands.add_parser(
        "from-site",
        help="build an AerialDojo-format suite from a surveyed site file (docs/sites.md)",
        description=(
            "Build a task suite into --out (suite.json and images/) from a site file: one "
            "navigation task per (start, target) pair the site lists (every pair by "
            "default), each a SemanticOGS and an ImageOGS episode, with reference actions "
            "planned in the site's free space inside its geofence (none for a site without "
            "a map). The suite records this command."
        ),
    )
    from_site.add_argument("site", type=Path, help="the site file (site.yaml)")
    from_site.add_argument(
        "--out", type=Path, required=True, help="suite directory to write (created if missing)"
    )
    from_site.add_argument(
        "--image-size",
        type=int,
        default=640,
        help="longest side of the reference photographs in the suite, pixels (default 640)",
    )
    from_site.set_defaults(handler=_cmd_tasks_from_site)
    from aerialdojo import carla_suites, server_survey  # noqa: PLC0415 - light; the survey imports its own

    server_survey.add_parser(tasks_commands)
    carla_suites.add_parser(tasks_commands)
    stats = tasks_commands.add_parser(
        "stats",
        help="statistics of a suite (AerialDojo: Table 7 columns; AGOS: per setting; CityNav: "
        "per city and split)",
    )
    stats.add_argument("suite", help="suite.json, its directory, or a shipped suite name")
    stats.add_argument("--csv", type=Path, help="also write the rows as CSV here")
    stats.set_defaults(handler=_cmd_tasks_stats)
    validate = tasks_commands.add_parser(
        "validate",
        help="list every problem of a suite file (AerialDojo, AGOS or CityNav) or of a site "
        "file (site.yaml)",
    )
    validate.add_argument(
        "suite", help="suite.json, its directory, a shipped suite name, or a site's .yaml file"
    )
    validate.set_defaults(handler=_cmd_tasks_validate)

    rerun = commands.add_parser(
        "rerun",
        help="run the episodes a run excluded as infrastructure failures or never started, "
        "then score the whole run",
    )
    rerun.add_argument("run_dir", type=Path, help="a run directory (runs/<id>)")
    rerun.add_argument("--dry-run", action="store_true", help="only list what would run")
    rerun.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        help="stop the nodes after this many seconds and report what ended",
    )
    rerun.set_defaults(handler=_cmd_rerun)

    params = commands.add_parser("params", help="every node parameter, default and meaning")
    params.set_defaults(handler=_cmd_params)
    from aerialdojo import doctor  # noqa: PLC0415 - light; its checks import what they need

    doctor.add_parser(commands)
    from aerialdojo import preflight  # noqa: PLC0415 - light; reading MAVROS imports rclpy

    preflight.add_parser(commands)
    _show_defaults(parser)
    return parser


def _cmd_eval(args: argparse.Namespace) -> int:
    from aerialdojo.graph import (  # noqa: PLC0415
        claim_run_dir,
        default_config,
        default_run_id,
        drives_robots,
        parse_overrides,
        run_dir_of,
        run_specs,
    )

    config = args.config or default_config()
    # Every problem of the configuration at once, before anything is written or started.
    problems: list[str] = []
    overrides = parse_overrides(args.overrides, problems=problems)
    if not args.timeout > 0:
        problems.append(f"--timeout {args.timeout:g}: must be more than 0 seconds")
    if args.live and not 0 <= args.live_port <= 65535:
        problems.append(f"--live-port {args.live_port}: not a TCP port")
    if args.episodes is not None and args.episodes < 1:
        problems.append(
            f"--episodes {args.episodes}: must be at least 1 (leave it out to run every "
            "selected episode)"
        )
        args.episodes = None  # the rest is checked as if it were left out
    sharded = args.workers is not None or bool(args.ray_address)
    if sharded and args.live:
        problems.append("--live watches one graph; a sharded run has one per worker")

    def specs_of(run_id: str) -> list[NodeSpec]:
        return run_specs(
            config,
            run_id=run_id,
            output_dir=str(args.output) if args.output else None,
            episodes=args.episodes,
            replay_transcripts=str(args.replay_transcripts) if args.replay_transcripts else None,
            overrides=overrides,
        )

    # A run id is one directory name: a bad one is named, and nothing is made of it.
    bad_run_id = args.run_id is not None and run_id_problem(args.run_id)
    if bad_run_id:
        problems.append(f"--run-id {args.run_id!r}: {bad_run_id}")
    chosen = args.run_id is not None and not bad_run_id
    run_id = args.run_id if chosen else default_run_id()
    try:
        specs = specs_of(run_id)
    except ConfigError as error:
        problems += error.problems
        if args.output is not None and not bad_run_id:
            problems += _run_dir_problems(args.output / run_id, reused=chosen)
    else:
        problems += _policy_problems(specs, config)
        problems += _domain_problems(specs)
        if sharded and drives_robots(specs):
            problems.append(
                "--workers: a robot flies one episode at a time, under its operator; run it "
                "without --workers"
            )
        # A sharded run's directory is where the same command resumes it (scale.run refuses
        # one that holds another run).
        if not sharded and not bad_run_id:
            problems += _run_dir_problems(run_dir_of(specs), reused=chosen)
    if problems:
        raise ConfigError(*problems)
    if sharded:
        from aerialdojo.scale.run import run_sharded_command  # noqa: PLC0415

        return run_sharded_command(specs, args)
    claimed = claim_run_dir(
        run_dir_of(specs), named=f"--run-id {args.run_id}" if args.run_id else None
    )
    if claimed != run_id:
        specs = specs_of(claimed)
    echo = f"{config}" + "".join(f" {override}" for override in args.overrides)
    return _run_graph(
        specs, args.timeout, live_port=args.live_port if args.live else None, origin=echo
    )


def _domain_problems(specs: list[NodeSpec]) -> list[str]:
    """A graph that drives robots outside it must share their drivers' DDS domain, which
    only the user knows; a private one would never reach them (docs/robots.md)."""
    from aerialdojo.graph import needs_robot_domain  # noqa: PLC0415

    if needs_robot_domain(specs) and not os.environ.get("ROS_DOMAIN_ID"):
        return [
            "ROS_DOMAIN_ID: this graph drives robots whose drivers run outside it; set "
            "ROS_DOMAIN_ID to their domain (ROS's default is 0) so that it reaches them"
        ]
    return []


def _cmd_console(args: argparse.Namespace) -> int:
    import importlib  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from aerialdojo.graph import console_spec, parse_overrides  # noqa: PLC0415
    from aerialdojo.runner import node_command, write_params_file  # noqa: PLC0415

    spec = console_spec(args.config, parse_overrides(args.overrides))
    with tempfile.TemporaryDirectory(prefix="aerialdojo-console-") as directory:
        command = node_command(spec, write_params_file(spec, Path(directory)))
        # In this process, in the foreground: the console reads the operator's terminal.
        node = importlib.import_module(command[command.index("-m") + 1])
        node.main(command[command.index("--ros-args") :])
    return 0


def _policy_problems(specs: list[NodeSpec], source: Path) -> list[str]:
    """A policy that cannot be built (a plug-in that does not import, a model agent without
    a model, a run to replay without transcripts) is named here, not in a node's log."""
    from aerialdojo.agents.plugins import POLICY_NODES, agent_policy  # noqa: PLC0415

    problems = []
    for spec in specs:
        if spec.name in POLICY_NODES:
            try:
                agent_policy(spec.name, dict(spec.parameters), f"{source}: {spec.name}")
            except AerialDojoError as error:
                problems.append(str(error))
    return problems


def _run_dir_problems(run_dir: Path, *, reused: bool) -> list[str]:
    """An existing run directory is never written into (``graph.claim_run_dir``); the output
    directory must be one this user can create run directories in."""
    if reused and run_dir.exists():
        return [
            f"--run-id {run_dir.name}: the run directory {run_dir} exists already; choose "
            "another --run-id, or leave it out for a fresh one"
        ]
    existing = next(parent for parent in run_dir.parents if parent.exists())
    if not existing.is_dir():
        return [f"evaluator.output_dir: {existing} is not a directory"]
    if not os.access(existing, os.W_OK | os.X_OK):
        return [f"evaluator.output_dir: {existing} is not writable, so {run_dir} cannot be made"]
    return []


def _cmd_rerun(args: argparse.Namespace) -> int:
    from aerialdojo.graph import claim_run_dir, run_specs  # noqa: PLC0415
    from aerialdojo.report.run import STATUS_JSON, read_run_status  # noqa: PLC0415
    from aerialdojo.scale.run import run_selection  # noqa: PLC0415

    run_dir: Path = args.run_dir
    status_file = run_dir / STATUS_JSON
    config_file = run_dir / RUN_CONFIG
    for needed in (status_file, config_file):
        if not needed.is_file():
            raise ConfigError(f"{run_dir} is not a run directory: no {needed.name}")
    if (run_dir / "sharding.json").is_file():
        from aerialdojo.scale.run import resume_sharded  # noqa: PLC0415

        return resume_sharded(run_dir, dry_run=args.dry_run, timeout_s=args.timeout)
    status = read_run_status(status_file)
    if status.complete:
        print(f"{run_dir}: complete, every selected episode was scored; nothing to rerun")
        return 0
    # A run whose record names no selection (its evaluator recorded nothing) is rerun whole:
    # the selection comes from the config it ran.
    selection = list(status.selected) or run_selection(
        run_specs(config_file, run_id=run_dir.name, output_dir=str(run_dir.parent))
    )
    missing = [episode_id for episode_id in selection if episode_id not in status.scored]
    if not missing:
        raise ConfigError(
            f"{status_file}: not complete, yet every selected episode is scored; score the run "
            f"again with `aerialdojo evaluate-bag {run_dir / 'bag'} --out {run_dir}`"
        )
    print(f"rerunning {len(missing)} episode(s): {', '.join(missing)}")
    if args.dry_run:
        return 0
    rerun_id = claim_run_dir(run_dir.parent / f"{run_dir.name}-rerun", named=None)
    specs = _rerun_specs(config_file, rerun_id, missing)
    problems = _domain_problems(specs)
    if problems:
        raise ConfigError(*problems)
    code = _run_graph(specs, args.timeout, origin=f"aerialdojo rerun {run_dir}")
    reruns = [*status.reruns, rerun_id]
    bags = [run_dir / "bag", *(run_dir.parent / rerun / "bag" for rerun in reruns)]
    if not all(bag.exists() for bag in bags):
        return code
    # The run and its reruns scored as one, whatever ended this one (an interrupted rerun's
    # scored episodes are kept, never run and paid for again): later attempts supersede the
    # lost ones, and the run's own status says what became of every episode, so a second
    # rerun runs only what is still missing.
    combined = run_dir.parent / rerun_id / "combined"
    print(f"the whole run, {run_dir.name} with its rerun(s) {', '.join(reruns)}: {combined}")
    scored = _score_bags(bags, _radii_of(specs), combined, status_of=run_dir, reruns=reruns)
    return EXIT_INTERRUPTED if code == EXIT_INTERRUPTED else scored


def _rerun_specs(config_file: Path, rerun_id: str, episode_ids: list[str]) -> list[NodeSpec]:
    """The graph that reruns ``episode_ids`` of the run whose saved config is
    ``config_file``, as run ``rerun_id`` beside it. A rerun has no live view, so its first
    episode must not wait for the one ``eval --live`` named in that config (the config holds
    every parameter as the nodes ran), or it would wait ``ready_timeout_s`` and start nothing.
    """
    from aerialdojo.graph import run_specs  # noqa: PLC0415

    specs = run_specs(
        config_file,
        run_id=rerun_id,
        output_dir=str(config_file.parent.parent),
        episode_ids=episode_ids,
    )
    _await_live_view(specs, awaited=False)
    return specs


def _radii_of(specs: list[NodeSpec]) -> list[float] | None:
    evaluator = next(spec for spec in specs if spec.name == "evaluator").parameters
    radii = evaluator.get("success_radii_m") or []
    return [float(radius) for radius in radii] or None  # type: ignore[union-attr]


def _score_bags(
    bags: list[Path],
    radii: list[float] | None,
    out: Path | None,
    *,
    status_of: Path | None = None,
    reruns: Sequence[str] = (),
) -> int:
    """Score bags as one run (``evaluate-bag``); print it; the exit status says whether every
    selected episode was scored.

    Args:
        bags: the bags, a run's first, then its reruns'.
        radii: success radii; None: the benchmark's.
        out: where the report goes, if anywhere.
        status_of: a run directory whose ``run_status.json`` becomes this accounting, with
            ``reruns`` (the rerun directories whose bags it takes in) recorded there.
        reruns: see ``status_of``.
    """
    from aerialdojo.bags.replay import assemble_bags  # noqa: PLC0415
    from aerialdojo.report.run import (  # noqa: PLC0415
        score_assembled,
        update_run_status,
        write_run,
    )

    replayed = assemble_bags(bags)
    result = score_assembled(replayed.assembler, radii, replayed.warnings)
    if out is not None:
        write_run(out, result, bag_digests=replayed.digests if len(bags) == 1 else None)
    if status_of is not None:
        update_run_status(status_of, result, reruns)
    print(result.summary_table)
    print(result.accounting)
    if result.metrics is None:
        return EXIT_FAILED
    return 0 if result.complete else EXIT_INCOMPLETE


def _run_graph(
    specs: list[NodeSpec], timeout_s: float, live_port: int | None = None, origin: str = ""
) -> int:
    """Run the graph of ``specs`` to its report; ``origin`` (the config and its command-line
    overrides) heads the run's saved config.yaml."""
    from aerialdojo.eval_progress import EvalProgress, console_for_progress  # noqa: PLC0415
    from aerialdojo.graph import run_dir_of, write_run_config  # noqa: PLC0415
    from aerialdojo.nodes.progress_monitor import (  # noqa: PLC0415
        PROGRESS_MONITOR_NODE,
        ProgressMonitor,
    )
    from aerialdojo.runner import (  # noqa: PLC0415
        log_tail,
        remove_dead_segments,
        shm_segments,
        start_graph,
        stop_graph,
        wait_for_graph,
    )
    from aerialdojo.runtime import PROGRESS_LISTENER_ENV  # noqa: PLC0415

    if live_port is not None:
        _await_live_view(specs)
    run_dir = run_dir_of(specs)
    console = console_for_progress()
    with contextlib.ExitStack() as held:
        # Held until the nodes have stopped: no other run on the host takes the domain meanwhile.
        domain = _enter_free_domain(held, run_dir)
        write_run_config(run_dir, specs, f"aerialdojo eval: {origin}" if origin else "")
        _warn_of_disk_space(specs, run_dir, console)
        console.print(
            f"[bold]aerialdojo eval[/]: {len(specs)} nodes on ROS_DOMAIN_ID={domain}, "
            f"run directory {run_dir}"
        )
        segments_before = shm_segments()
        progress = EvalProgress(console)
        monitor = ProgressMonitor(progress, run_dir.name)
        # The first episode waits until the task manager sees the monitor. Created before
        # the nodes, it is still found by each of them in its own time, and the task manager
        # waits only for the evaluator otherwise: a short run could end before the progress
        # line had drawn a step. Only this graph's nodes are told: graphs this process starts
        # later (a sharded run's) have no such monitor.
        graph_env = {**os.environ, PROGRESS_LISTENER_ENV: PROGRESS_MONITOR_NODE}
        live = _start_live_view(live_port, console) if live_port is not None else None
        nodes = start_graph(specs, run_dir, env=graph_env)
        interrupted = False
        try:
            outcome = wait_for_graph(nodes, timeout_s)
        except KeyboardInterrupt:
            console.print("interrupted: stopping the nodes (the evaluator reports what ended)")
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut it short
            stop_graph(nodes)
            interrupted = True
        finally:
            monitor.close()
            progress.close()
            remove_dead_segments(segments_before)
            if live is not None:
                live.close()
    if not interrupted and outcome.forced:
        console.print(
            f"[yellow]{', '.join(outcome.forced)} ignored SIGINT[/] and had to be terminated; "
            "see their logs"
        )
    for node in nodes:
        if node.restarts:
            console.print(f"{node.spec.name} died and was restarted {node.restarts} time(s)")
    if not interrupted and not outcome.finished:
        console.print(f"[red]run failed[/]: {outcome.message}")
        if outcome.failed_node:
            failed = next(node for node in nodes if node.spec.name == outcome.failed_node)
            console.print(log_tail(failed.log_path))
    code = _report_of(run_dir, _radii_of(specs), console)
    return EXIT_INTERRUPTED if interrupted else code


def _warn_of_disk_space(specs: list[NodeSpec], run_dir: Path, console: Console) -> None:
    """Say at the start when the run's disk looks too small for its bag: a full disk ends the
    run (its report kept, the rest left to ``aerialdojo rerun``), better known before."""
    from aerialdojo.graph import estimated_bag_bytes  # noqa: PLC0415
    from aerialdojo.scale.run import run_selection  # noqa: PLC0415

    expected = estimated_bag_bytes(specs, len(run_selection(specs)))
    free = shutil.disk_usage(run_dir).free
    if free < expected:
        console.print(
            f"[yellow]warning[/]: {run_dir} has {free / 1e6:.1f} MB free; this run's bag may "
            f"take about {expected / 1e6:.0f} MB. A full disk ends the run with the report of "
            "what ended, and `aerialdojo rerun` runs the rest once there is room."
        )


def _enter_free_domain(stack: contextlib.ExitStack, run_dir: Path) -> str:
    """Take the run's ROS domain on ``stack`` (``runner.run_domain``) and make sure no other
    run is in it (``nodes.domain_guard``): returns the domain, exported for this process's
    listeners and the nodes. A run refused leaves nothing: the directory claimed for it goes.

    Raises:
        DomainTakenError: another run holds or is in the domain; names it and the ways out.
    """
    from aerialdojo.nodes.domain_guard import check_domain_free  # noqa: PLC0415
    from aerialdojo.runner import run_domain  # noqa: PLC0415
    from aerialdojo.runtime import DOMAIN_CHECKED_ENV  # noqa: PLC0415

    try:
        domain = stack.enter_context(run_domain(os.environ, run_dir=run_dir))
        # Set before any listener joins the graph: it must listen in the nodes' domain.
        os.environ["ROS_DOMAIN_ID"] = domain
        check_domain_free()
        # Held and looked at: the task manager need not look again before it serves.
        os.environ[DOMAIN_CHECKED_ENV] = domain
    except DomainTakenError:
        stack.close()
        with contextlib.suppress(OSError):  # not empty: not only this run's, so it stays
            run_dir.rmdir()
        raise
    return domain


def _report_of(run_dir: Path, radii: list[float] | None, console: Console) -> int:
    """Print the report of a run that ended; score its bag where the evaluator wrote none (it
    died). The exit status says whether every selected episode was scored."""
    from aerialdojo.errors import BagError  # noqa: PLC0415
    from aerialdojo.report.run import (  # noqa: PLC0415
        NOTES_FILE,
        REPORT_MD,
        STATUS_JSON,
        read_run_status,
    )

    if not (run_dir / STATUS_JSON).exists():
        if not (run_dir / "bag").exists():
            console.print("[red]no report[/]: the evaluator wrote none and recorded no bag")
            return EXIT_FAILED
        console.print("the evaluator wrote no report: scoring its bag")
        try:
            _score_bags([run_dir / "bag"], radii, run_dir)
        except (BagError, MetricsError) as error:
            console.print(f"[red]no report[/]: {error}")
            return EXIT_FAILED
        except OSError as error:
            console.print(f"[red]no report[/]: cannot write it: {error.strerror or error}")
            return EXIT_FAILED
    report = run_dir / REPORT_MD
    if report.exists():
        print(_summary_section(report.read_text()))
    notes = run_dir / NOTES_FILE
    print(notes.read_text() if notes.exists() else "", end="")
    print(f"report: {report}\nbag: {run_dir / 'bag'}")
    if read_run_status(run_dir / STATUS_JSON).complete:
        return 0
    console.print(f"[yellow]run incomplete[/]: `aerialdojo rerun {run_dir}` runs the rest")
    return EXIT_INCOMPLETE


def _await_live_view(specs: list[NodeSpec], *, awaited: bool = True) -> None:
    """Whether the first episode waits until the live view watches the graph: with
    ``eval --live`` it does, since on a busy machine a short run could otherwise end before
    the view has found its topics; without one (a rerun) it must not."""
    from aerialdojo.nodes.live_view import LIVE_VIEW_NODE  # noqa: PLC0415

    task_manager = next(spec for spec in specs if spec.name == "task_manager").parameters
    listed = task_manager.get("await_viewers", [])
    viewers = [str(viewer) for viewer in listed] if isinstance(listed, list) else []
    others = [viewer for viewer in viewers if viewer != LIVE_VIEW_NODE]
    task_manager["await_viewers"] = [*others, LIVE_VIEW_NODE] if awaited else others


def _start_live_view(port: int, console: Any) -> Any:
    """The --live server and the listener that feeds it, before any node starts."""
    from aerialdojo.bags.typestore import aerialdojo_typestore  # noqa: PLC0415
    from aerialdojo.live import LiveServer  # noqa: PLC0415
    from aerialdojo.nodes.live_view import LiveView  # noqa: PLC0415

    if not 0 <= port <= 65535:
        raise ConfigError(f"--live-port {port}: not a TCP port")
    try:
        server = LiveServer(aerialdojo_typestore(), port)
    except RuntimeError as error:  # the SDK's error for a port in use
        raise ConfigError(f"--live: cannot serve on 127.0.0.1:{port}: {error}") from error
    console.print(
        f"live view: {server.url} (Foxglove app: Open connection, Foxglove WebSocket; "
        "layout config/foxglove/aerialdojo.json)"
    )
    return LiveView(server)


def _summary_section(report_md: str) -> str:
    """The '## Summary' section of a report."""
    start = report_md.find("## Summary")
    end = report_md.find("\n## ", start + 1)
    return report_md[start : end if end != -1 else None].strip() + "\n"


def _cmd_evaluate_bag(args: argparse.Namespace) -> int:
    from aerialdojo.agents.vlm.transcript import TRANSCRIPTS_DIR  # noqa: PLC0415
    from aerialdojo.bags.replay import assemble_bags, read_pose_track  # noqa: PLC0415
    from aerialdojo.report.run import rescoring_lines, score_assembled, write_run  # noqa: PLC0415

    records = None
    digests: dict[str, dict[str, Any]] = {}
    if args.task_file is not None:
        records = _task_file_records(args.task_file)
    if args.map is not None:
        from aerialdojo.bags.mapped import score_mapped_bags  # noqa: PLC0415
        from aerialdojo.bags.mapping import load_mapping  # noqa: PLC0415

        if records is None:
            raise ConfigError("evaluate-bag --map needs --task: the suite the robot flew")
        mapped = score_mapped_bags(args.bags, load_mapping(args.map), records)
        assembler, warnings = mapped.assembler, mapped.warnings
    else:
        track = None
        if args.pose_topic:
            if len(args.bags) > 1:
                raise ConfigError("--pose-topic scores one bag at a time")
            track = read_pose_track(
                args.bags[0], args.pose_topic, relative_to_start=args.pose_frame == "start"
            )
        replayed = assemble_bags(args.bags, records, track)
        assembler, warnings = replayed.assembler, replayed.warnings
        if len(args.bags) == 1:
            digests = replayed.digests
    result = score_assembled(assembler, args.radius, warnings)
    if args.out is not None:
        # A live run's transcripts sit beside its bag: account them the same way (one run:
        # the bags of a run and its rerun hold two transcript directories).
        transcripts = args.bags[0].parent / TRANSCRIPTS_DIR if len(args.bags) == 1 else None
        write_run(
            args.out,
            result,
            transcripts_dir=transcripts,
            suite=args.task_file,
            bag_digests=digests,
        )
    print(result.summary_table)
    print(result.accounting)
    for line in rescoring_lines(result, args.bags):
        print(line)
    if result.metrics is None:
        return EXIT_FAILED
    return 0 if result.complete else EXIT_INCOMPLETE


def _task_file_records(path: Path) -> dict[str, dict[str, object]]:
    """The STARTED records of a suite's episodes, for bags whose events carry none."""
    from aerialdojo.protocols import load_suite  # noqa: PLC0415
    from aerialdojo.tasks.suite import resolve_suite  # noqa: PLC0415

    protocol, suite = load_suite(resolve_suite(path))
    assert protocol.episodes is not None
    record = protocol.episodes.ground_truth_record
    if record is None:
        raise ConfigError(f"{path}: {protocol.title} episodes cannot be scored from a task file")
    return {episode_id: record(suite.episode(episode_id)) for episode_id in suite.select("all")}


def _cmd_metrics(args: argparse.Namespace) -> int:
    from aerialdojo.report.markdown import summary_table  # noqa: PLC0415
    from aerialdojo.report.run import headline, score_trajectory_log, write_run  # noqa: PLC0415

    result = score_trajectory_log(args.log, args.radius)
    assert result.metrics is not None and result.protocol is not None
    print(f"{headline(result, args.log)}\n\n{summary_table(result.metrics, result.protocol)}")
    if args.out is not None:
        write_run(args.out, result)
        print(f"report: {args.out / 'report.md'}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from aerialdojo.report.compare import (  # noqa: PLC0415
        compare_runs,
        comparison_markdown,
        comparison_text,
        paper_table,
        write_overlay,
    )

    if args.sim is not None or args.real is not None:
        return _compare_sim_real(args)
    named = [run.partition("=") for run in args.runs]
    if not args.runs:
        raise ConfigError("compare needs run directories, or --sim and --real")
    if all(equals for _, equals, _ in named):
        print(paper_table({name: Path(directory) for name, _, directory in named}), end="")
        return 0
    if len(args.runs) != 2 or any(equals for _, equals, _ in named):
        raise ConfigError(
            "compare takes two run directories, or NAME=RUN_DIR pairs for a results table"
        )
    run_a, run_b = Path(args.runs[0]), Path(args.runs[1])
    comparison = compare_runs(run_a, run_b)
    text = comparison_text(comparison, run_a, run_b)
    print(text, end="")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        overlay = args.out / "overlay.png"
        scenery = None
        if args.task is not None:
            from aerialdojo.report.maps import suite_scenery  # noqa: PLC0415

            scenery = suite_scenery(args.task)
        drawn = write_overlay(run_a, run_b, overlay, scenery)
        (args.out / "compare.md").write_text(
            comparison_markdown(comparison, run_a, run_b, overlay.name), encoding="utf-8"
        )
        print(f"overlay of {len(drawn)} episode(s): {overlay}")
    return 0


def _agent_runs(option: str, words: list[str] | None) -> dict[str, Path]:
    """``--sim``/``--real`` words as agent name -> run directory: NAME=RUN_DIR, or bare
    directories named by their position."""
    if not words:
        raise ConfigError(f"compare --sim ... --real ...: {option} names no run")
    named = [word.partition("=") for word in words]
    if any(equals for _, equals, _ in named) and not all(equals for _, equals, _ in named):
        raise ConfigError(f"{option}: give every run as NAME=RUN_DIR, or none")
    runs = {
        (name if equals else str(position)): Path(directory if equals else name)
        for position, (name, equals, directory) in enumerate(named, start=1)
    }
    if len(runs) != len(words):
        raise ConfigError(f"{option}: an agent name is given twice")
    return runs


def _compare_sim_real(args: argparse.Namespace) -> int:
    from aerialdojo.report.compare import write_overlay  # noqa: PLC0415
    from aerialdojo.report.sim_real import (  # noqa: PLC0415
        compare_sim_real,
        sim_real_json,
        sim_real_markdown,
    )

    if args.runs:
        raise ConfigError("compare: give runs either as positional arguments or as --sim/--real")
    comparison = compare_sim_real(_agent_runs("--sim", args.sim), _agent_runs("--real", args.real))
    text = sim_real_markdown(comparison)
    print(text, end="")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "sim_real.md").write_text(text, encoding="utf-8")
        (args.out / "sim_real.json").write_text(
            json.dumps(sim_real_json(comparison), indent=2, allow_nan=False) + "\n",
            encoding="utf-8",
        )
        scenery = None
        if args.task is not None:
            from aerialdojo.report.maps import suite_scenery  # noqa: PLC0415

            scenery = suite_scenery(args.task)
        for pair in comparison.agents:
            overlay = args.out / f"overlay_{pair.agent}.png"
            try:
                write_overlay(pair.sim_dir, pair.real_dir, overlay, scenery)
            except MetricsError as error:
                print(f"no overlay of {pair.agent}: {error}", file=sys.stderr)
        print(f"written: {args.out / 'sim_real.md'}, {args.out / 'sim_real.json'}")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from aerialdojo.video import episode_frames, run_bag, write_video  # noqa: PLC0415

    if not args.fps > 0 or args.fps > 1000:
        raise ConfigError(f"--fps {args.fps}: must be in (0, 1000]")
    frames = episode_frames(run_bag(args.run), args.episode)
    written = write_video(frames, args.episode, args.video, args.fps)
    print(f"{args.video}: {written} frame(s) of {args.episode}")
    return 0


def _cmd_scenes_list(_args: argparse.Namespace) -> int:
    from aerialdojo.agos.town import TOWN_NAMES  # noqa: PLC0415
    from aerialdojo.citynav.city import CITY_NAMES  # noqa: PLC0415
    from aerialdojo.sim.embedded.scenes import SCENE_TYPES, scene_names  # noqa: PLC0415

    families = {scene_type.name: scene_type.family for scene_type in SCENE_TYPES}
    for name in scene_names():
        scene_type, _, instance = name.rpartition("_")
        split = "in distribution" if instance == "0" else "out of distribution"
        print(f"{name:<20} {'aerialdojo':<11} {families[scene_type]:<15} {split}")
    for town in TOWN_NAMES:
        print(f"{town:<20} {'agos':<11} {'urban':<15} town for UAV + UGV search")
    for city in CITY_NAMES:
        print(f"{city:<20} {'citynav':<11} {'urban':<15} city for aerial language navigation")
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    from aerialdojo.agos.town import TOWN_NAMES, load_town  # noqa: PLC0415
    from aerialdojo.citynav.city import CITY_NAMES  # noqa: PLC0415
    from aerialdojo.sim.embedded.montage import write_montage, write_scene_montage  # noqa: PLC0415

    if args.scene in CITY_NAMES:
        from aerialdojo.citynav.overview import write_city_overview  # noqa: PLC0415

        print(write_city_overview(args.scene, args.out, size=args.size))
        return 0

    if args.scene in TOWN_NAMES:
        print(write_scene_montage(load_town(args.scene).scene, args.out, size=args.size))
    else:
        print(write_montage(args.scene, args.out, seed=args.seed, size=args.size))
    return 0


def _cmd_tasks_generate(args: argparse.Namespace) -> int:
    from aerialdojo.agos.town import TOWN_NAMES  # noqa: PLC0415
    from aerialdojo.citynav.city import CITY_NAMES  # noqa: PLC0415
    from aerialdojo.errors import UnknownSceneError  # noqa: PLC0415
    from aerialdojo.sim.embedded.scenes import scene_names  # noqa: PLC0415
    from aerialdojo.tasks.progress import console_progress  # noqa: PLC0415

    known = scene_names()
    scenes = known if args.scenes == ["all"] else list(args.scenes)
    cities = [scene for scene in scenes if scene in CITY_NAMES]
    if cities:
        # CityNav suites hold splits over fixed cities (train and val_seen share theirs), not
        # one city's tasks; their generator takes splits.
        raise ConfigError(
            f"--scenes {', '.join(cities)}: CityNav suites are generated by split, not by "
            "city: python -m aerialdojo.citynav.generate --help"
        )
    unknown = [scene for scene in scenes if scene not in known and scene not in TOWN_NAMES]
    if unknown:
        raise UnknownSceneError(
            f"--scenes: unknown {', '.join(unknown)}; AerialDojo scenes: {', '.join(known)}; "
            f"AGOS towns: {', '.join(TOWN_NAMES)} (aerialdojo scenes list)"
        )
    towns = [scene for scene in scenes if scene in TOWN_NAMES]
    if towns and len(towns) < len(scenes):
        raise ConfigError(
            f"--scenes mixes AGOS towns ({', '.join(towns)}) with AerialDojo scenes: a suite "
            "holds one benchmark"
        )
    options = {
        "AerialDojo scenes": {
            "--per-scene": args.per_scene,
            "--max-candidates": args.max_candidates,
            "--record-views": args.record_views or None,
        },
        "AGOS towns": {
            "--per-setting": args.per_setting,
            "--split": args.split,
            "--extra-rule": args.extra_rule,
        },
    }
    other = "AerialDojo scenes" if towns else "AGOS towns"
    misplaced = [option for option, value in options[other].items() if value is not None]
    if misplaced:
        raise ConfigError(f"{', '.join(misplaced)}: only for {other}")
    name = args.name or args.out.resolve().name
    unit = "episodes" if towns else "candidate pairs"
    if towns:
        from aerialdojo.agos.generate import ExtraRules  # noqa: PLC0415

        rules = ExtraRules.named(args.extra_rule or [])  # an unknown name fails here
    with console_progress(scenes, unit=unit) as progress:
        if towns:
            from aerialdojo.agos.generate import generate_suite as generate_agos  # noqa: PLC0415

            path = generate_agos(
                args.out,
                towns=towns,
                per_setting=args.per_setting or 2,
                split=args.split or "test",
                seed=args.seed,
                name=name,
                workers=args.workers,
                ray_address=args.ray_address,
                progress=progress,
                rules=rules,
            )
        else:
            from aerialdojo.tasks.embedded import generate_suite  # noqa: PLC0415

            path = generate_suite(
                scenes,
                args.out,
                seed=args.seed,
                per_scene=args.per_scene,
                name=name,
                max_candidates=args.max_candidates,
                workers=args.workers,
                ray_address=args.ray_address,
                record_views=args.record_views,
                progress=progress,
            )
    print(path)
    return 0


def _cmd_tasks_from_site(args: argparse.Namespace) -> int:
    from aerialdojo.sites.build import build_site_suite, from_site_command  # noqa: PLC0415
    from aerialdojo.sites.site import load_site  # noqa: PLC0415

    site = load_site(args.site)
    command = from_site_command(args.site, args.out, args.image_size)
    built = build_site_suite(site, args.out, command=command, image_size=args.image_size)
    for message in built.messages():
        print(message, file=sys.stderr)
    suite = built.suite
    print(
        f"{suite.path}: {len(suite.episodes) // 2} task(s) of site {site.name} "
        f"({site.free_space}), {len(suite.episodes)} episodes"
    )
    return 0


def _suite_argument(text: str) -> tuple[Path, str]:
    """The suite file a command-line argument names, and how to name it in messages: as
    typed, with shipped suites by name rather than by their install path."""
    from aerialdojo.tasks.suite import resolve_suite, shipped_suites_dir  # noqa: PLC0415

    path = resolve_suite(text)
    if path.resolve().is_relative_to(shipped_suites_dir().resolve()):
        return path, f"{path.parent.name} (shipped suite)"
    return path, str(path)


def _as_typed(problems: Sequence[str], path: Path, label: str) -> list[str]:
    """Problems naming the suite as typed rather than by the path it resolved to."""
    return [problem.replace(str(path), label) for problem in problems]


def _suite_problems(path: Path, label: str) -> list[str]:
    """Every problem of a suite file, checked by its benchmark's rules; the suite's own
    problems when it names no benchmark the registry knows."""
    from aerialdojo.protocols import suite_protocol  # noqa: PLC0415

    try:
        rules = suite_protocol(path).episodes
    except (ConfigError, TaskFileError) as error:
        return _as_typed(error.problems, path, label)
    assert rules is not None  # suite_protocol refuses benchmarks without episodes
    return _as_typed(rules.validate_suite(path), path, label)


def _cmd_tasks_stats(args: argparse.Namespace) -> int:
    from aerialdojo.protocols import suite_protocol  # noqa: PLC0415

    path, label = _suite_argument(args.suite)
    try:
        found = suite_protocol(path)
        assert found.episodes is not None  # suite_protocol refuses benchmarks without them
        if found.episodes.suite_stats is None:
            raise ConfigError(f"{label}: {found.title} suites have no statistics")
        markdown, csv = found.episodes.suite_stats(path)
    except TaskFileError as error:
        raise TaskFileError(label, _as_typed(error.problems, path, label)) from error
    except ConfigError as error:
        raise ConfigError(*_as_typed(error.problems, path, label)) from error
    print(markdown)
    if args.csv is not None:
        args.csv.write_text(csv, encoding="utf-8")
    return 0


def _site_problems(path: Path) -> list[str]:
    """Every problem of a site file (empty: it loads)."""
    from aerialdojo.sites.site import load_site  # noqa: PLC0415

    try:
        load_site(path)
    except ConfigError as error:
        return error.problems
    return []


def _cmd_tasks_validate(args: argparse.Namespace) -> int:
    if Path(args.suite).suffix in (".yaml", ".yml"):
        label = args.suite
        problems = _site_problems(Path(args.suite))
    else:
        path, label = _suite_argument(args.suite)
        problems = _suite_problems(path, label)
    for problem in problems:
        print(problem)
    print(f"{label}: {'ok' if not problems else f'{len(problems)} problem(s)'}", file=sys.stderr)
    return EXIT_FAILED if problems else 0


def _cmd_params(_: argparse.Namespace) -> int:
    from aerialdojo.params import NODE_PARAMETERS  # noqa: PLC0415

    for node, specs in NODE_PARAMETERS.items():
        print(f"{node}:")
        for spec in specs:
            print(f"  {spec.name} = {spec.default!r}: {spec.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
