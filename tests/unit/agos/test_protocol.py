"""The search-handoff-verify state machine on a real town: action sets, refusals that use no
budget, the frozen candidate, REJECT resuming search, the checker, the 80-decision budget."""

from __future__ import annotations

import math

import pytest

from aerialdojo.agos.generate import verifying_anchors
from aerialdojo.agos.planning import road_options
from aerialdojo.agos.protocol import AgosReferee
from aerialdojo.agos.town import Town
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    CONFIRM,
    GO_TO_CANDIDATE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    NO_RELIABLE_CANDIDATE,
    REJECT,
    STATUS_ACTIVE,
    STATUS_CONFIRMED,
    STATUS_REJECTED,
    STOP_OBSERVE,
    UAV,
    UGV,
    WAIT,
    action_set,
)
from aerialdojo.errors import InvalidActionError
from aerialdojo.protocols.referee import PlannedStep, parse_turn_text

from .referees import (
    episode_for,
    far_anchor,
    orange_target,
    plan,
    run_decision,
    succeeded,
    target_cell,
)


def test_action_sets_follow_the_seed_and_the_ablations() -> None:
    assert action_set(UAV) == (
        MOVE_TO_UAV_WAYPOINT,
        ANNOTATE_CANDIDATE,
        NO_RELIABLE_CANDIDATE,
        WAIT,
    )
    assert GO_TO_CANDIDATE in action_set(UGV, "no_e2a")
    assert GO_TO_CANDIDATE not in action_set(UGV, "no_rgpp")
    assert GO_TO_CANDIDATE not in action_set(UGV, "no_both")
    with pytest.raises(InvalidActionError, match="ablation 'half'"):
        action_set(UAV, "half")


def test_a_candidate_is_frozen_during_approach_and_confirmed_at_the_target(
    town: Town,
) -> None:
    target_id = orange_target(town)
    referee = AgosReferee(episode_for(town, far_anchor(town, target_id), target_id=target_id), town)
    created = run_decision(referee, UAV, ANNOTATE_CANDIDATE, target_cell(referee))
    candidate = created.candidate
    assert candidate is not None and candidate.status == STATUS_ACTIVE
    assert created.facts["candidate"]["candidate_id"] == "C001"
    assert math.dist(candidate.center[:2], referee.target.centroid[:2]) < 32.0
    frozen = (candidate.polygon, candidate.center)

    for action, argument in ((ANNOTATE_CANDIDATE, "A1"), (WAIT, ""), (NO_RELIABLE_CANDIDATE, "")):
        with pytest.raises(InvalidActionError, match="frozen while candidate C001"):
            plan(referee, UAV, action, argument)
    assert referee.legal_actions(UAV) == ()
    with pytest.raises(InvalidActionError, match="candidate 'C002' is not active"):
        plan(referee, UGV, GO_TO_CANDIDATE, "C002")
    with pytest.raises(InvalidActionError, match="fresh STOP_OBSERVE"):
        plan(referee, UGV, CONFIRM)
    assert referee.state.used == 1  # refusals use no budget

    went = run_decision(referee, UGV, GO_TO_CANDIDATE, "C001")
    assert went.facts["path"] and not went.done
    assert (candidate.polygon, candidate.center) == frozen and candidate.arrived
    observed = run_decision(referee, UGV, STOP_OBSERVE)
    assert observed.facts["ground_support"] is True
    confirmed = run_decision(referee, UGV, CONFIRM)
    assert confirmed.done and succeeded(confirmed)
    assert confirmed.facts["verdict"]["valid"] and confirmed.facts["verdict"]["distance_m"] <= 50
    assert candidate.status == STATUS_CONFIRMED
    assert referee.state.decisions == {UAV: 1, UGV: 3}
    with pytest.raises(InvalidActionError, match="has ended"):
        plan(referee, UGV, WAIT)


def test_reject_resumes_search_and_a_false_confirm_fails_theepisode_for(town: Town) -> None:
    target_id = orange_target(town)
    far = far_anchor(town, target_id)
    referee = AgosReferee(episode_for(town, far, target_id=target_id), town)
    run_decision(referee, UAV, ANNOTATE_CANDIDATE, "A1")
    run_decision(referee, UGV, STOP_OBSERVE)
    rejected = run_decision(referee, UGV, REJECT)
    assert rejected.candidate is not None
    assert rejected.candidate.status == STATUS_REJECTED and not rejected.done
    assert referee.state.active_candidate is None
    assert ANNOTATE_CANDIDATE in referee.legal_actions(UAV)  # search resumed
    second = run_decision(referee, UAV, ANNOTATE_CANDIDATE, "B2")
    assert second.facts["candidate"]["candidate_id"] == "C002"

    run_decision(referee, UGV, STOP_OBSERVE)
    false_confirm = run_decision(referee, UGV, CONFIRM)
    assert false_confirm.done and not succeeded(false_confirm)
    assert "false CONFIRM" in false_confirm.reason
    verdict = false_confirm.facts["verdict"]
    assert not verdict["valid"] and verdict["distance_m"] > 50.0


def test_confirm_near_the_target_is_valid_without_any_candidate(town: Town) -> None:
    target_id = orange_target(town)
    near = verifying_anchors(town, town.vehicle(target_id), 50.0)[0]
    referee = AgosReferee(episode_for(town, near, target_id=target_id), town, take_turns=False)
    run_decision(referee, UGV, STOP_OBSERVE)
    outcome = run_decision(referee, UGV, CONFIRM)
    assert outcome.done and succeeded(outcome) and outcome.candidate is None


def test_the_budget_of_80_decisions_is_shared_by_both_agents(town: Town) -> None:
    target_id = orange_target(town)
    referee = AgosReferee(episode_for(town, far_anchor(town, target_id), target_id=target_id), town)
    for decision in range(1, 81):
        agent = UAV if decision % 2 else UGV
        outcome = run_decision(referee, agent, WAIT)
        assert outcome.done == (decision == 80)
    assert referee.state.decisions == {UAV: 40, UGV: 40}
    assert "budget of 80" in outcome.reason and not succeeded(outcome)


def test_moves_must_be_legal_options(town: Town) -> None:
    target_id = orange_target(town)
    referee = AgosReferee(episode_for(town, far_anchor(town, target_id), target_id=target_id), town)
    uav = referee.state.poses[UAV]
    options = town.map.uav_grid.options(uav.x, uav.y, referee.episode.region)
    assert 3 <= len(options) <= 8
    assert all(max(abs(w.x - uav.x), abs(w.y - uav.y)) == pytest.approx(40.0) for w in options)
    moved = run_decision(referee, UAV, MOVE_TO_UAV_WAYPOINT, options[0].waypoint_id)
    assert "uav_visible" in moved.facts
    far = max(
        town.map.uav_grid.waypoints.values(), key=lambda w: math.hypot(w.x - uav.x, w.y - uav.y)
    )
    with pytest.raises(InvalidActionError, match="not a legal option"):
        plan(referee, UAV, MOVE_TO_UAV_WAYPOINT, far.waypoint_id)
    road = road_options(town.map.roads, referee.state.poses[UGV])
    with pytest.raises(InvalidActionError, match="not a legal option"):
        plan(
            referee,
            UGV,
            MOVE_TO_ROAD_WAYPOINT,
            "R0" if "R0" not in {o.waypoint_id for o in road} else "R1",
        )
    with pytest.raises(InvalidActionError, match="not a ugv action"):
        plan(referee, UGV, ANNOTATE_CANDIDATE, "C3")
    assert isinstance(plan(referee, UGV, MOVE_TO_ROAD_WAYPOINT, road[0].waypoint_id), PlannedStep)


def test_without_e2a_the_candidate_is_the_uav_footprint(town: Town) -> None:
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    referee = AgosReferee(episode, town, ablation="no_e2a")
    candidate = run_decision(referee, UAV, ANNOTATE_CANDIDATE, "A1").candidate
    assert candidate is not None and candidate.grid_cell == "A1"
    assert candidate.center[:2] == (episode.uav_start.x, episode.uav_start.y)
    with pytest.raises(InvalidActionError, match="not a ugv action"):
        plan(AgosReferee(episode, town, ablation="no_rgpp"), UGV, GO_TO_CANDIDATE, "C001")


def test_agents_take_turns_unless_the_uav_is_frozen(town: Town) -> None:
    target_id = orange_target(town)
    referee = AgosReferee(episode_for(town, far_anchor(town, target_id), target_id=target_id), town)
    assert referee.next_agent() == UAV and referee.waits(UGV)  # the UAV decides first
    run_decision(referee, UAV, WAIT)
    assert referee.next_agent() == UGV and referee.waits(UAV)
    run_decision(referee, UGV, WAIT)
    run_decision(referee, UAV, ANNOTATE_CANDIDATE, "C3")
    for _ in range(2):  # the UGV verifies alone while the UAV is frozen
        assert referee.next_agent() == UGV and not referee.waits(UGV)
        run_decision(referee, UGV, STOP_OBSERVE)
    run_decision(referee, UGV, REJECT)
    assert referee.next_agent() == UAV  # the UAV resumes the search
    turn = referee.turn()
    assert turn is not None and parse_turn_text(turn.text) == turn.decision == 7
    assert parse_turn_text("your turn") == 0
