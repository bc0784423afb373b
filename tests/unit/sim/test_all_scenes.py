"""All 42 scenes generate within budget and carry usable annotations."""

from __future__ import annotations

import itertools
import math
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np
import pytest

from aerialdojo.sim.annotations import SceneAnnotations
from aerialdojo.sim.embedded.annotate import (
    ANCHOR_CLEARANCE_M,
    ANCHOR_TOLERANCE_M,
    distance_to_triangles,
)
from aerialdojo.sim.embedded.catalogue import CATEGORIES
from aerialdojo.sim.embedded.scenes import SCENE_TYPES, load_scene, scene_names
from aerialdojo.tasks.episode import stated_distance

RADIUS = 0.25
#: Generous budgets per scene (typical: < 1.5 CPU-s, < 120 MB of numpy and Python
#: allocations). CPU time, not wall time: other jobs on a shared machine do not count.
CPU_SECONDS_BUDGET = 15.0
MEMORY_BUDGET_BYTES = 600 * 1024 * 1024
#: Types without roads (open nature, water-borne or flooded scenes).
ROADLESS = {"Forest", "Mountain", "Snowfield", "Island", "Harbor", "Flood"}


@dataclass(frozen=True)
class Generated:
    """What generating one scene produced and cost, and how its anchors measure up."""

    annotations: SceneAnnotations
    seconds: float
    peak_bytes: int
    anchor_free: dict[str, bool]
    anchor_clearance: dict[str, float]


@pytest.fixture(scope="module")
def generated() -> dict[str, Generated]:
    results = {}
    for name in scene_names():
        tracemalloc.start()
        started = time.process_time()
        scene = load_scene(name)
        seconds = time.process_time() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        free, clearance = {}, {}
        for obj in scene.annotations.objects:
            own = scene.collision.triangles[scene.face_instance == obj.instance_id]
            free[obj.object_id] = scene.sphere_is_free(obj.anchor.position, RADIUS)
            clearance[obj.object_id] = float(
                distance_to_triangles(obj.anchor.position[None], own)[0]
            )
        results[name] = Generated(scene.annotations, seconds, peak, free, clearance)
    return results


def test_the_seed_inventory_of_types_and_names() -> None:
    expected = [
        "Mall", "Stadium", "Park", "ParkingLot", "Community", "Neighborhood", "Alley",
        "Factory", "ConstructionSite", "Desert", "Forest", "Mountain", "Snowfield", "Island",
        "Coast", "Bridge", "RailCorridor", "Harbor", "Earthquake", "Flood", "Explosion",
    ]  # fmt: skip
    assert [scene_type.name for scene_type in SCENE_TYPES] == expected
    assert len(scene_names()) == 42
    assert scene_names()[:3] == ["Mall_0", "Mall_1", "Stadium_0"]


def test_every_scene_generates_within_budget(generated: dict[str, Generated]) -> None:
    for name, result in generated.items():
        assert result.seconds < CPU_SECONDS_BUDGET, name
        assert result.peak_bytes < MEMORY_BUDGET_BYTES, name


def test_every_scene_has_objects_landmarks_and_a_sensible_size(
    generated: dict[str, Generated],
) -> None:
    for name, result in generated.items():
        annotations = result.annotations
        assert annotations.scene == name
        assert annotations.distribution == ("id" if name.endswith("_0") else "ood")
        assert len(annotations.objects) >= 12, name
        assert len(annotations.landmarks) >= 2, name
        width = np.subtract(annotations.bounds_max, annotations.bounds_min)[:2]
        assert np.all((width >= 120.0) & (width <= 250.0)), name
        assert len({obj.description for obj in annotations.objects}) == len(annotations.objects)
        stated = [d for obj in annotations.objects if stated_distance(d := obj.description)]
        assert not stated, (name, stated)


def test_every_anchor_is_free_and_one_metre_out(generated: dict[str, Generated]) -> None:
    for name, result in generated.items():
        for obj in result.annotations.objects:
            assert result.anchor_free[obj.object_id], (name, obj.object_id)
            error = abs(result.anchor_clearance[obj.object_id] - ANCHOR_CLEARANCE_M)
            assert error <= ANCHOR_TOLERANCE_M, (name, obj.object_id)
            bearing = math.atan2(obj.centroid[1] - obj.anchor.y, obj.centroid[0] - obj.anchor.x)
            assert abs(math.remainder(bearing - obj.anchor.yaw, 2 * math.pi)) < 1e-9


def test_task_generation_finds_pairs_five_to_hundred_metres_apart(
    generated: dict[str, Generated],
) -> None:
    for name, result in generated.items():
        anchors = [obj.anchor.position for obj in result.annotations.objects]
        distances = [float(np.linalg.norm(a - b)) for a, b in itertools.combinations(anchors, 2)]
        assert sum(5.0 <= d <= 100.0 for d in distances) >= 50, name


def test_vocabulary_spans_at_least_a_hundred_categories(generated: dict[str, Generated]) -> None:
    used = {obj.category for result in generated.values() for obj in result.annotations.objects}
    assert len(used) >= 100
    assert used <= set(CATEGORIES)
    for result in generated.values():
        for obj in result.annotations.objects:
            assert obj.colour in obj.name and CATEGORIES[obj.category].label in obj.name


def test_road_graphs_where_types_have_roads(generated: dict[str, Generated]) -> None:
    for name, result in generated.items():
        annotations = result.annotations
        if name.rpartition("_")[0] in ROADLESS:
            continue
        assert len(annotations.road_nodes) >= 2 and annotations.road_edges, name
        for start, end in annotations.road_edges:
            assert 0 <= start < len(annotations.road_nodes) and 0 <= end < len(
                annotations.road_nodes
            )
            assert (end, start) in annotations.road_edges
