"""Model agents through the whole graph against a real chat-completions server on 127.0.0.1
(tests/fakes/chat_server.py) with scripted replies: a full AerialDojo episode, its replay from
the transcripts with no server (same actions, byte-identical metrics.json), the API key nowhere
in the run directory, a server killed mid-episode (an infrastructure failure, rerun), a full
AGOS episode with both agents asking a model, replayed likewise, and an AGOS Baseline episode
whose agents coordinate by the messages their decisions carry."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from rosbags.highlevel import AnyReader

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aerialdojo_interfaces.msg import AgentMessage
from fakes.chat_server import ChatServer, Received, Reply, Route, Script
from PIL import Image

from aerialdojo.agos.episodes import parse_task_text
from aerialdojo.agos.maps import region_map
from aerialdojo.agos.town import town_map

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

KEY = "sk-test-0123456789abcdef-never-logged"
MOVES = [
    Reply(text='{"action": "MoveUp", "magnitude": 1}'),
    Reply(text="Let me look around first."),  # malformed: a repair turn follows
    Reply(text='{"action": "TurnLeft", "magnitude": 15}'),
    Reply(text='{"action": "MoveForward", "magnitude": 4}'),  # illegal magnitude: repaired
    Reply(text='{"action": "MoveForward", "magnitude": 1}'),
    Reply(text='```json\n{"action": "Stop"}\n```'),
]


def _config(repo: Path, tmp_path: Path, base_url: str, **uav_agent: object) -> Path:
    config = yaml.safe_load((repo / "config" / "eval_vlm.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=96, image_height=96)
    config["task_manager"]["ros__parameters"].update(max_episodes=1)
    config["uav_agent"]["ros__parameters"].update(
        {
            "vlm_base_url": base_url,
            "vlm_model": "test-vlm",
            "vlm_api_key_env": "AERIALDOJO_TEST_VLM_KEY",
            "vlm_timeout_s": 20.0,
            "vlm_backoff_s": 0.2,
            "vlm_price_input_per_mtok": 0.5,
            "vlm_price_output_per_mtok": 1.5,
            **uav_agent,
        }
    )
    path = tmp_path / "eval_vlm.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _eval(
    config: Path, output: Path, run_id: str, *extra: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(config),
         "--output", str(output), "--run-id", run_id, *map(str, extra)],
        capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "AERIALDOJO_TEST_VLM_KEY": KEY},
    )  # fmt: skip


def test_a_model_episode_replays_with_no_server_and_leaks_no_key(
    repo: Path, tmp_path: Path
) -> None:
    with ChatServer(Script.sequence(list(MOVES)), api_key=KEY) as server:
        config = _config(repo, tmp_path, server.base_url)
        run = _eval(config, tmp_path / "runs", "live")
        requests = len(server.received)
    assert run.returncode == 0, run.stderr[-3000:]
    assert requests == len(MOVES)
    live = tmp_path / "runs" / "live"
    metrics = json.loads((live / "metrics.json").read_text())
    (episode,) = metrics["episodes"]
    assert episode["termination"] == "stopped" and episode["steps_used"] == 4
    usage = metrics["run"]["model_usage"]["total"]
    assert (usage["decisions"], usage["requests"], usage["repairs"], usage["fallbacks"]) == (
        4, 6, 2, 0,
    )  # fmt: skip
    assert usage["refused_by_kind"]["malformed"] == 1
    assert usage["refused_by_kind"]["illegal_magnitude"] == 1
    assert usage["prompt_tokens"] > 0 and usage["cost"] > 0
    assert "## Model usage" in (live / "report.md").read_text()
    (agent,) = metrics["run"]["agents"]
    assert (agent["policy"], agent["description"]) == (
        "vlm",
        f"model test-vlm at {server.base_url}",
    )

    # The key reached the server, and nothing of the run: logs, parameter files, the saved
    # config, transcripts, report, bag.
    assert server.received[0].headers["authorization"] == f"Bearer {KEY}"
    files = [path for path in live.rglob("*") if path.is_file()]
    assert any(path.suffix == ".mcap" for path in files)
    leaked = [path for path in files if KEY.encode() in path.read_bytes()]
    assert leaked == []

    # No server at all now: the replay answers from the transcripts.
    replay = _eval(config, tmp_path / "runs", "replay", "--replay-transcripts", live)
    assert replay.returncode == 0, replay.stderr[-3000:]
    replayed = tmp_path / "runs" / "replay"
    assert (replayed / "metrics.json").read_bytes() == (live / "metrics.json").read_bytes()

    def actions(run_dir: Path) -> list[dict[str, object]]:
        lines = (run_dir / "transcripts" / "uav.jsonl").read_text().splitlines()
        return [r["action"] for r in map(json.loads, lines) if r["type"] == "decision"]

    assert actions(replayed) == actions(live)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(port: int, script: dict[str, object], path: Path) -> subprocess.Popen[str]:
    path.write_text(json.dumps(script))
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve().parents[1] / "fakes" / "chat_server.py"),
         "--port", str(port), "--model", "test-vlm", "--script", str(path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None and "serving" in server.stdout.readline()
    return server


def test_a_server_killed_mid_episode_is_an_infrastructure_failure_and_rerun(
    repo: Path, tmp_path: Path
) -> None:
    port = _free_port()
    turn = {"text": '{"action": "TurnLeft", "magnitude": 15}', "delay_s": 0.3}
    slow = {"routes": [{"replies": [], "then": turn}]}
    first = _serve(port, slow, tmp_path / "slow.json")
    config = _config(
        repo, tmp_path, f"http://127.0.0.1:{port}/v1", vlm_max_retries=1, vlm_backoff_s=0.5
    )
    cli = subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(config),
         "--output", str(tmp_path / "runs"), "--run-id", "killed"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    second = None
    transcript = tmp_path / "runs" / "killed" / "transcripts" / "uav.jsonl"
    try:
        deadline = time.monotonic() + 600
        while not (transcript.exists() and transcript.read_text().count('"exchange"') >= 3):
            assert time.monotonic() < deadline and cli.poll() is None, cli.communicate()[1][-3000:]
            time.sleep(0.2)
        first.send_signal(signal.SIGKILL)
        first.wait()
        task_log = tmp_path / "runs" / "killed" / "logs" / "task_manager.log"
        while "failed (infrastructure failure" not in task_log.read_text():
            assert time.monotonic() < deadline and cli.poll() is None, cli.communicate()[1][-3000:]
            time.sleep(0.2)
        # The server comes back; the rerun of the episode uses it.
        second = _serve(
            port,
            {"routes": [{"replies": [], "then": '{"action": "Stop"}'}]},
            tmp_path / "stop.json",
        )
        _, stderr = cli.communicate(timeout=600)
    finally:
        for process in (cli, first, second):
            if process is not None and process.poll() is None:
                process.kill()
    assert cli.returncode == 0, stderr[-3000:]
    run_dir = tmp_path / "runs" / "killed"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    (episode,) = metrics["episodes"]
    assert episode["termination"] == "stopped" and metrics["excluded"] == []
    assert "unreachable" in (run_dir / "logs" / "evaluator.log").read_text()
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert any(r.get("server_error") for r in records if r.get("attempt") == 0)
    # The scored attempt's usage only: one decision, Stop.
    assert metrics["run"]["model_usage"]["total"]["decisions"] == 1


AGOS_UAV_REPLIES = [
    Reply(text="A red car might be down there."),  # malformed: a repair turn follows
    Reply(text='{"action": "WAIT", "message": "scanning the north road"}'),
    Reply(text='{"action": "WAIT"}'),
]
AGOS_UGV_REPLIES = [
    Reply(text='{"action": "STOP_OBSERVE"}'),
    Reply(text='{"action": "CONFIRM", "message": "confirmed"}'),
]


def _assert_every_request_carries_the_map(run_dir: Path, episode_id: str) -> None:
    """AGOS-Bench, A.4: every request's visual inputs include the top-down map M. Read from
    the recorded transcripts: each request's user message holds the map image, which is the
    episode region's map (roads on plain ground) with the agent's markers on it."""
    scene, description = _task_description(run_dir, episode_id)
    plain = region_map(town_map(scene), parse_task_text(description))
    for agent in ("uav", "ugv"):
        lines = (run_dir / "transcripts" / f"{agent}.jsonl").read_text().splitlines()
        exchanges = [r for r in map(json.loads, lines) if r["type"] == "exchange"]
        assert exchanges, agent
        for record in exchanges:
            content = record["request"][1]["content"]
            labels = [part.get("text") for part in content]
            image = content[labels.index("Top-down map:") + 1]
            assert image["type"] == "image_file"
            shown = np.asarray(Image.open(run_dir / "transcripts" / image["path"]).convert("RGB"))
            assert shown.shape == plain.shape
            # Outside the few markers every pixel is the map's.
            assert (shown == plain).all(axis=2).mean() > 0.97
            assert "Top-down map of the search region (north up" in content[0]["text"]


def _task_description(run_dir: Path, episode_id: str) -> tuple[str, str]:
    """The town and instruction text of an episode, as the run's bag recorded its task."""
    with AnyReader([run_dir / "bag"]) as reader:
        tasks = [
            reader.deserialize(raw, connection.msgtype)
            for connection, _, raw in reader.messages(
                connections=[c for c in reader.connections if c.topic == "/aerialdojo/task"]
            )
        ]
    return next(
        (task.scene, task.goal.description) for task in tasks if task.episode_id == episode_id
    )


def _agos_config(repo: Path, tmp_path: Path, base_url: str, **task_manager: object) -> Path:
    """config/agos_vlm.yaml for one episode with small images, both agents asking
    ``base_url``."""
    config = yaml.safe_load((repo / "config" / "agos_vlm.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=64, image_height=64)
    config["task_manager"]["ros__parameters"].update(max_episodes=1, **task_manager)
    for node in ("agos_uav_agent", "ugv_agent"):
        config[node]["ros__parameters"].update(
            vlm_base_url=base_url, vlm_model="test-vlm", vlm_timeout_s=20.0
        )
    path = tmp_path / f"agos_vlm_{len(list(tmp_path.glob('agos_vlm_*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _agos_script(uav: list[Reply], ugv: list[Reply]) -> Script:
    return Script(
        [
            Route("You are the UAV", uav, Reply(text='{"action": "WAIT"}')),
            Route("You are the UGV", ugv, Reply(text='{"action": "WAIT"}')),
        ]
    )


def _ugv_prompts(received: list[Received]) -> list[str]:
    return [
        r.body["messages"][1]["content"][0]["text"]
        for r in received
        if r.body["messages"][0]["content"].startswith("You are the UGV")
    ]


def test_an_agos_episode_with_both_agents_asking_a_model(repo: Path, tmp_path: Path) -> None:
    """config/agos_vlm.yaml, one short episode: the UAV waits and writes to the UGV (after a
    malformed reply and its repair turn), the UGV stops to observe and confirms."""
    script = _agos_script(list(AGOS_UAV_REPLIES), list(AGOS_UGV_REPLIES))
    with ChatServer(script) as server:
        path = _agos_config(repo, tmp_path, server.base_url)
        run = _eval(path, tmp_path / "runs", "agos")
        received = list(server.received)
    assert run.returncode == 0, run.stderr[-3000:]
    run_dir = tmp_path / "runs" / "agos"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    (episode,) = metrics["episodes"]
    assert episode["termination"] == "stopped"
    values = episode["values"]
    assert (values["ds"], values["ds_uav"], values["ds_ugv"]) == (4, 2, 2)  # repairs excluded

    agents = {agent["agent"]: agent for agent in metrics["run"]["agents"]}
    assert {name: agents[name]["policy"] for name in agents} == {"uav": "vlm", "ugv": "vlm"}
    assert agents["ugv"]["description"] == f"model test-vlm at {server.base_url}"
    usage = metrics["run"]["model_usage"]
    per_agent = usage["episodes"][episode["episode_id"]]["agents"]
    assert (per_agent["uav"]["decisions"], per_agent["uav"]["repairs"]) == (2, 1)
    assert (per_agent["ugv"]["decisions"], per_agent["ugv"]["repairs"]) == (2, 0)
    assert usage["total"]["requests"] == len(received) == 5
    assert usage["total"]["refused_by_kind"]["malformed"] == 1
    assert "## Model usage" in (run_dir / "report.md").read_text()

    # The AGOS-Agent prompts, not the Baseline's: the episode's action set has the tools.
    systems = [r.body["messages"][0]["content"] for r in received]
    assert any("5x5 grid overlay" in s for s in systems)
    ugv_prompts = _ugv_prompts(received)
    assert "Free exploration" in ugv_prompts[0]
    assert "Six-View Verification" in ugv_prompts[1]
    # The message the UAV's first decision carried is in the UGV's prompt from its next turn.
    assert "scanning the north road" in ugv_prompts[0]
    for agent in ("uav", "ugv"):
        assert (run_dir / "transcripts" / f"{agent}.jsonl").stat().st_size > 0
    _assert_every_request_carries_the_map(run_dir, episode["episode_id"])

    replay = _eval(path, tmp_path / "runs", "replay", "--replay-transcripts", run_dir)
    assert replay.returncode == 0, replay.stderr[-3000:]
    replayed = tmp_path / "runs" / "replay" / "metrics.json"
    assert replayed.read_bytes() == (run_dir / "metrics.json").read_bytes()


def test_an_agos_baseline_episode_coordinates_by_the_messages_decisions_carry(
    repo: Path, tmp_path: Path
) -> None:
    """task_manager.mode: baseline (AGOS-Bench, appendix A.4.2): the UAV waits over a match and
    sends its position with that decision; the task manager delivers it; the UGV's prompt
    takes it as its search anchor."""
    anchor = "clear match below me; search anchor (12.0, -34.0)"
    uav = [Reply(text=f'{{"evidence": "CLEAR_MATCH", "action": "WAIT", "message": "{anchor}"}}')]
    ugv = [Reply(text='{"action": "STOP_OBSERVE"}'), Reply(text='{"action": "CONFIRM"}')]
    with ChatServer(_agos_script(uav, ugv)) as server:
        path = _agos_config(repo, tmp_path, server.base_url, mode="baseline")
        run = _eval(path, tmp_path / "runs", "baseline")
        received = list(server.received)
    assert run.returncode == 0, run.stderr[-3000:]
    run_dir = tmp_path / "runs" / "baseline"
    (episode,) = json.loads((run_dir / "metrics.json").read_text())["episodes"]
    assert episode["conditions"] == {"ablation": "none", "mode": "baseline"}
    baseline_roles = ("CLEAR_MATCH, AMBIGUOUS or NONE", "Never output GO_TO_CANDIDATE")
    for request in received:  # the Baseline's role prompts: no candidate tools
        system = request.body["messages"][0]["content"]
        assert any(role in system for role in baseline_roles)
    first = _ugv_prompts(received)[0]
    # The initial exchange of positions comes first (a notice of the protocol), then what the
    # UAV's decision said.
    assert "- [initial position] UAV at (" in first and f")\n- {anchor}" in first
    assert "Search Anchor. The UAV reported a possible target near (12.0, -34.0)" in first
    with AnyReader([run_dir / "bag"]) as reader:
        delivered = [
            reader.deserialize(raw, connection.msgtype)
            for connection, _, raw in reader.messages(
                connections=[c for c in reader.connections if c.topic == "/agos/messages"]
            )
        ]
    (carried,) = [m for m in delivered if m.kind == AgentMessage.FREE_TEXT]
    assert (carried.sender, carried.receiver, carried.text, carried.sequence) == (
        "uav", "ugv", anchor, 2,
    )  # fmt: skip
    _assert_every_request_carries_the_map(run_dir, episode["episode_id"])
