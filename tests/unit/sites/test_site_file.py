"""Site files are checked whole before anything is built: every problem is listed at once,
each naming the file and the field."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from site_files import SiteWriter, write_photo

from aerialdojo.cli import main
from aerialdojo.errors import ConfigError
from aerialdojo.sites.site import MAX_SITE_BYTES, load_site
from aerialdojo.tasks.episode import stated_distance
from aerialdojo.tasks.site_record import FREE_SPACE_MAP, FREE_SPACE_UNMAPPED

REPO = Path(__file__).resolve().parents[3]
REHEARSAL = REPO / "config" / "sites" / "alley_rehearsal" / "site.yaml"


def _problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        load_site(path)
    return raised.value.problems


def test_the_yard_loads_with_its_defaults(write_site: SiteWriter) -> None:
    site = load_site(write_site())
    assert site.name == "walled_yard" and site.scene == "walled_yard"
    assert site.free_space == FREE_SPACE_MAP
    assert site.start_tolerance.position_m == 0.5
    assert site.start_tolerance.yaw_rad == pytest.approx(math.radians(10.0))
    assert site.collision_radius_m == 0.25
    assert site.frame.surveyed == "2026-11-30, site team"  # a date stays text
    assert site.pairs == (("west_pad", "crate"), ("north_pad", "crate")) and not site.pairs_listed
    (crate,) = site.targets
    assert crate.landmark.name == "flag pole"  # the nearest landmark, horizontally
    assert crate.reference_image.is_file()
    lamp = site.obstacles[1]
    assert len(lamp.footprint) == 16 and lamp.max_z == 5.0
    assert len(site.sha256) == 64


def test_without_obstacles_a_real_site_is_unmapped(write_site: SiteWriter) -> None:
    site = load_site(write_site(lambda d: d.pop("obstacles")))
    assert site.free_space == FREE_SPACE_UNMAPPED


def test_the_shipped_rehearsal_site_loads() -> None:
    site = load_site(REHEARSAL)
    assert site.embedded_scene == "Alley_0" and site.scene == "Alley_0"
    assert len(site.starts) == 3 and len(site.targets) == 3 and site.pairs_listed


def _break_everything(document: dict[str, Any]) -> None:
    document["starts"][1]["position_m"] = [5.0, 25.0, 12.0]  # above the ceiling
    document["starts"].append({"name": "west_pad", "position_m": [6, 6, 2], "yaw_deg": 0})
    target = document["targets"][0]
    target["landmark"] = "church"
    target["description"] = "a blue crate about 15 m from the gate"
    target["reference_image"] = "snapshots/missing.jpg"
    document["targets"].append(
        {
            "id": "west_pad",
            "name": "bin",
            "position_m": [10, 10, 0.5],
            "anchor": {"position_m": [19.0, 10.0, 2.0], "yaw_deg": 0},
            "description": "a bin",
            "reference_image": "../outside.jpg",
        }
    )
    document["tasks"] = [
        {"start": "east_pad", "target": "crate"},
        {"start": "west_pad", "target": "crate"},
        {"start": "west_pad", "target": "crate"},
    ]


def test_every_problem_is_listed_with_file_and_field(write_site: SiteWriter) -> None:
    path = write_site(_break_everything)
    problems = _problems(path)
    expected = [
        "starts[1].position_m: (5.00, 25.00, 12.00) is above the geofence ceiling 10 m",
        "starts[2].name: 'west_pad' is also starts[0]",
        "targets[0].landmark: 'church' is not a landmark (flag pole, water tower)",
        "targets[0].description: states a distance ('15 m')",
        "targets[0].reference_image: snapshots/missing.jpg: cannot read",
        "targets[1].id: 'west_pad' is also a start's name",
        "targets[1].reference_image: '../outside.jpg' must be a path below the site file's",
        "tasks[0].start: 'east_pad' is not a start",
        "tasks[2]: lists west_pad -> crate again",
        "targets[1].anchor.position_m: (19.00, 10.00, 2.00) is not free at the collision "
        "radius 0.25 m (inside geometry)",  # in the wall
    ]
    for line in expected:
        assert any(problem.startswith(f"{path}: {line}") for problem in problems), (
            line,
            problems,
        )
    assert all(problem.startswith(f"{path}: ") for problem in problems)
    assert len(problems) == len(expected)


def test_positions_are_not_checked_against_a_broken_fence_or_obstacle(
    write_site: SiteWriter,
) -> None:
    def edit(document: dict[str, Any]) -> None:
        document["geofence"]["polygon_m"] = [[0, 0], [40, 0], [40, 0], [40, 30], [0, 30]]
        document["obstacles"][0]["polygon_m"] = [[0, 0], [4, 0], [2, 1], [4, 4], [0, 4]]
        document["obstacles"][1]["max_z_m"] = -2000.0
        document["starts"][1]["position_m"] = [5.0, 25.0, 12.0]  # not reported: no fence

    path = write_site(edit)
    assert _problems(path) == [
        f"{path}: geofence.polygon_m: vertex 1 repeats the next one",
        f"{path}: obstacles[0].polygon_m: is not convex (split it into convex parts)",
        f"{path}: obstacles[1].max_z_m: is not above min_z_m -1000",
    ]


def test_schema_problems_name_the_field_path(write_site: SiteWriter) -> None:
    def edit(document: dict[str, Any]) -> None:
        document["family"] = "suburban"
        document["targets"][0]["anchor"]["position_m"] = [1, 2]
        document["starts"][0]["yaw_deg"] = float("nan")
        document["frame"]["method"] = "gnss"  # without its datum
        document["surprise"] = True

    path = write_site(edit)
    problems = _problems(path)
    assert f"{path}: starts[0].yaw_deg: not a finite number" in problems
    for field in ("family", "targets[0].anchor.position_m", "frame", "(document)"):
        assert any(p.startswith(f"{path}: {field}: ") for p in problems), (field, problems)
    assert any("datum" in p for p in problems)
    assert any("surprise" in p for p in problems)


def test_an_anchor_inside_an_obstacle_is_not_free(write_site: SiteWriter) -> None:
    def edit(document: dict[str, Any]) -> None:
        document["targets"][0]["anchor"]["position_m"] = [19.0, 10.0, 2.0]  # in the wall

        document["targets"][0]["description"] = "a crate 3 m from the wall"

    path = write_site(edit)
    assert _problems(path) == [
        f"{path}: targets[0].description: states a distance ('3 m'): describe appearance and "
        "relations; the goal's landmark and direction locate the target",
        f"{path}: targets[0].anchor.position_m: (19.00, 10.00, 2.00) is not free at the "
        "collision radius 0.25 m (inside geometry)",
    ]


def test_a_start_grazing_an_obstacle_names_it(write_site: SiteWriter) -> None:
    def edit(document: dict[str, Any]) -> None:
        document["starts"][0]["position_m"] = [17.9, 10.0, 2.0]  # 0.1 m from the wall

    (problem,) = _problems(write_site(edit))
    assert "starts[0].position_m" in problem and "(touches wall)" in problem


def test_rehearsal_sites_are_checked_against_their_scene(tmp_path: Path) -> None:
    text = REHEARSAL.read_text()
    (tmp_path / "photos").mkdir()
    for photo in (REHEARSAL.parent / "photos").iterdir():
        (tmp_path / "photos" / photo.name).write_bytes(photo.read_bytes())
    broken = tmp_path / "site.yaml"
    broken.write_text(text.replace("family: urban", "family: natural"))
    assert _problems(broken) == [f"{broken}: family: 'natural' but Alley_0 is 'urban'"]
    broken.write_text(text.replace("embedded_scene: Alley_0", "embedded_scene: Alley_7"))
    (problem,) = _problems(broken)
    assert problem.startswith(f"{broken}: embedded_scene: ")
    broken.write_text(text.replace("[-48.0, -25.0]", "[-80.0, -25.0]"))
    (problem,) = _problems(broken)
    assert "geofence: the fence (inside its margin) spans [-79.5, -6.5]" in problem
    assert "beyond Alley_0's flyable box [-70, 70]" in problem


def test_a_start_pad_inside_a_building_is_refused(tmp_path: Path) -> None:
    # Inside a flat-roofed building, touching nothing: only the inside test's ray can tell.
    text = REHEARSAL.read_text()
    (tmp_path / "photos").mkdir()
    for photo in (REHEARSAL.parent / "photos").iterdir():
        (tmp_path / "photos" / photo.name).write_bytes(photo.read_bytes())
    broken = tmp_path / "site.yaml"
    # A start pad moved into the row of buildings on the west side.
    broken.write_text(text.replace("[-13.09, 2.89, 1.38]", "[-47.0, 2.89, 1.38]"))
    (problem,) = _problems(broken)
    assert problem.startswith(f"{broken}: starts[0].position_m: (-47.00, 2.89, 1.38) is not free")


def test_photographs_must_decode(write_site: SiteWriter, tmp_path: Path) -> None:
    path = write_site()
    photo = path.parent / "photos" / "crate.jpg"
    photo.write_bytes(photo.read_bytes()[:2000])  # a copy cut short
    (problem,) = _problems(path)
    assert problem.startswith(f"{path}: targets[0].reference_image: photos/crate.jpg: is not an")
    Image.new("RGB", (8, 8)).save(photo, format="GIF")
    (problem,) = _problems(path)
    assert problem.endswith("photos/crate.jpg: is GIF, not JPEG or PNG")
    write_photo(photo)
    assert load_site(path).targets[0].reference_image == photo


def test_unreadable_files_are_refused_before_parsing(tmp_path: Path) -> None:
    missing = tmp_path / "absent.yaml"
    (problem,) = _problems(missing)
    assert problem.startswith(f"{missing}: cannot read")
    large = tmp_path / "large.yaml"
    large.write_text("#" * (MAX_SITE_BYTES + 1))
    (problem,) = _problems(large)
    assert "larger than a site file can be" in problem
    aliases = tmp_path / "aliases.yaml"
    aliases.write_text("a: &x [1, 2]\nb: *x\n")
    (problem,) = _problems(aliases)
    assert problem == f"{aliases}: line 2 column 4: aliases (*name) are not allowed in a site file"
    listing = tmp_path / "list.yaml"
    listing.write_text("- 1\n")
    assert _problems(listing) == [f"{listing}: expected a mapping of fields, got list"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("a red car about 15 m north of the gate", "15 m"),
        ("the van, 3.5m from the wall", "3.5m"),
        ("twenty metres past the shed", "twenty metres"),
        ("a bin 10 feet away", "10 feet"),
        ("a few yards beyond the fence", "a few yards"),
        ("a white van with 2 mirrors beside the 3rd gate", None),
        ("a sign saying 50 mph", None),
    ],
)
def test_descriptions_state_no_distance(text: str, found: str | None) -> None:
    assert stated_distance(text) == found


def test_tasks_validate_checks_a_site_file(
    write_site: SiteWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_site()
    assert main(["tasks", "validate", str(good)]) == 0
    assert capsys.readouterr().err == f"{good}: ok\n"
    bad = write_site(_break_everything, name="bad")
    assert main(["tasks", "validate", str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == _problems(bad)
    assert captured.err == f"{bad}: 10 problem(s)\n"
