"""``aerialdojo tasks road-graph`` and ``aerialdojo tasks from-carla-map``: a CARLA map's road
graph derived from its OpenDRIVE file, and the suites built on it (docs/simulators.md,
"Suites of CARLA-Air's own world").
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from aerialdojo.errors import ConfigError

#: Where the shipped road graphs are written from, relative to the repository.
ROAD_GRAPH_DIR = "src/aerialdojo/aerialdojo/carla_maps"
#: The benchmarks a CARLA map's suite can be built for.
BENCHMARKS = ("aerialdojo", "agos")


def add_parser(tasks_commands: Any) -> None:
    """Add ``road-graph`` to the ``aerialdojo tasks`` subcommands."""
    road_graph = tasks_commands.add_parser(
        "road-graph",
        help="derive a CARLA map's road graph from its OpenDRIVE file",
        description=(
            "Read a CARLA map's OpenDRIVE file (CarlaUE4/Content/Carla/Maps/OpenDrive/"
            "<map>.xodr) and write its driving lanes as a directed 2 m fine graph with the "
            "parking spots of its shoulder lanes (aerialdojo.carla_maps). The file records "
            "the map's SHA-256, the licence notice and this command."
        ),
    )
    road_graph.add_argument("xodr", type=Path, help="the map's OpenDRIVE file")
    road_graph.add_argument("--map", required=True, help="the map's name, e.g. Town10HD")
    road_graph.add_argument(
        "--out", type=Path, help=f"file to write (default {ROAD_GRAPH_DIR}/<map>.json)"
    )
    road_graph.set_defaults(handler=_cmd_road_graph)
    suite = tasks_commands.add_parser(
        "from-carla-map",
        help="build a suite on a CARLA map from its shipped road graph (targets spawned at reset)",
        description=(
            "Build a suite on a CARLA map without a server, from its road graph: "
            "--benchmark aerialdojo: SemanticOGS tasks whose target props are spawned by "
            "blueprint at reset, references planned over the carriageway; --benchmark agos: "
            "Table 2's episodes whose vehicles are spawned by blueprint at reset. The suite "
            "records this command and carries the map's licence notice."
        ),
    )
    suite.add_argument("--map", required=True, help="the CARLA map, e.g. Town10HD")
    suite.add_argument("--benchmark", required=True, choices=BENCHMARKS)
    suite.add_argument("--out", type=Path, required=True, help="suite directory to write")
    suite.add_argument("--name", required=True, help="the suite's name")
    suite.add_argument("--seed", type=int, default=0, help="the draws' seed (default 0)")
    suite.add_argument(
        "--per-setting", type=int, default=2, help="AGOS: episodes per difficulty (default 2)"
    )
    suite.set_defaults(handler=_cmd_from_carla_map)


def road_graph_command(xodr: Path | str, name: str, out: Path | str) -> str:
    """The command line that derives a road graph (recorded in it)."""
    return shlex.join(
        ["aerialdojo", "tasks", "road-graph", str(xodr), "--map", name, "--out", str(out)]
    )


def _cmd_road_graph(args: argparse.Namespace) -> int:
    from aerialdojo.carla_maps import (  # noqa: PLC0415 - numpy only when used
        derive_road_graph,
        file_sha256,
        write_road_graph,
    )
    from aerialdojo.opendrive import read_opendrive  # noqa: PLC0415

    if not args.map.isidentifier():
        raise ConfigError(f"--map {args.map!r}: a map name is letters, digits and _")
    out = args.out or Path(ROAD_GRAPH_DIR) / f"{args.map}.json"
    document = derive_road_graph(
        read_opendrive(args.xodr),
        name=args.map,
        source_sha256=file_sha256(args.xodr),
        command=road_graph_command(f"{args.map}.xodr", args.map, out),
    )
    write_road_graph(document, out)
    print(
        f"{out}: {len(document['nodes'])} lane nodes, "
        f"{sum(len(s) for s in document['successors'])} edges, "
        f"{len(document['parking'])} parking spots of {args.map}"
    )
    return 0


def from_carla_map_command(args: argparse.Namespace) -> str:
    """The command line that builds a CARLA map's suite (recorded in it)."""
    words = ["aerialdojo", "tasks", "from-carla-map", "--map", args.map]
    words += ["--benchmark", args.benchmark, "--out", str(args.out), "--name", args.name]
    words += ["--seed", str(args.seed)]
    if args.benchmark == "agos":
        words += ["--per-setting", str(args.per_setting)]
    return shlex.join(words)


def _cmd_from_carla_map(args: argparse.Namespace) -> int:
    from aerialdojo.carla_maps import road_graph_path  # noqa: PLC0415

    command = from_carla_map_command(args)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.benchmark == "agos":
        from aerialdojo.agos.carla_generate import generate_carla_agos_suite  # noqa: PLC0415

        path = generate_carla_agos_suite(
            args.out,
            town=args.map,
            per_setting=args.per_setting,
            split="test",
            seed=args.seed,
            name=args.name,
            command=command,
        )
    else:
        from aerialdojo.tasks.carla_town import build_carla_town_suite  # noqa: PLC0415

        path = build_carla_town_suite(
            args.out, town=args.map, seed=args.seed, name=args.name, command=command
        ).path
    notice = road_graph_path(args.map).parent / "NOTICE"
    (args.out / "NOTICE").write_text(notice.read_text(encoding="utf-8"), encoding="utf-8")
    print(f"{path}: a {args.benchmark} suite on {args.map}")
    return 0
