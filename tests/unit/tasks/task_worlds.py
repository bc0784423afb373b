"""Helpers of the task tests: a hand-made collision world of boxes, a courtyard scene and a
replay through a simulator.

The planner takes its collision queries as a protocol; these worlds implement it exactly
enough for tests while the embedded simulator's scenes are exercised separately.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from aerialdojo.actions import check_action
from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import Landmark, SceneAnnotations, TargetObject
from aerialdojo.sim.backend import SimulatorBackend
from aerialdojo.tasks.generate import SceneSource
from aerialdojo.tasks.suite import ReferenceImageSpec, Suite


@dataclass(frozen=True)
class BoxHit:
    """Which box (-1: the ground) a sweep touched, and at what fraction of the motion."""

    box: int
    fraction: float


@dataclass
class BoxWorld:
    """Boxes as (min corner, max corner); the ground is the plane z = 0.

    A sphere touches a box when its centre enters the box grown by the radius on every side,
    a slightly conservative test at the box's edges and corners.
    """

    boxes: list[tuple[tuple[float, float, float], tuple[float, float, float]]] = field(
        default_factory=list
    )
    sweeps: int = 0

    def sweep_sphere(self, start: np.ndarray, end: np.ndarray, radius: float) -> BoxHit | None:
        self.sweeps += 1
        start = np.asarray(start, dtype=np.float64)
        direction = np.asarray(end, dtype=np.float64) - start
        hits = []
        if min(start[2], start[2] + direction[2]) < radius:
            hits.append(BoxHit(-1, 0.0))
        for index, (low, high) in enumerate(self.boxes):
            fraction = _segment_enters(
                start, direction, np.array(low) - radius, np.array(high) + radius
            )
            if fraction is not None:
                hits.append(BoxHit(index, fraction))
        return min(hits, key=lambda hit: hit.fraction) if hits else None

    def sphere_is_free(self, center: np.ndarray, radius: float) -> bool:
        return self.sweep_sphere(center, center, radius) is None

    @property
    def triangles(self) -> np.ndarray:
        """(12 per box + 2, 3, 3) the boxes' surfaces and a ground sheet as triangles."""
        ground = np.array([(-1e3, -1e3, 0.0), (1e3, -1e3, 0.0), (-1e3, 1e3, 0.0), (1e3, 1e3, 0.0)])
        faces = [(ground[0], ground[1], ground[3]), (ground[0], ground[3], ground[2])]
        for low, high in self.boxes:
            corners = np.array(
                [
                    [(high if bit else low)[axis] for axis, bit in enumerate(bits)]
                    for bits in np.ndindex(2, 2, 2)
                ]
            )
            for axis in range(3):
                for side in (0, 1):
                    quad = [i for i, bits in enumerate(np.ndindex(2, 2, 2)) if bits[axis] == side]
                    a, b, c, d = corners[quad]
                    faces += [(a, b, d), (a, d, c)]
        return np.array(faces, dtype=np.float64)


def _segment_enters(
    start: np.ndarray, direction: np.ndarray, low: np.ndarray, high: np.ndarray
) -> float | None:
    """Slab test: the first fraction in [0, 1] at which start + t * direction is in the box."""
    entry, leave = 0.0, 1.0
    for axis in range(3):
        if abs(direction[axis]) < 1e-12:
            if not low[axis] < start[axis] < high[axis]:
                return None
            continue
        t0 = (low[axis] - start[axis]) / direction[axis]
        t1 = (high[axis] - start[axis]) / direction[axis]
        entry, leave = max(entry, min(t0, t1)), min(leave, max(t0, t1))
        if entry >= leave:
            return None
    return entry


Box = tuple[tuple[float, float, float], tuple[float, float, float]]


def _target(
    index: int, centre: tuple[float, float], anchor_side: tuple[float, float]
) -> TargetObject:
    """A 1 m crate on the ground; its anchor 1 m outside it on ``anchor_side``, facing it."""
    cx, cy = centre
    ax, ay = cx + 1.5 * anchor_side[0], cy + 1.5 * anchor_side[1]
    return TargetObject(
        object_id=f"obj_{index:03d}",
        instance_id=index + 1,
        name=f"crate {index}",
        category="crate",
        colour="red",
        description=f"the red crate number {index}",
        centroid=(cx, cy, 0.5),
        bbox_min=(cx - 0.5, cy - 0.5, 0.0),
        bbox_max=(cx + 0.5, cy + 0.5, 1.0),
        anchor=Pose(ax, ay, 1.0, math.atan2(cy - ay, cx - ax)),
    )


@dataclass(frozen=True)
class Courtyard:
    """A scene split by a tall wall with crates on both sides: every cross-wall task detours."""

    annotations: SceneAnnotations
    world: BoxWorld


def make_courtyard(scene: str = "Yard_0", family: str = "urban") -> Courtyard:
    """The courtyard scene; ``Yard_1`` is its out-of-distribution twin."""
    objects = (
        _target(0, (-8.0, 0.0), (1.0, 0.0)),
        _target(1, (8.0, 2.0), (-1.0, 0.0)),
        _target(2, (-7.0, -8.0), (0.0, 1.0)),
        _target(3, (7.0, -6.0), (0.0, 1.0)),
    )
    wall: Box = ((-1.0, -10.0, 0.0), (1.0, 10.0, 8.0))
    crates = [(obj.bbox_min, obj.bbox_max) for obj in objects]
    annotations = SceneAnnotations(
        scene=scene,
        scene_type="Yard",
        family=family,
        distribution="id" if scene.endswith("_0") else "ood",
        bounds_min=(-16.0, -16.0, 0.0),
        bounds_max=(16.0, 16.0, 5.0),
        landmarks=(
            Landmark(name="west tower", position=(-12.0, 4.0, 0.0)),
            Landmark(name="east tower", position=(12.0, -2.0, 0.0)),
        ),
        objects=objects,
    )
    return Courtyard(annotations=annotations, world=BoxWorld([wall, *crates]))


def courtyard_source(courtyard: Courtyard) -> SceneSource:
    """A generation source over a courtyard. Reference images are flat colour swatches of
    the target's instance id: enough to check files and paths without a renderer."""

    def swatch(target: TargetObject) -> np.ndarray:
        image = np.zeros((8, 12, 3), dtype=np.uint8)
        image[..., 0] = 40 * target.instance_id
        return image

    return SceneSource(
        annotations=courtyard.annotations,
        world=courtyard.world,
        render_reference=swatch,
        reference_camera=ReferenceImageSpec(camera="swatch", width=12, height=8, fov_deg=90.0),
    )


def replay(suite: Suite, backend: SimulatorBackend) -> None:
    """Every reference of ``suite``, executed by the simulator's own step function, collides
    with nothing, passes through the stored poses and ends within the goal tolerance of its
    anchor; every action is a legal AerialDojo choice."""
    tolerance = suite.generation.goal_tolerance_m
    for episode in suite.episodes:
        backend.reset(episode.scene, {"uav": episode.start})
        pose = episode.start
        for action, stored in zip(
            episode.reference.actions, episode.reference.poses[1:], strict=True
        ):
            check_action(action)
            outcome = backend.execute("uav", action)
            assert not outcome.collided, (
                f"{episode.episode_id}: {action} from {pose} hit {outcome.collision_object}"
            )
            assert outcome.pose.distance_to(stored.position) < 2e-3, episode.episode_id
            pose = outcome.pose
        assert pose.distance_to(episode.target_anchor.position) <= tolerance + 1e-3
