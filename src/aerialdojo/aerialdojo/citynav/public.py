"""The public CityNav data in our schema (CityNav, section 5.1; the authors' data layout).

Inputs, as the authors publish them:

- ``citynav_<split>[_<difficulty>].json``: a list of records, each with ``area`` and
  ``block`` (the SensatUrban map ``<area>_block_<block>``), ``object_ids`` and ``ann_ids``
  (the CityRefer goal object and description), ``descriptions``, ``trajectory`` (the human
  demonstration: 5D poses ``[x, y, z, yaw, pitch]`` or ``[x, y, z, dx, dy, dz]`` with a view
  direction), ``marker_positions``, ``target_positions`` (the goal is the last), and
  ``split`` (``train_seen``, ``val_seen``, ``val_unseen``, ``test_unseen``).
- CityRefer's ``objects.json``: map name -> object id -> ``name`` (landmarks have one),
  ``object_type``, ``position``, ``dimension``, ``contour``.

Each record becomes an episode (start: the demonstration's first pose; goal: the last target
position; reference: the shortest path over the CityNav actions, as the paper's SP
trajectories), and each map a city map file with the named CityRefer objects as landmarks.
SensatUrban's coordinates are local metres; their geographic origin is not published, so the
map files carry an approximate city centre per area (``GEO_ORIGINS``), to be replaced where
a survey gives the true one. Every problem names file, record and field.

    python -m aerialdojo.citynav.public --objects objects.json --out DIR citynav_val_seen.json
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aerialdojo.citynav.city import CityMap, Landmark, rectangle
from aerialdojo.citynav.episodes import (
    NADIR_PITCH,
    SETTINGS,
    CityNavEpisode,
    load_citynav_suite,
    save_citynav_suite,
)
from aerialdojo.citynav.geo import GeoReference
from aerialdojo.citynav.reference import shortest_reference
from aerialdojo.errors import TaskFileError, TaskGenerationError
from aerialdojo.geometry import Pose

#: The public files' split names -> ours.
SPLIT_NAMES = {
    "train_seen": "train",
    "val_seen": "val_seen",
    "val_unseen": "val_unseen",
    "test_unseen": "test_unseen",
}
#: Approximate centres of the scanned cities (SensatUrban publishes local coordinates only).
GEO_ORIGINS = {"cambridge": (52.2053, 0.1218, 15.0), "birmingham": (52.4862, -1.8904, 140.0)}
MAPS_DIR = "maps"
_FILE_NAME = re.compile(r"citynav_(?P<split>[a-z_]+?)(?:_(?P<setting>easy|medium|hard))?\.json$")
_REQUIRED = (
    "area",
    "block",
    "object_ids",
    "ann_ids",
    "descriptions",
    "trajectory",
    "target_positions",
    "split",
)


def _goal_kind(object_type: str) -> str | None:
    """Our goal kind of a CityRefer object type (building, car, ground, parking)."""
    lowered = object_type.lower()
    for word, kind in (
        ("park", "parking_lot"),
        ("car", "car"),
        ("build", "building"),
        ("ground", "ground"),
    ):
        if word in lowered:
            return kind
    return None


def _landmark_kind(object_type: str) -> str:
    lowered = object_type.lower()
    for word, kind in (
        ("road", "street"),
        ("street", "street"),
        ("square", "square"),
        ("park", "park"),
        ("green", "park"),
        ("ground", "park"),
    ):
        if word in lowered:
            return kind
    return "building"


def _start_pose(raw: Any) -> tuple[Pose, float]:
    """The first demonstration pose and its pitch: ``[x, y, z, yaw, pitch]`` or a position
    and a view direction ``[x, y, z, dx, dy, dz]``.

    Raises:
        ValueError: neither form.
    """
    values = [float(v) for v in raw]
    if len(values) == 5:
        x, y, z, yaw, pitch = values
    elif len(values) == 6:
        x, y, z, dx, dy, dz = values
        yaw, pitch = math.atan2(dy, dx), math.atan2(dz, math.hypot(dx, dy))
    else:
        raise ValueError(f"a pose has 5 or 6 numbers, got {len(values)}")
    return Pose(x, y, z, yaw), pitch


def city_maps(objects: dict[str, Any], where: str, ground: dict[str, float]) -> dict[str, CityMap]:
    """A city map per CityRefer map: its named objects as landmarks.

    Args:
        objects: the parsed ``objects.json``.
        where: its path, for errors.
        ground: ground height per map (the lowest object bottom where absent).

    Raises:
        TaskFileError: a malformed object; every problem is listed.
    """
    problems: list[str] = []
    maps = {}
    for map_name, entries in objects.items():
        landmarks, corners, bottoms = [], [], []
        for object_id, raw in entries.items():
            at = f"{where}: {map_name} object {object_id}"
            try:
                x, y, z = (float(v) for v in raw["position"])
                dx, dy, dz = (float(v) for v in raw["dimension"])
                contour = [(float(px), float(py)) for px, py in raw.get("contour") or []]
            except (KeyError, TypeError, ValueError) as error:
                problems.append(f"{at}: position/dimension/contour: {error!r}")
                continue
            outline = tuple(contour) if len(contour) >= 3 else rectangle(x, y, dx, dy)
            corners += outline
            bottoms.append(z - dz / 2.0)
            if raw.get("name"):
                kind = _landmark_kind(str(raw.get("object_type", "")))
                landmarks.append(Landmark(name=str(raw["name"]), kind=kind, polygon=outline))
        if not corners:
            continue
        xs, ys = zip(*corners, strict=True)
        area = map_name.split("_block_")[0]
        latitude, longitude, height = GEO_ORIGINS.get(area, (0.0, 0.0, 0.0))
        maps[map_name] = CityMap(
            name=map_name,
            bounds=(min(xs) - 50.0, min(ys) - 50.0, max(xs) + 50.0, max(ys) + 50.0),
            ground_z=ground.get(map_name, min(bottoms)),
            geo=GeoReference(latitude_deg=latitude, longitude_deg=longitude, height_m=height),
            landmarks=tuple(landmarks),
        )
    if problems:
        raise TaskFileError(where, problems)
    return maps


def convert_records(
    path: Path, records: Any, objects: dict[str, Any], maps: dict[str, CityMap], problems: list[str]
) -> list[CityNavEpisode]:
    """Episodes of one trajectory file's records; problems name file, record and field."""
    match = _FILE_NAME.search(path.name)
    setting = (match.group("setting") if match else None) or "all"
    if not isinstance(records, list):
        problems.append(f"{path}: expected a list of records, got {type(records).__name__}")
        return []
    episodes = []
    for index, raw in enumerate(records):
        where = f"{path}: record {index}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected an object, got {type(raw).__name__}")
            continue
        missing = [name for name in _REQUIRED if name not in raw]
        if missing:
            problems.append(f"{where}: {', '.join(missing)}: missing")
            continue
        episode = _episode(
            raw, where, setting=setting, objects=objects, maps=maps, problems=problems
        )
        if episode is not None:
            episodes.append(episode)
    return episodes


def _episode(
    raw: dict[str, Any],
    where: str,
    *,
    setting: str,
    objects: dict[str, Any],
    maps: dict[str, CityMap],
    problems: list[str],
) -> CityNavEpisode | None:
    scene = f"{raw['area']}_block_{raw['block']}"
    split = SPLIT_NAMES.get(str(raw["split"]))
    if split is None:
        problems.append(f"{where}: split: {raw['split']!r} is not one of {', '.join(SPLIT_NAMES)}")
        return None
    if scene not in maps:
        problems.append(f"{where}: area/block: no map {scene!r} in objects.json")
        return None
    try:
        object_id, ann_id = str(raw["object_ids"][0]), int(raw["ann_ids"][0])
        description = str(raw["descriptions"][0])
    except (IndexError, TypeError, ValueError) as error:
        problems.append(f"{where}: object_ids/ann_ids/descriptions: {error!r}")
        return None
    target = objects[scene].get(object_id)
    if target is None:
        problems.append(f"{where}: object_ids: no object {object_id} in map {scene}")
        return None
    kind = _goal_kind(str(target.get("object_type", "")))
    if kind is None:
        problems.append(
            f"{where}: object_ids: object {object_id} is a {target.get('object_type')!r}, "
            "not a building, car, ground or parking lot"
        )
        return None
    try:
        start, pitch = _start_pose(raw["trajectory"][0])
        goal = tuple(float(v) for v in raw["target_positions"][-1])
        if len(goal) != 3:
            raise ValueError(f"a position has 3 numbers, got {len(goal)}")
    except (IndexError, TypeError, ValueError) as error:
        problems.append(f"{where}: trajectory/target_positions: {error}")
        return None
    city = maps[scene]
    named = [landmark.name for landmark in city.landmarks_named_in(description)]
    if not named:
        problems.append(f"{where}: descriptions: names no landmark of {scene}")
        return None
    top = goal[2] + float(target["dimension"][2]) / 2.0
    try:
        reference = shortest_reference(start, goal, top + 2.0)  # type: ignore[arg-type]
    except TaskGenerationError as error:
        problems.append(f"{where}: target_positions: {error}")
        return None
    return CityNavEpisode(
        episode_id=f"{scene}-{object_id}-{ann_id}",
        scene=scene,
        split=split,
        setting=setting if setting in SETTINGS else "all",
        start=start,
        pitch=pitch if pitch else NADIR_PITCH,
        description=description,
        goal_kind=kind,
        goal_name=kind.replace("_", " "),
        target_object_id=object_id,
        target_position=goal,  # type: ignore[arg-type]
        landmark_names=tuple(named),
        reference_actions=reference.actions,
        reference_length_m=reference.length_m,
    )


def import_public(
    trajectory_files: Sequence[Path],
    objects_file: Path,
    out: Path,
    *,
    name: str = "citynav_public",
    ground: dict[str, float] | None = None,
) -> Path:
    """Convert public CityNav files into ``out/suite.json`` and ``out/maps/<map>.json``, then
    load the suite back (our validation on top of the conversion's).

    Raises:
        TaskFileError: unreadable files or invalid records; every problem, naming file,
            record and field.
    """
    try:
        objects = json.loads(objects_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TaskFileError(str(objects_file), [f"{objects_file}: cannot read: {error}"]) from error
    maps = city_maps(objects, str(objects_file), ground or {})
    problems: list[str] = []
    episodes: list[CityNavEpisode] = []
    for path in trajectory_files:
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            problems.append(f"{path}: cannot read as JSON: {error}")
            continue
        episodes += convert_records(path, records, objects, maps, problems)
    if problems:
        raise TaskFileError(", ".join(map(str, trajectory_files)), problems)
    (out / MAPS_DIR).mkdir(parents=True, exist_ok=True)
    for scene in sorted({episode.scene for episode in episodes}):
        (out / MAPS_DIR / f"{scene}.json").write_text(json.dumps(maps[scene].to_json()) + "\n")
    path = save_citynav_suite(
        out / "suite.json",
        name=name,
        description=f"CityNav public data: {', '.join(p.name for p in trajectory_files)}",
        episodes=episodes,
        default_selection=[episode.episode_id for episode in episodes],
        maps_dir=MAPS_DIR,
    )
    load_citynav_suite(path)
    return path


def main(argv: list[str] | None = None) -> None:
    """Convert public CityNav files (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trajectories", nargs="+", type=Path, help="citynav_<split>*.json files")
    parser.add_argument("--objects", type=Path, required=True, help="CityRefer objects.json")
    parser.add_argument("--out", type=Path, required=True, help="directory of the suite")
    parser.add_argument("--name", default="citynav_public")
    args = parser.parse_args(argv)
    try:
        path = import_public(args.trajectories, args.objects, args.out, name=args.name)
    except TaskFileError as error:
        raise SystemExit(str(error)) from error
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
