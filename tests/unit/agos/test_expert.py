"""Expert episodes (AGOS-Bench, "Expert Dataset", stages 1-2) played through the referee: the
coverage routes, the appended UGV leg to the target, the paper's three messages, and the Hard
split's rejected look-alike."""

from __future__ import annotations

from pathlib import Path

from aerialdojo.agos.episodes import load_agos_suite
from aerialdojo.agos.expert import expert_episode
from aerialdojo.agos.generate import generate_suite
from aerialdojo.agos.town import Town, load_town
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    CONFIRM,
    GO_TO_CANDIDATE,
    REJECT,
    STOP_OBSERVE,
    UAV,
    UGV,
)
from aerialdojo.tasks.suite import resolve_suite


def test_the_uav_finds_the_target_and_the_ugv_drives_the_appended_leg(town: Town) -> None:
    episode = load_agos_suite(resolve_suite("agos_mini")).episode("AgosTown_1-easy-0001")
    expert = expert_episode(town, episode)
    assert expert.succeeded and expert.discovered_by == UAV
    assert expert.discovery_s is not None and expert.arrival_s is not None
    assert expert.arrival_s > expert.discovery_s  # t_arr after t_f: the appended leg
    actions = [(d.agent, d.action) for d in expert.decisions]
    handoff = actions.index((UAV, ANNOTATE_CANDIDATE))
    assert actions[handoff + 1] == (UGV, GO_TO_CANDIDATE)
    assert actions[-2:] == [(UGV, STOP_OBSERVE), (UGV, CONFIRM)]
    messages = [(d.agent, d.message) for d in expert.decisions if d.message]
    assert messages[0][1].startswith("UAV at (") and (UGV, messages[1][1]) == messages[1]
    assert "please verify C001" in expert.decisions[handoff].message  # inspection request
    assert expert.decisions[-1].message.startswith("confirmed the target")  # the signal
    assert expert_episode(town, episode).decisions == expert.decisions  # reproducible


def test_a_hard_expert_rejects_the_look_alike_it_marked_first(tmp_path: Path) -> None:
    # "In hard tasks, we additionally add cases in which the UAV marks wrong candidate; the UGV
    # executes the Reject action after observing the candidate and then both agents continue
    # searching."
    suite = load_agos_suite(
        generate_suite(
            tmp_path, town_name="AgosTown_0", per_setting=3, split="train", seed=1, name="expert"
        )
    )
    town = load_town("AgosTown_0")
    hard = [expert_episode(town, e) for e in suite.episodes if e.setting == "hard"]
    rejected = [e for e in hard if any(d.action == REJECT for d in e.decisions)]
    assert rejected
    actions = [(d.agent, d.action) for d in rejected[0].decisions]
    wrong = actions.index((UAV, ANNOTATE_CANDIDATE))
    verified = actions[wrong + 1 :]
    assert verified[:3] == [(UGV, GO_TO_CANDIDATE), (UGV, STOP_OBSERVE), (UGV, REJECT)]
    assert UAV in {agent for agent, _ in verified[3:]}  # the search goes on
