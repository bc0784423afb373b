"""Object anchors (AerialDojo-200K, section 3.1: 1 m outside the boundary, collision-free, facing
the centroid) and descriptions that tell each instance apart from similar ones."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aerialdojo.geometry import Pose, compass_direction
from aerialdojo.sim.annotations import Landmark
from aerialdojo.sim.embedded.collision import CollisionWorld, closest_points_on_triangles

#: Clearance between an anchor and the object's surface (AerialDojo-200K, section 3.1).
ANCHOR_CLEARANCE_M = 1.0
#: Largest error of an anchor's distance to the object surface after bisection.
ANCHOR_TOLERANCE_M = 0.01

# Candidate viewing elevations in the order preferred: an oblique aerial view first, then
# level views, then steeper ones for objects hemmed in at the sides.
_ELEVATIONS_DEG = (35.0, 0.0, 60.0, 80.0)
_AZIMUTHS = 12
_TRACE_STEPS = 6

_DIRECTION_WORDS = {
    "N": "north", "NE": "north-east", "E": "east", "SE": "south-east",
    "S": "south", "SW": "south-west", "W": "west", "NW": "north-west",
}  # fmt: skip


def find_anchor(
    world: CollisionWorld,
    object_triangles: np.ndarray,
    centroid: np.ndarray,
    agent_radius_m: float,
    azimuth_phase: float,
) -> Pose | None:
    """A collision-free viewpoint exactly ``ANCHOR_CLEARANCE_M`` from the object's surface,
    yawed towards its centroid; None if every candidate is blocked.

    Candidates lie on rays from the centroid at the preferred elevations and
    ``_AZIMUTHS`` azimuths; along each ray the clearance is found by sphere tracing on the
    exact point-to-triangle distance.

    Args:
        world: the whole scene, to check that the agent's sphere fits at the anchor.
        object_triangles: (T, 3, 3) the object's own triangles.
        centroid: (3,) centre of the object's bounding box.
        agent_radius_m: radius of the agent's collision sphere.
        azimuth_phase: azimuth of the first candidate (varies the chosen side per object).
    """
    reach = float(np.max(np.linalg.norm(object_triangles.reshape(-1, 3) - centroid, axis=1)))
    for elevation in np.radians(_ELEVATIONS_DEG):
        azimuths = azimuth_phase + np.arange(_AZIMUTHS) * (2.0 * math.pi / _AZIMUTHS)
        directions = np.stack(
            (
                np.cos(elevation) * np.cos(azimuths),
                np.cos(elevation) * np.sin(azimuths),
                np.full(_AZIMUTHS, np.sin(elevation)),
            ),
            axis=1,
        )
        points = _points_at_clearance(object_triangles, centroid, directions, reach)
        for point in points:
            if np.isfinite(point[0]) and world.sphere_is_free(point, agent_radius_m):
                yaw = math.atan2(centroid[1] - point[1], centroid[0] - point[0])
                return Pose.from_position(point, yaw)
    return None


def distance_to_triangles(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Exact distance from each of (K, 3) points to the nearest of (T, 3, 3) triangles."""
    closest = closest_points_on_triangles(points[:, None, :], triangles)
    return np.asarray(np.min(np.linalg.norm(points[:, None, :] - closest, axis=2), axis=1))


def _points_at_clearance(
    triangles: np.ndarray, centroid: np.ndarray, directions: np.ndarray, reach: float
) -> np.ndarray:
    """Per direction, the outermost point along it at the clearance from the object (NaN
    where that was not reached within tolerance, e.g. at grazing incidence).

    Sphere tracing inwards from beyond the object: the distance field is 1-Lipschitz, so a
    step of (distance - clearance) never crosses the clearance shell, and on a face met
    head-on one step lands exactly on it.
    """
    along = np.full(len(directions), reach + ANCHOR_CLEARANCE_M + 0.5)
    distance = np.full(len(directions), np.inf)
    for _ in range(_TRACE_STEPS):
        distance = distance_to_triangles(centroid + directions * along[:, None], triangles)
        along -= distance - ANCHOR_CLEARANCE_M
    points = centroid + directions * along[:, None]
    missed = (
        np.abs(distance_to_triangles(points, triangles) - ANCHOR_CLEARANCE_M) > ANCHOR_TOLERANCE_M
    )
    points[missed | (along <= 0.0)] = np.nan
    return np.asarray(points)


@dataclass(frozen=True, kw_only=True)
class DescribedObject:
    """What a description is made of: identity, look and where it is."""

    object_id: str
    name: str
    attributes: tuple[str, ...]
    centroid: tuple[float, float, float]


def describe(objects: Sequence[DescribedObject], landmarks: Sequence[Landmark]) -> dict[str, str]:
    """A description per object id that no other object of the scene shares, stating no
    distance (AerialDojo-200K, section 3.2: the goal names the landmark and a coarse
    direction; the representation tells the instance apart by its appearance).

    Each says what the object is and its attributes, the compass direction from its nearest
    landmark and what its nearest neighbour is. Look-alikes left with the same words are
    told apart by their two nearest neighbours, and, where those match too, by their order
    from west to east among themselves.
    """
    placed = {item.object_id: _placement(item, objects, landmarks) for item in objects}
    descriptions = {
        item.object_id: f"{placed[item.object_id][0]}, nearest to a {placed[item.object_id][1]}"
        for item in objects
    }
    for twins in _alike(objects, descriptions):
        for item in twins:
            first, second = placed[item.object_id][1:]
            if second is not None:
                descriptions[item.object_id] = (
                    f"{placed[item.object_id][0]}, between a {first} and a {second}"
                )
    for twins in _alike(objects, descriptions):
        for rank, item in enumerate(sorted(twins, key=lambda twin: twin.centroid[0]), start=1):
            descriptions[item.object_id] += (
                f"; number {rank} of {len(twins)} counting from the west"
            )
    return descriptions


def _placement(
    item: DescribedObject, objects: Sequence[DescribedObject], landmarks: Sequence[Landmark]
) -> tuple[str, str, str | None]:
    """The object's look with its direction from the nearest landmark, and the names of its
    nearest and second-nearest neighbours (None where it has one neighbour only)."""
    position = np.asarray(item.centroid)
    landmark = min(landmarks, key=lambda mark: float(np.linalg.norm(position - mark.position)))
    direction = _DIRECTION_WORDS[compass_direction(np.asarray(landmark.position), position)]
    others = sorted(
        (other for other in objects if other.object_id != item.object_id),
        key=lambda other: float(np.linalg.norm(position - other.centroid)),
    )
    traits = f" ({', '.join(item.attributes)})" if item.attributes else ""
    look = f"the {item.name}{traits}, {direction} of {landmark.name}"
    return look, others[0].name, others[1].name if len(others) > 1 else None


def _alike(
    objects: Sequence[DescribedObject], descriptions: dict[str, str]
) -> list[list[DescribedObject]]:
    """The groups of objects that share a description."""
    groups: dict[str, list[DescribedObject]] = defaultdict(list)
    for item in objects:
        groups[descriptions[item.object_id]].append(item)
    return [twins for twins in groups.values() if len(twins) > 1]
