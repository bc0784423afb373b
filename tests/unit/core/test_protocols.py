"""Benchmark protocols without ROS: the AerialDojo referee's rules, the registry lookups, and
a benchmark added by registration alone being scored, plotted and reported."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from aerialdojo.errors import ConfigError, InvalidActionError, MetricsError, TaskFileError
from aerialdojo.events import EventKind
from aerialdojo.geometry import Pose
from aerialdojo.metrics import citynav
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import (
    BenchmarkProtocol,
    load_suite,
    protocol,
    protocol_names,
    register,
    suite_protocol,
)
from aerialdojo.protocols.aerialdojo import GEOFENCE_NOTE, AerialDojoReferee
from aerialdojo.protocols.referee import SimOutcome, StepRequest
from aerialdojo.protocols.scoring import score_run
from aerialdojo.report.run import RunResult, write_run
from aerialdojo.tasks.episode import Episode
from aerialdojo.tasks.suite import Suite, resolve_suite


@pytest.fixture(scope="module")
def shipped() -> Suite:
    found, suite = load_suite(resolve_suite("aerialdojo_mini"))
    assert found.name == "aerialdojo" and isinstance(suite, Suite)
    return suite


@pytest.fixture
def episode(shipped: Suite) -> Episode:
    return shipped.episodes[0]


def _step(action: str, magnitude: float = 0.0, agent: str = "uav") -> StepRequest:
    return StepRequest(agent=agent, action=action, magnitude=magnitude)


def test_stop_ends_the_episode_without_a_simulator_command(episode: Episode) -> None:
    referee = AerialDojoReferee(episode)
    planned = referee.plan(_step("Stop"))
    assert planned.command is None
    verdict = referee.apply(planned, None)
    assert verdict.kind is EventKind.STOPPED and verdict.done
    assert (referee.steps_used, referee.steps_left) == (1, episode.action_budget - 1)
    with pytest.raises(InvalidActionError, match="has ended"):
        referee.plan(_step("Stop"))


def test_illegal_requests_are_refused_and_use_no_budget(episode: Episode) -> None:
    referee = AerialDojoReferee(episode)
    with pytest.raises(InvalidActionError, match=r"does not take magnitude 2 m; allowed: 1, 3, 5"):
        referee.plan(_step("MoveForward", 2.0))
    with pytest.raises(InvalidActionError, match="unknown action 'MoveBackward'"):
        referee.plan(_step("MoveBackward", 1.0))
    with pytest.raises(InvalidActionError, match="Stop takes no magnitude"):
        referee.plan(_step("Stop", 1.0))
    with pytest.raises(InvalidActionError, match="agent 'ugv' is not in episode"):
        referee.plan(_step("Stop", agent="ugv"))
    with pytest.raises(InvalidActionError, match="one agent: a step carries no message"):
        referee.plan(StepRequest(agent="uav", action="Stop", teammate_message="hello"))
    assert referee.steps_used == 0


def test_a_collision_ends_the_episode_and_names_what_was_hit(episode: Episode) -> None:
    referee = AerialDojoReferee(episode)
    planned = referee.plan(_step("MoveForward", 5.0))
    assert planned.command is not None and planned.command.magnitude == 5.0
    contact = Pose(1.0, 2.0, 3.0, 0.0)
    verdict = referee.apply(
        planned, SimOutcome(pose=contact, collided=True, collision_object="wall_3")
    )
    assert verdict.kind is EventKind.COLLIDED
    assert (verdict.reason, verdict.collision_object) == ("collided with wall_3", "wall_3")
    assert referee.scored_pose == contact


def test_the_last_action_of_the_budget_ends_the_episode(episode: Episode) -> None:
    short = dataclasses.replace(episode, action_budget=3)
    referee = AerialDojoReferee(short)
    here = SimOutcome(pose=short.start)
    kinds = [referee.apply(referee.plan(_step("TurnLeft", 15.0)), here).kind for _ in range(3)]
    assert kinds == [EventKind.STEP, EventKind.STEP, EventKind.BUDGET_EXHAUSTED]
    assert referee.steps_left == 0


def test_a_geofenced_move_goes_on_and_says_so(episode: Episode) -> None:
    referee = AerialDojoReferee(episode)
    verdict = referee.apply(
        referee.plan(_step("MoveUp", 2.0)), SimOutcome(pose=episode.start, geofenced=True)
    )
    assert verdict.kind is EventKind.STEP and verdict.reason == GEOFENCE_NOTE


def test_the_start_record_holds_the_ground_truth_and_the_task_hides_it(
    shipped: Suite, episode: Episode
) -> None:
    referee = AerialDojoReferee(episode)
    record = referee.start_record()
    anchor = episode.target_anchor
    assert record["target"] == [anchor.x, anchor.y, anchor.z]
    assert record["reference_length_m"] == episode.reference.length_m
    rules = protocol("aerialdojo").episodes
    assert rules is not None
    task = rules.describe_task(episode, shipped, {})
    assert not task.global_localization
    assert len(task.actions) == 8 and task.action_budget == episode.action_budget
    text = repr(task)
    assert f"{anchor.x}" not in text and "target" not in text


def test_the_paper_observation_is_the_default_and_recorded_with_the_episode(
    shipped: Suite, episode: Episode
) -> None:
    # AerialDojo-200K, appendix A: the evaluated prompt gives "the front-facing RGB-D
    # inputs"; section 3.1: the observation interface "excludes GPS measurements".
    rules = protocol("aerialdojo").episodes
    assert rules is not None
    paper = rules.describe_task(episode, shipped, {})
    assert paper.views == ("front",) and not paper.odometry
    conditions = AerialDojoReferee(episode).start_record()["conditions"]
    assert conditions == {
        "distribution": episode.distribution,
        "goal": episode.goal.representation,
        "observation": "front",
        "odometry": "off",
    }
    chosen = {"observation": "four_views", "odometry": True}
    richer = rules.describe_task(episode, shipped, chosen)
    assert richer.views == ("front", "left", "right", "down") and richer.odometry
    record = AerialDojoReferee(episode, chosen).start_record()
    assert (record["conditions"]["observation"], record["conditions"]["odometry"]) == (
        "four_views",
        "on",
    )


def test_every_shipped_suite_has_a_protocol_and_unknown_names_are_refused(
    tmp_path: Path,
) -> None:
    assert {"aerialdojo", "agos", "citynav"} <= set(protocol_names())
    assert suite_protocol(resolve_suite("agos_mini")).title == "AGOS-Bench"
    with pytest.raises(MetricsError, match="benchmark 'habitat' is not one of aerialdojo, agos"):
        protocol("habitat")
    odd = tmp_path / "suite.json"
    assert suite_protocol(resolve_suite("citynav_mini")).title == "CityNav"
    odd.write_text(json.dumps({"benchmark": "citynav", "episodes": []}))
    with pytest.raises(TaskFileError, match="name: expected a suite name"):
        load_suite(odd)
    odd.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="benchmark: missing"):
        suite_protocol(odd)
    with pytest.raises(ConfigError, match="registered twice"):
        register(dataclasses.replace(protocol("citynav")))


def test_a_benchmark_added_by_registration_is_scored_and_reported(tmp_path: Path) -> None:
    # A fourth benchmark: CityNav's formulas under another name and radius, nothing else.
    register(
        BenchmarkProtocol(
            name="rooftop_test",
            title="Rooftop (test)",
            default_radii=(7.0,),
            aggregation_rule=protocol("citynav").aggregation_rule,
            metric_specs=citynav.metric_specs,
            score_episode=citynav.score_episode,
            trace_builder=protocol("citynav").trace_builder,
        )
    )
    trace = EpisodeTrace(
        episode_id="r1",
        benchmark="rooftop_test",
        scene="roof",
        family="urban",
        setting="base",
        split="test",
        positions=((0.0, 0.0, 0.0), (0.0, 6.0, 0.0)),
        stop_called=True,
        collided=False,
        collision_step=None,
        steps_used=1,
        action_budget=10,
        target=(0.0, 0.0, 0.0),
        reference_length_m=6.0,
        termination="stopped",
    )
    run = score_run([trace])
    assert run.radii == (7.0,) and run.overall.values["sr_7m"] == 1.0
    result = RunResult(
        metrics=run, finished=True, excluded=(), traces=(trace,), protocol=protocol("rooftop_test")
    )
    write_run(tmp_path, result)
    assert (tmp_path / "report.md").read_text().startswith("# Run report: Rooftop (test), run ")
    assert (tmp_path / "radius_sweep.png").is_file() and not (tmp_path / "radar.png").exists()
