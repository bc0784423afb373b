"""The suites shipped for CARLA-Air's Town10HD (``aerialdojo tasks from-carla-map``): they
validate as a user validates them, carry the MIT notice of the map they derive from and the
command that builds them, spawn every target they name, and rebuild from that command."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aerialdojo.agos.episodes import load_agos_suite
from aerialdojo.agos.protocol import AgosReferee
from aerialdojo.agos.worlds import referee_town
from aerialdojo.carla_maps import load_road_map, road_graph_path
from aerialdojo.geometry import Pose
from aerialdojo.tasks import carla_town
from aerialdojo.tasks.carla_town import COLLISION_RADIUS_M, CarriagewayWorld
from aerialdojo.tasks.suite import load_suite, resolve_suite

AERIALDOJO_SUITE = "carla_air_town10hd"
AGOS_SUITE = "carla_air_agos_town10hd"


def _aerialdojo(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _recorded_command(name: str) -> list[str]:
    description = json.loads(resolve_suite(name).read_text())["description"]
    built_by = description.split("Built by: ", 1)[1].split(". ", 1)[0]
    return shlex.split(built_by)


@pytest.mark.parametrize("name", [AERIALDOJO_SUITE, AGOS_SUITE])
def test_a_shipped_carla_air_suite_validates_and_carries_the_maps_notice(name: str) -> None:
    validated = _aerialdojo("tasks", "validate", name)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert validated.stderr.strip() == f"{name} (shipped suite): ok"
    notice = (resolve_suite(name).parent / "NOTICE").read_text()
    assert notice == (road_graph_path("Town10HD").parent / "NOTICE").read_text()
    assert "MIT License" in notice and "Computer Vision Center" in notice
    command = _recorded_command(name)
    assert command[:3] == ["aerialdojo", "tasks", "from-carla-map"]
    assert command[command.index("--name") + 1] == name


def test_the_aerialdojo_suite_spawns_each_target_and_flies_only_over_the_carriageway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    suite = load_suite(resolve_suite(AERIALDOJO_SUITE))
    assert {e.scene for e in suite.episodes} == {"Town10HD"}
    assert {e.setting for e in suite.episodes} == {"base", "standard", "long_horizon"}
    targets = {}
    for episode in suite.episodes:
        spawned = {s.object_id: s for s in episode.spawns}
        assert episode.target_object_id in spawned, episode.episode_id
        target = spawned[episode.target_object_id]
        assert target.blueprint.startswith("static.prop."), target
        targets[target.object_id] = target
    # The references keep the UAV's sphere over the carriageway the map's lanes vouch for
    # and out of every target's box, sampled every 5 cm. Without the lane margin: it is the
    # planner's slack for its own sampling of the moves (a 5 m move is swept every 25 cm).
    monkeypatch.setattr(carla_town, "LANE_MARGIN_M", 0.0)
    world = CarriagewayWorld(load_road_map("Town10HD"), [t.box() for t in targets.values()])
    for episode in suite.episodes:
        path = np.array([(p.x, p.y, p.z) for p in episode.reference.poses])
        for a, b in itertools.pairwise(path):
            samples = np.linspace(a, b, max(2, math.ceil(math.dist(a, b) / 0.05) + 1))
            assert world.free(samples, COLLISION_RADIUS_M).all(), episode.episode_id


def test_from_carla_map_rebuilds_the_shipped_agos_suite(tmp_path: Path) -> None:
    command = _recorded_command(AGOS_SUITE)
    out = tmp_path / "agos"
    command[command.index("--out") + 1] = str(out)
    built = _aerialdojo(*command[1:])
    assert built.returncode == 0, built.stderr
    shipped = resolve_suite(AGOS_SUITE)
    ours, theirs = (json.loads(p.read_text()) for p in (out / "suite.json", shipped))
    description = {"description": theirs["description"]}
    assert {**ours, **description} == theirs
    assert (out / "NOTICE").read_text() == (shipped.parent / "NOTICE").read_text()
    suite = load_agos_suite(shipped)
    assert {e.setting for e in suite.episodes} == {"easy", "mid", "hard"}
    for episode in suite.episodes:
        spawned = {s.object_id for s in episode.spawns}
        assert episode.target_object_id in spawned, episode.episode_id
        assert set(episode.distractor_ids) <= spawned, episode.episode_id
        assert all(s.blueprint.startswith("vehicle.") for s in episode.spawns)


def test_from_carla_map_refuses_a_map_without_a_road_graph(tmp_path: Path) -> None:
    refused = _aerialdojo(
        "tasks", "from-carla-map", "--map", "Town99", "--benchmark", "agos",
        "--out", tmp_path / "x", "--name", "x",
    )  # fmt: skip
    assert refused.returncode != 0
    assert "Town99" in refused.stderr and "Traceback" not in refused.stderr


#: Town10HD.xodr from a CARLA package (CarlaUE4/Content/Carla/Maps/OpenDrive/) or from
#: BerkeleyLearnVerify/Scenic (assets/maps/CARLA/); the test that derives the shipped road
#: graph again runs only where it is at hand.
TOWN10HD_XODR = os.environ.get("AERIALDOJO_TOWN10HD_XODR", "")


@pytest.mark.skipif(not Path(TOWN10HD_XODR).is_file(), reason="AERIALDOJO_TOWN10HD_XODR unset")
def test_road_graph_derives_the_shipped_town10hd_graph_again(tmp_path: Path) -> None:
    shipped = json.loads(road_graph_path("Town10HD").read_text())
    assert (
        hashlib.sha256(Path(TOWN10HD_XODR).read_bytes()).hexdigest()
        == (shipped["source"]["sha256"])
    )
    out = tmp_path / "Town10HD.json"
    derived = _aerialdojo("tasks", "road-graph", TOWN10HD_XODR, "--map", "Town10HD", "--out", out)
    assert derived.returncode == 0, derived.stderr
    ours = json.loads(out.read_text())
    assert {**ours, "command": shipped["command"]} == shipped


def test_road_graph_records_the_maps_hash_and_its_command(tmp_path: Path) -> None:
    # One 40 m straight road: a driving lane each way and a shoulder on the right.
    lane = '<width sOffset="0" a="{}" b="0" c="0" d="0"/>'
    xodr = tmp_path / "Straight.xodr"
    xodr.write_text(
        '<?xml version="1.0"?><OpenDRIVE><header revMajor="1" revMinor="4"/>'
        '<road id="1" length="40" junction="-1"><link/><planView>'
        '<geometry s="0" x="0" y="0" hdg="0" length="40"><line/></geometry></planView>'
        f'<lanes><laneSection s="0"><left><lane id="1" type="driving">{lane.format(3.5)}'
        '</lane></left><center><lane id="0" type="none"/></center><right>'
        f'<lane id="-1" type="driving">{lane.format(3.5)}</lane>'
        f'<lane id="-2" type="shoulder">{lane.format(2.5)}</lane></right></laneSection>'
        "</lanes></road></OpenDRIVE>"
    )
    out = tmp_path / "Straight.json"
    derived = _aerialdojo("tasks", "road-graph", xodr, "--map", "Straight", "--out", out)
    assert derived.returncode == 0, derived.stderr
    document = json.loads(out.read_text())
    assert document["source"] == {
        "file": "Straight.xodr",
        "sha256": hashlib.sha256(xodr.read_bytes()).hexdigest(),
    }
    assert shlex.split(document["command"])[:4] == [
        "aerialdojo",
        "tasks",
        "road-graph",
        "Straight.xodr",
    ]
    assert "MIT license" in document["notice"]
    nodes = np.array(document["nodes"])
    # Two lanes of 40 m sampled every 2 m, 1.75 m either side of the reference line.
    assert sorted(set(np.round(nodes[:, 1], 2))) == [-1.75, 1.75]
    assert 38 <= len(nodes) <= 44
    assert document["parking"], "the shoulder lane gives parking spots"
    refused = _aerialdojo("tasks", "road-graph", xodr, "--map", "not a name", "--out", out)
    assert refused.returncode != 0 and "--map 'not a name'" in refused.stderr


def test_the_referee_checks_a_confirm_on_town10hd_without_occluders() -> None:
    # The map file holds nothing that could hide a spawned vehicle: the checker's line of
    # sight holds, and the six views and the distance decide.
    for episode in load_agos_suite(resolve_suite(AGOS_SUITE)).episodes:
        referee = AgosReferee(episode, referee_town(episode))
        x, y, _z = referee.target.centroid
        near = referee._check(Pose(x + 6.0, y, 1.6, math.pi), fresh=True)
        assert near["valid"] and near["line_of_sight"], (episode.episode_id, near)
        far = referee._check(Pose(x + 300.0, y, 1.6, math.pi), fresh=True)
        assert not far["valid"] and "m away" in far["why"], (episode.episode_id, far)
