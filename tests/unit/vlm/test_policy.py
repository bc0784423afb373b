"""The AerialDojo model agent against a real HTTP chat server: prompts, repair turns not
counted as decisions, the fallback, transcripts, their replay and the usage they account."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fakes.chat_server import ChatServer, Reply, Script
from vlm_observations import observation

from aerialdojo.actions import Action
from aerialdojo.agents.observation import GoalDescription
from aerialdojo.agents.plugins import uav_policy
from aerialdojo.agents.vlm.chat import ModelServerError
from aerialdojo.agents.vlm.transcript import ReplayError
from aerialdojo.agents.vlm.usage import model_usage
from aerialdojo.errors import ConfigError
from aerialdojo.params import NODE_PARAMETERS


def _parameters(**changes: object) -> dict[str, object]:
    values: dict[str, object] = {spec.name: spec.default for spec in NODE_PARAMETERS["uav_agent"]}
    values.update({"policy": "vlm", "vlm_model": "test-vlm", "vlm_backoff_s": 0.0, **changes})
    return values


def test_a_decision_shows_the_papers_prompt_and_the_front_rgbd(
    goal: GoalDescription, tmp_path: Path
) -> None:
    with ChatServer(
        Script.sequence([Reply(text='{"action": "MoveForward", "magnitude": 5}')])
    ) as server:
        policy = uav_policy(_parameters(vlm_base_url=server.base_url), "uav_agent")
        policy.reset(goal)
        assert policy.act(observation()) == Action("MoveForward", 5.0)
    system, user = server.received[0].body["messages"]
    # AerialDojo-200K, appendix A: action set with magnitudes, embodiment, termination,
    # single-action JSON, success = Stop within 3 m without collision within the budget.
    for phrase in (
        "MoveForward: magnitude 1 or 3 or 5 (m)",
        "MoveUp: magnitude 1 or 2 (m)",
        "TurnLeft: magnitude 15 (deg)",
        "collision radius 250 mm",
        "budget of 90 actions",
        "Stop within 3 m",
        "white is 0 m, black is 50 m",
    ):
        assert phrase in system["content"], phrase
    text = user["content"][0]["text"]
    assert "red pickup truck" in text and "northeast of the landmark" in text
    images = [p for p in user["content"] if p["type"] == "image_url"]
    assert len(images) == 2  # front RGB and front depth
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_the_prompt_shows_the_views_and_odometry_the_task_gives(goal: GoalDescription) -> None:
    """AerialDojo-200K's protocol is the front view without odometry; a run that gives four
    views and start-relative odometry (task_manager.observation, odometry) says so."""
    four = ("front", "left", "right", "down")
    replies = [Reply(text='{"action": "TurnLeft", "magnitude": 15}')] * 2
    with ChatServer(Script.sequence(replies)) as server:
        policy = uav_policy(_parameters(vlm_base_url=server.base_url), "uav_agent")
        policy.reset(replace(goal, views=("front",), odometry=False))
        policy.act(observation())
        policy.reset(replace(goal, views=four, odometry=True))
        policy.act(observation(views=four, odometry=True))
    settings = ((("front",), False), (four, True))
    for request, (views, odometry) in zip(server.received, settings, strict=True):
        system, user = request.body["messages"]
        labels = [part["text"] for part in user["content"] if part["type"] == "text"][1:]
        assert labels == [f"{name} view, {kind}:" for name in views for kind in ("RGB", "depth")]
        assert f"your {', '.join(views)} camera(s)" in system["content"]
        assert ("- Odometry:" in system["content"]) is odometry
        shown = "Odometry: x 1.0 m forward, y 2.0 m left, z 3.0 m up" in user["content"][0]["text"]
        assert shown is odometry


def test_the_prompt_states_the_field_of_view_and_collision_radius_the_run_uses(
    goal: GoalDescription,
) -> None:
    # Issue 25: both were constants (90 degrees, 250 mm) whatever the run simulated.
    size = 64
    narrow = observation(size)
    front = narrow.views["front"]
    focal = (size / 2) / math.tan(math.radians(30.0))  # a 60-degree camera
    intrinsics = np.array([[focal, 0, size / 2], [0, focal, size / 2], [0, 0, 1.0]])
    narrow = replace(narrow, views={"front": replace(front, intrinsics=intrinsics)})
    with ChatServer(Script.sequence([Reply(text='{"action": "Stop"}')])) as server:
        policy = uav_policy(
            _parameters(vlm_base_url=server.base_url, collision_radius_m=0.4), "uav_agent"
        )
        policy.reset(goal)
        policy.act(narrow)
    system = server.received[0].body["messages"][0]["content"]
    assert "60-degree horizontal field of view" in system
    assert "collision radius 400 mm" in system and "90-degree" not in system


def test_a_refused_action_goes_back_with_the_referees_reason(goal: GoalDescription) -> None:
    replies = [
        Reply(text='{"action": "MoveForward", "magnitude": 5}'),
        Reply(text='{"action": "TurnLeft", "magnitude": 15}'),
    ]
    with ChatServer(Script.sequence(replies)) as server:
        policy = uav_policy(_parameters(vlm_base_url=server.base_url), "uav_agent")
        policy.reset(goal)
        assert policy.act(observation()) == Action("MoveForward", 5.0)
        policy.refused("held at the edge of the scene")
        assert policy.act(observation()) == Action("TurnLeft", 15.0)
    first, second = (request.body["messages"][1]["content"] for request in server.received)
    texts = [part["text"] for part in second if part["type"] == "text"]
    assert "the referee refused MoveForward 5: held at the edge of the scene" in texts[1]
    assert not any("the referee refused" in p.get("text", "") for p in first)
    # The refused action was not executed: it is not in the history, and the step is the same.
    assert "Step 1 of 90" in texts[0] and "(none)" in texts[0]


def test_malformed_and_illegal_replies_get_repair_turns_then_the_fallback(
    goal: GoalDescription, tmp_path: Path
) -> None:
    script = Script.sequence(
        [
            Reply(text="I think I should go forward."),
            Reply(text='{"action": "MoveForward", "magnitude": 4}'),
            Reply(text='{"action": "MoveForward", "magnitude": 3}'),
            Reply(text="nope"),
            Reply(text='{"action": "Fly"}'),
            Reply(text='{"action": "TurnLeft", "magnitude": 30}'),
        ]
    )
    transcripts = tmp_path / "transcripts"
    with ChatServer(script) as server:
        policy = uav_policy(
            _parameters(
                vlm_base_url=server.base_url,
                vlm_fallback="TurnRight 15",
                transcript_dir=str(transcripts),
            ),
            "uav_agent",
        )
        policy.reset(goal)
        assert policy.act(observation()) == Action("MoveForward", 3.0)
        assert policy.act(observation(seed=5)) == Action("TurnRight", 15.0)
    # The repair request carries the refused reply and why it was refused.
    repair = server.received[1].body["messages"]
    assert repair[-2] == {"role": "assistant", "content": "I think I should go forward."}
    assert "holds no JSON object" in repair[-1]["content"]
    assert "allowed: 1, 3, 5 m" in server.received[2].body["messages"][-1]["content"]
    usage = model_usage(transcripts, ["ep-1"])
    assert usage is not None
    total = usage["total"]
    assert (total["decisions"], total["requests"], total["repairs"], total["fallbacks"]) == (
        2,
        6,
        4,
        1,
    )
    assert total["refused_by_kind"] == {
        "malformed": 2,
        "unknown_action": 1,
        "illegal_magnitude": 2,
        "illegal_argument": 0,
        "long_message": 0,
    }


def test_a_replay_gives_the_same_actions_and_usage_without_a_server(
    goal: GoalDescription, tmp_path: Path
) -> None:
    replies = [Reply(text=f'{{"action": "MoveLeft", "magnitude": {m}}}') for m in (1, 3, 5)]
    live = tmp_path / "live"
    with ChatServer(Script.sequence(replies, then=Reply(text='{"action": "Stop"}'))) as server:
        policy = uav_policy(
            _parameters(vlm_base_url=server.base_url, transcript_dir=str(live / "transcripts")),
            "uav_agent",
        )
        policy.reset(goal)
        recorded = [policy.act(observation(seed=k)) for k in range(4)]
    replayed_dir = tmp_path / "replayed"
    replay = uav_policy(
        _parameters(
            vlm_base_url="http://127.0.0.1:9/v1",  # nothing there: replay never asks
            replay_transcripts=str(live),
            transcript_dir=str(replayed_dir / "transcripts"),
        ),
        "uav_agent",
    )
    replay.reset(goal)
    assert [replay.act(observation(seed=k)) for k in range(4)] == recorded
    assert model_usage(live / "transcripts", ["ep-1"]) == model_usage(
        replayed_dir / "transcripts", ["ep-1"]
    )
    # Other observations: the replay says it diverged instead of pretending.
    replay.reset(goal)
    with pytest.raises(ReplayError, match="diverged"):
        replay.act(observation(seed=99))


def test_images_are_stored_once_by_reference_and_no_key_is_written(
    goal: GoalDescription, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_VLM_KEY", "sk-secret-1234567890")
    with ChatServer(Script.sequence([]), api_key="sk-secret-1234567890") as server:
        policy = uav_policy(
            _parameters(
                vlm_base_url=server.base_url,
                vlm_api_key_env="TEST_VLM_KEY",
                transcript_dir=str(tmp_path / "transcripts"),
            ),
            "uav_agent",
        )
        policy.reset(goal)
        policy.act(observation())
        policy.reset(goal)  # a rerun: the same images again
        policy.act(observation())
    records = [json.loads(line) for line in (tmp_path / "transcripts" / "uav.jsonl").open()]
    exchanges = [r for r in records if r["type"] == "exchange"]
    assert [r["attempt"] for r in exchanges] == [0, 1]
    parts = exchanges[0]["request"][1]["content"]
    files = [p["path"] for p in parts if p["type"] == "image_file"]
    assert len(files) == 2 and all((tmp_path / "transcripts" / f).is_file() for f in files)
    assert len(list((tmp_path / "transcripts" / "images").iterdir())) == 2
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-secret-1234567890" not in path.read_bytes(), path


def test_a_dead_server_raises_for_the_node_to_report(goal: GoalDescription) -> None:
    policy = uav_policy(
        _parameters(vlm_base_url="http://127.0.0.1:9/v1", vlm_max_retries=1), "uav_agent"
    )
    policy.reset(goal)
    with pytest.raises(ModelServerError, match="unreachable"):
        policy.act(observation())


def test_bad_settings_name_the_parameter(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"uav_agent\.vlm_fallback"):
        uav_policy(_parameters(vlm_fallback="MoveBackward 1"), "uav_agent")
    with pytest.raises(ConfigError, match=r"uav_agent\.vlm_model"):
        uav_policy(_parameters(vlm_model=""), "uav_agent")
    edited = tmp_path / "prompts"
    edited.mkdir()
    for name in ("system", "user_semantic", "user_image", "repair"):
        (edited / f"{name}.txt").write_text("$reply_format" if name == "repair" else "ok")
    (edited / "user_image.txt").write_text("Goal: $object_nam")
    with pytest.raises(ConfigError, match=r"user_image.txt: unknown placeholder\(s\) \$object_nam"):
        uav_policy(_parameters(vlm_prompt_dir=str(edited)), "uav_agent")
