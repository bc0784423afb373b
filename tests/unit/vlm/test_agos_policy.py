"""The AGOS model agents (AGOS-Bench, appendix A.4) against a real HTTP chat server: the
role prompts, the UGV's stage-conditioned user prompt, the Baseline variant the task's mode
names, the legal-now checks (budgets included) with repair turns, and the fallback."""

from __future__ import annotations

import base64
import io
import itertools
from pathlib import Path

import numpy as np
import pytest
from fakes.chat_server import ChatServer, Reply, Route, Script
from PIL import Image
from vlm_observations import view

from aerialdojo.agents.observation import ViewData
from aerialdojo.agents.plugins import agos_policy
from aerialdojo.agents.vlm.agos_policy import VlmAgosPolicy
from aerialdojo.agos.episodes import AgosEpisode, load_agos_suite
from aerialdojo.agos.grid import overlay_grid
from aerialdojo.agos.maps import (
    MARKER_CROSS,
    MARKER_DISC,
    MARKER_RING,
    MapMarker,
    marked_map,
    region_map,
)
from aerialdojo.agos.planning import road_options
from aerialdojo.agos.policies import (
    AgosObservation,
    AgosTask,
    CandidateView,
    Decision,
    search_anchor,
)
from aerialdojo.agos.sensors import RING_VIEWS
from aerialdojo.agos.town import town_map
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    ANNOTATION_BUDGET,
    CONFIRM,
    CONFIRMATION_BUDGET,
    GO_TO_CANDIDATE,
    MODE_AGENT,
    MODE_BASELINE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    STOP_OBSERVE,
    UAV,
    UGV,
    WAIT,
    action_set,
)
from aerialdojo.errors import ConfigError
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.protocols.referee import MessageKind, TeammateMessage
from aerialdojo.tasks.suite import resolve_suite

NODES = {UAV: "agos_uav_agent", UGV: "ugv_agent"}


@pytest.fixture(scope="module")
def episode() -> AgosEpisode:
    return load_agos_suite(resolve_suite("agos_mini")).episodes[0]


def _task(
    episode: AgosEpisode,
    agent: str,
    *,
    mode: str = MODE_AGENT,
    annotation_budget: int = ANNOTATION_BUDGET,
    map_image: np.ndarray | None = None,
) -> AgosTask:
    """The task an agent node hands its policy, with the task manager's default budgets."""
    actions = action_set(agent, mode=mode)
    budgets = {ANNOTATE_CANDIDATE: annotation_budget, CONFIRM: CONFIRMATION_BUDGET}
    return AgosTask(
        episode_id=episode.episode_id,
        agent=agent,
        town=town_map(episode.scene),
        region=episode.region,
        instruction="find the vehicle",
        reference_images=(np.full((16, 16, 3), (200, 30, 30), np.uint8),),
        map_image=map_image,
        actions=actions,
        mode=mode,
        max_uses={action: uses for action, uses in budgets.items() if action in actions},
        action_budget=80,
        success_radius_m=20.0,
    )


def _uav_said(*texts: str) -> tuple[TeammateMessage, ...]:
    """Messages the UAV's decisions carried, numbered as the task manager delivers them."""
    return tuple(
        TeammateMessage(sender=UAV, receiver=UGV, text=text, sequence=number)
        for number, text in enumerate(texts, start=1)
    )


def _policy(server: ChatServer, agent: str, **changes: object) -> VlmAgosPolicy:
    values: dict[str, object] = {spec.name: spec.default for spec in NODE_PARAMETERS[NODES[agent]]}
    values.update(
        {
            "policy": "vlm",
            "vlm_base_url": server.base_url,
            "vlm_model": "test-vlm",
            "vlm_backoff_s": 0.0,
            **changes,
        }
    )
    policy = agos_policy(agent, values, NODES[agent])
    assert isinstance(policy, VlmAgosPolicy)
    return policy


def _uav_views() -> dict[str, ViewData]:
    return {"down": view(48, seed=1)}


def _ugv_views() -> dict[str, ViewData]:
    return {"front": view(48, seed=2)} | {
        name: view(48, seed=3 + k) for k, name in enumerate(RING_VIEWS)
    }


def _texts(server: ChatServer) -> list[str]:
    return [r.body["messages"][1]["content"][0]["text"] for r in server.received]


def _images(request: dict[str, object]) -> list[tuple[str, bytes]]:
    """(label, image bytes) of every image of a request's user message."""
    content = request["messages"][1]["content"]  # type: ignore[index]
    found = []
    for label, part in itertools.pairwise(content):
        if part["type"] == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            found.append((label["text"], data))
    return found


def test_the_uav_sees_its_grid_image_status_and_waypoints_and_annotates_a_cell(
    episode: AgosEpisode,
) -> None:
    script = Script.sequence(
        [Reply(text='{"action": "ANNOTATE_CANDIDATE", "argument": "c3", "message": "red car"}')]
    )
    with ChatServer(script) as server:
        policy = _policy(server, UAV)
        policy.reset(_task(episode, UAV))
        views = _uav_views()
        decision = policy.act(AgosObservation(pose=episode.uav_start, views=views, decision=3))
    assert decision == Decision(ANNOTATE_CANDIDATE, "C3", "red car")
    (request,) = server.received
    system = request.body["messages"][0]["content"]
    assert "5x5 grid overlay" in system and "fixed altitude of 80 m" in system
    assert f"- {ANNOTATE_CANDIDATE}: mark exactly one grid cell" in system
    text = _texts(server)[0]
    assert "Step 3/80" in text and "annotations used 0/5" in text
    assert "active candidate: none" in text
    options = policy._task.town.uav_grid.options(  # type: ignore[union-attr]
        episode.uav_start.x, episode.uav_start.y, episode.region
    )
    assert all(f"- {w.waypoint_id}: (" in text for w in options)
    (aerial_label, aerial), (reference_label, _) = _images(request.body)
    assert aerial_label == "Aerial grid image:" and reference_label.startswith("Target reference")
    shown = np.asarray(Image.open(io.BytesIO(aerial)))
    assert np.array_equal(shown, overlay_grid(views["down"].rgb))


def test_the_ugv_prompt_follows_the_stages_of_the_handoff(
    episode: AgosEpisode, tmp_path: Path
) -> None:
    """Free exploration -> candidate reminder -> arrival -> six-view verification ->
    post-rejection search (AGOS-Bench, appendix A.4.1)."""
    town = town_map(episode.scene)
    first_road = road_options(town.roads, episode.ugv_start)[0].waypoint_id
    script = Script.sequence(
        [
            Reply(text=f'{{"action": "MOVE_TO_ROAD_WAYPOINT", "argument": "{first_road}"}}'),
            Reply(text='{"action": "GO_TO_CANDIDATE", "argument": "C001"}'),
            Reply(text='{"action": "STOP_OBSERVE", "message": "arrived at C001"}'),
            Reply(text='{"action": "REJECT"}'),
            Reply(text='{"action": "WAIT"}'),
        ]
    )
    candidate = CandidateView("C001", (episode.ugv_start.x + 60.0, episode.ugv_start.y), True)
    rejected = CandidateView("C001", candidate.center, active=False)
    pose = episode.ugv_start
    with ChatServer(script) as server:
        policy = _policy(server, UGV, transcript_dir=str(tmp_path / "transcripts"))
        policy.reset(_task(episode, UGV))
        steps = [
            ({}, None, MOVE_TO_ROAD_WAYPOINT),
            ({"C001": candidate}, candidate, GO_TO_CANDIDATE),
            ({"C001": candidate}, candidate, STOP_OBSERVE),
            ({"C001": candidate}, candidate, "REJECT"),
            ({"C001": rejected}, None, WAIT),
        ]
        for number, (candidates, active, expected) in enumerate(steps, start=2):
            decision = policy.act(
                AgosObservation(
                    pose=pose,
                    views=_ugv_views(),
                    candidates=candidates,
                    active=active,
                    decision=number * 2,
                )
            )
            assert decision.action == expected
    free, alert, arrival, six_view, after = _texts(server)
    assert "Free exploration. No candidate is active." in free and "Candidates: none" in free
    assert "observation mode driving" in free and "remaining decision budget 77" in free
    assert "remaining confirmation budget 1" in free
    assert "Priority Alert. A UAV candidate C001 has been reported" in alert
    assert "recommended action is GO_TO_CANDIDATE with candidate ID C001" in alert
    assert "C001 active at (" in alert
    assert "Arrival Reminder. You have reached the area of candidate C001" in arrival
    assert "Six-View Verification (STOP_6VIEW)" in six_view
    assert "observation mode STOP_6VIEW" in six_view
    assert "CONFIRM" in six_view.split("Available Actions: ")[1]
    assert "CONFIRM" not in arrival.split("Available Actions: ")[1]
    assert "Post-rejection search." in after and "C001 at (" in after
    assert "GO_TO_CANDIDATE" not in after.split("Available Actions: ")[1]
    labels = [label for label, _ in _images(server.received[3].body)]
    assert labels[:6] == [
        f"Six-view panel, {side}:"
        for side in ("front-left", "front", "front-right", "back-left", "back", "back-right")
    ]
    assert _images(server.received[0].body)[0][0] == "Forward view:"


def test_in_the_baseline_mode_the_agents_run_the_baseline_prompts(
    episode: AgosEpisode,
) -> None:
    """AGOS-Bench, appendix A.4.2: no candidate tools, no grid, no memory; the UAV waits and
    sends its position, the UGV drives towards that anchor."""
    uav_replies = [
        Reply(text='{"evidence": "CLEAR_MATCH", "action": "WAIT", "message": "at (12.5, -40.0)"}'),
        Reply(text='{"evidence": "CLEAR_MATCH", "action": "WAIT"}'),
        Reply(text='{"evidence": "NONE", "action": "WAIT"}'),
    ]
    script = Script(
        [
            Route("CLEAR_MATCH", uav_replies, Reply(text='{"action": "WAIT"}')),
            Route("", [], Reply(text='{"action": "STOP_OBSERVE"}')),
        ]
    )
    with ChatServer(script) as server:
        uav = _policy(server, UAV)
        ugv = _policy(server, UGV)
        uav.reset(_task(episode, UAV, mode=MODE_BASELINE))
        ugv.reset(_task(episode, UGV, mode=MODE_BASELINE))
        assert uav.baseline and ugv.baseline
        for number in (1, 3, 5):
            decision = uav.act(
                AgosObservation(pose=episode.uav_start, views=_uav_views(), decision=number)
            )
        said = _uav_said("at (12.5, -40.0)")
        ugv.act(AgosObservation(pose=episode.ugv_start, views=_ugv_views(), messages=said))
    assert decision == Decision(WAIT)
    uav_system = server.received[0].body["messages"][0]["content"]
    assert "CLEAR_MATCH, AMBIGUOUS or NONE" in uav_system and "5x5 grid" not in uav_system
    assert ANNOTATE_CANDIDATE not in uav_system.split("Actions (")[1].split("Reply with")[0]
    first, _, third = _texts(server)[:3]
    assert "Valid waypoint ids:" in first and "Recent task memory" not in first
    assert "Anti-stall Reminder" not in first and "Anti-stall Reminder" in third
    assert _images(server.received[0].body)[0][0] == "Aerial image:"
    ugv_text = _texts(server)[3]
    assert "Search Anchor. The UAV reported a possible target near (12.5, -40.0)" in ugv_text
    assert "to the anchor" in ugv_text and "Priority Alert" not in ugv_text
    ugv_system = server.received[3].body["messages"][0]["content"]
    assert "Never output GO_TO_CANDIDATE" in ugv_system


def test_an_annotation_beyond_the_budget_is_not_offered(episode: AgosEpisode) -> None:
    script = Script.sequence(
        [
            Reply(text='{"action": "ANNOTATE_CANDIDATE", "argument": "C3"}'),
            Reply(text='{"action": "ANNOTATE_CANDIDATE", "argument": "C3"}'),
        ]
    )
    with ChatServer(script) as server:
        policy = _policy(server, UAV, vlm_repair_turns=0, vlm_fallback=WAIT)
        policy.reset(_task(episode, UAV, annotation_budget=1))
        views = _uav_views()
        first = policy.act(AgosObservation(pose=episode.uav_start, views=views))
        second = policy.act(AgosObservation(pose=episode.uav_start, views=views))
    assert first.action == ANNOTATE_CANDIDATE and second == Decision(WAIT)
    before, after = _texts(server)
    assert "annotations used 0/1" in before and "annotations used 1/1" in after
    assert ANNOTATE_CANDIDATE not in after.split("Available Actions: ")[1]


def test_a_decision_the_referee_refuses_is_undone_and_asked_again_with_the_reason(
    episode: AgosEpisode,
) -> None:
    # AGOS-Bench, eq. 5: the decision executed is a legal one; one the referee refuses was
    # not executed, so it uses none of the annotation budget and leaves no memory.
    script = Script.sequence(
        [
            Reply(text='{"action": "ANNOTATE_CANDIDATE", "argument": "C3"}'),
            Reply(text='{"action": "ANNOTATE_CANDIDATE", "argument": "C4"}'),
        ]
    )
    with ChatServer(script) as server:
        policy = _policy(server, UAV)
        policy.reset(_task(episode, UAV, annotation_budget=1))
        views = _uav_views()
        first = policy.act(AgosObservation(pose=episode.uav_start, views=views))
        policy.refused("candidate cell C3 projects outside the region")
        second = policy.act(AgosObservation(pose=episode.uav_start, views=views))
    assert (first.argument, second.argument) == ("C3", "C4")
    before, after = _texts(server)
    assert "annotations used 0/1" in before and "annotations used 0/1" in after
    told = [p["text"] for p in server.received[1].body["messages"][1]["content"] if "text" in p]
    assert any(
        "the referee refused ANNOTATE_CANDIDATE C3: candidate cell C3 projects" in text
        for text in told
    )


def test_a_decision_not_legal_now_is_repaired_then_falls_back_to_wait(
    episode: AgosEpisode,
) -> None:
    script = Script.sequence(
        [
            Reply(text='{"action": "CONFIRM"}'),  # no fresh STOP_OBSERVE: not available
            Reply(text='{"action": "MOVE_TO_ROAD_WAYPOINT", "argument": "R999999"}'),
            Reply(text='{"action": "GO_TO_CANDIDATE", "argument": "C001"}'),  # none active
        ]
    )
    with ChatServer(script) as server:
        policy = _policy(server, UGV, vlm_fallback="STOP_OBSERVE")
        policy.reset(_task(episode, UGV))
        decision = policy.act(AgosObservation(pose=episode.ugv_start, views=_ugv_views()))
    assert decision == Decision(STOP_OBSERVE)
    repairs = [r.body["messages"][-1]["content"] for r in server.received[1:]]
    assert "unknown action 'CONFIRM'" in repairs[0]
    assert "needs an argument from the options" in repairs[1]
    assert CONFIRM not in repairs[0].split("legal actions: ")[1]


def test_the_fallback_must_be_an_action_of_the_role_without_argument() -> None:
    values = {spec.name: spec.default for spec in NODE_PARAMETERS["ugv_agent"]}
    values.update(policy="vlm", vlm_model="m", vlm_fallback=MOVE_TO_UAV_WAYPOINT)
    with pytest.raises(ConfigError, match=r"ugv_agent\.vlm_fallback 'MOVE_TO_UAV_WAYPOINT'"):
        agos_policy(UGV, values, "ugv_agent")


def test_the_search_anchor_is_the_newest_coordinate_the_uav_sent() -> None:
    messages = _uav_said("UAV at (10.0, 20.0)", "nothing here", "clear match below me: -35.5, 7")
    assert search_anchor(messages) == (-35.5, 7.0)
    assert search_anchor(messages[1:2]) is None
    # The protocol's initial exchange of start positions is not what the UAV reported.
    start = TeammateMessage(
        sender=UAV, receiver=UGV, text="UAV at (1.0, 2.0)", sequence=4, kind=MessageKind.INITIAL
    )
    assert search_anchor((*messages, start)) == (-35.5, 7.0)


def _decoded(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_every_request_carries_the_map_with_what_the_agent_knows_of_c_t(
    episode: AgosEpisode,
) -> None:
    """AGOS-Bench, A.4: the visual inputs are "the current agent image, a top-down map, and
    the target reference image"; eq. 4: C_t holds the candidates with their grid cell and
    the agent locations; stage 2: the notices reach the receiver."""
    town = town_map(episode.scene)
    plain = region_map(town, episode.region)
    uav, ugv = episode.uav_start, episode.ugv_start
    rejected = CandidateView("C001", (uav.x, uav.y - 30.0), active=False, grid_cell="D3")
    active = CandidateView("C002", (uav.x + 20.0, uav.y), active=True, grid_cell="C4")
    notices = (
        TeammateMessage(sender=UAV, receiver=UGV, text="UAV at (1.0, 2.0)", sequence=1,
                        kind=MessageKind.INITIAL),
        TeammateMessage(sender=UAV, receiver=UGV, text="please verify C002", sequence=2,
                        kind=MessageKind.INSPECTION_REQUEST, candidate_id="C002"),
    )  # fmt: skip
    script = Script.sequence([Reply(text='{"action": "WAIT"}')] * 2)
    with ChatServer(script) as server:
        policy = _policy(server, UGV)
        policy.reset(_task(episode, UGV, map_image=plain))
        policy.act(
            AgosObservation(
                pose=ugv,
                views=_ugv_views(),
                candidates={"C001": rejected, "C002": active},
                active=active,
                messages=notices,
                teammate=(uav.x, uav.y),
            )
        )
        baseline = _policy(server, UAV)
        baseline.reset(_task(episode, UAV, mode=MODE_BASELINE, map_image=plain))
        baseline.act(AgosObservation(pose=uav, views=_uav_views()))
    agent_request, baseline_request = server.received
    labels = [label for label, _ in _images(agent_request.body)]
    assert labels == ["Forward view:", "Top-down map:", "Target reference image 1:"]
    shown = _decoded(_images(agent_request.body)[1][1])
    expected = marked_map(
        plain,
        episode.region,
        [
            MapMarker(uav.x, uav.y, MARKER_DISC, (30, 90, 230)),
            MapMarker(*rejected.center, MARKER_CROSS, (0, 0, 0)),
            MapMarker(*active.center, MARKER_RING, (200, 0, 200)),
            MapMarker(ugv.x, ugv.y, MARKER_DISC, (230, 40, 40)),
        ],
    )
    assert np.array_equal(shown, expected)
    text = _texts(server)[0]
    assert f"UAV position: ({uav.x:.1f}, {uav.y:.1f})." in text
    assert "C001 rejected in cell D3 at (" in text and "C002 active in cell C4 at (" in text
    assert "Markers: red dot: you, the UGV; blue dot: the UAV; magenta ring: candidate C002" in text
    assert "black cross: rejected candidate(s) C001." in text
    assert (
        "- [initial position] UAV at (1.0, 2.0)\n- [inspection request] please verify C002" in text
    )

    # The Baseline UAV: its own position only, and the marker convention in its prompt.
    assert [label for label, _ in _images(baseline_request.body)][1] == "Top-down map:"
    baseline_text = _texts(server)[1]
    assert "Top-down map marker convention. Top-down map of the search region (north up" in (
        baseline_text
    )
    assert "Markers: blue dot: you, the UAV." in baseline_text
