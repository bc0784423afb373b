"""EmbeddedBackend: the SimulatorBackend contract on a real scene."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.actions import Action
from aerialdojo.errors import ConfigError, InvalidActionError, UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraSpec, Observation, SimulatorBackend
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.sim.embedded.scenes import scene_names


@pytest.fixture(scope="module")
def backend() -> EmbeddedBackend:
    return EmbeddedBackend(seed=0, rigs={"uav": [CameraSpec(name="front", width=32, height=32)]})


def _start(backend: EmbeddedBackend) -> Pose:
    backend.reset("Bridge_0", {"uav": Pose(0.0, -3.0, 30.0, math.pi / 2.0)})
    return backend.pose("uav")


def test_is_a_simulator_backend_listing_every_scene(backend: EmbeddedBackend) -> None:
    assert isinstance(backend, SimulatorBackend)
    assert backend.scenes() == scene_names()


def test_free_moves_turns_and_stop_advance_the_clock(backend: EmbeddedBackend) -> None:
    start = _start(backend)
    outcome = backend.execute("uav", Action("MoveForward", 5.0))
    assert not outcome.collided
    assert (outcome.pose.x, outcome.pose.y) == pytest.approx((start.x, start.y + 5.0))
    turned = backend.execute("uav", Action("TurnLeft", 15.0))
    assert turned.pose.yaw == pytest.approx(start.yaw + math.radians(15.0))
    assert turned.pose.position == pytest.approx(outcome.pose.position)
    stopped = backend.execute("uav", Action("Stop"))
    assert stopped.pose == turned.pose and not stopped.collided
    assert backend.observe("uav").sim_time_s == pytest.approx(3.0)


def test_collision_stops_at_contact_and_names_the_obstacle(backend: EmbeddedBackend) -> None:
    _start(backend)
    # The bridge deck is below: descending 2 m at a time ends on it.
    outcomes = [backend.execute("uav", Action("MoveDown", 2.0)) for _ in range(12)]
    hit = next(outcome for outcome in outcomes if outcome.collided)
    assert hit.collision_object == "bridge_deck"
    assert backend.scene.sphere_is_free(hit.pose.position, backend.agent_radius_m)
    assert hit.pose.z == pytest.approx(
        backend.scene.sweep_sphere(
            hit.pose.position + np.array((0.0, 0.0, 3.0)),
            hit.pose.position - np.array((0.0, 0.0, 1.0)),
            0.25,
        ).position[2]
    )


def test_the_edge_of_the_world_is_a_geofence_not_a_collision(backend: EmbeddedBackend) -> None:
    _start(backend)
    edge = backend.scene.annotations.bounds_max[0]
    backend.reset("Bridge_0", {"uav": Pose(edge - 3.0, -3.0, 30.0, 0.0)})
    held = backend.execute("uav", Action("MoveForward", 5.0))
    assert held.geofenced and not held.collided and held.collision_object == ""
    assert held.pose.x == pytest.approx(edge) and held.pose.y == pytest.approx(-3.0)
    again = backend.execute("uav", Action("MoveForward", 5.0))
    assert again.geofenced and not again.collided and again.pose.x == pytest.approx(edge)
    along = backend.execute("uav", Action("MoveLeft", 5.0))  # along the fence: free
    assert not along.geofenced and not along.collided and along.pose.y == pytest.approx(2.0)


def test_observation_has_every_view_and_ids_only_on_request(backend: EmbeddedBackend) -> None:
    _start(backend)
    plain = backend.observe("uav")
    assert list(plain.frames) == ["front"] and plain.frames["front"].instance_ids is None
    truth = backend.observe("uav", with_ground_truth_ids=True)
    assert truth.frames["front"].instance_ids is not None
    np.testing.assert_array_equal(plain.frames["front"].rgb, truth.frames["front"].rgb)


def test_a_started_observation_is_the_state_it_started_in_and_hands_each_view() -> None:
    """``start_observe`` renders from a snapshot: an action executed before its views are
    taken changes neither their time and pose nor their pixels (the bridge executes the next
    action while a set still renders)."""
    rig = [CameraSpec(name="front", width=32, height=32), CameraSpec(name="down", width=16,
           height=16, pitch_deg=-90.0)]  # fmt: skip
    backend = EmbeddedBackend(seed=0, rigs={"uav": rig})
    _start(backend)
    backend.execute("uav", Action("MoveForward", 1.0))
    expected = backend.observe("uav")
    started = backend.start_observe("uav")
    backend.execute("uav", Action("TurnLeft", 15.0))
    handed: list[Observation] = []
    observation = started.result(handed.append)
    assert (observation.sim_time_s, observation.pose) == (expected.sim_time_s, expected.pose)
    assert backend.sim_time_s > observation.sim_time_s and backend.pose("uav") != expected.pose
    for name, frame in expected.frames.items():
        assert observation.frames[name].rgb.tobytes() == frame.rgb.tobytes()
        assert observation.frames[name].depth.tobytes() == frame.depth.tobytes()
    assert [list(view.frames) for view in handed] == [["front"], ["down"]]
    for view in handed:
        assert (view.sim_time_s, view.pose) == (observation.sim_time_s, observation.pose)
        ((name, frame),) = view.frames.items()
        assert frame is observation.frames[name]


def test_same_seed_and_actions_give_identical_images() -> None:
    runs = []
    for _ in range(2):
        sim = EmbeddedBackend(seed=3, rigs={"uav": [CameraSpec(name="front", width=48, height=48)]})
        sim.reset("Earthquake_1", {"uav": Pose(-60.0, -60.0, 20.0, 0.5)})
        for action in (
            Action("MoveForward", 5.0),
            Action("TurnRight", 15.0),
            Action("MoveUp", 2.0),
        ):
            sim.execute("uav", action)
        runs.append(sim.observe("uav").frames["front"].rgb.tobytes())
    assert runs[0] == runs[1]


def test_bad_requests_are_refused_with_the_value_named(backend: EmbeddedBackend) -> None:
    with pytest.raises(UnknownSceneError, match="Atlantis_0"):
        backend.reset("Atlantis_0", {})
    with pytest.raises(UnknownSceneError, match="Mall_7"):
        backend.reset("Mall_7", {})
    with pytest.raises(ConfigError, match="ugv"):
        backend.reset("Bridge_0", {"ugv": Pose(0.0, 0.0, 5.0, 0.0)})
    _start(backend)
    with pytest.raises(InvalidActionError, match="ugv"):
        backend.execute("ugv", Action("MoveForward", 1.0))
    with pytest.raises(InvalidActionError, match="GO_TO_CANDIDATE"):
        backend.execute("uav", Action("GO_TO_CANDIDATE"))
    with pytest.raises(ConfigError, match="agent_radius_m"):
        EmbeddedBackend(
            agent_radius_m=0.0, rigs={"uav": [CameraSpec(name="front", width=8, height=8)]}
        )
