"""Suite files: Episode round trips, loading, lookup, filters, twins, filters of the paper."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from task_worlds import make_courtyard

from aerialdojo.errors import AerialDojoError, ConfigError, TaskFileError
from aerialdojo.geometry import COMPASS_DIRECTIONS, compass_direction, wrap_angle
from aerialdojo.tasks.episode import make_episode_id
from aerialdojo.tasks.serialization import episode_from_json, episode_to_json
from aerialdojo.tasks.settings import SETTINGS_BY_NAME, filter_problems, setting_for_length
from aerialdojo.tasks.suite import (
    load_suite,
    resolve_suite,
    save_suite,
    suite_to_json,
    validate_suite,
)


def test_generated_suite_validates_and_loads(yard_suite_path: Path) -> None:
    assert validate_suite(yard_suite_path) == []
    suite = load_suite(yard_suite_path)
    assert suite.name == "yards"
    assert {scene.scene for scene in suite.scenes} == {"Yard_0", "Yard_1"}
    assert len(suite.episodes) >= 8


def test_episodes_round_trip_through_json(yard_suite_path: Path) -> None:
    for episode in load_suite(yard_suite_path).episodes:
        assert episode_from_json(episode_to_json(episode)) == episode


def test_saving_a_loaded_suite_rewrites_the_same_file(
    yard_suite_path: Path, tmp_path: Path
) -> None:
    suite = load_suite(yard_suite_path)
    copy = save_suite(suite, tmp_path / "suite.json")
    assert copy.read_text() == yard_suite_path.read_text()


def test_every_episode_satisfies_the_seeds_task_rules(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    for episode in suite.episodes:
        reference = episode.reference
        assert filter_problems(reference.length_m, reference.euclidean_m) == []
        setting = setting_for_length(reference.length_m)
        assert setting is not None and setting.name == episode.setting
        assert episode.action_budget == SETTINGS_BY_NAME[episode.setting].action_budget
        assert len(reference.actions) + 1 <= episode.action_budget
        assert reference.poses[0] == episode.start
        assert reference.poses[-1].distance_to(episode.target_anchor.position) <= 1.0


def test_start_is_the_start_objects_anchor_turned_around(yard_suite_path: Path) -> None:
    for episode in load_suite(yard_suite_path).episodes:
        annotations = make_courtyard(episode.scene).annotations
        anchor = annotations.object_by_id(episode.start_object_id).anchor
        assert episode.start.distance_to(anchor.position) < 1e-3
        assert abs(wrap_angle(episode.start.yaw - anchor.yaw - math.pi)) < 1e-4


def test_goal_names_the_nearest_landmark_and_its_direction(yard_suite_path: Path) -> None:
    for episode in load_suite(yard_suite_path).episodes:
        annotations = make_courtyard(episode.scene).annotations
        target = annotations.object_by_id(episode.target_object_id)
        distances = {
            lm.name: math.dist(lm.position[:2], target.centroid[:2]) for lm in annotations.landmarks
        }
        assert episode.goal.landmark_name == min(distances, key=distances.__getitem__)
        landmark = next(lm for lm in annotations.landmarks if lm.name == episode.goal.landmark_name)
        assert episode.goal.direction in COMPASS_DIRECTIONS
        assert episode.goal.direction == compass_direction(
            np.array(landmark.position), np.array(target.centroid)
        )


def test_twins_differ_only_in_representation(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    twins: dict[str, dict[str, dict]] = defaultdict(dict)
    for episode in suite.episodes:
        twins[episode.task_id][episode.goal.representation] = episode_to_json(episode)
    for task_id, pair in twins.items():
        assert set(pair) == {"semantic", "image"}, task_id
        semantic, image = pair["semantic"], pair["image"]
        assert semantic["episode_id"] == f"{task_id}-sem"
        assert image["episode_id"] == f"{task_id}-img"
        assert semantic["goal"]["reference_image"] == ""
        assert image["goal"]["reference_image"].endswith(".png")
        for data in (semantic, image):
            del data["episode_id"], data["goal"]["representation"], data["goal"]["reference_image"]
        assert semantic == image


def test_ids_are_readable_and_numbered_per_scene_and_setting(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    assert make_episode_id("Mall_0", "base", 7, "semantic") == "Mall_0-base-0007-sem"
    numbers: dict[tuple[str, str], set[int]] = defaultdict(set)
    for episode in suite.episodes:
        scene, setting, number, _ = episode.episode_id.split("-")
        assert (scene, setting) == (episode.scene, episode.setting)
        numbers[scene, setting].add(int(number))
    for used in numbers.values():
        assert used == set(range(len(used)))


def test_splits_follow_the_scene_distribution(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    for scene, legal, first, percent in (
        ("Yard_0", {"train", "test"}, "train", 80),
        ("Yard_1", {"adaptation", "test"}, "adaptation", 20),
    ):
        tasks = {e.task_id: e.split for e in suite.episodes if e.scene == scene}
        assert set(tasks.values()) <= legal
        assert (
            abs(sum(split == first for split in tasks.values()) - percent * len(tasks) / 100) <= 0.5
        )


def test_lookup_and_filters(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    first = suite.episodes[0]
    assert suite.episode(first.episode_id) is first
    with pytest.raises(KeyError, match="no episode 'Nowhere_0-base-0000-sem'"):
        suite.episode("Nowhere_0-base-0000-sem")
    tests = suite.select("split=test,setting=base")
    assert tests == [
        e.episode_id for e in suite.episodes if e.split == "test" and e.setting == "base"
    ]
    assert tests
    either = suite.select("scene=Yard_0|Yard_1 , representation=image")
    assert either == [e.episode_id for e in suite.episodes if e.goal.representation == "image"]
    assert suite.select("all") == [e.episode_id for e in suite.episodes]
    assert suite.select("") == list(suite.default_selection)
    assert suite.select("distribution=ood,split=adaptation") == [
        e.episode_id for e in suite.episodes if e.split == "adaptation"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("colour=red", "unknown key 'colour'"),
        ("setting=bse", "setting is never 'bse'"),
        ("split", "clause 'split' is not key=value"),
        ("scene=Mall_0", "scene is never 'Mall_0'"),
    ],
)
def test_bad_filters_are_refused_naming_the_clause(
    yard_suite_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_suite(yard_suite_path).select(text)


def test_default_selection_is_short_varied_base_tasks(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    chosen = [suite.episode(episode_id) for episode_id in suite.default_selection]
    assert len(chosen) == 6
    assert all(e.setting == "base" for e in chosen)
    assert len({e.task_id for e in chosen}) == len(chosen)
    assert {e.scene for e in chosen} == {"Yard_0", "Yard_1"}
    representations = [e.goal.representation for e in chosen]
    assert representations.count("semantic") == representations.count("image")


def test_reference_images_resolve_next_to_the_suite(yard_suite_path: Path) -> None:
    suite = load_suite(yard_suite_path)
    for episode in suite.episodes:
        path = suite.reference_image_path(episode)
        if episode.goal.representation == "semantic":
            assert path is None
        else:
            assert path is not None and path.parent.parent.parent == yard_suite_path.parent
            with Image.open(path) as image:
                assert image.size == (12, 8) and image.mode == "RGB"


def test_resolve_suite(yard_suite_path: Path, tmp_path: Path) -> None:
    assert resolve_suite(yard_suite_path) == yard_suite_path
    assert resolve_suite(yard_suite_path.parent) == yard_suite_path
    with pytest.raises(ConfigError, match="'no_such_suite' is neither"):
        resolve_suite("no_such_suite")
    with pytest.raises(ConfigError):
        resolve_suite(tmp_path)  # a directory without suite.json


def test_suite_document_is_what_the_file_holds(yard_suite_path: Path) -> None:
    assert suite_to_json(load_suite(yard_suite_path)) == json.loads(yard_suite_path.read_text())


def test_a_malformed_suite_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    # Issue 15, row 4: a 3 MB suite whose reference had 600,000 short poses took 2.3 GB and
    # minutes to list 600,048 problems (a 52 MB one took 23 GB and was killed).
    import subprocess
    import sys

    document = json.loads(resolve_suite("aerialdojo_mini").read_text())
    document["episodes"][0]["reference"]["poses_xyz_m_yaw_deg"] = [[0]] * 600_000
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(document))
    script = (
        "import resource, sys; from aerialdojo.tasks.suite import validate_suite; "
        f"problems = validate_suite({str(path)!r}); "
        "print(len(problems), problems[-1]); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    listed, peak_kib = run.stdout.splitlines()
    assert listed.startswith("1 ") and "poses_xyz_m_yaw_deg: 600000 items; at most" in listed
    assert int(peak_kib) < 1_000_000  # KiB: under 1 GB, where it took 2.3 GB


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (bytes(range(256)) * 64, "not a text file"),  # row 8: random bytes, a raw traceback
        (b"\x00" * 64, "not a text file"),
    ],
)
def test_a_file_that_is_no_suite_is_refused_before_it_is_read(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    from aerialdojo.protocols import load_suite as load_any_suite

    path = tmp_path / "suite.json"
    path.write_bytes(content)
    with pytest.raises(AerialDojoError, match=fragment):
        load_any_suite(path)
    assert any(fragment in problem for problem in validate_suite(path))


def test_an_episode_that_is_not_an_object_is_a_named_problem(tmp_path: Path) -> None:
    # Found by tests/fuzz: the list-size check took len() of a number and raised TypeError.
    document = json.loads(resolve_suite("aerialdojo_mini").read_text())
    document["episodes"][0] = 3
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(document))
    problems = validate_suite(path)
    assert problems and all(problem.startswith(f"{path}: ") for problem in problems)
    assert any("episodes[0]" in problem for problem in problems)


def test_a_suite_file_too_large_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aerialdojo.tasks import records

    monkeypatch.setattr(records, "MAX_SUITE_BYTES", 1000)
    path = tmp_path / "suite.json"
    path.write_text("{" + " " * 2000 + "}")
    with pytest.raises(TaskFileError, match="larger than a suite file can be"):
        load_suite(path)
