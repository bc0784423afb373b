"""The ``aerialdojo`` commands that need no running graph, called as a user would."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
import yaml
from eventstream import event, straight_episode

from aerialdojo.cli import EXIT_USAGE, main
from aerialdojo.errors import DomainTakenError
from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.graph import config_of, run_specs
from aerialdojo.metrics.jsonl import write_trajectory_log
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import score_assembled, write_run
from aerialdojo.runner import PRIVATE_DOMAINS, claimed_domain, run_domain


def _traces() -> list:
    assembler = EpisodeAssembler(trace_builder)
    for e in straight_episode("a", EventKind.STOPPED, [5, 9]) + straight_episode(
        "b", EventKind.COLLIDED, [3]
    ):
        assembler.add(e)
    return assembler.traces


def test_metrics_scores_a_trajectory_log(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    log = tmp_path / "log.jsonl"
    write_trajectory_log(log, _traces())
    assert main(["metrics", str(log), "--radius", "2", "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "SR@2m" in printed and "2 episode(s) scored" in printed
    assert (tmp_path / "out" / "metrics.json").is_file()


def test_bad_log_lines_are_reported_by_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    log = tmp_path / "log.jsonl"
    write_trajectory_log(log, _traces())
    log.write_text(log.read_text() + '{"schema_version": "1.0"}\n')
    assert main(["metrics", str(log)]) == EXIT_USAGE
    assert f"{log}:3" in capsys.readouterr().err


def test_compare_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assembler = EpisodeAssembler(trace_builder)
    for e in straight_episode("a", EventKind.STOPPED, [5, 9]):
        assembler.add(e)
    write_run(tmp_path / "a", score_assembled(assembler, None))
    assembler.add(straight_episode("b", EventKind.COLLIDED, [3])[0])
    for e in straight_episode("b", EventKind.COLLIDED, [3])[1:]:
        assembler.add(e)
    write_run(tmp_path / "b", score_assembled(assembler, None))
    assert (tmp_path / "a" / "radar.png").is_file()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "CR" in capsys.readouterr().out


def test_params_lists_every_node(capsys: pytest.CaptureFixture) -> None:
    assert main(["params"]) == 0
    printed = capsys.readouterr().out
    for node in ("sim_bridge:", "task_manager:", "uav_agent:", "evaluator:"):
        assert node in printed
    assert "agent_radius_m = 0.25" in printed


def test_scenes_list_names_all_42_scenes_the_agos_towns_and_the_citynav_cities(
    capsys: pytest.CaptureFixture,
) -> None:
    assert main(["scenes", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 42 + 2 + 3
    assert lines[0].split() == ["Mall_0", "aerialdojo", "urban", "in", "distribution"]
    assert lines[1].split()[:3] == ["Mall_1", "aerialdojo", "urban"]
    assert "out of distribution" in lines[1]
    assert [line.split()[:2] for line in lines[42:]] == [
        ["AgosTown_0", "agos"],
        ["AgosTown_1", "agos"],
        *([f"CityNavTown_{i}", "citynav"] for i in range(3)),
    ]


def test_render_writes_a_png_and_unknown_scenes_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "flood.png"
    assert main(["render", "--scene", "Flood_0", "--out", str(out), "--size", "64"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["render", "--scene", "Moon_0", "--out", str(out)]) == EXIT_USAGE
    assert "Moon_0" in capsys.readouterr().err


def test_a_saved_run_config_gives_back_the_same_graph(repo: Path, tmp_path: Path) -> None:
    specs = run_specs(repo / "config" / "eval.yaml", run_id="r1", output_dir=str(tmp_path))
    saved = tmp_path / "config.yaml"
    saved.write_text(yaml.safe_dump(config_of(specs)))
    assert run_specs(saved, run_id="r1") == specs
    lost = ["Flood_1-base-0000-sem", "Alley_1-base-0000-img"]
    again = run_specs(saved, run_id="r1-rerun", episode_ids=lost)
    task_manager = next(spec for spec in again if spec.name == "task_manager")
    assert task_manager.parameters["episodes"] == lost


def test_rerun_lists_the_excluded_and_the_never_started_episodes(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # Issue 15, row 2: rerun said no episode was lost when one was cut short, and never
    # listed the episodes that did not start.
    run_dir = tmp_path / "r1"
    assert main(["rerun", str(run_dir)]) == EXIT_USAGE
    assert "no run_status.json" in capsys.readouterr().err
    assembler = EpisodeAssembler(trace_builder)
    selection = json.dumps({"selection": ["a", "b", "c", "d"]})
    assembler.add(event(EventKind.RUN_STARTED, episode_json=selection))
    for e in straight_episode("a", EventKind.STOPPED, [5]):
        assembler.add(e)
    assembler.add(straight_episode("b", EventKind.STOPPED, [5])[0])
    assembler.add(event(EventKind.INFRA_FAILURE, "b", message="simulator died"))
    assembler.add(straight_episode("c", EventKind.STOPPED, [5])[0])  # cut short
    write_run(run_dir, score_assembled(assembler, None))
    specs = run_specs(repo / "config" / "eval.yaml", run_id="r1", output_dir=str(tmp_path))
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config_of(specs)))
    assert main(["rerun", str(run_dir), "--dry-run"]) == 0
    assert "rerunning 3 episode(s): b, c, d" in capsys.readouterr().out


def test_a_run_keeps_the_users_domain_or_claims_a_private_one(tmp_path: Path) -> None:
    with run_domain({"ROS_DOMAIN_ID": "7"}, tmp_path) as users:
        assert users == "7"
    with run_domain({}, tmp_path) as first, run_domain({}, tmp_path) as second:
        # Two runs on one host never share a domain while both hold theirs.
        assert first != second
        assert {first, second} <= {str(domain) for domain in PRIVATE_DOMAINS}
        with claimed_domain(tmp_path) as worker:  # nor does a sharded run's worker
            assert str(worker) not in {first, second}


def test_a_chosen_domain_another_run_holds_is_refused_naming_that_run(tmp_path: Path) -> None:
    chosen = {"ROS_DOMAIN_ID": "7"}
    first = run_domain(chosen, tmp_path, run_dir=Path("runs/first"))
    with first, pytest.raises(DomainTakenError) as refused, run_domain(chosen, tmp_path):
        pass
    message = str(refused.value)
    assert message.startswith("ROS_DOMAIN_ID=7 is in use by another aerialdojo run")
    assert f"run runs/first (host {socket.gethostname()}, pid {os.getpid()})" in message
    assert "another domain" in message and "wait until that run ends" in message
    with run_domain(chosen, tmp_path) as again:  # released with the first run
        assert again == "7"
    # A domain a run claimed for itself is held the same way.
    with run_domain({}, tmp_path, run_dir=Path("runs/auto")) as claimed:
        taken = f"ROS_DOMAIN_ID={claimed} .* run runs/auto"
        with (
            pytest.raises(DomainTakenError, match=taken),
            run_domain({"ROS_DOMAIN_ID": claimed}, tmp_path),
        ):
            pass


def test_tasks_stats_and_validate_on_the_shipped_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["tasks", "stats", "aerialdojo_mini", "--csv", str(tmp_path / "t7.csv")]) == 0
    printed = capsys.readouterr().out
    assert "Table 7" in printed and "Flood_1" in printed
    assert (tmp_path / "t7.csv").read_text().count("\n") > 8
    assert main(["tasks", "validate", "aerialdojo_mini"]) == 0
    broken = tmp_path / "suite.json"
    broken.write_text('{"schema_version": "1.0", "name": "x"}')
    assert main(["tasks", "validate", str(broken)]) == 1
    assert str(broken) in capsys.readouterr().out


def test_tasks_generate_writes_a_suite_that_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    args = ["tasks", "generate", "--out", str(tmp_path / "s"), "--scenes", "Flood_0"]
    assert main([*args, "--per-scene", "3", "--max-candidates", "20"]) == 0
    assert main(["tasks", "validate", str(tmp_path / "s")]) == 0


def test_bad_input_is_refused_with_a_message_not_a_traceback(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # Issue 15, row 8: raw tracebacks for these.
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    code = main(["eval", "--config", str(repo / "config" / "eval.yaml"), "--output", str(blocker)])
    assert code == EXIT_USAGE
    assert f"evaluator.output_dir: {blocker} is not a directory" in capsys.readouterr().err
    binary = tmp_path / "run.yaml"
    binary.write_bytes(bytes(range(256)))
    assert main(["eval", "--config", str(binary)]) == EXIT_USAGE
    assert "run.yaml: not a text file" in capsys.readouterr().err
    noise = tmp_path / "suite.json"
    noise.write_bytes(bytes(range(256)) * 8)
    assert main(["tasks", "validate", str(noise)]) == 1
    assert "not a text file" in capsys.readouterr().out


def _mistaken_config(tmp_path: Path) -> Path:
    config = {
        "sim_bridge": {"ros__parameters": {"image_width": 0}},
        "task_manager": {"ros__parameters": {"filter": "split=tset"}},
        "uav_agent": {"ros__parameters": {"agent_policy": "oracle"}},
        "evaluator": {"ros__parameters": {}},
    }
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_every_mistake_of_a_run_is_named_at_once_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # Issue 16, item 3: a bad filter started four nodes and ended in a traceback naming no
    # file; of two mistakes only the first was reported.
    config = _mistaken_config(tmp_path)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    code = main(
        ["eval", "--config", str(config), "--output", str(blocker / "runs"),
         "uav_agent.seed=-1", "evaluator.success_radii_m=[3,x]", "planner"]
    )  # fmt: skip
    error = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert "Traceback" not in error
    assert "7 problems:" in error
    for problem in (
        f"{config}: sim_bridge.image_width: 0 is below the minimum 1",
        f"{config}: uav_agent.agent_policy is not a parameter of uav_agent",
        f"{config}: task_manager.filter 'split=tset': split is never 'tset'; "
        "values: adaptation, test, train",
        "command line: uav_agent.seed: -1 is below the minimum 0",
        "command line: evaluator.success_radii_m[1]: expected float",
        "command line: 'planner' is not section.key=value",
        f"evaluator.output_dir: {blocker} is not a directory",
    ):
        assert problem in error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "mine.yaml"]


def test_an_override_the_config_cannot_take_is_refused(
    repo: Path, capsys: pytest.CaptureFixture
) -> None:
    code = main(["eval", "agos_uav_agent.seed=1", "uav_agent.views=[front,back]"])
    error = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert f"command line: agos_uav_agent: the config {repo}/config/eval.yaml has no" in error
    assert "uav_agent.views: 'back' is not a view of the uav" in error


def test_a_run_directory_that_exists_is_refused_before_anything_is_touched(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # Issue 16, item 1: a reused --run-id overwrote the earlier run's logs, parameter files and
    # config.yaml, started four nodes, then died on the existing bag.
    earlier = tmp_path / "runs" / "first"
    for name, text in (("config.yaml", "earlier\n"), ("logs/evaluator.log", "earlier run\n")):
        (earlier / name).parent.mkdir(parents=True, exist_ok=True)
        (earlier / name).write_text(text)
    before = {path: path.read_bytes() for path in earlier.rglob("*") if path.is_file()}
    code = main(["eval", "--output", str(tmp_path / "runs"), "--run-id", "first"])
    assert code == EXIT_USAGE
    assert f"the run directory {earlier} exists already" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in earlier.rglob("*") if path.is_file()} == before


def test_help_states_defaults_and_what_repeats(capsys: pytest.CaptureFixture) -> None:
    # Issue 16, item 7.
    def help_of(*command: str) -> str:
        with pytest.raises(SystemExit) as exited:
            main([*command, "--help"])
        assert exited.value.code == 0
        return " ".join(capsys.readouterr().out.split())  # argparse wraps at the width

    evaluation = help_of("eval")
    assert "--timeout TIMEOUT stop the nodes after this many seconds" in evaluation
    assert "(default: 3600.0)" in evaluation and "(default: 8765)" in evaluation
    assert "default: the shipped config/eval.yaml" in evaluation
    assert "NODE.PARAM=VALUE" in evaluation and "uav_agent.policy=oracle" in evaluation
    for command in ("metrics", "evaluate-bag"):
        assert "repeat for several (--radius 3 --radius 5" in help_of(command)
    assert "(default: 3600.0)" in help_of("rerun")
    assert "laid out like the paper's results table" in help_of("compare")
    assert "(default: 2.0)" in help_of("replay")


def test_tasks_stats_and_validate_treat_citynav_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # Issue 16: the shipped CityNav suite was read as an AerialDojo one (101 schema errors).
    assert main(["tasks", "validate", "citynav_mini"]) == 0
    assert "citynav_mini (shipped suite): ok" in capsys.readouterr().err
    assert main(["tasks", "stats", "citynav_mini", "--csv", str(tmp_path / "c.csv")]) == 0
    printed = capsys.readouterr().out
    assert "| **Total** | 4 | 4 | 4 | 4 | 16 |" in printed
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert rows[0].startswith("city,train,val_seen,val_unseen,test_unseen,all")
    assert rows[-1].startswith("total,4,4,4,4,16,")
    broken = tmp_path / "suite.json"
    document = {"benchmark": "citynav", "schema_version": 1, "name": "x", "episodes": [{}]}
    broken.write_text(json.dumps(document))
    assert main(["tasks", "validate", str(broken)]) == 1
    out = capsys.readouterr().out
    assert f"{broken}: default_selection" in out and f"{broken}: episode #0: " in out
    assert main(["tasks", "generate", "--out", str(tmp_path / "s"), "--scenes", "CityNavTown_0"])
    assert "python -m aerialdojo.citynav.generate" in capsys.readouterr().err


@pytest.mark.parametrize("run_id", ["a/b", "../x", ".", "", "..", "tab\there"])
def test_a_run_id_that_is_not_one_directory_name_is_refused_and_nothing_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture, run_id: str
) -> None:
    # Issue 29, item 2: --run-id sub/victim wrote into the run victim; ../x escaped --output.
    victim = tmp_path / "runs" / "a"
    victim.mkdir(parents=True)
    (victim / "config.yaml").write_text("earlier\n")

    def tree() -> list[tuple[Path, int]]:  # every path under tmp_path, and when it changed
        return sorted((path, path.stat().st_mtime_ns) for path in [tmp_path, *tmp_path.rglob("*")])

    before = tree()
    code = main(["eval", "--output", str(tmp_path / "runs"), "--run-id", run_id])
    assert code == EXIT_USAGE
    assert f"--run-id {run_id!r}: " in capsys.readouterr().err
    assert tree() == before  # nothing created, nothing touched
    assert (victim / "config.yaml").read_text() == "earlier\n"


def test_episodes_must_be_at_least_one(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # Issue 29, item 8: --episodes 0 ran the whole selection (max_episodes 0 means all).
    code = main(["eval", "--output", str(tmp_path / "runs"), "--episodes", "0"])
    assert code == EXIT_USAGE
    assert "--episodes 0: must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def _run_with_status(repo: Path, run_dir: Path, status: dict) -> None:
    specs = run_specs(
        repo / "config" / "eval.yaml", run_id=run_dir.name, output_dir=str(run_dir.parent)
    )
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config_of(specs)))
    (run_dir / "run_status.json").write_text(json.dumps(status))


def test_rerun_trusts_complete_false_and_takes_the_selection_from_the_config(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # Issue 29, item 6: an evaluator that recorded nothing left selected: [], and rerun
    # called the run complete.
    from aerialdojo.graph import selected_episodes
    from aerialdojo.protocols import load_suite
    from aerialdojo.tasks.suite import resolve_suite

    empty = {"complete": False, "selected": [], "scored": [], "excluded": [], "not_started": []}
    _run_with_status(repo, tmp_path / "silent", empty)
    assert main(["rerun", str(tmp_path / "silent"), "--dry-run"]) == 0
    selection = selected_episodes(load_suite(resolve_suite("aerialdojo_mini"))[1], {})
    out = capsys.readouterr().out
    assert f"rerunning {len(selection)} episode(s): {', '.join(selection)}" in out
    _run_with_status(repo, tmp_path / "done", empty | {"complete": True})
    assert main(["rerun", str(tmp_path / "done")]) == 0
    assert "complete, every selected episode was scored; nothing to rerun" in (
        capsys.readouterr().out
    )
    _run_with_status(repo, tmp_path / "odd", {"complete": "no", "selected": []})
    assert main(["rerun", str(tmp_path / "odd")]) == EXIT_USAGE
    assert "run_status.json: complete: expected true or false" in capsys.readouterr().err
    _run_with_status(repo, tmp_path / "bad", empty | {"reruns": ["../elsewhere"]})
    assert main(["rerun", str(tmp_path / "bad")]) == EXIT_USAGE
    assert "reruns: '../elsewhere' contains '/'" in capsys.readouterr().err


def test_a_rerun_of_a_live_run_does_not_wait_for_a_live_view(repo: Path, tmp_path: Path) -> None:
    # `eval --live` saves the live view among the viewers its first episode awaited; rerun
    # has no live view, and waited ready_timeout_s (120 s) for it, then started nothing.
    from aerialdojo.cli import _rerun_specs
    from aerialdojo.nodes.live_view import LIVE_VIEW_NODE

    run_dir = tmp_path / "runs" / "live"
    _run_with_status(repo, run_dir, {"complete": False, "selected": [], "scored": []})
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    config["task_manager"]["ros__parameters"]["await_viewers"] = [LIVE_VIEW_NODE, "foxglove"]
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))

    specs = _rerun_specs(run_dir / "config.yaml", "live-rerun", ["Community_0-base-0000-sem"])
    task_manager = next(spec for spec in specs if spec.name == "task_manager").parameters
    assert task_manager["await_viewers"] == ["foxglove"]
    evaluator = next(spec for spec in specs if spec.name == "evaluator").parameters
    assert evaluator["output_dir"] == str(tmp_path / "runs")


def test_a_rerun_makes_the_runs_own_status_the_whole_runs(tmp_path: Path) -> None:
    # So a second rerun runs only what is still missing, and nothing once all is scored.
    from aerialdojo.report.run import read_run_status, update_run_status

    assembler = EpisodeAssembler(trace_builder)
    assembler.add(event(EventKind.RUN_STARTED, episode_json=json.dumps({"selection": ["a"]})))
    assembler.add(straight_episode("a", EventKind.STOPPED, [5])[0])
    write_run(
        tmp_path / "r",
        score_assembled(assembler, None),
        bag_digests={"bag.mcap": {"sha256": "x", "bytes": 1}},
    )
    assert not read_run_status(tmp_path / "r" / "run_status.json").complete
    for e in straight_episode("a", EventKind.STOPPED, [5]):
        assembler.add(e)
    update_run_status(tmp_path / "r", score_assembled(assembler, None), ["r-rerun"])
    status = read_run_status(tmp_path / "r" / "run_status.json")
    assert status.complete and status.reruns == ("r-rerun",) and status.scored == {"a"}
    assert status.document["bag"] == {"bag.mcap": {"sha256": "x", "bytes": 1}}
