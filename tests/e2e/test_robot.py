"""The robot route end to end on the simulated robot (issue 27, "Must show"): the whole graph
of ``aerialdojo eval --config config/robot_sim.yaml``, real processes over real DDS: the
oracle's actions go from the unchanged agent node through the task manager to the robot
backend, through the safety gate to ``sim_robot`` (MAVROS' topics over a PX4 commander
model), whose camera the bridge relays back to the agent.

What each test adds:
- ``test_the_oracle_flies_the_rehearsal_site_through_the_gate``: two episodes, the second
  placed by the automatic operator flying the robot back to its start; success as in the
  embedded run of the same actions, each end within the arrival tolerance of the embedded
  simulator's; the bag replays to the same metrics.json; every node on the wall clock.
- ``test_the_oracle_flies_through_the_px4_contract``: the same graph with the gate's PX4
  adapter (OffboardControlMode keep-alive, TrajectorySetpoint in NED, offboard and arming
  after the operator's consent) and sim_robot's PX4 contract: one episode, scored as the
  embedded run within the tolerance, the bag replays to the same metrics.json.
- ``test_a_safety_stop_ends_the_attempt_unscored``: one episode each, the fault made while
  the robot flies: the operator's console dying (dead-man), the pilot switching the mode, low
  battery (operator/safety interventions) and an odometry dropout (stale odometry: a failure
  of the robot, which the contract classes as infrastructure, not an intervention as the
  issue's text has it): the attempt is excluded with its cause and reason, nothing is
  scored, ``aerialdojo rerun`` lists it, and the bag says the same.
- ``test_the_operator_places_confirms_and_starts_at_an_interactive_console``: the operator's
  own terminal (``aerialdojo console``): a robot standing 3 m off its start is refused by
  the task manager with how far off it is, and nothing starts; flown there, it starts and
  is scored.
"""

from __future__ import annotations

import contextlib
import json
import math
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest
import yaml
from aerialdojo_interfaces.msg import EpisodeEvent
from std_msgs.msg import String

from aerialdojo.cli import EXIT_INCOMPLETE
from aerialdojo.geometry import Pose
from aerialdojo.nodes.background import BackgroundNode
from aerialdojo.nodes.qos import EVENTS_QOS
from aerialdojo.nodes.sim_robot import INJECT_QOS
from aerialdojo.protocols import load_suite
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.tasks.suite import resolve_suite

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
#: The arrival tolerance the robot backend judges with (robot_position_tolerance_m).
ARRIVAL_TOLERANCE_M = 0.5


def _config(tmp_path: Path, *, console: bool = True, attempts: int = 3) -> Path:
    config = yaml.safe_load((REPO / "config" / "robot_sim.yaml").read_text())
    config["sim_robot"]["ros__parameters"].update(image_width=96, image_height=72)
    config["task_manager"]["ros__parameters"]["max_attempts"] = attempts
    if not console:
        del config["operator_console"]
    path = tmp_path / "robot_sim.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _aerialdojo(*args: object, timeout_s: float = 480.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", *map(str, args)],
        capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip


def _embedded_end(episode_id: str) -> Pose:
    """Where the embedded simulator leaves the UAV after the episode's reference actions."""
    _, suite = load_suite(resolve_suite("alley_rehearsal"))
    episode = suite.episode(episode_id)
    backend = EmbeddedBackend(rigs={"uav": aerialdojo_uav_rig(8, 8)})
    start = Pose(episode.start.x, episode.start.y, episode.start.z, episode.start.yaw)
    backend.reset(episode.scene, {"uav": start})
    for action in episode.reference.actions:
        outcome = backend.execute("uav", action)
        assert not outcome.collided
    return backend.pose("uav")


def test_the_oracle_flies_the_rehearsal_site_through_the_gate(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run = _aerialdojo(
        "eval", "--config", _config(tmp_path), "--episodes", 2, "--output", runs,
        "--run-id", "robot",
    )  # fmt: skip
    run_dir = runs / "robot"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    episodes = {e["episode_id"]: e for e in metrics["episodes"]}
    assert list(episodes) == ["Alley_0-base-0000-sem", "Alley_0-base-0001-img"]
    trajectories = {
        record["episode_id"]: record
        for record in map(json.loads, (run_dir / "trajectories.jsonl").read_text().splitlines())
    }
    for episode_id, episode in episodes.items():
        assert episode["termination"] == "stopped"
        # Scored as the embedded run of the same actions: a success, no collision...
        assert episode["values"]["sr_3m"] == 1.0 and episode["values"]["cr"] == 0.0
        # ...ending within the arrival tolerance of where the embedded simulator ends.
        end = _embedded_end(episode_id)
        robot_end = trajectories[episode_id]["positions"][-1]
        assert math.dist(robot_end, end.position) < ARRIVAL_TOLERANCE_M
    # The robot's run is a bag like any other: it replays to the same metrics.
    replay = _aerialdojo("evaluate-bag", run_dir / "bag", "--out", tmp_path / "replay")
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()
    # A robot's world runs on the wall clock: no node waits for a simulated one.
    for params in (run_dir / "params").glob("*.yaml"):
        ((_, section),) = yaml.safe_load(params.read_text()).items()
        assert section["ros__parameters"]["use_sim_time"] is False, params.name
    # The second episode's start was reached by flying there through the gate.
    console = (run_dir / "logs" / "operator_console.log").read_text()
    assert "placing: placed" in console


def test_the_oracle_flies_through_the_px4_contract(tmp_path: Path) -> None:
    pytest.importorskip("px4_msgs", reason="make robot-msgs builds the px4_msgs subset")
    config = yaml.safe_load(_config(tmp_path).read_text())
    config["sim_robot"]["ros__parameters"]["contract"] = "px4"
    config["safety_gate"]["ros__parameters"] = {
        key: value
        for key, value in config["safety_gate"]["ros__parameters"].items()
        if key.endswith("_timeout_s")
    } | {"vehicle": "px4"}
    bridge = config["sim_bridge"]["ros__parameters"]
    bridge["robot_odometry_topic"] = "vehicle/odom"  # the gate's ENU republication
    config["operator_console"]["ros__parameters"]["placement"] = "manual"
    path = tmp_path / "robot_px4_sim.yaml"
    path.write_text(yaml.safe_dump(config))
    runs = tmp_path / "runs"
    run = _aerialdojo(
        "eval", "--config", path, "--episodes", 1, "--output", runs, "--run-id", "px4"
    )  # fmt: skip
    run_dir = runs / "px4"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    (episode,) = metrics["episodes"]
    assert episode["values"]["sr_3m"] == 1.0 and episode["values"]["cr"] == 0.0
    (trajectory,) = map(json.loads, (run_dir / "trajectories.jsonl").read_text().splitlines())
    end = _embedded_end(episode["episode_id"])
    assert math.dist(trajectory["positions"][-1], end.position) < ARRIVAL_TOLERANCE_M
    replay = _aerialdojo("evaluate-bag", run_dir / "bag", "--out", tmp_path / "replay")
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()
    # The gate spoke PX4's own topics to the simulated autopilot.
    gate = (run_dir / "logs" / "safety_gate.log").read_text()
    assert "vehicle px4" in gate


class _Injector:
    """Listens to the run's events; once the episode has started (and the robot is on its
    way) it makes the fault."""

    def __init__(self, fault: object) -> None:
        self.fault = fault
        self.made = threading.Event()
        self._background = BackgroundNode("robot_fault_injector")
        node = self._background.node
        self._inject = node.create_publisher(String, "/sim_robot/inject", INJECT_QOS)
        node.create_subscription(
            EpisodeEvent, "/aerialdojo/episode_events", self._on_event, EVENTS_QOS
        )
        self._background.start()

    def _on_event(self, event: EpisodeEvent) -> None:
        if event.kind == EpisodeEvent.STARTED and not self.made.is_set():
            threading.Timer(1.5, self._make).start()

    def _make(self) -> None:
        if callable(self.fault):
            self.fault()
        else:
            self._inject.publish(String(data=str(self.fault)))
        self.made.set()

    def close(self) -> None:
        self._background.close()


@pytest.mark.parametrize(
    ("fault", "cause", "reason"),
    [
        ("deadman", "intervention", "deadman_lost"),
        ("rc_takeover", "intervention", "rc_takeover"),
        ("low_battery", "intervention", "battery_low"),
        # The robot's odometry stops reaching the companion: the gate's stale-odometry
        # watchdog stops it, a failure of the robot (the contract's class: infrastructure).
        ("odometry_dropout", "infrastructure", "odometry_stale"),
    ],
)
def test_a_safety_stop_ends_the_attempt_unscored(
    tmp_path: Path, fault: str, cause: str, reason: str
) -> None:
    runs = tmp_path / "runs"
    console = None
    if fault == "deadman":
        # The operator's console runs in a terminal of its own, as on a robot; it dies.
        console = subprocess.Popen(
            [sys.executable, "-m", "aerialdojo.nodes.operator_console", "--ros-args",
             "-p", "mode:=automatic", "-p", "placement:=fly", "-p", "agents:=[uav]",
             "-p", "odometry_topic:=/mavros/local_position/odom"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    injector = _Injector(console.kill if console is not None else fault)
    try:
        run = _aerialdojo(
            # One attempt: the fault stays, so a second would never start.
            "eval", "--config", _config(tmp_path, console=console is None, attempts=1),
            "--episodes", 1,
            "--output", runs, "--run-id", "stop",
        )  # fmt: skip
    finally:
        injector.close()
        if console is not None:
            console.kill()
            console.wait()
    assert injector.made.is_set(), "the episode never started"
    run_dir = runs / "stop"
    assert run.returncode == EXIT_INCOMPLETE, run.stdout[-3000:] + run.stderr[-3000:]
    status = json.loads((run_dir / "run_status.json").read_text())
    assert status["scored"] == []
    (excluded,) = status["excluded"]
    assert excluded["episode_id"] == "Alley_0-base-0000-sem"
    assert excluded.get("cause", "infrastructure") == cause
    assert reason in excluded["reason"]
    assert not (run_dir / "metrics.json").exists()  # nothing was scored
    label = "operator/safety interventions" if cause == "intervention" else "infrastructure"
    assert label in (run_dir / "run_notes.md").read_text()
    rerun = _aerialdojo("rerun", run_dir, "--dry-run")
    assert "rerunning 1 episode(s): Alley_0-base-0000-sem" in rerun.stdout
    _aerialdojo("evaluate-bag", run_dir / "bag", "--out", tmp_path / "replay")
    assert json.loads((tmp_path / "replay" / "run_status.json").read_text()) == status


class _Lines:
    """The lines a process writes, read on a thread of their own."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [*map(self._lines.put, stream)], daemon=True).start()

    def until(self, text: str, timeout_s: float) -> str:
        """The first line from now on that holds ``text``."""
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no {text!r} within {timeout_s:g} s; it said:\n{''.join(self.seen)}")


def test_the_operator_places_confirms_and_starts_at_an_interactive_console(
    tmp_path: Path,
) -> None:
    # The robot stands 3 m east of the first episode's start; the operator runs
    # `aerialdojo console` in a terminal of its own.
    config = yaml.safe_load(_config(tmp_path, console=False).read_text())
    config["sim_robot"]["ros__parameters"]["start_position_m"] = [-10.09, 2.89, 1.38]
    path = tmp_path / "robot_sim.yaml"
    path.write_text(yaml.safe_dump(config))
    runs = tmp_path / "runs"
    evaluation = subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(path), "--episodes",
         "1", "--output", str(runs), "--run-id", "operated"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    console = subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", "console", "--config", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert console.stdin is not None and console.stdout is not None
    lines = _Lines(console.stdout)
    try:
        lines.until("episode 1/1: Alley_0-base-0000-sem", 120)
        for _ in range(30):  # the card again (p) until the robot's odometry is in it
            console.stdin.write("p\n")
            console.stdin.flush()
            with contextlib.suppress(AssertionError):
                lines.until("m and 0.0 deg off, OUTSIDE the tolerance", 3)
                break
        console.stdin.write("s\n")  # start where it stands: the task manager measures it
        console.stdin.flush()
        refused = lines.until("not started: the uav is placed", 60)
        assert 2.9 < float(refused.split("placed ")[1].split(" m")[0]) < 3.1, refused
        console.stdin.write("f\n")  # fly it to its start through the gate, then start
        console.stdin.flush()
        lines.until("placed", 60)
        console.stdin.write("s\n")
        console.stdin.flush()
        lines.until("episode Alley_0-base-0000-sem started", 60)
        console.stdin.write("s\n")  # again, mid-episode: the robot is the backend's now
        console.stdin.flush()
        lines.until("episode Alley_0-base-0000-sem is under way", 10)
        lines.until("episode Alley_0-base-0000-sem ended: stopped", 120)
        stdout, stderr = evaluation.communicate(timeout=120)
    finally:
        for process in (console, evaluation):
            process.kill()
            process.wait()
    assert evaluation.returncode == 0, stdout[-2000:] + stderr[-2000:]
    metrics = json.loads((runs / "operated" / "metrics.json").read_text())
    (episode,) = metrics["episodes"]
    assert episode["values"]["sr_3m"] == 1.0
    # The refused start never started an attempt: one attempt, scored.
    status = json.loads((runs / "operated" / "run_status.json").read_text())
    assert status["scored"] == ["Alley_0-base-0000-sem"] and status["superseded"] == []
