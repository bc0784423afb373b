"""``aerialdojo tasks from-site``: a site becomes an AerialDojo-format suite that the project's
own loader and validator accept, with references planned round the surveyed obstacles and
inside the geofence, or none where the site has no map."""

from __future__ import annotations

import hashlib
import json
import math
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from site_files import SiteWriter, write_site_file

from aerialdojo.actions import target_pose
from aerialdojo.agents.plugins import reference_replay
from aerialdojo.cli import main
from aerialdojo.errors import ConfigError
from aerialdojo.geofence import polygon_edge_distance
from aerialdojo.sites.build import SITE_SCENE_TYPE, build_site_suite
from aerialdojo.sites.site import load_site
from aerialdojo.tasks.settings import MIN_DETOUR_RATIO
from aerialdojo.tasks.suite import Suite, load_suite, validate_suite

WALL = np.array([[18.0, -1.0], [20.0, -1.0], [20.0, 22.0], [18.0, 22.0]])


def _wall_distance(point: np.ndarray) -> float:
    """Horizontal distance from ``point`` to the wall (0 inside it)."""
    x, y = point[0], point[1]
    if 18.0 <= x <= 20.0 and -1.0 <= y <= 22.0:
        return 0.0
    return polygon_edge_distance(WALL, (x, y))


@pytest.fixture(scope="module")
def yard_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_site_file(tmp_path_factory.mktemp("yard"))


@pytest.fixture(scope="module")
def yard_suite(yard_site: Path) -> Suite:
    return build_site_suite(load_site(yard_site), yard_site.parent / "suite", command="b").suite


def test_the_suite_loads_and_validates_with_the_suite_loader(yard_suite: Suite) -> None:
    assert validate_suite(yard_suite.path) == []
    loaded = load_suite(yard_suite.path)
    assert loaded.episodes == yard_suite.episodes
    assert json.loads(yard_suite.path.read_text())["schema_version"] == "2.0"


def test_references_go_round_the_wall_and_stay_inside_the_fence(yard_suite: Suite) -> None:
    fence = yard_suite.site.geofence if yard_suite.site else None
    assert fence is not None
    for episode in yard_suite.episodes:
        reference = episode.reference
        assert reference.actions and reference.detour_ratio >= MIN_DETOUR_RATIO
        pose = episode.start
        for action in reference.actions:
            moved = target_pose(pose, action)
            for share in np.linspace(0.0, 1.0, 101):
                point = pose.position + share * (moved.position - pose.position)
                assert _wall_distance(point) >= 0.25 - 1e-6, (episode.episode_id, point)
                assert fence.contains(point, margin=fence.margin - 1e-3), point
            pose = moved
        assert pose.distance_to(episode.target_anchor.position) <= 1.0 + 1e-3
    # From the west pad the wall is straight ahead: the route is much longer than d_E.
    west = yard_suite.episodes[0]
    assert west.start_object_id == "west_pad"
    assert west.reference.length_m > 1.5 * west.reference.euclidean_m


def test_goals_follow_aerialdojo_200k(yard_suite: Suite) -> None:
    semantic, image = yard_suite.episodes[0], yard_suite.episodes[1]
    goal = semantic.goal
    assert (goal.object_name, goal.landmark_name) == ("blue crate", "flag pole")
    # The crate (35, 5) from the flag pole (40, 30): bearing 191 deg, south.
    assert goal.direction == "S"
    assert goal.description == "a blue plastic crate by the east fence"
    assert goal.representation == "semantic" and goal.reference_image == ""
    assert image.goal.representation == "image"
    assert image.goal.reference_image == "images/walled_yard/crate.png"
    assert semantic.success_radius_m == 3.0
    assert semantic.action_budget == 180 and semantic.setting == "standard"
    assert (semantic.split, semantic.distribution, semantic.family) == ("test", "ood", "urban")
    assert yard_suite.scenes[0].scene_type == SITE_SCENE_TYPE
    assert semantic.start_object_id == "west_pad" and semantic.target_object_id == "crate"


def test_the_photograph_is_upright_and_at_most_640_pixels(yard_suite: Suite) -> None:
    path = yard_suite.reference_image_path(yard_suite.episodes[1])
    assert path is not None
    with Image.open(path) as picture:
        assert picture.format == "PNG"
        assert picture.size == (427, 640)  # 1200 x 800 turned upright, then scaled
        pixels = np.asarray(picture.convert("RGB"), dtype=np.int32)
    # EXIF orientation 6 turns the picture clockwise: its red left half is now on top.
    top, bottom = pixels[100, 213], pixels[540, 213]
    assert top[0] > 150 > top[2] and bottom[2] > 150 > bottom[0]


def test_the_suite_records_its_site(yard_suite: Suite, yard_site: Path) -> None:
    site = yard_suite.site
    assert site is not None
    assert site.sha256 == hashlib.sha256(yard_site.read_bytes()).hexdigest()
    assert site.command == "b"
    assert site.free_space == "map" and site.embedded_scene == ""
    assert site.geofence.polygon == ((0.0, 0.0), (40.0, 0.0), (40.0, 30.0), (0.0, 30.0))
    assert site.geofence.margin == 0.5
    assert site.start_tolerance.position_m == 0.5
    assert site.start_tolerance.yaw_rad == pytest.approx(math.radians(10.0))
    assert site.frame.method == "tape" and site.frame.accuracy_m == 0.05


def test_one_twin_of_each_task_is_selected_alternating_goal_types(yard_suite: Suite) -> None:
    assert [e.episode_id for e in yard_suite.episodes] == [
        "walled_yard-standard-0000-sem",
        "walled_yard-standard-0000-img",
        "walled_yard-standard-0001-sem",
        "walled_yard-standard-0001-img",
    ]
    assert yard_suite.default_selection == (
        "walled_yard-standard-0000-sem",
        "walled_yard-standard-0001-img",
    )


def _l_shaped_unmapped(document: dict[str, Any]) -> None:
    del document["obstacles"]
    # The north-east quarter is outside: from the north pad the straight line to the crate
    # cuts across it.
    document["geofence"]["polygon_m"] = [[0, 0], [40, 0], [40, 12], [12, 12], [12, 30], [0, 30]]


def test_an_unmapped_site_carries_no_reference_actions(
    write_site: SiteWriter, tmp_path: Path
) -> None:
    built = build_site_suite(
        load_site(write_site(_l_shaped_unmapped)), tmp_path / "suite", command="built"
    )
    suite = built.suite
    assert validate_suite(suite.path) == []
    assert suite.generation.planner == "straight_line"
    for episode in suite.episodes:
        reference = episode.reference
        assert reference.actions == () and reference.poses == (episode.start,)
        assert reference.length_m == reference.euclidean_m and reference.detour_ratio == 1.0
    assert suite.episodes[0].reference.length_m == pytest.approx(28.0)
    assert built.notes == (
        "north_pad -> crate: the straight line leaves the geofence, so the reference length "
        "d_E underestimates every route (survey obstacles)",
    )
    with pytest.raises(ConfigError, match="have no reference actions"):
        reference_replay(str(suite.path))


def test_pairs_of_the_default_list_that_make_no_task_are_skipped(
    write_site: SiteWriter, tmp_path: Path
) -> None:
    def too_close(document: dict[str, Any]) -> None:
        document["starts"][1]["position_m"] = [31.0, 6.0, 2.0]  # 2.2 m from the crate's anchor

    built = build_site_suite(load_site(write_site(too_close)), tmp_path / "suite", command="b")
    (skipped,) = built.skipped
    assert (skipped.start, skipped.target) == ("north_pad", "crate")
    assert skipped.reason.startswith("d_E=2.2361 m is outside (3, 100) m")
    assert len(built.suite.episodes) == 2


def test_listed_pairs_that_make_no_task_are_errors(write_site: SiteWriter, tmp_path: Path) -> None:
    def listed(document: dict[str, Any]) -> None:
        document["starts"][1]["position_m"] = [31.0, 6.0, 2.0]
        document["tasks"] = [
            {"start": "west_pad", "target": "crate"},
            {"start": "north_pad", "target": "crate"},
        ]

    path = write_site(listed)
    with pytest.raises(ConfigError) as raised:
        build_site_suite(load_site(path), tmp_path / "suite", command="b")
    assert raised.value.problems == [
        f"{path}: tasks[1]: north_pad -> crate: d_E=2.2361 m is outside (3, 100) m"
    ]
    assert not (tmp_path / "suite").exists()


def test_the_cli_records_the_command_that_rebuilds_the_suite(
    write_site: SiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = write_site()
    out = tmp_path / "built"
    assert main(["tasks", "from-site", str(site), "--out", str(out), "--image-size", "320"]) == 0
    printed = capsys.readouterr().out
    assert printed == f"{out / 'suite.json'}: 2 task(s) of site walled_yard (map), 4 episodes\n"
    first = (out / "suite.json").read_bytes()
    command = json.loads(first)["site"]["command"]
    words = shlex.split(command)
    assert words == ["aerialdojo", "tasks", "from-site", str(site), "--out", str(out),
                     "--image-size", "320"]  # fmt: skip
    (out / "suite.json").unlink()
    assert main(words[1:]) == 0
    assert (out / "suite.json").read_bytes() == first


def test_a_site_suite_tampered_with_is_refused_by_field(yard_suite: Suite, tmp_path: Path) -> None:
    document = json.loads(yard_suite.path.read_text())
    first = document["episodes"][0]
    first["reference"]["poses_xyz_m_yaw_deg"][3][1] = -3.0  # south of the fence
    second = document["episodes"][2]
    second["scene"] = "another_site"
    document["scenes"].append(dict(document["scenes"][0], scene="another_site"))
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    problems = validate_suite(tampered)
    assert any(
        p.startswith(f"{tampered}: {first['episode_id']}: reference.poses_xyz_m_yaw_deg[3]: ")
        and "outside the geofence polygon of site walled_yard" in p
        for p in problems
    ), problems
    assert (
        f"{tampered}: {second['episode_id']}: scene: 'another_site' but the suite's site is "
        "'walled_yard'"
    ) in problems
    document = json.loads(yard_suite.path.read_text())
    document["schema_version"] = "1.0"
    tampered.write_text(json.dumps(document))
    assert any("schema_version" in p for p in validate_suite(tampered))


def test_only_an_unmapped_site_leaves_reference_actions_out(yard_suite: Suite) -> None:
    document = json.loads(yard_suite.path.read_text())
    for episode in document["episodes"]:
        reference = episode["reference"]
        reference["actions"] = []
        reference["poses_xyz_m_yaw_deg"] = reference["poses_xyz_m_yaw_deg"][:1]
        reference["length_m"] = reference["euclidean_m"]
        reference["detour_ratio"] = 1.0
        setting = "base" if reference["length_m"] < 30.0 else "standard"
        episode["setting"], episode["action_budget"] = (
            setting,
            {"base": 90, "standard": 180}[setting],
        )
        episode["episode_id"] = episode["episode_id"].replace("standard", setting)
    document["default_selection"] = []
    tampered = yard_suite.path.with_name("no_actions.json")  # beside the images
    tampered.write_text(json.dumps(document))
    problems = validate_suite(tampered)
    assert len(problems) == 4
    assert all("reference.actions: is empty, but the site's references were planned (map)" in p
               for p in problems)  # fmt: skip
    del document["site"]
    document["schema_version"] = "1.0"
    tampered.write_text(json.dumps(document))
    problems = validate_suite(tampered)
    assert len(problems) == 4
    assert all("only the suite of a site surveyed without a free-space map" in p for p in problems)
