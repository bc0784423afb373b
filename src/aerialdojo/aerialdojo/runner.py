"""Starts the node graph as one process per node, without ROS 2's launch system.

This is what ``aerialdojo eval`` does where ``ros2 launch`` is not installed: the same node
specs as ``launch/eval.launch.py``, each node in its own process (they talk over DDS, not
in-process calls), logs per node, and an orderly shutdown when the evaluator has written its
report or when any node dies.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import yaml

from aerialdojo.dds import transport_environment
from aerialdojo.graph import NodeSpec, node_interpreter
from aerialdojo.nodes.lifetime import LAUNCHER_PID_ENV

#: The node whose exit means the run is over (it exits after writing the report).
FINISHING_NODE = "evaluator"


@dataclass
class NodeProcess:
    """A started node."""

    spec: NodeSpec
    process: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]


@dataclass(frozen=True)
class GraphOutcome:
    """How a run of the graph ended.

    Attributes:
        finished: the evaluator exited on its own with status 0.
        failed_node: the node that died first, if one did.
        exit_codes: node name -> exit status (None: had to be stopped).
        message: a one-line account for the user.
    """

    finished: bool
    failed_node: str | None
    exit_codes: dict[str, int | None]
    message: str


#: Domains ``run_domain_id`` picks from when the user chose none: within 0-101, the ids whose
#: ports stay clear of Linux's ephemeral port range (ROS 2 documentation, "The
#: ROS_DOMAIN_ID"), and above the 1-50 the test suite takes.
PRIVATE_DOMAINS = range(51, 102)


def run_domain_id(environ: Mapping[str, str]) -> str:
    """The DDS domain of a run: the user's ``ROS_DOMAIN_ID``, or a random private one.

    Nodes only meet within a domain, so two runs on one host (two users, a test next to a
    demo) must not share the default domain 0, where their task managers and bridges would
    answer each other's requests.
    """
    chosen = environ.get("ROS_DOMAIN_ID", "")
    return chosen if chosen else str(random.SystemRandom().choice(PRIVATE_DOMAINS))


def node_command(spec: NodeSpec, params_file: Path) -> list[str]:
    """The command line of one node process (what ``ros2 run`` would start), on the
    interpreter the node needs (``graph.node_interpreter``).

    Raises:
        ConfigError: a real-simulator bridge whose backend venv does not exist.
    """
    python = node_interpreter(spec) or Path(sys.executable)
    command = [str(python), "-m", f"aerialdojo.nodes.{spec.executable}", "--ros-args"]
    command += ["-r", f"__node:={spec.name}"]
    if spec.namespace:
        command += ["-r", f"__ns:=/{spec.namespace}"]
    return [*command, "--params-file", str(params_file)]


def write_params_file(spec: NodeSpec, directory: Path) -> Path:
    """A ROS 2 params file holding exactly ``spec.parameters`` for this node."""
    fully_qualified = f"/{spec.namespace}/{spec.name}" if spec.namespace else f"/{spec.name}"
    path = directory / f"{spec.name}.yaml"
    path.write_text(yaml.safe_dump({fully_qualified: {"ros__parameters": spec.parameters}}))
    return path


def start_graph(
    specs: Sequence[NodeSpec], run_dir: Path, env: Mapping[str, str] | None = None
) -> list[NodeProcess]:
    """Start every node with the shipped transport profile applied; logs go to
    ``run_dir/logs/<node>.log``, parameter files to ``run_dir/params``."""
    base_env = dict(os.environ if env is None else env)
    # The shipped DDS transport profile, unless the user chose other settings.
    child_env = {
        **base_env,
        **transport_environment(environ=base_env),
        LAUNCHER_PID_ENV: str(os.getpid()),
    }
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    (run_dir / "params").mkdir(parents=True, exist_ok=True)
    started = []
    for spec in specs:
        params_file = write_params_file(spec, run_dir / "params")
        log_path = run_dir / "logs" / f"{spec.name}.log"
        log_file = log_path.open("wb")
        process = subprocess.Popen(
            node_command(spec, params_file),
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=child_env,
            start_new_session=True,  # a Ctrl-C reaches the CLI, which stops nodes in order
        )
        started.append(NodeProcess(spec, process, log_path, log_file))
    return started


def wait_for_graph(
    nodes: Sequence[NodeProcess],
    timeout_s: float,
    on_tick: Callable[[], None] | None = None,
) -> GraphOutcome:
    """Wait until the evaluator exits, a node dies, or ``timeout_s`` passes; then stop the
    rest (SIGINT, then SIGTERM, then SIGKILL) and report how it ended."""
    deadline = time.monotonic() + timeout_s
    failed: str | None = None
    finished = False
    message = f"timed out after {timeout_s:g} s"
    while time.monotonic() < deadline:
        if on_tick is not None:
            on_tick()
        for node in nodes:
            code = node.process.poll()
            if code is None:
                continue
            if node.spec.name == FINISHING_NODE and code == 0:
                finished, message = True, "run finished"
            else:
                failed = node.spec.name
                message = f"node {failed} exited with status {code}; see {node.log_path}"
            break
        else:
            time.sleep(0.2)
            continue
        break
    stop_graph(nodes)
    return GraphOutcome(
        finished=finished,
        failed_node=failed,
        exit_codes={node.spec.name: node.process.returncode for node in nodes},
        message=message,
    )


def stop_graph(nodes: Sequence[NodeProcess], grace_s: float = 10.0) -> None:
    """Stop every still-running node, the evaluator last so it can close its bag."""
    ordered = sorted(nodes, key=lambda node: node.spec.name == FINISHING_NODE)
    for node in ordered:
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            if node.process.poll() is not None:
                break
            os.killpg(node.process.pid, sig)
            try:
                node.process.wait(wait_s)
            except subprocess.TimeoutExpired:
                continue
        node.log_file.close()


def log_tail(path: Path, lines: int = 20) -> str:
    """The last lines of a node's log, for error messages."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
