"""CityNav rules without ROS: success and OSR within 20 m in 3D, the referee, the point-cloud
renderer's depth against the analytic distance, the geographic projection, the shipped suite."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from aerialdojo.citynav.episodes import load_citynav_suite
from aerialdojo.citynav.geo import GeoReference
from aerialdojo.errors import InvalidActionError
from aerialdojo.events import EventKind
from aerialdojo.geometry import Pose
from aerialdojo.metrics.citynav import score_episode
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols.citynav import CityNavReferee
from aerialdojo.protocols.referee import SimOutcome, StepRequest
from aerialdojo.sim.backend import CameraSpec, nadir_rig
from aerialdojo.sim.pointcloud import PointCloudBackend, build_scene, render_view
from aerialdojo.tasks.suite import shipped_suites_dir

SUITE = shipped_suites_dir() / "citynav_mini" / "suite.json"


def _trace(path: list[tuple[float, float, float]]) -> EpisodeTrace:
    return EpisodeTrace(
        episode_id="e", benchmark="citynav", scene="s", family="urban", setting="all",
        split="val_seen", positions=path, stop_called=True, collided=False, collision_step=None,
        steps_used=len(path) - 1, action_budget=250, target=(0.0, 0.0, 0.0),
        reference_length_m=10.0, termination="stopped",
    )  # fmt: skip


def test_success_and_osr_are_20_m_in_3d() -> None:
    # 12 m east and 16 m up: exactly 20 m away in 3D (success), though 12 m on the map.
    assert score_episode(_trace([(0.0, 0.0, 100.0), (12.0, 0.0, 16.0)])).values["sr_20m"] == 1.0
    # 12 m east and 17 m up: 20.8 m in 3D, a failure a 2D check would call a success.
    far = score_episode(_trace([(0.0, 0.0, 100.0), (12.0, 0.0, 17.0)]))
    assert far.values["sr_20m"] == 0.0 and far.values["ne_m"] == pytest.approx(math.hypot(12, 17))
    # Passing 5 m above the goal then stopping 30 m away: OSR, not SR.
    passing = score_episode(_trace([(-30.0, 0.0, 5.0), (30.0, 0.0, 5.0)]))
    assert passing.values["osr_20m"] == 1.0 and passing.values["sr_20m"] == 0.0
    # Passing 21 m above the goal: neither.
    high = score_episode(_trace([(-30.0, 0.0, 21.0), (30.0, 0.0, 21.0)]))
    assert high.values["osr_20m"] == 0.0


def test_the_referee_holds_contacts_refuses_other_actions_and_counts_the_budget() -> None:
    episode = load_citynav_suite(SUITE).episodes[0]
    referee = CityNavReferee(episode, budget=3)
    with pytest.raises(InvalidActionError, match="does not take magnitude 3"):
        referee.plan(StepRequest(agent="uav", action="MoveForward", magnitude=3.0))
    with pytest.raises(InvalidActionError, match="unknown action 'MoveLeft'"):
        referee.plan(StepRequest(agent="uav", action="MoveLeft", magnitude=5.0))
    assert referee.steps_used == 0  # refusals use no budget
    forward = referee.plan(StepRequest(agent="uav", action="MoveForward", magnitude=5.0))
    held = referee.apply(
        forward, SimOutcome(pose=episode.start, collided=True, collision_object="roof")
    )
    assert held.kind is EventKind.STEP and "held at contact with roof" in held.reason
    turn = referee.plan(StepRequest(agent="uav", action="TurnLeft", magnitude=30.0))
    assert referee.apply(turn, SimOutcome(pose=episode.start)).kind is EventKind.STEP
    last = referee.plan(StepRequest(agent="uav", action="MoveDown", magnitude=2.0))
    assert referee.apply(last, SimOutcome(pose=episode.start)).kind is EventKind.BUDGET_EXHAUSTED
    assert referee.start_record()["action_budget"] == 3


def _cloud() -> tuple[np.ndarray, np.ndarray]:
    """Ground at z = 0 over 80 x 80 m, a 10 m red roof over [10, 20]^2, a wall at x = -20."""
    grid = np.arange(-40.0, 40.0, 0.25)
    xs, ys = np.meshgrid(grid, grid)
    points = np.stack((xs.ravel(), ys.ravel(), np.zeros(xs.size)), axis=1)
    roof = (points[:, 0] >= 10) & (points[:, 0] < 20) & (points[:, 1] >= 10) & (points[:, 1] < 20)
    points[roof, 2] = 10.0
    wall_y, wall_z = np.meshgrid(grid, np.arange(0.0, 30.0, 0.25))
    wall = np.stack((np.full(wall_y.size, -20.0), wall_y.ravel(), wall_z.ravel()), axis=1)
    colours = np.full((len(points) + len(wall), 3), 128, dtype=np.uint8)
    colours[np.flatnonzero(roof)] = (200, 30, 30)
    return np.concatenate((points, wall)), colours


def test_point_cloud_depth_is_the_analytic_distance() -> None:
    points, colours = _cloud()
    scene = build_scene("generated", points, colours, voxel_m=0.5)
    nadir = nadir_rig(33, 33)[0]
    over_ground = render_view(scene, Pose(-5.0, -5.0, 50.0, 0.4), nadir)
    assert over_ground.depth[16, 16] == pytest.approx(50.0, abs=1e-3)
    over_roof = render_view(scene, Pose(15.0, 15.0, 50.0, 0.0), nadir)
    assert over_roof.depth[16, 16] == pytest.approx(40.0, abs=1e-3)
    assert tuple(over_roof.rgb[16, 16]) == (200, 30, 30)
    # Planar depth off the axis: the same 40 m to the roof's plane.
    assert over_roof.depth[14, 18] == pytest.approx(40.0, abs=1e-3)
    front = CameraSpec(name="front", width=33, height=33, fov_deg=60.0)
    facing_wall = render_view(scene, Pose(5.0, 0.0, 12.0, math.pi), front)
    assert facing_wall.depth[16, 16] == pytest.approx(25.0, abs=1e-3)
    sky = render_view(
        scene, Pose(0.0, 0.0, 50.0, 0.0), CameraSpec(name="up", width=9, height=9, pitch_deg=80.0)
    )
    assert np.isinf(sky.depth[0, 4])


def test_the_point_cloud_backend_reads_a_sensaturban_ply(tmp_path: Path) -> None:
    points, colours = _cloud()
    layout = np.dtype(
        [
            ("x", "<f8"),
            ("y", "<f8"),
            ("z", "<f8"),
            ("red", "u1"),
            ("green", "u1"),
            ("blue", "u1"),
            ("class", "u1"),
        ]
    )
    vertices = np.zeros(len(points), dtype=layout)
    for axis, name in enumerate("xyz"):
        vertices[name] = points[:, axis]
    for channel, name in enumerate(("red", "green", "blue")):
        vertices[name] = colours[:, channel]
    header = (
        "ply\nformat binary_little_endian 1.0\n"
        f"element vertex {len(points)}\n"
        + "".join(f"property double {n}\n" for n in "xyz")
        + "".join(f"property uchar {n}\n" for n in ("red", "green", "blue", "class"))
        + "end_header\n"
    )
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "cambridge_block_99.ply").write_bytes(
        header.encode() + vertices.tobytes()
    )
    backend = PointCloudBackend(
        directory=tmp_path, voxel_m=0.5, rigs=PointCloudBackend.camera_rigs(["uav"], 17, 17, 90.0)
    )
    assert backend.scenes() == ["cambridge_block_99"]
    backend.reset("cambridge_block_99", {"uav": Pose(15.0, 15.0, 30.0, 0.0)})
    assert backend.observe("uav").frames["down"].depth[8, 8] == pytest.approx(20.0, abs=1e-3)
    # Descending 2 m at a time towards the roof stops 1 m short of it: a contact.
    from aerialdojo.actions import Action

    outcomes = [backend.execute("uav", Action("MoveDown", 2.0)) for _ in range(10)]
    assert any(o.collided for o in outcomes)
    assert backend.pose("uav").z == pytest.approx(11.0, abs=1e-3)


def test_map_and_geographic_coordinates_round_trip() -> None:
    geo = GeoReference(latitude_deg=52.2053, longitude_deg=0.1218, height_m=15.0)
    latitude, longitude, height = geo.to_geodetic(300.0, -200.0, 120.0)
    # 300 m east and 200 m south at 52 deg N: about 0.0044 deg of longitude, 0.0018 of latitude.
    assert longitude - 0.1218 == pytest.approx(
        300.0 / (111320.0 * math.cos(math.radians(52.2))), rel=0.01
    )
    assert latitude - 52.2053 == pytest.approx(-200.0 / 111250.0, rel=0.01)
    assert height == pytest.approx(135.0, abs=0.05)  # the tangent plane drops below the sphere
    assert geo.to_map(latitude, longitude, height) == pytest.approx(
        (300.0, -200.0, 120.0), abs=1e-6
    )


def test_the_shipped_suite_follows_the_paper_and_its_references_reach_the_goal() -> None:
    suite = load_citynav_suite(SUITE)
    assert {e.split for e in suite.episodes} == {"train", "val_seen", "val_unseen", "test_unseen"}
    assert {e.scene for e in suite.episodes if e.split in ("train", "val_seen")} == {
        "CityNavTown_0"
    }
    for episode in suite.episodes:
        assert episode.start_distance_m <= 500.0 and 100.0 <= episode.start.z <= 150.0
        assert episode.reference.end.distance_to(episode.target_position) <= 10.0
        assert any(name in episode.description for name in episode.landmark_names)
