"""The public CityNav files in our schema: a round trip through files written in the authors'
format, and malformed records refused with file, record and field named."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from aerialdojo.citynav.episodes import load_citynav_suite
from aerialdojo.citynav.public import import_public
from aerialdojo.errors import TaskFileError

MAP = "cambridge_block_7"


def _objects() -> dict:
    """A CityRefer objects.json with a named park, a named building and three goals."""

    def thing(object_id: int, kind: str, at: tuple, size: tuple, name: str = "") -> dict:
        x, y = at
        dx, dy, dz = size
        contour = [
            [x - dx / 2, y - dy / 2],
            [x + dx / 2, y - dy / 2],
            [x + dx / 2, y + dy / 2],
            [x - dx / 2, y + dy / 2],
        ]
        return {"map_name": MAP, "id": object_id, "name": name, "object_type": kind,
                "position": [x, y, 40.0 + dz / 2], "dimension": [dx, dy, dz],
                "descriptions": [], "contour": contour}  # fmt: skip

    return {
        MAP: {
            "1": thing(1, "Ground", (500.0, 500.0), (80.0, 60.0, 0.4), "Jesus Green"),
            "2": thing(2, "Building", (600.0, 520.0), (30.0, 20.0, 18.0), "Merton Hall"),
            "3": thing(3, "Car", (520.0, 560.0), (4.5, 2.0, 1.5)),
            "4": thing(4, "Building", (640.0, 470.0), (20.0, 20.0, 12.0)),
            "5": thing(5, "Parking", (420.0, 430.0), (40.0, 30.0, 0.2)),
            "6": thing(6, "Tree", (450.0, 560.0), (6.0, 6.0, 9.0)),
        }
    }


def _record(object_id: int, start: list[float], description: str) -> dict:
    target = _objects()[MAP][str(object_id)]["position"]
    return {
        "area": "cambridge", "block": "7", "object_ids": [object_id], "ann_ids": [0],
        "descriptions": [description], "trajectory": [start, [*start[:3], 0.0, -0.5]],
        "marker_positions": [target], "target_positions": [target], "total_score": 1.0,
        "dist_marker_to_target": 2.0, "split": "val_seen",
    }  # fmt: skip


def _write(tmp_path: Path, records: list) -> tuple[Path, Path]:
    trajectories = tmp_path / "citynav_val_seen_easy.json"
    trajectories.write_text(json.dumps(records))
    objects = tmp_path / "objects.json"
    objects.write_text(json.dumps(_objects()))
    return trajectories, objects


def test_public_records_round_trip_into_our_schema(tmp_path: Path) -> None:
    records = [
        _record(3, [700.0, 650.0, 170.0, 1.0, -1.2], "the blue car north of Jesus Green"),
        # The direction-vector form of a pose: heading south-west, looking down.
        _record(4, [400.0, 300.0, 180.0, -1.0, -1.0, -2.0], "a white building east of Merton Hall"),
        _record(5, [460.0, 200.0, 150.0, 0.0, -1.5], "the parking lot south-west of Jesus Green"),
    ]
    trajectories, objects = _write(tmp_path, records)
    path = import_public([trajectories], objects, tmp_path / "suite")
    suite = load_citynav_suite(path)
    assert [e.episode_id for e in suite.episodes] == [f"{MAP}-{i}-0" for i in (3, 4, 5)]
    car, building, lot = suite.episodes
    assert (car.split, car.setting, car.goal_kind, car.landmark_names) == (
        "val_seen",
        "easy",
        "car",
        ("Jesus Green",),
    )
    assert car.start.z == 170.0 and car.start.yaw == 1.0 and car.pitch == -1.2
    assert building.start.yaw == pytest.approx(math.atan2(-1.0, -1.0))
    assert building.pitch == pytest.approx(math.atan2(-2.0, math.sqrt(2.0)))
    assert lot.goal_kind == "parking_lot"
    assert car.target_position == tuple(_objects()[MAP]["3"]["position"])
    for episode in suite.episodes:  # the shortest path ends within 10 m, above the goal's top
        end = episode.reference.end
        assert end.distance_to(episode.target_position) <= 10.0
        assert episode.reference.length_m == episode.reference_length_m
    city = suite.city_map(MAP)
    assert {lm.name for lm in city.landmarks} == {"Jesus Green", "Merton Hall"}
    assert city.ground_z == pytest.approx(40.0)
    # Written again and read back, the suite is the same.
    again = load_citynav_suite(path)
    assert again.episodes == suite.episodes


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda r: r.pop("target_positions"), "record 1: target_positions: missing"),
        (
            lambda r: r.update(trajectory=[[1.0, 2.0, 3.0]]),
            "record 1: trajectory/target_positions: a pose has 5 or 6 numbers, got 3",
        ),
        (lambda r: r.update(object_ids=[99]), "record 1: object_ids: no object 99 in map"),
        (lambda r: r.update(split="holdout"), "record 1: split: 'holdout' is not one of"),
        (
            lambda r: r.update(descriptions=["the red car by the river"]),
            "record 1: descriptions: names no landmark",
        ),
        (lambda r: r.update(block="99"), "record 1: area/block: no map 'cambridge_block_99'"),
        (lambda r: r.update(object_ids=[6]), "record 1: object_ids: object 6 is a 'Tree'"),
    ],
)
def test_malformed_records_are_refused_naming_file_record_and_field(
    tmp_path: Path, change: object, named: str
) -> None:
    good = _record(3, [700.0, 650.0, 170.0, 1.0, -1.2], "the blue car north of Jesus Green")
    bad = _record(3, [700.0, 650.0, 170.0, 1.0, -1.2], "the blue car north of Jesus Green")
    change(bad)  # type: ignore[operator]
    trajectories, objects = _write(tmp_path, [good, bad])
    with pytest.raises(TaskFileError) as raised:
        import_public([trajectories], objects, tmp_path / "suite")
    assert any(str(trajectories) in p and named in p for p in raised.value.problems), (
        raised.value.problems
    )


def test_our_validation_refuses_a_start_outside_the_paper_rules(tmp_path: Path) -> None:
    # 90 m above the ground (CityNav: 100-150 m) and 600 m from the goal (at most 500 m).
    record = _record(3, [1100.0, 560.0, 130.0, 0.0, -1.0], "the car north of Jesus Green")
    trajectories, objects = _write(tmp_path, [record])
    with pytest.raises(TaskFileError) as raised:
        import_public([trajectories], objects, tmp_path / "suite")
    problems = " ".join(raised.value.problems)
    assert "start: 580.0 m from the goal on the map, more than 500 m" in problems
    assert "start: altitude 90.0 m above the ground, not in 100-150 m" in problems
