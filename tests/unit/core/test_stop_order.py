"""How the runner stops a graph (issue 16, item 6: ``--timeout 8`` returned after 19.8 s):
clients before the servers they wait on, the evaluator last, each on SIGINT."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from aerialdojo.graph import NodeSpec
from aerialdojo.runner import NodeProcess, stop_graph

# A stand-in node: ready once it has installed its handler; on SIGINT it notes its name and
# exits; ``stubborn`` ignores SIGINT as a node blocked on a dead server's reply does.
NODE = """
import pathlib, signal, sys, time
name, record, stubborn = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3] == "1"
def stop(*_):
    with record.open("a") as out:
        out.write(name + "\\n")
    if not stubborn:
        sys.exit(0)
signal.signal(signal.SIGINT, stop)
(record.parent / (name + ".ready")).touch()
while True:
    time.sleep(0.05)
"""


def _start(tmp_path: Path, names: list[str], stubborn: str = "") -> list[NodeProcess]:
    nodes = []
    for name in names:
        command = [
            sys.executable,
            "-c",
            NODE,
            name,
            str(tmp_path / "order"),
            str(int(name == stubborn)),
        ]
        log_path = tmp_path / f"{name}.log"
        log_file = log_path.open("wb")
        process = subprocess.Popen(command, stdout=log_file, start_new_session=True)
        spec = NodeSpec(executable=name, name=name, namespace="", parameters={})
        nodes.append(NodeProcess(spec, process, log_path, log_file, command, {}))
    while not all((tmp_path / f"{name}.ready").exists() for name in names):
        time.sleep(0.05)
    return nodes


START_ORDER = ["sim_bridge", "task_manager", "evaluator", "uav_agent"]


def test_nodes_stop_in_reverse_start_order_with_the_evaluator_last(tmp_path: Path) -> None:
    nodes = _start(tmp_path, START_ORDER)
    assert stop_graph(nodes, grace_s=10.0) == []
    stopped = (tmp_path / "order").read_text().split()
    assert stopped == ["uav_agent", "task_manager", "sim_bridge", "evaluator"]


def test_a_node_that_ignores_sigint_is_named(tmp_path: Path) -> None:
    nodes = _start(tmp_path, START_ORDER, stubborn="task_manager")
    assert stop_graph(nodes, grace_s=0.5) == ["task_manager"]
    assert all(node.process.poll() is not None for node in nodes)
