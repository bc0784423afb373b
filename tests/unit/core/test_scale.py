"""Sharded runs without ROS: worker resources, batches, domain claims, a graph's bag cut into
per-episode bags, and the merge of episode records into one run whatever their order."""

from __future__ import annotations

import contextlib
import io
import json
import stat
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from eventstream import EVENT_TYPE, TYPESTORE, event, straight_episode
from rich.console import Console

from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import AGENTS_TOPIC, EVENTS_TOPIC, assemble_bags, read_events
from aerialdojo.errors import BagError, ConfigError
from aerialdojo.events import AgentRecord, EpisodeAssembler, EventKind
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import trace_builder
from aerialdojo.report.markdown import metrics_json_text
from aerialdojo.runner import PRIVATE_DOMAINS, claimed_domain
from aerialdojo.runtime import NODES_TOPIC
from aerialdojo.scale.progress import RunProgress
from aerialdojo.scale.records import (
    _READ_SIZE,
    EpisodeRecord,
    finished_episodes,
    merge_transcripts,
    merged_result,
    read_record,
    read_records,
    write_record,
)
from aerialdojo.scale.run import MAX_EPISODES_PER_GRAPH, WorkerResources, plan_jobs
from aerialdojo.scale.split import split_bag
from aerialdojo.scale.worker import EpisodeEnding, JobOutcome

AGENT_INFO = "aerialdojo_interfaces/msg/AgentInfo"
NODE_INFO = "aerialdojo_interfaces/msg/NodeInfo"


def test_worker_resources_read_cpus_gpus_and_custom_resources() -> None:
    resources = WorkerResources.parse("CPU=2, GPU=1,sim_server=1")
    assert resources.ray_options() == {
        "num_cpus": 2.0,
        "num_gpus": 1.0,
        "resources": {"sim_server": 1.0},
    }
    assert WorkerResources.parse(resources.to_text()) == resources
    assert WorkerResources.parse("") == WorkerResources()
    for bad in ("GPU", "GPU=-1", "GPU=many", "=1", "CPU=nan"):
        with pytest.raises(ConfigError, match="--worker-resources"):
            WorkerResources.parse(bad)


def test_batches_cover_the_pending_episodes_in_order_for_every_worker(tmp_path: Path) -> None:
    pending = [f"e{i}" for i in range(7)]
    jobs = plan_jobs(tmp_path, pending, workers=3, timeout_s=60.0)
    assert [job.episode_ids for job in jobs] == [("e0", "e1", "e2"), ("e3", "e4", "e5"), ("e6",)]
    assert len({job.graph for job in jobs}) == 3
    many = plan_jobs(tmp_path, [f"e{i}" for i in range(100)], workers=2, timeout_s=60.0)
    assert max(len(job.episode_ids) for job in many) == MAX_EPISODES_PER_GRAPH
    assert plan_jobs(tmp_path, [], workers=2, timeout_s=60.0) == []


def test_a_claimed_domain_is_private_and_held_until_released(tmp_path: Path) -> None:
    with claimed_domain(tmp_path) as first, claimed_domain(tmp_path) as second:
        assert first != second and {first, second} <= set(PRIVATE_DOMAINS)
    with claimed_domain(tmp_path) as again:  # released: free to claim again
        assert again in PRIVATE_DOMAINS


def test_the_domain_locks_are_shared_by_every_user_of_the_host(tmp_path: Path) -> None:
    locks = tmp_path / "aerialdojo-domains"
    with claimed_domain(locks) as domain:
        assert stat.S_IMODE(locks.stat().st_mode) == 0o1777  # like /tmp
        lock = locks / f"{domain}.lock"
        assert stat.S_IMODE(lock.stat().st_mode) & 0o044 == 0o044  # others can open it
    # Another user's lock file (read-only here) is still a lock this run can take.
    for other in PRIVATE_DOMAINS:
        (locks / f"{other}.lock").touch()
        (locks / f"{other}.lock").chmod(0o444)
    with claimed_domain(locks) as domain:
        assert domain in PRIVATE_DOMAINS


def test_no_domain_is_claimed_when_every_one_is_held(tmp_path: Path) -> None:
    with contextlib.ExitStack() as held:
        for _ in PRIVATE_DOMAINS:
            held.enter_context(claimed_domain(tmp_path))
        with pytest.raises(ConfigError, match="every private ROS domain"), claimed_domain(tmp_path):
            pass


def _agent_info() -> object:
    types = TYPESTORE.types
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""
    )
    return types[AGENT_INFO](
        header=header, run_id="", agent="uav", node="/uav/uav_agent", policy="oracle",
        privileged=True,
        description="reference actions",
    )  # fmt: skip


def _node_info() -> object:
    types = TYPESTORE.types
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""
    )
    return types[NODE_INFO](
        header=header,
        node="/uav/uav_agent",
        ros_distro="humble",
        python_version="3.10.12",
        run_dir="runs/r1",
        host="lab-3",
        pid=4242,
    )


def _graph_bag(path: Path) -> list[object]:
    """A worker graph's bag: a, then b failing once and then scored, then c; the agent's
    announcement arrives during a."""
    selection = json.dumps({"selection": ["a", "b", "c"]})
    started = event(EventKind.RUN_STARTED, episode_json=selection)
    episode_a = straight_episode("a", EventKind.STOPPED, [4, 7])
    failed_b = [
        *straight_episode("b", EventKind.STEP, [2])[:1],
        event(EventKind.INFRA_FAILURE, "b", message="simulator timed out"),
    ]
    episode_b = straight_episode("b", EventKind.COLLIDED, [3])
    episode_b[0].attempt = 1
    events = [
        started, *episode_a, *failed_b, *episode_b,
        *straight_episode("c", EventKind.BUDGET_EXHAUSTED, [1, 2]),
        event(EventKind.RUN_FINISHED, message="3 of 3 episodes ran"),
    ]  # fmt: skip
    recorder = BagRecorder(path, TYPESTORE)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    recorder.add_topic(AGENTS_TOPIC, AGENT_INFO)
    recorder.add_topic(NODES_TOPIC, NODE_INFO)
    for index, e in enumerate(events):
        recorder.write(EVENTS_TOPIC, index * 1000, TYPESTORE.serialize_cdr(e, EVENT_TYPE))
        if index == 2:
            recorder.write(
                AGENTS_TOPIC, index * 1000 + 1, TYPESTORE.serialize_cdr(_agent_info(), AGENT_INFO)
            )
            recorder.write(
                NODES_TOPIC, index * 1000 + 2, TYPESTORE.serialize_cdr(_node_info(), NODE_INFO)
            )
    recorder.close()
    return events


def test_a_graph_bag_splits_into_one_complete_run_per_episode(tmp_path: Path) -> None:
    events = _graph_bag(tmp_path / "graph")
    whole = EpisodeAssembler(trace_builder)
    for e in events:
        whole.add(e)
    bags = {episode: tmp_path / episode / "bag" for episode in ("a", "b")}
    counts = split_bag(tmp_path / "graph", bags, TYPESTORE)
    assert set(counts) == {"a", "b"} and not (tmp_path / "c").exists()

    for episode, bag in bags.items():
        alone = assemble_bags([bag]).assembler
        assert alone.selection == [episode] and alone.finished
        assert [t.episode_id for t in alone.traces] == [episode]
        assert alone.excluded() == [] and alone.not_started() == []
        assert alone.agents["uav"].policy == "oracle"  # announced during a, needed by b too
        assert alone.nodes["/uav/uav_agent"].ros_distro == "humble"  # likewise
    together = assemble_bags([bags["a"], bags["b"]]).assembler
    assert together.traces == [t for t in whole.traces if t.episode_id in bags]
    kinds = [EventKind(e.kind) for e in read_events(bags["b"])]
    assert kinds.count(EventKind.STARTED) == 2  # both attempts of b, the failure superseded

    with pytest.raises(BagError, match="no STARTED event of d"):
        split_bag(tmp_path / "graph", {"d": tmp_path / "d" / "bag"}, TYPESTORE)


def _records(run_dir: Path, order: list[str]) -> None:
    _graph_bag(run_dir.parent / f"{run_dir.name}-graph")
    assembler = assemble_bags([run_dir.parent / f"{run_dir.name}-graph"]).assembler
    traces = {trace.episode_id: trace for trace in assembler.traces}
    agents = (AgentRecord(agent="uav", policy="oracle", privileged=True, description="x"),)
    nodes = tuple(assembler.nodes.values())
    for episode in order:
        record = EpisodeRecord(trace=traces[episode], agents=agents, graph="g", nodes=nodes)
        write_record(run_dir, record)


def test_records_merge_into_one_run_whatever_order_they_were_written_in(tmp_path: Path) -> None:
    selection = ["a", "b", "c", "d"]
    lost = {"c": ExcludedEpisode(episode_id="c", attempt=1, reason="its worker died")}
    results = []
    for name, order in (("first", ["a", "b"]), ("second", ["b", "a"])):
        _records(tmp_path / name, order)
        assert finished_episodes(tmp_path / name, selection) == ["a", "b"]
        records = read_records(tmp_path / name, selection)
        results.append(merged_result(records, selection, lost, None, finished=True))
    first, second = results
    assert first.metrics is not None and second.metrics is not None
    assert metrics_json_text(first.metrics) == metrics_json_text(second.metrics)
    assert first.status() == second.status()
    assert first.status()["scored"] == ["a", "b"]
    assert [entry.episode_id for entry in first.excluded] == ["c"]
    assert first.not_started == ("d",) and not first.complete
    assert [agent.policy for agent in first.agents] == ["oracle"]
    assert [(node.node, node.ros_distro) for node in first.nodes] == [("/uav/uav_agent", "humble")]


def test_an_episode_with_a_record_is_never_also_excluded(tmp_path: Path) -> None:
    _records(tmp_path / "run", ["a"])
    lost = {"a": ExcludedEpisode(episode_id="a", attempt=1, reason="a stale failure")}
    result = merged_result(read_records(tmp_path / "run", ["a"]), ["a"], lost, None, finished=True)
    assert result.complete and result.excluded == ()


def test_a_damaged_record_is_named(tmp_path: Path) -> None:
    _records(tmp_path / "run", ["a"])
    record = tmp_path / "run" / "episodes" / "a" / "episode.json"
    assert read_record(record).trace.episode_id == "a"
    record.write_text('{"format": "something else"}')
    with pytest.raises(ConfigError, match=f"{record}: not an episode record"):
        read_records(tmp_path / "run", ["a"])


def test_a_record_is_read_back_bit_for_bit_as_it_was_written(tmp_path: Path) -> None:
    # Doubles with every mantissa bit in use, from micrometres to kilometres, as their
    # shortest text: a parser rounding one differently would change a merge's metrics. A
    # long path, too: its file is larger than one read of it.
    rng = np.random.default_rng(7)
    scales = 10.0 ** rng.integers(-6, 4, size=(2000, 3))
    values = rng.standard_normal((2000, 3)) * scales
    _records(tmp_path / "run", ["a"])
    record = tmp_path / "run" / "episodes" / "a" / "episode.json"
    document = json.loads(record.read_text())
    document["trace"]["positions"] = values.tolist()
    document["trace"]["termination"] = "budget_exhausted"
    document["trace"]["stop_called"] = False
    document["trace"]["steps_used"] = len(values) - 1
    document["trace"]["action_budget"] = len(values)
    record.write_text(json.dumps(document))
    assert record.stat().st_size > _READ_SIZE
    (read,) = read_records(tmp_path / "run", ["a"])
    assert read.trace.position_array.tobytes() == values.tobytes()
    assert [list(point) for point in read.trace.path] == values.tolist()


def _varied_records(run_dir: Path, count: int) -> list[str]:
    """``count`` records over scenes, families, settings and conditions, ending every way."""
    agents = (AgentRecord(agent="uav", policy="colour_seeker", privileged=False, description=""),)
    ids = []
    for index in range(count):
        steps = 3 + index % 11
        collided = index % 5 == 0
        stopped = not collided and index % 3 != 0
        trace = EpisodeTrace(
            episode_id=f"e{index:04d}",
            benchmark="aerialdojo",
            scene=f"Scene{index % 7}",
            family=("urban", "natural", "disaster")[index % 7 % 3],
            setting=("base", "standard")[index % 2],
            split="test",
            positions=[(0.5 * s, 0.1 * (index % 4), 5.0 - 0.01 * s) for s in range(steps + 1)],
            stop_called=stopped,
            collided=collided,
            collision_step=steps if collided else None,
            steps_used=steps + stopped,
            action_budget=20,
            target=(0.5 * steps + index % 4, 1.0, 5.0),
            reference_length_m=0.4 * steps + 1.0,
            termination="collided" if collided else "stopped" if stopped else "budget_exhausted",
            conditions={"distribution": ("id", "ood")[index % 2], "goal": "semantic"},
        )
        write_record(run_dir, EpisodeRecord(trace=trace, agents=agents, graph=f"g{index // 20}"))
        ids.append(trace.episode_id)
    return ids


def test_reader_processes_merge_exactly_what_one_process_reads(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    selection = [*reversed(_varied_records(run_dir, 300)), "never-started"]
    alone = read_records(run_dir, selection, processes=1)
    shared = read_records(run_dir, selection, processes=2)  # 8 chunks, in episode id order
    assert [record.trace for record in shared] == [record.trace for record in alone]
    assert [record.graph for record in shared] == [record.graph for record in alone]
    assert not shared[0].trace.position_array.flags.writeable
    first, second = (merged_result(r, selection, {}, None, finished=True) for r in (alone, shared))
    assert first.metrics is not None and second.metrics is not None
    assert metrics_json_text(first.metrics) == metrics_json_text(second.metrics)
    assert first.status() == second.status()
    assert second.not_started == ("never-started",)

    damaged = run_dir / "episodes" / "e0123" / "episode.json"
    damaged.write_text("{")
    with pytest.raises(ConfigError, match=f"{damaged}: not a readable episode record"):
        read_records(run_dir, selection, processes=2)


def test_transcripts_of_scored_episodes_are_gathered_from_the_graph_that_scored_them(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    _records(run_dir, ["a", "b"])  # both records name graph "g"

    def transcript(graph: str, lines: list[dict[str, object]]) -> None:
        directory = run_dir / "graphs" / graph / "transcripts"
        (directory / "images").mkdir(parents=True)
        (directory / "images" / f"{graph}.png").write_bytes(b"png")
        (directory / "uav.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    session = {"type": "session", "model": "m"}
    transcript("lost", [session, {"type": "episode", "episode_id": "a", "attempt": 0}])
    transcript(
        "g",
        [
            session,
            {"type": "episode", "episode_id": "b", "attempt": 0},
            {"type": "episode", "episode_id": "a", "attempt": 0},
        ],
    )
    merged = merge_transcripts(run_dir, read_records(run_dir, ["a", "b", "c"]))
    assert merged == run_dir / "transcripts"
    lines = [json.loads(line) for line in (merged / "uav.jsonl").read_text().splitlines()]
    assert lines == [
        session,
        {"type": "episode", "episode_id": "a", "attempt": 0},
        {"type": "episode", "episode_id": "b", "attempt": 0},
    ]
    assert sorted(p.name for p in (merged / "images").iterdir()) == ["g.png", "lost.png"]
    assert merge_transcripts(tmp_path / "no_model_run", []) is None


def test_progress_off_a_terminal_is_a_line_per_ending_with_failures_rate_and_eta() -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=False, width=200)
    with RunProgress(console, total=10, finished_before=2, workers=2) as progress:
        progress.ending(EpisodeEnding(episode_id="a", ending="stopped", scored=True))
        progress.ending(
            EpisodeEnding(episode_id="b", ending="infrastructure failure", scored=False)
        )
        lost = ExcludedEpisode(episode_id="c", attempt=1, reason="its worker died")
        progress.job_lost(JobOutcome(graph="g", scored=(), excluded=(lost,)), "its worker died")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "aerialdojo eval: 10 episode(s) on 2 worker(s), 2 already finished"
    assert lines[1].startswith("[3/10] a: stopped; 0 failed, ") and "/min, ETA" in lines[1]
    assert lines[2].startswith("[3/10] b: infrastructure failure; 1 failed, ")
    assert lines[3].startswith("[3/10] graph g: its worker died; 2 failed, ")


def test_entries_written_where_read_are_the_scores_own(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    selection = _varied_records(run_dir, 300)
    for processes in (1, 2):
        records = read_records(run_dir, selection, processes=processes, radii=[2.0])
        merged = merged_result(records, selection, {}, [2.0], finished=True).metrics
        assert merged is not None and merged.episode_texts is not None
        from_scores = replace(merged, episode_texts=None)
        assert metrics_json_text(merged, {"agents": []}) == metrics_json_text(
            from_scores, {"agents": []}
        )
    # Read at other radii than the merge's: its entries are written from its own scores.
    other = merged_result(read_records(run_dir, selection), selection, {}, [2.0], finished=True)
    assert other.metrics is not None and other.metrics.episode_texts is None
    assert metrics_json_text(other.metrics) == metrics_json_text(merged)
