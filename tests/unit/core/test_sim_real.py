"""``aerialdojo compare --sim ... --real ...`` on runs the project's own code produced: three
agents fly the shipped rehearsal suite in the embedded simulator (its backend and the
AerialDojo referee, events folded and written as the evaluator does), and on a "robot" whose
bags carry what a robot's ``ros2 bag record`` carries (odometry with tracking error, a
mission topic, a Stop signal), scored with ``evaluate-bag --map``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from eventstream import event
from robot_bags import boolean, odometry, string, write_robot_bag

from aerialdojo.actions import STOP, Action
from aerialdojo.cli import main
from aerialdojo.errors import MetricsError
from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.protocols import trace_builder
from aerialdojo.protocols.aerialdojo import AerialDojoReferee
from aerialdojo.protocols.referee import SimOutcome, StepRequest
from aerialdojo.report.run import METRICS_JSON, TRAJECTORIES_JSONL, score_assembled, write_run
from aerialdojo.report.sim_real import REAL, SIM, compare_sim_real
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.tasks.episode import Episode
from aerialdojo.tasks.records import suite_identity
from aerialdojo.tasks.suite import Suite, load_suite, resolve_suite

SUITE = "alley_rehearsal"
ODOM = "/mavros/local_position/odom"
MAPPING = {
    "pose": {"topic": ODOM, "frame": "map"},  # motion capture in the site frame
    "stop": {"topic": "/agent/stop"},
    "actions": {"topic": "/agent/action"},
    "episodes": {"topic": "/mission/state"},
}

#: Policies as what they do with an episode's reference: all of it, the first half, none (a
#: turn on the spot).
Policy = Callable[[Episode], Sequence[Action]]
AGENTS: dict[str, Policy] = {
    "reference": lambda episode: episode.reference.actions,
    "halfway": lambda episode: episode.reference.actions[: len(episode.reference.actions) // 2],
    "hover": lambda episode: (Action("TurnLeft", 15.0),),
}


def _fly(backend: EmbeddedBackend, episode: Episode, actions: Sequence[Action]) -> list[Any]:
    """The events the task manager publishes for ``actions`` then Stop: the referee plans
    and applies each step, the embedded simulator executes it."""
    referee = AerialDojoReferee(episode)
    backend.reset(episode.scene, {"uav": episode.start})
    start = episode.start.position
    events = [
        event(
            EventKind.STARTED,
            episode.episode_id,
            position=tuple(start),
            episode_json=json.dumps(referee.start_record()),
        )
    ]
    for step, action in enumerate([*actions, Action(STOP)], start=1):
        planned = referee.plan(
            StepRequest(agent="uav", action=action.name, magnitude=action.magnitude)
        )
        outcome = None
        if planned.command is not None:
            moved = backend.execute("uav", action)
            outcome = SimOutcome(pose=moved.pose, collided=moved.collided)
        verdict = referee.apply(planned, outcome)
        pose = referee.scored_pose.position
        events.append(
            event(verdict.kind, episode.episode_id, step=step, position=tuple(pose),
                  action=action.name, stamp_s=step)
        )  # fmt: skip
        if verdict.done:
            break
    return events


def _sim_run(suite: Suite, policy: Policy, out: Path) -> list[list[tuple[float, float, float]]]:
    """A simulated run of the suite's default selection, written as the evaluator writes
    it; returns each episode's positions (start first)."""
    backend = EmbeddedBackend(rigs={"uav": aerialdojo_uav_rig(8, 8)}, seed=0)
    assembler = EpisodeAssembler(trace_builder)
    selection = list(suite.default_selection)
    started = {"selection": selection, "suite": suite_identity(suite.path, suite.name)}
    assembler.add(event(EventKind.RUN_STARTED, episode_json=json.dumps(started)))
    flights = []
    for episode_id in selection:
        events = _fly(backend, suite.episode(episode_id), policy(suite.episode(episode_id)))
        for item in events:
            assembler.add(item)
        flights.append([(e.pose.position.x, e.pose.position.y, e.pose.position.z) for e in events])
    assembler.add(event(EventKind.RUN_FINISHED, message="done"))
    write_run(out, score_assembled(assembler, None))
    return flights


def _robot_bag(suite: Suite, flights: list[list[tuple[float, float, float]]], path: Path) -> Path:
    """The same flights on a robot: it reaches each commanded pose within a few tens of
    centimetres (seeded), one odometry message a second, one action message per step."""
    rng = np.random.default_rng(7)
    messages: list[tuple[float, str, str, Any]] = []
    t = 0.0
    for episode_id, positions in zip(suite.default_selection, flights, strict=True):
        messages.append((t, "/mission/state", "std_msgs/msg/String", string(f"start {episode_id}")))
        for index, position in enumerate(positions):
            reached = np.asarray(position) + rng.normal(0.0, 0.1, 3)
            t += 1.0
            messages.append((t, ODOM, "nav_msgs/msg/Odometry", odometry(t, tuple(reached), 0.0)))
            if 0 < index < len(positions) - 1:  # a move (the last position is the Stop's)
                messages.append((t, "/agent/action", "std_msgs/msg/String", string("step")))
        messages.append((t + 0.2, "/agent/stop", "std_msgs/msg/Bool", boolean(True)))
        messages.append((t + 0.5, "/mission/state", "std_msgs/msg/String", string("stop")))
        t += 2.0
    return write_robot_bag(path, messages)


def _real_run(bag: Path, suite: Path, mapping: Path, out: Path) -> None:
    argv = ["evaluate-bag", str(bag), "--task", str(suite), "--map", str(mapping)]
    assert main([*argv, "--out", str(out)]) == 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/<world>_<agent>: each agent's simulated run and its robot run."""
    root = tmp_path_factory.mktemp("runs")
    suite = load_suite(resolve_suite(SUITE))
    mapping = root / "robot.yaml"
    mapping.write_text(yaml.safe_dump(MAPPING))
    for agent, policy in AGENTS.items():
        flights = _sim_run(suite, policy, root / f"sim_{agent}")
        bag = _robot_bag(suite, flights, root / f"bag_{agent}")
        _real_run(bag, suite.path, mapping, root / f"real_{agent}")
    return root


def _metrics(run: Path) -> dict[str, Any]:
    return json.loads((run / METRICS_JSON).read_text())


def _dirs(runs: Path, world: str, agents: Sequence[str] = tuple(AGENTS)) -> dict[str, Path]:
    return {agent: runs / f"{world}_{agent}" for agent in agents}


def test_every_metric_side_by_side_per_episode(runs: Path) -> None:
    comparison = compare_sim_real(_dirs(runs, SIM), _dirs(runs, REAL))
    suite = load_suite(resolve_suite(SUITE))
    assert comparison.suites == (suite_identity(suite.path, SUITE),)
    assert comparison.warnings == ()
    assert [spec.key for spec in comparison.specs] == [
        "sr_3m", "osr_3m", "spl_3m", "sr_5m", "osr_5m", "spl_5m", "dts_m", "cr"
    ]  # fmt: skip
    for pair in comparison.agents:
        sim = {e["episode_id"]: e for e in _metrics(pair.sim_dir)["episodes"]}
        real = {e["episode_id"]: e for e in _metrics(pair.real_dir)["episodes"]}
        assert [e.episode_id for e in pair.episodes] == sorted(suite.default_selection)
        for episode in pair.episodes:
            for spec in comparison.specs:
                want_sim = sim[episode.episode_id]["values"][spec.key]
                want_real = real[episode.episode_id]["values"][spec.key]
                assert episode.value(SIM, spec.key) == want_sim
                assert episode.value(REAL, spec.key) == want_real
                assert episode.delta(spec.key) == pytest.approx(want_real - want_sim)
    reference = comparison.agents[0]
    assert all(e.value(SIM, "sr_3m") == 1.0 for e in reference.episodes)
    # The same actions in both worlds: as many steps, the Stop included.
    assert all(e.delta("steps_used") == 0 for pair in comparison.agents for e in pair.episodes)
    # The robot missed its poses by centimetres: its paths are longer, its Stops elsewhere.
    assert all(e.delta("executed_length_m") > 0.0 for e in reference.episodes)
    assert all(abs(e.delta("final_distance_m")) < 1.0 for e in reference.episodes)


def test_the_order_of_agents_holds_on_the_robot(runs: Path) -> None:
    comparison = compare_sim_real(_dirs(runs, SIM), _dirs(runs, REAL))
    means = {p.agent: p.mean(SIM, "dts_m") for p in comparison.agents}
    assert means["reference"] < means["halfway"] < means["hover"]
    dts = next(c for c in comparison.correlations if c.key == "dts_m")
    assert dts.agents == 3
    assert dts.spearman_rho == pytest.approx(1.0) and dts.kendall_tau == pytest.approx(1.0)
    assert dts.pearson_r is not None and dts.pearson_r > 0.99
    assert dts.note == "few agents: read the p-values"


def test_a_robot_that_reverses_two_agents_shows_in_the_rank_correlation(runs: Path) -> None:
    # The robot runs of halfway and hover, exchanged: on the "robot" the order of the two is
    # reversed. Ranks (1, 2, 3) against (1, 3, 2): rho = 1 - 6 * 2 / (3 * 8) = 0.5, and one
    # discordant pair of three: tau = (2 - 1) / 3.
    real = _dirs(runs, REAL)
    real["halfway"], real["hover"] = real["hover"], real["halfway"]
    comparison = compare_sim_real(_dirs(runs, SIM), real)
    dts = next(c for c in comparison.correlations if c.key == "dts_m")
    assert dts.spearman_rho == pytest.approx(0.5)
    assert dts.kendall_tau == pytest.approx(1.0 / 3.0)


def test_two_agents_give_no_rank_correlation(runs: Path) -> None:
    two = ("reference", "hover")
    comparison = compare_sim_real(_dirs(runs, SIM, two), _dirs(runs, REAL, two))
    for correlation in comparison.correlations:
        assert correlation.agents == 2 and correlation.spearman_rho is None
        assert correlation.note.startswith("n = 2 < 3: fewer than three agents")


def test_runs_of_a_rebuilt_suite_are_refused_by_name(runs: Path, tmp_path: Path) -> None:
    # The robot's bag scored against a copy of the suite whose description changed since.
    shipped = resolve_suite(SUITE)
    copy = tmp_path / "rebuilt"
    shutil.copytree(shipped.parent, copy)
    document = json.loads((copy / "suite.json").read_text())
    document["description"] += " Re-surveyed."
    (copy / "suite.json").write_text(json.dumps(document))
    bag, mapping = runs / "bag_reference", runs / "robot.yaml"
    _real_run(bag, copy / "suite.json", mapping, tmp_path / "real_reference")
    real = _dirs(runs, REAL, ("reference",)) | {"reference": tmp_path / "real_reference"}
    with pytest.raises(MetricsError) as refused:
        compare_sim_real(_dirs(runs, SIM, ("reference",)), real)
    old = suite_identity(shipped)["sha256"][:12]
    new = suite_identity(copy / "suite.json")["sha256"][:12]
    assert str(refused.value).startswith(
        f"the runs ran different suites (alley_rehearsal (sha256 {old}): sim reference; "
        f"alley_rehearsal (sha256 {new}): real reference)"
    )


def test_runs_scored_from_trajectory_logs_are_matched_on_their_episodes(
    runs: Path, tmp_path: Path
) -> None:
    # ``aerialdojo metrics`` over each run's trajectory log: the files hold no suite.
    for world in (SIM, REAL):
        log = runs / f"{world}_reference" / TRAJECTORIES_JSONL
        assert main(["metrics", str(log), "--out", str(tmp_path / world)]) == 0
    comparison = compare_sim_real({"a": tmp_path / SIM}, {"a": tmp_path / REAL})
    assert comparison.suites is None
    assert "sim a, real a record(s) no suite" in comparison.warnings[0]
    # A log whose episode names another reference length is of another suite.
    lines = (runs / f"{REAL}_reference" / TRAJECTORIES_JSONL).read_text().splitlines()
    first = json.loads(lines[0])
    first["reference_length_m"] += 4.0
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert main(["metrics", str(tampered), "--out", str(tmp_path / "other")]) == 0
    with pytest.raises(MetricsError, match=f"episode {first['episode_id']} has reference_length_m"):
        compare_sim_real({"a": tmp_path / SIM}, {"a": tmp_path / "other"})


def test_every_agent_needs_a_run_in_both_worlds(runs: Path) -> None:
    with pytest.raises(MetricsError, match="agent\\(s\\) hover have a run in one world only"):
        compare_sim_real(_dirs(runs, SIM), _dirs(runs, REAL, ("reference", "halfway")))


def test_the_command_prints_markdown_and_writes_json(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = [f"{agent}={runs / f'sim_{agent}'}" for agent in AGENTS]
    real = [f"{agent}={runs / f'real_{agent}'}" for agent in AGENTS]
    out = tmp_path / "compared"
    argv = ["compare", "--sim", *sim, "--real", *real, "--out", str(out), "--task", SUITE]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("# Sim vs real\n")
    assert (out / "sim_real.md").read_text() == printed.removesuffix(
        f"written: {out / 'sim_real.md'}, {out / 'sim_real.json'}\n"
    )
    assert "| DTS | 3 | +1.000 (p " in printed
    episode = sorted(load_suite(resolve_suite(SUITE)).default_selection)[0]
    rows = [line for line in printed.splitlines() if line.startswith(f"| {episode} |")]
    assert [row.split("|")[2].strip() for row in rows[:3]] == ["sim", "real", "real - sim"]
    document = json.loads((out / "sim_real.json").read_text())
    assert document["format"] == "aerialdojo-sim-real/1"
    (reference,) = [a for a in document["agents"] if a["agent"] == "reference"]
    first = reference["episodes"][0]
    assert first["delta"]["dts_m"] == pytest.approx(first["real"]["dts_m"] - first["sim"]["dts_m"])
    assert document["ranking"]["correlations"][-2]["key"] == "dts_m"
    for agent in AGENTS:
        assert (out / f"overlay_{agent}.png").is_file()
    # Bare directories are named by their position and paired in that order.
    assert (
        main(["compare", "--sim", str(runs / "sim_hover"), "--real", str(runs / "real_hover")]) == 0
    )
    assert "| 1 | " in capsys.readouterr().out
    assert main(["compare", "--sim", f"a={runs / 'sim_hover'}", str(runs / "sim_reference"),
                 "--real", str(runs / "real_hover")]) == 2  # fmt: skip
    assert "--sim: give every run as NAME=RUN_DIR, or none" in capsys.readouterr().err
