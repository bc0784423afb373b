"""The shipped suite ``aerialdojo_mini``: coverage, splits, selection, replay in the simulator,
and that its recorded command writes it again."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from task_worlds import replay

from aerialdojo.sim.annotations import FAMILIES
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.tasks.embedded import generate_suite
from aerialdojo.tasks.episode import stated_distance
from aerialdojo.tasks.settings import SETTINGS, SPLIT_PERCENTAGES
from aerialdojo.tasks.suite import Suite, load_suite, resolve_suite, validate_suite

SHIPPED = "aerialdojo_mini"


@pytest.fixture(scope="module")
def mini() -> Suite:
    return load_suite(resolve_suite(SHIPPED))


def test_shipped_suite_validates() -> None:
    assert validate_suite(resolve_suite(SHIPPED)) == []


@pytest.mark.parametrize("name", [SHIPPED, "alley_rehearsal"])
def test_no_shipped_description_states_a_distance(name: str) -> None:
    # Issue 25: AerialDojo-200K's goal gives a landmark and a coarse direction, never a range.
    descriptions = [e.goal.description for e in load_suite(resolve_suite(name)).episodes]
    assert descriptions
    stated = [d for d in descriptions if stated_distance(d) or re.search(r"\d\s*m\b", d)]
    assert not stated, stated


def test_covers_every_family_setting_goal_type_and_distribution(mini: Suite) -> None:
    assert {e.family for e in mini.episodes} == set(FAMILIES)
    assert {e.setting for e in mini.episodes} == {s.name for s in SETTINGS}
    assert {e.goal.representation for e in mini.episodes} == {"semantic", "image"}
    assert {e.distribution for e in mini.episodes} == {"id", "ood"}
    for family in FAMILIES:
        assert {e.distribution for e in mini.episodes if e.family == family} == {"id", "ood"}


def test_splits_are_within_one_task_of_nominal_per_scene(mini: Suite) -> None:
    tasks: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for episode in mini.episodes:
        tasks[episode.scene][episode.task_id] = (episode.split, episode.setting)
    for scene in mini.scenes:
        (first, percent), _ = SPLIT_PERCENTAGES[scene.distribution]
        splits = Counter(split for split, _ in tasks[scene.scene].values())
        nominal = percent * len(tasks[scene.scene]) / 100
        assert abs(splits[first] - nominal) <= 1.0, scene.scene
        # Counted as task instances (both twins), as the paper counts them.
        assert abs(2 * splits[first] - 2 * nominal) <= 1.0, scene.scene


def test_default_selection_is_a_quick_varied_base_run(mini: Suite) -> None:
    chosen = [mini.episode(episode_id) for episode_id in mini.default_selection]
    assert 5 <= len(chosen) <= 8
    assert all(e.setting == "base" and e.split == "test" for e in chosen)
    assert len(set(chosen)) == len(chosen)
    assert len({e.family for e in chosen}) >= 3
    # Distinct tasks first; a chosen task's twin only once distinct test tasks run out.
    assert len({e.task_id for e in chosen}) >= 4
    assert {e.goal.representation for e in chosen} == {"semantic", "image"}
    assert mini.select("") == list(mini.default_selection)


def test_is_small_and_its_images_are_pngs(mini: Suite) -> None:
    directory = mini.path.parent
    size = sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())
    assert size < 5_000_000
    spec = mini.generation.reference_image
    assert spec is not None
    for episode in mini.episodes:
        path = mini.reference_image_path(episode)
        if path is not None:
            with Image.open(path) as image:
                assert image.format == "PNG"
                assert image.size == (spec.width, spec.height)


def test_every_reference_replays_in_the_embedded_simulator(mini: Suite) -> None:
    replay(
        mini,
        EmbeddedBackend(
            rigs={"uav": aerialdojo_uav_rig(8, 8)},
            seed=0,
            agent_radius_m=mini.generation.collision_radius_m,
        ),
    )


def test_its_recorded_command_writes_it_again(tmp_path: Path) -> None:
    """The shipped file is what ``generate_suite`` writes with the command in docs/tasks.md
    (scenes are independent shards, so one scene is enough to check): its episodes field by
    field and its reference images pixel by pixel. A shipped file patched by hand, or one a
    change to the scenes, planner or renderer left behind, fails here."""
    scene = "Harbor_1"  # the scene whose shipped tasks once came from no committed code
    shipped_path = resolve_suite(SHIPPED)
    shipped = json.loads(shipped_path.read_text())
    generation = shipped["generation"]
    regenerated_path = generate_suite(
        [scene],
        tmp_path,
        seed=generation["seed"],
        per_scene=6,
        name=SHIPPED,
        max_candidates=250,
        image_size=generation["reference_image"]["width"],
        description=shipped["description"],
    )
    regenerated = json.loads(regenerated_path.read_text())
    assert regenerated["generation"] == generation
    assert regenerated["scenes"] == [row for row in shipped["scenes"] if row["scene"] == scene]
    episodes = [episode for episode in shipped["episodes"] if episode["scene"] == scene]
    assert regenerated["episodes"] == episodes
    images = {e["goal"]["reference_image"] for e in episodes} - {""}
    assert {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.png")} == images
    for image in sorted(images):
        with Image.open(shipped_path.parent / image) as want, Image.open(tmp_path / image) as got:
            assert np.array_equal(np.asarray(want), np.asarray(got)), image
