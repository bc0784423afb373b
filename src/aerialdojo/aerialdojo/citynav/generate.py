"""CityNav episodes on the embedded cities (CityNav, sections 3.2 and 5.1).

Each episode picks a goal object, describes it by its kind, its colour and its spatial
relation to one or two named landmarks (every description names at least one), places the
start on the map within 500 m of the goal at 100-150 m above the ground, and plans the
shortest-path reference over the CityNav action set, which is flown once in the simulator
to check that it reaches the goal without touching anything.

    python -m aerialdojo.citynav.generate --out src/aerialdojo/aerialdojo/suites/citynav_mini
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from aerialdojo.citynav.backend import CityNavBackend
from aerialdojo.citynav.city import CITY_NAMES, City, GoalObject, Landmark, load_city
from aerialdojo.citynav.episodes import (
    DEFAULT_ACTION_BUDGET,
    START_ALTITUDE_M,
    CityNavEpisode,
    save_citynav_suite,
)
from aerialdojo.citynav.reference import shortest_reference
from aerialdojo.errors import TaskGenerationError
from aerialdojo.geometry import Pose

#: The city of each split: train and val_seen share one, the unseen splits have their own.
SPLIT_CITIES = {
    "train": CITY_NAMES[0],
    "val_seen": CITY_NAMES[0],
    "val_unseen": CITY_NAMES[1],
    "test_unseen": CITY_NAMES[2],
}
#: A goal is related to a named area or building this close to it, else to its streets.
NEAR_LANDMARK_M = 60.0
#: Clearance the reference keeps above whatever is under the goal.
CLEARANCE_M = 2.0
_COMPASS = (
    "east",
    "north-east",
    "north",
    "north-west",
    "west",
    "south-west",
    "south",
    "south-east",
)
_PHRASES = {
    "car": "the {colour} car",
    "building": "the building with a {colour} roof",
    "ground": "the {colour} ground",
    "parking_lot": "the {colour} parking lot",
}
_VERBS = ("Find", "Fly to", "Go to")


def compass_word(origin: tuple[float, float], point: tuple[float, float]) -> str:
    """One of eight compass words (``"north-east"``) of ``point`` seen from ``origin``."""
    angle = math.atan2(point[1] - origin[1], point[0] - origin[0])
    return _COMPASS[round(angle / (math.pi / 4.0)) % 8]


def _distance_to(polygon: Sequence[tuple[float, float]], point: tuple[float, float]) -> float:
    """Distance from ``point`` to an axis-aligned rectangle's outline or inside (0)."""
    xs, ys = zip(*polygon, strict=True)
    dx = max(min(xs) - point[0], 0.0, point[0] - max(xs))
    dy = max(min(ys) - point[1], 0.0, point[1] - max(ys))
    return math.hypot(dx, dy)


def describe(goal: GoalObject, landmarks: Sequence[Landmark], verb: str) -> tuple[str, list[str]]:
    """A description of ``goal`` naming landmarks and a spatial relation, and the landmark
    names it uses.

    Areas and named buildings within ``NEAR_LANDMARK_M`` give "north of Jesus Green"; else
    the goal's street gives "on the east side of King Street" and the nearest cross street
    "near Green Street".
    """
    where = (goal.position[0], goal.position[1])
    phrase = _PHRASES[goal.kind].format(colour=goal.colour)
    areas = [lm for lm in landmarks if lm.kind != "street"]
    nearest = min(areas, key=lambda lm: _distance_to(lm.polygon, where))
    if _distance_to(nearest.polygon, where) <= NEAR_LANDMARK_M:
        relation = f"{compass_word(nearest.centroid, where)} of {nearest.name}"
        return f"{verb} {phrase} {relation}.", [nearest.name]
    streets = sorted(
        (lm for lm in landmarks if lm.kind == "street"),
        key=lambda lm: _distance_to(lm.polygon, where),
    )
    street = streets[0]
    (x0, y0), _, (x1, y1), _ = street.polygon
    along_y = (x1 - x0) < (y1 - y0)
    cross = next(
        lm
        for lm in streets[1:]
        if ((lm.polygon[2][0] - lm.polygon[0][0]) < (lm.polygon[2][1] - lm.polygon[0][1]))
        != along_y
    )
    if along_y:
        side = "east" if where[0] > (x0 + x1) / 2 else "west"
    else:
        side = "north" if where[1] > (y0 + y1) / 2 else "south"
    on = "on" if goal.kind == "car" else "by"
    text = f"{verb} {phrase} {on} the {side} side of {street.name}, near {cross.name}."
    return text, [street.name, cross.name]


def _floor(goal: GoalObject) -> float:
    """The lowest height the reference may reach over ``goal``: its top plus clearance."""
    top = 2.0 * goal.position[2] if goal.kind in ("building", "car") else 0.2
    return top + CLEARANCE_M


def _start(
    rng: np.random.Generator, goal: GoalObject, distances: tuple[float, float], half: float
) -> Pose:
    for _ in range(100):
        distance = float(rng.uniform(*distances))
        bearing = float(rng.uniform(-math.pi, math.pi))
        x = goal.position[0] + distance * math.cos(bearing)
        y = goal.position[1] + distance * math.sin(bearing)
        if max(abs(x), abs(y)) < half - 15.0:
            altitude = float(rng.uniform(*START_ALTITUDE_M))
            yaw = float(rng.uniform(-math.pi, math.pi))
            return Pose(round(x, 2), round(y, 2), round(altitude, 2), round(yaw, 4))
    raise TaskGenerationError(f"no start {distances} m from {goal.object_id} inside the city")


def _flies_clear(city: City, start: Pose, reference_actions: Sequence[object]) -> bool:
    """Whether the reference, flown in the simulator, touches nothing."""
    backend = CityNavBackend(rigs=CityNavBackend.camera_rigs(["uav"], 8, 8, 90.0))
    backend.reset(city.map.name, {"uav": start})
    for action in reference_actions:
        outcome = backend.execute("uav", action)  # type: ignore[arg-type]
        if outcome.collided or outcome.geofenced:
            return False
    return True


def generate_split(
    split: str,
    count: int,
    *,
    seed: int = 0,
    distances: tuple[float, float] = (60.0, 220.0),
    action_budget: int = DEFAULT_ACTION_BUDGET,
) -> list[CityNavEpisode]:
    """``count`` episodes of ``split`` on its city, deterministic in ``seed``.

    Raises:
        TaskGenerationError: the city has too few reachable goals.
    """
    scene = SPLIT_CITIES[split]
    city = load_city(scene)
    rng = np.random.default_rng([seed, sum(map(ord, split))])
    landmarks = city.map.landmarks
    episodes: list[CityNavEpisode] = []
    # Every goal kind in turn (section 3.3 lists four), each goal once.
    by_kind = {
        kind: [g for g in city.goals if g.kind == kind]
        for kind in ("car", "building", "ground", "parking_lot")
    }
    order = [kind for _ in range(count * 4) for kind in by_kind]
    used: set[str] = set()
    for kind in order:
        if len(episodes) == count:
            break
        candidates = [
            g
            for g in by_kind[kind]
            if g.object_id not in used and g.colour not in ("white", "black", "silver", "grey")
        ]
        if not candidates:
            continue
        goal = candidates[int(rng.integers(len(candidates)))]
        used.add(goal.object_id)
        description, names = describe(goal, landmarks, str(rng.choice(_VERBS)))
        start = _start(rng, goal, distances, city.map.bounds[2])
        try:
            reference = shortest_reference(start, goal.position, _floor(goal))
        except TaskGenerationError:
            continue
        if not _flies_clear(city, start, reference.actions):
            continue
        episodes.append(
            CityNavEpisode(
                episode_id=f"{scene}-{split}-{len(episodes) + 1:04d}",
                scene=scene,
                split=split,
                start=start,
                description=description,
                goal_kind=goal.kind,
                goal_name=goal.name,
                target_object_id=goal.object_id,
                target_position=goal.position,
                landmark_names=tuple(names),
                reference_actions=reference.actions,
                reference_length_m=reference.length_m,
                action_budget=action_budget,
            )
        )
    if len(episodes) < count:
        raise TaskGenerationError(f"{scene}: only {len(episodes)} of {count} {split} episodes")
    return episodes


def main(argv: list[str] | None = None) -> None:
    """Write the shipped ``citynav_mini`` suite (or another) to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="directory of the suite.json")
    parser.add_argument("--name", default="citynav_mini")
    parser.add_argument("--per-split", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    episodes = [
        episode
        for split in SPLIT_CITIES
        for episode in generate_split(split, args.per_split, seed=args.seed)
    ]
    selection = [
        next(e.episode_id for e in episodes if e.split == split)
        for split in ("val_seen", "val_unseen", "test_unseen")
    ]
    path = save_citynav_suite(
        args.out / "suite.json",
        name=args.name,
        description=f"CityNav episodes on the embedded cities: {args.per_split} per split",
        episodes=episodes,
        default_selection=selection,
    )
    print(f"wrote {len(episodes)} episodes to {path}")


if __name__ == "__main__":
    main()
