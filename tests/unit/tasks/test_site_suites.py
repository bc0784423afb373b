"""The shipped rehearsal site ``alley_rehearsal`` and its suite: a survey of the embedded
scene Alley_0, a suite that its recorded command writes again, and references that the
embedded simulator flies without a collision."""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from task_worlds import replay

from aerialdojo.cli import main
from aerialdojo.geometry import wrap_angle
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.sim.embedded.scenes import load_scene
from aerialdojo.sites.rehearsal import photograph_bytes
from aerialdojo.sites.site import load_site
from aerialdojo.tasks.suite import Suite, load_suite, resolve_suite, validate_suite

SHIPPED = "alley_rehearsal"
REPO = Path(__file__).resolve().parents[3]
SITE = REPO / "config" / "sites" / SHIPPED / "site.yaml"
# Which object of Alley_0 each surveyed target and start pad is.
TARGET_OBJECTS = {"green_van": "obj_000", "white_van": "obj_001", "teal_food_cart": "obj_004"}
START_OBJECTS = {"trash_can_pad": "obj_011", "hydrant_pad": "obj_022", "south_pad": "obj_031"}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(resolve_suite(SHIPPED))


def test_the_shipped_site_suite_validates_and_covers_its_site(suite: Suite) -> None:
    assert validate_suite(resolve_suite(SHIPPED)) == []
    assert suite.site is not None and suite.site.embedded_scene == "Alley_0"
    assert {e.target_object_id for e in suite.episodes} == set(TARGET_OBJECTS)
    assert {e.start_object_id for e in suite.episodes} == set(START_OBJECTS)
    assert len(suite.episodes) == 16 and len(suite.default_selection) == 8
    assert all(e.scene == "Alley_0" and e.split == "test" for e in suite.episodes)


def test_every_reference_flies_in_the_embedded_simulator(suite: Suite) -> None:
    replay(
        suite,
        EmbeddedBackend(
            rigs={"uav": aerialdojo_uav_rig(8, 8)},
            seed=0,
            agent_radius_m=suite.generation.collision_radius_m,
        ),
    )


def test_its_recorded_command_writes_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped suite is what its recorded command writes (run from the repository, into
    another directory): a suite patched by hand, or left behind by a change to the site, the
    scene, the planner or the image conversion, fails here."""
    shipped_path = resolve_suite(SHIPPED)
    shipped = json.loads(shipped_path.read_text())
    words = shlex.split(shipped["site"]["command"])
    assert words == ["aerialdojo", "tasks", "from-site", "config/sites/alley_rehearsal/site.yaml",
                     "--out", "src/aerialdojo/aerialdojo/suites/alley_rehearsal"]  # fmt: skip
    monkeypatch.chdir(REPO)
    assert main([*words[1:-1], str(tmp_path)]) == 0
    rebuilt = json.loads((tmp_path / "suite.json").read_text())
    assert rebuilt["site"].pop("command") != shipped["site"].pop("command")
    assert rebuilt == shipped
    images = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.png"))
    assert images == sorted(
        p.relative_to(shipped_path.parent) for p in shipped_path.parent.rglob("*.png")
    )
    for image in images:
        with Image.open(tmp_path / image) as got, Image.open(shipped_path.parent / image) as want:
            assert np.array_equal(np.asarray(got), np.asarray(want)), image


def test_the_rehearsal_site_is_a_survey_of_alley_0() -> None:
    """Targets, anchors, landmarks and start pads are the scene's own, rounded as a survey
    rounds (1 cm, 0.1 deg); the photographs are the scene's (``sites.rehearsal``)."""
    site = load_site(SITE)
    scene = load_scene("Alley_0", 0, agent_radius_m=site.collision_radius_m)
    annotations = scene.annotations
    for target in site.targets:
        scene_object = annotations.object_by_id(TARGET_OBJECTS[target.target_id])
        assert math.dist(target.position, scene_object.centroid) <= 0.01
        assert math.dist(target.anchor.position, scene_object.anchor.position) <= 0.01
        assert abs(wrap_angle(target.anchor.yaw - scene_object.anchor.yaw)) <= math.radians(0.1)
        size = [
            high - low
            for low, high in zip(scene_object.bbox_min, scene_object.bbox_max, strict=True)
        ]
        assert target.size is not None and math.dist(target.size, size) <= 0.01
        assert target.reference_image.read_bytes() == photograph_bytes(scene, scene_object)
    for start in site.starts:
        anchor = annotations.object_by_id(START_OBJECTS[start.name]).anchor
        assert math.dist(start.pose.position, anchor.position) <= 0.01
        assert abs(wrap_angle(start.pose.yaw - anchor.yaw - math.pi)) <= math.radians(0.1)
    assert [(m.name, m.position) for m in site.landmarks] == [
        (m.name, m.position) for m in annotations.landmarks
    ]
