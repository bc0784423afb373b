"""The search-handoff-verify state machine on a real town: action sets per mode and ablation,
refusals that use no budget, the frozen candidate, REJECT resuming search, the checker and
its fresh-observation rule, the annotation, confirmation and 80-decision budgets, the
decision clock that schedules turns, and the Baseline's messages."""

from __future__ import annotations

import math

import pytest

from aerialdojo.agos.generate import verifying_anchors
from aerialdojo.agos.planning import road_options
from aerialdojo.agos.protocol import AgosReferee
from aerialdojo.agos.schedule import UAV_SPEED_MPS
from aerialdojo.agos.sensors import current_views, uav_rig, ugv_rig
from aerialdojo.agos.town import Town
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    CONFIRM,
    GO_TO_CANDIDATE,
    MODE_BASELINE,
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
from aerialdojo.protocols import protocol
from aerialdojo.protocols.referee import MessageKind, PlannedStep

from .referees import (
    episode_for,
    far_anchor,
    orange_target,
    plan,
    run_decision,
    succeeded,
    target_cell,
)


def test_action_sets_follow_the_paper_the_ablations_and_the_baseline() -> None:
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
    # The Baseline: no annotation, no candidate navigation (AGOS-Bench, appendix A.4.2).
    assert action_set(UAV, mode=MODE_BASELINE) == (MOVE_TO_UAV_WAYPOINT, WAIT)
    assert action_set(UGV, mode=MODE_BASELINE) == (
        MOVE_TO_ROAD_WAYPOINT,
        STOP_OBSERVE,
        CONFIRM,
        REJECT,
        WAIT,
    )
    with pytest.raises(InvalidActionError, match="the baseline mode has none"):
        action_set(UGV, "no_rgpp", MODE_BASELINE)
    with pytest.raises(InvalidActionError, match="mode 'human'"):
        action_set(UGV, mode="human")


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


def test_the_agent_free_first_decides_and_the_frozen_uav_waits(town: Town) -> None:
    target_id = orange_target(town)
    referee = AgosReferee(episode_for(town, far_anchor(town, target_id), target_id=target_id), town)
    assert referee.next_agent() == UAV and referee.waits(UGV)  # a tie: the UAV first
    uav = referee.state.poses[UAV]
    option = town.map.uav_grid.options(uav.x, uav.y, referee.episode.region)[0]
    run_decision(referee, UAV, MOVE_TO_UAV_WAYPOINT, option.waypoint_id)  # 40 m: 4 s
    assert referee.clock.free_at[UAV] == pytest.approx(40.0 / UAV_SPEED_MPS)
    for _ in range(2):  # the UGV waits twice (2 s each) while the UAV flies
        assert referee.next_agent() == UGV and referee.waits(UAV)
        run_decision(referee, UGV, WAIT)
    assert referee.next_agent() == UAV  # both free at 4 s: the UAV
    run_decision(referee, UAV, ANNOTATE_CANDIDATE, "C3")
    for _ in range(3):  # the UGV verifies alone while the UAV is frozen
        assert referee.next_agent() == UGV and not referee.waits(UGV)
        run_decision(referee, UGV, STOP_OBSERVE)
    run_decision(referee, UGV, REJECT)
    # The UAV resumes when the candidate closes, not before.
    assert referee.clock.free_at[UAV] == referee.clock.free_at[UGV]
    assert referee.next_agent() == UAV
    # The turn tells the UAV where the UGV is (C_t's agent locations, eq. 4), how many
    # candidates there are and that it must hold the UGV's signal of the REJECT.
    turn = referee.turn()
    ugv = referee.state.poses[UGV]
    assert turn is not None and (turn.agent, turn.decision, turn.messages) == (UAV, 9, 1)
    assert turn.teammate_position == (ugv.x, ugv.y, ugv.z) and turn.candidates == 1


def _play(referee: AgosReferee) -> list[tuple[str, str]]:
    """Run an episode unscripted: whoever the referee names decides, the UAV flying to its
    first grid option, the UGV driving to its nearest road option."""
    town, played = referee.town, []
    while True:
        agent = referee.next_agent()
        pose = referee.state.poses[agent]
        if agent == UAV:
            option = town.map.uav_grid.options(pose.x, pose.y, referee.episode.region)[0]
            action, argument = MOVE_TO_UAV_WAYPOINT, option.waypoint_id
        else:
            road = min(road_options(town.map.roads, pose), key=lambda o: o.distance_m)
            action, argument = MOVE_TO_ROAD_WAYPOINT, road.waypoint_id
        played.append((agent, argument))
        if run_decision(referee, agent, action, argument).done:
            return played


def test_an_unscripted_schedule_gives_uneven_decision_counts_reproducibly(town: Town) -> None:
    # AGOS-Bench's worked cases report 36 UAV / 44 UGV and 20 UAV / 9 UGV decisions, which
    # strict alternation (40 / 40 over a full budget) cannot produce.
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    referee = AgosReferee(episode, town)
    played = _play(referee)
    decisions = referee.state.decisions
    assert decisions[UAV] + decisions[UGV] == 80
    # 40-57 m flights at 10 m/s against ~10 m drives at 6 m/s (at least 2 s each).
    assert decisions[UGV] > 1.5 * decisions[UAV] > 0
    assert _play(AgosReferee(episode, town)) == played  # the same decisions again


def test_a_confirm_without_a_fresh_stop_observe_fails_the_episode(town: Town) -> None:
    target_id = orange_target(town)
    near = verifying_anchors(town, town.vehicle(target_id), 50.0)[0]
    episode = episode_for(town, near, target_id=target_id)
    referee = AgosReferee(episode, town, take_turns=False)
    outcome = run_decision(referee, UGV, CONFIRM)  # at the target, but it never looked
    assert outcome.done and not succeeded(outcome)
    verdict = outcome.facts["verdict"]
    assert not verdict["fresh_observation"] and verdict["visible"]
    assert "no fresh STOP_OBSERVE" in outcome.reason
    # Where the requirement is disabled (A.2.3: "when this requirement is enabled").
    relaxed = AgosReferee(episode, town, take_turns=False, require_fresh_observation=False)
    assert succeeded(run_decision(relaxed, UGV, CONFIRM))


def test_a_reject_without_observing_closes_the_candidate_and_uses_a_decision(
    town: Town,
) -> None:
    target_id = orange_target(town)
    referee = AgosReferee(episode_for(town, far_anchor(town, target_id), target_id=target_id), town)
    run_decision(referee, UAV, ANNOTATE_CANDIDATE, "C3")
    rejected = run_decision(referee, UGV, REJECT)
    assert rejected.candidate is not None and rejected.candidate.status == STATUS_REJECTED
    assert referee.state.used == 2 and referee.state.active_candidate is None


def test_the_annotation_and_confirmation_budgets(town: Town) -> None:
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    referee = AgosReferee(episode, town, annotation_budget=2, confirmation_budget=2)
    for _ in range(2):
        run_decision(referee, UAV, ANNOTATE_CANDIDATE, "A1")
        run_decision(referee, UGV, STOP_OBSERVE)
        false_confirm = run_decision(referee, UGV, CONFIRM)
        if not false_confirm.done:  # one confirmation left: the candidate closes
            assert "1 confirmation(s) left" in false_confirm.reason
            assert false_confirm.candidate is not None
            assert false_confirm.candidate.status == STATUS_REJECTED
    assert false_confirm.done and not succeeded(false_confirm)  # the second ends it
    assert referee.state.confirmations == 2

    referee = AgosReferee(episode, town, annotation_budget=1)
    run_decision(referee, UAV, ANNOTATE_CANDIDATE, "A1")
    run_decision(referee, UGV, REJECT)
    assert ANNOTATE_CANDIDATE not in referee.legal_actions(UAV)
    with pytest.raises(InvalidActionError, match="annotation budget of 1 is used"):
        plan(referee, UAV, ANNOTATE_CANDIDATE, "A1")


def test_the_baseline_has_no_tool_actions_and_coordinates_by_messages(town: Town) -> None:
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    referee = AgosReferee(episode, town, mode=MODE_BASELINE)
    assert referee.start_record()["conditions"] == {"mode": "baseline", "ablation": "none"}
    for agent, action, argument in (
        (UAV, ANNOTATE_CANDIDATE, "C3"),
        (UAV, NO_RELIABLE_CANDIDATE, ""),
        (UGV, GO_TO_CANDIDATE, "C001"),
    ):
        with pytest.raises(InvalidActionError, match=r"not a \w+ action in mode baseline"):
            plan(referee, agent, action, argument)
    assert referee.state.used == 0
    anchor = "clear match below me; search anchor (10.0, 20.0)"
    sent = run_decision(referee, UAV, WAIT, message=anchor)
    (message,) = sent.messages
    assert sent.facts["message"] == anchor and message.kind is MessageKind.FREE_TEXT
    assert (message.sender, message.receiver, message.sequence) == (UAV, UGV, 1)
    turn = referee.turn()
    assert turn is not None and turn.agent == UGV and turn.messages == 1
    assert turn.candidate_id == "" and referee.state.candidates == []
    assert turn.teammate_position is None  # messages are the Baseline's only coordination
    with pytest.raises(InvalidActionError, match="at most 280 characters"):
        plan(referee, UGV, WAIT, message="x" * 281)


def test_the_start_record_names_mode_and_ablation(town: Town) -> None:
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    record = AgosReferee(episode, town, ablation="no_e2a").start_record()
    assert record["conditions"] == {"mode": "agent", "ablation": "no_e2a"}
    assert record["agos"]["annotation_budget"] == 5 and record["agos"]["confirmation_budget"] == 1


def test_without_rgpp_the_uav_searches_on_while_the_ugv_approaches(town: Town) -> None:
    # AGOS-Bench, "Handoff": frozen "once a serviceable candidate is created"; without RGPP
    # nothing is serviceable, and A.5 reads no_rgpp and no_both by the UAV searching on.
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    for ablation in ("no_rgpp", "no_both"):
        referee = AgosReferee(episode, town, ablation=ablation)
        run_decision(referee, UAV, ANNOTATE_CANDIDATE, target_cell(referee))
        assert referee.state.active_candidate is not None and not referee.state.uav_frozen
        # A.4.1: while a candidate is verified the UAV may "only move, wait, or send short
        # guidance messages".
        assert referee.legal_actions(UAV) == (MOVE_TO_UAV_WAYPOINT, WAIT)
        for action, argument in ((ANNOTATE_CANDIDATE, "A1"), (NO_RELIABLE_CANDIDATE, "")):
            with pytest.raises(InvalidActionError, match="waits until candidate C001 is closed"):
                plan(referee, UAV, action, argument)
        run_decision(referee, UGV, WAIT)  # the UAV annotated at 2 s; the UGV is free at 0
        assert referee.next_agent() == UAV  # both at 2 s: the UAV decides, it is not frozen
        uav = referee.state.poses[UAV]
        option = town.map.uav_grid.options(uav.x, uav.y, episode.region)[0]
        run_decision(referee, UAV, MOVE_TO_UAV_WAYPOINT, option.waypoint_id, message="moving on")
        run_decision(referee, UGV, REJECT)
        assert ANNOTATE_CANDIDATE in referee.legal_actions(UAV)
    # With RGPP the same candidate freezes the UAV until the UGV closes it.
    referee = AgosReferee(episode, town)
    run_decision(referee, UAV, ANNOTATE_CANDIDATE, target_cell(referee))
    assert referee.state.uav_frozen and referee.legal_actions(UAV) == ()


def test_the_workflow_notices_reach_the_receiver_counted_by_its_turn(town: Town) -> None:
    # AGOS-Bench, "Expert Dataset", stage 2: the initial exchange of positions, the UAV's
    # inspection request and the UGV's confirmation signal; A.4.1: the arrival message.
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    referee = AgosReferee(episode, town)
    opening = referee.opening_messages()
    uav, ugv = episode.uav_start, episode.ugv_start
    assert [(m.sender, m.receiver, m.kind, m.sequence, m.text) for m in opening] == [
        (UAV, UGV, MessageKind.INITIAL, 1, f"UAV at ({uav.x:.1f}, {uav.y:.1f})"),
        (UGV, UAV, MessageKind.INITIAL, 1, f"UGV at ({ugv.x:.1f}, {ugv.y:.1f})"),
    ]
    turn = referee.turn()
    assert turn is not None and (turn.agent, turn.messages) == (UAV, 1)

    cell = target_cell(referee)
    annotated = run_decision(referee, UAV, ANNOTATE_CANDIDATE, cell, message="red car below")
    carried, request = annotated.messages
    assert (carried.kind, carried.sequence) == (MessageKind.FREE_TEXT, 2)
    assert (request.kind, request.candidate_id, request.sequence) == (
        MessageKind.INSPECTION_REQUEST, "C001", 3,
    )  # fmt: skip
    assert f"(cell {cell}); please verify C001" in request.text
    turn = referee.turn()
    assert turn is not None and (turn.agent, turn.messages, turn.candidates) == (UGV, 3, 1)

    (arrival,) = run_decision(referee, UGV, GO_TO_CANDIDATE, "C001").messages
    assert (arrival.sender, arrival.receiver, arrival.kind) == (UGV, UAV, MessageKind.ARRIVAL)
    assert arrival.text.startswith("UGV arrived near C001 at (") and arrival.sequence == 2
    assert run_decision(referee, UGV, STOP_OBSERVE).messages == ()
    (signal,) = run_decision(referee, UGV, CONFIRM).messages
    assert (signal.kind, signal.candidate_id, signal.sequence) == (
        MessageKind.CONFIRMATION, "C001", 3,
    )  # fmt: skip
    assert signal.text.startswith("UGV confirmed C001 at (")

    # The Baseline has no candidates: its agents exchange positions, then write their own.
    baseline = AgosReferee(episode, town, mode=MODE_BASELINE, take_turns=False)
    assert len(baseline.opening_messages()) == 2
    run_decision(baseline, UAV, WAIT)
    run_decision(baseline, UGV, STOP_OBSERVE)
    assert run_decision(baseline, UGV, REJECT).messages == ()


def test_the_ugv_ring_is_observed_right_after_stop_observe_and_its_front_view_otherwise() -> None:
    """What the evaluator owes the recorder per step (nodes/evaluator.py) and what the AGOS
    backend renders (``current_views``)."""
    observes = protocol("agos").observes_view
    assert observes is not None
    rig = ugv_rig(8, 8)
    ring = ["ring_front", "ring_front_left", "ring_back_left", "ring_back", "ring_back_right",
            "ring_front_right"]  # fmt: skip
    for action in ("", "MOVE_TO_ROAD_WAYPOINT", "STOP_OBSERVE", "CONFIRM"):
        expected = ring if action == "STOP_OBSERVE" else ["front"]
        assert [spec.name for spec in rig if observes(spec.name, action)] == expected
        assert [spec.name for spec in current_views(rig, ring=action == "STOP_OBSERVE")] == expected
    assert observes("down", "MOVE_TO_UAV_WAYPOINT")
    assert [spec.name for spec in current_views(uav_rig(8, 8), ring=False)] == ["down"]
