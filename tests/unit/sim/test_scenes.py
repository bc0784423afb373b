"""Scene generation: names, annotations, anchors and descriptions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.errors import UnknownSceneError
from aerialdojo.sim.annotations import FAMILIES
from aerialdojo.sim.embedded.annotate import (
    ANCHOR_CLEARANCE_M,
    ANCHOR_TOLERANCE_M,
    distance_to_triangles,
)
from aerialdojo.sim.embedded.scenes import SCENE_TYPES, load_scene, parse_scene_name, scene_names
from aerialdojo.sim.embedded.world import EmbeddedScene
from aerialdojo.tasks.episode import stated_distance

RADIUS = 0.25


def test_names_are_types_with_id_and_ood_instances() -> None:
    names = scene_names()
    assert len(names) == 2 * len(SCENE_TYPES)
    assert names[:2] == [f"{SCENE_TYPES[0].name}_0", f"{SCENE_TYPES[0].name}_1"]
    assert {scene_type.family for scene_type in SCENE_TYPES} == set(FAMILIES)


def test_unknown_names_are_refused() -> None:
    for bad in ("Mall", "Mall_2", "mall_0", "Moon_0", ""):
        with pytest.raises(UnknownSceneError, match=repr(bad)):
            parse_scene_name(bad)


@pytest.fixture(scope="module", params=["Mall_0", "Forest_1", "Bridge_0", "Earthquake_1"])
def scene(request: pytest.FixtureRequest) -> EmbeddedScene:
    return load_scene(request.param)


def test_scene_has_enough_objects_and_landmarks(scene: EmbeddedScene) -> None:
    annotations = scene.annotations
    assert len(annotations.objects) >= 12
    assert len(annotations.landmarks) >= 2
    width = np.subtract(annotations.bounds_max, annotations.bounds_min)[:2]
    assert np.all((width >= 120.0) & (width <= 250.0))
    ids = [obj.instance_id for obj in annotations.objects]
    assert len(set(ids)) == len(ids) and min(ids) > 0


def test_anchors_are_free_one_metre_out_and_face_the_centroid(scene: EmbeddedScene) -> None:
    for obj in scene.annotations.objects:
        anchor = obj.anchor.position
        assert scene.sphere_is_free(anchor, RADIUS), obj.object_id
        own = scene.collision.triangles[scene.face_instance == obj.instance_id]
        distance = distance_to_triangles(anchor[None, :], own)[0]
        assert abs(distance - ANCHOR_CLEARANCE_M) <= ANCHOR_TOLERANCE_M, obj.object_id
        bearing = math.atan2(obj.centroid[1] - anchor[1], obj.centroid[0] - anchor[0])
        assert abs(math.remainder(bearing - obj.anchor.yaw, 2 * math.pi)) < 1e-9


def test_descriptions_tell_every_object_apart(scene: EmbeddedScene) -> None:
    descriptions = [obj.description for obj in scene.annotations.objects]
    assert len(set(descriptions)) == len(descriptions)
    for obj in scene.annotations.objects:
        assert obj.name in obj.description and obj.colour in obj.name
        # Issue 25: appearance and relations, never a range (AerialDojo-200K, section 3.2).
        assert stated_distance(obj.description) is None, obj.description


def test_generation_is_deterministic_and_seed_dependent() -> None:
    first, second, other = (
        load_scene("Earthquake_0"),
        load_scene("Earthquake_0"),
        load_scene("Earthquake_0", seed=1),
    )
    assert first.annotations == second.annotations
    assert first.collision.triangles.tobytes() == second.collision.triangles.tobytes()
    assert first.annotations != other.annotations
