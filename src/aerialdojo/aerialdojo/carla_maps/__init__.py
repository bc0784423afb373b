"""Road graphs of CARLA's maps, derived from their OpenDRIVE files (ROS-free).

A CARLA map's roads are known before any server runs: every CARLA package ships the map's
OpenDRIVE file (``CarlaUE4/Content/Carla/Maps/OpenDrive/<map>.xodr``), which is also what the
server's waypoints come from (LibCarla ``road/``). ``derive_road_graph`` samples its driving
lanes into the directed fine graph AGOS-Bench's UGV drives on (appendix A.1.1: about 2 m,
along the lanes' successors, through the junctions' connections) and its kerbside
shoulder lanes into parking spots. The result is committed as a compact JSON file per map
(``<map>.json`` beside this module, with ``NOTICE``: the maps are CARLA's, MIT-licensed,
(c) CVC at the Universitat Autonoma de Barcelona); the command that derives it is recorded
in it, and a test derives it again where the OpenDRIVE file is at hand.

Frame: aerialdojo's map frame of a CARLA world (CARLA's world mirrored in y), which is the
OpenDRIVE frame itself: LibCarla negates OpenDRIVE's y and heading to make CARLA's
(``road/Lane.cpp`` ``ComputeTransform``: "Unreal's Y axis hack").
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from aerialdojo.errors import ConfigError, UnknownSceneError
from aerialdojo.opendrive import OpenDrive, lane_graph

FORMAT = "aerialdojo-road-graph/1"
#: The maps whose road graphs are shipped.
CARLA_MAPS = ("Town10HD",)
#: AGOS-Bench's fine-graph resolution (appendix A.1.1).
FINE_SPACING_M = 2.0
#: Lane changes start every this many fine nodes and land this many nodes further on (the
#: same: landings fall on the neighbour lane's own lane-change nodes, about 10 m apart).
LANE_CHANGE_EVERY = 5
LANE_CHANGE_AHEAD = 5
#: Spacing of parking spots along a shoulder lane: a car's length and a gap.
PARKING_SPACING_M = 6.0
#: Shoulder lanes narrower than this hold no car (Town10HD's 0.64 m kerb strips).
PARKING_MIN_WIDTH_M = 1.8
#: The notice every file derived from a CARLA map carries.
LICENCE_NOTICE = (
    "Derived from CARLA's OpenDRIVE map, Copyright (c) 2017-2020 Computer Vision Center (CVC) "
    "at the Universitat Autonoma de Barcelona (UAB), under the MIT license: see NOTICE."
)
#: Coordinates are written to the centimetre, headings and widths to 1e-4.
_DECIMALS = 2


@dataclass(frozen=True)
class CarlaRoadMap:
    """A CARLA map's driving lanes as a directed fine graph, and its parking spots.

    Attributes:
        name: the map, e.g. ``Town10HD`` (CARLA's ``Town10HD_Opt`` loads the same roads).
        nodes: (N, 5) x, y, z, heading of travel (rad), lane width (m), map frame.
        junction: (N,) whether each node lies on a junction's connecting lane.
        junction_ids: (N,) the OpenDRIVE id of that junction, -1 outside junctions.
        successors: node -> the nodes a vehicle drives on to along its lane and into the
            lanes it links to.
        lane_changes: (from, to) node pairs changing to a neighbouring lane of the same
            direction.
        parking: (M, 4) x, y, heading, width of spots on kerbside shoulder lanes, heading in
            the direction of travel of the lane beside them.
        source_sha256: SHA-256 of the OpenDRIVE file it was derived from.
        command: the command that derives it.
    """

    name: str
    nodes: np.ndarray
    junction: np.ndarray
    junction_ids: np.ndarray
    successors: tuple[tuple[int, ...], ...]
    lane_changes: tuple[tuple[int, int], ...]
    parking: np.ndarray
    source_sha256: str
    command: str

    def bounds(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """(x_min, y_min), (x_max, y_max) of the lanes' centre lines."""
        low, high = self.nodes[:, :2].min(axis=0), self.nodes[:, :2].max(axis=0)
        return (float(low[0]), float(low[1])), (float(high[0]), float(high[1]))


def derive_road_graph(
    drive: OpenDrive, *, name: str, source_sha256: str, command: str
) -> dict[str, Any]:
    """The JSON document of a map's road graph (``write_road_graph`` writes it).

    Raises:
        ConfigError: the map has no driving lane.
    """
    lanes = lane_graph(drive, spacing_m=FINE_SPACING_M)
    if not lanes.lanes:
        raise ConfigError(f"{drive.source}: no driving lane")
    first: dict[tuple[str, int, int], int] = {}
    rows: list[list[float]] = []
    junction: list[int] = []  # the junction id of each node, -1 outside junctions
    for key in sorted(lanes.lanes, key=_lane_order):
        samples = lanes.lanes[key]
        first[key] = len(rows)
        rows.extend(samples.points.tolist())
        junction.extend([int(samples.junction) if samples.junction else -1] * len(samples.points))
    successors: list[list[int]] = [[] for _ in rows]
    for key, start in first.items():
        count = len(lanes.lanes[key].points)
        for k in range(count - 1):
            successors[start + k].append(start + k + 1)
        successors[start + count - 1].extend(sorted(first[n] for n in lanes.successors[key]))
    changes = [
        [first[source[0]] + source[1], first[target[0]] + target[1]]
        for source, target in _lane_changes(lanes.lanes)
    ]
    shoulders = lane_graph(drive, spacing_m=PARKING_SPACING_M, lane_types=("shoulder",))
    parking = [
        [x, y, heading, width]
        for key in sorted(shoulders.lanes, key=_lane_order)
        if not shoulders.lanes[key].in_junction
        for x, y, _z, heading, width in shoulders.lanes[key].points.tolist()
        if width >= PARKING_MIN_WIDTH_M
    ]
    return {
        "format": FORMAT,
        "map": name,
        "notice": LICENCE_NOTICE,
        "source": {"file": f"{name}.xodr", "sha256": source_sha256},
        "command": command,
        "frame": "aerialdojo map frame of the CARLA world (OpenDRIVE x, y; CARLA y negated)",
        "spacing_m": FINE_SPACING_M,
        "node_fields": ["x", "y", "z", "heading_rad", "width_m", "junction_id"],
        "nodes": [
            [*(round(v, _DECIMALS) for v in row[:3]), round(row[3], 4), round(row[4], 4), j]
            for row, j in zip(rows, junction, strict=True)
        ],
        "successors": successors,
        "lane_changes": changes,
        "parking_fields": ["x", "y", "heading_rad", "width_m"],
        "parking": [
            [round(x, _DECIMALS), round(y, _DECIMALS), round(h, 4), round(w, 4)]
            for x, y, h, w in parking
        ],
    }


def _lane_changes(
    lanes: dict[tuple[str, int, int], Any],
) -> list[tuple[tuple[tuple[str, int, int], int], tuple[tuple[str, int, int], int]]]:
    """Lane changes between neighbouring lanes of one direction outside junctions, every
    ``LANE_CHANGE_EVERY`` nodes, each landing ``LANE_CHANGE_AHEAD`` nodes further on: native
    lane successors alone leave a town's outer lanes a loop that can be entered and never
    left (Town10HD's second lanes only lead straight on), where a driver would change lanes.
    Both lanes of one section are sampled at the same road positions, so node k of one is
    beside node k of the other. Road marks (solid or broken) are not read."""
    changes = []
    for (road, section, lane), samples in lanes.items():
        if samples.in_junction:
            continue
        for neighbour in (lane - 1, lane + 1):
            other = (road, section, neighbour)
            if neighbour == 0 or other not in lanes:
                continue
            count = min(len(samples.points), len(lanes[other].points))
            changes += [
                (((road, section, lane), k), (other, min(k + LANE_CHANGE_AHEAD, count - 1)))
                for k in range(0, count - 1, LANE_CHANGE_EVERY)
            ]
    return changes


def _lane_order(key: tuple[str, int, int]) -> tuple[int, str, int, int]:
    """Lanes in a stable order: numeric road ids by number."""
    road, section, lane = key
    return (int(road) if road.isdigit() else -1, road, section, lane)


def write_road_graph(document: dict[str, Any], path: Path) -> Path:
    """Write a road graph document compactly: one node per line, for diffs."""
    lists = ("nodes", "successors", "lane_changes", "parking")
    head = {k: v for k, v in document.items() if k not in lists}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    for key in lists:
        rows = document[key]
        lines.append(f"  {json.dumps(key)}: [")
        lines += [
            f"    {json.dumps(row, separators=(',', ':'))}{',' if i < len(rows) - 1 else ''}"
            for i, row in enumerate(rows)
        ]
        lines.append("  ]" + ("," if key != "parking" else ""))
    lines.append("}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def road_graph_path(name: str) -> Path:
    """Where the shipped road graph of map ``name`` lives."""
    return Path(str(resources.files("aerialdojo.carla_maps").joinpath(f"{name}.json")))


@functools.lru_cache(maxsize=4)
def load_road_map(name: str) -> CarlaRoadMap:
    """The shipped road graph of CARLA map ``name``.

    Raises:
        UnknownSceneError: no road graph is shipped for it.
        ConfigError: the file is not a road graph of this format.
    """
    if name not in CARLA_MAPS:
        raise UnknownSceneError(
            f"no road graph of CARLA map {name!r} is shipped; maps: {', '.join(CARLA_MAPS)}"
        )
    path = road_graph_path(name)
    document = json.loads(path.read_text(encoding="utf-8"))
    if document.get("format") != FORMAT or document.get("map") != name:
        raise ConfigError(f"{path}: not an {FORMAT} file of {name}")
    nodes = np.asarray(document["nodes"], dtype=np.float64)
    successors = tuple(tuple(int(n) for n in out) for out in document["successors"])
    changes = tuple((int(a), int(b)) for a, b in document["lane_changes"])
    if len(successors) != len(nodes) or any(
        not 0 <= n < len(nodes) for out in (*successors, *changes) for n in out
    ):
        raise ConfigError(f"{path}: successors do not match its {len(nodes)} nodes")
    parking = np.asarray(document["parking"], dtype=np.float64).reshape(-1, 4)
    if not (np.isfinite(nodes).all() and np.isfinite(parking).all()):
        raise ConfigError(f"{path}: non-finite coordinates")
    return CarlaRoadMap(
        name=name,
        nodes=nodes[:, :5],
        junction=nodes[:, 5] >= 0,
        junction_ids=nodes[:, 5].astype(np.int64),
        successors=successors,
        lane_changes=changes,
        parking=parking,
        source_sha256=str(document["source"]["sha256"]),
        command=str(document["command"]),
    )
