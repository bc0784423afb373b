"""Starts the node graph as one process per node, without ROS 2's launch system.

This is what ``aerialdojo eval`` does where ``ros2 launch`` is not installed: the same node
specs as ``launch/eval.launch.py``, each node in its own process (they talk over DDS, not
in-process calls), logs per node, and an orderly shutdown when the evaluator has written its
report or when any node dies; a bridge that dies is started again (the task manager reruns
the episode it was in), and so is a task manager that was stopped or killed (the new one
resumes the run from its journal) or an agent (the task manager reruns the attempt it lost);
whatever ends the run, the shared memory of its dead processes is removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import yaml

from aerialdojo.dds import run_environment
from aerialdojo.errors import ConfigError, DomainTakenError
from aerialdojo.graph import ACTING_NODES, NodeSpec, discovery_of, node_interpreter
from aerialdojo.nodes.lifetime import LAUNCHER_PID_ENV
from aerialdojo.runtime import RUN_DIR_ENV, RunSighting, domain_taken_message

#: The node whose exit means the run is over (it exits after writing the report).
FINISHING_NODE = "evaluator"


@dataclass(frozen=True)
class Restarts:
    """How a node is started again when it dies during the run.

    Attributes:
        limit: how often per run.
        after_error: also when it exited with an error status of its own (> 0); otherwise
            only when a signal ended it, killed outright or stopped (rclpy turns SIGINT and
            SIGTERM into an orderly exit with status 0, and nothing else ends the node with 0
            during the run).
    """

    limit: int
    after_error: bool

    def allows(self, exit_code: int, restarts: int) -> bool:
        """Whether a node that exited with ``exit_code``, started again ``restarts`` times
        so far, is started again."""
        return restarts < self.limit and (self.after_error or exit_code <= 0)


#: Nodes started again when they die. The bridge holds no state the run needs (the task
#: manager resets it for every attempt and reruns the episode it lost). The task manager's
#: state is in its journal (``run_journal``), which the new one resumes from; one that
#: refused to start (bad input, a journal not its run's, a domain taken: status 1) would
#: refuse again, and is not started again. An agent killed or stopped by a signal loses its
#: memory of the attempt under way, which the task manager then ends as an infrastructure
#: failure and reruns (``step_origin``); an agent that exits with an error of its own (its
#: policy raised, a view it lacks) failed by itself, would fail again, and ends the run.
RESTARTABLE = {
    "sim_bridge": Restarts(limit=3, after_error=True),
    "task_manager": Restarts(limit=3, after_error=False),
    **{node: Restarts(limit=3, after_error=False) for node in ACTING_NODES},
}


@dataclass
class NodeProcess:
    """A started node.

    Attributes:
        spec: what it runs.
        process: its current process (a restart replaces it).
        log_path: its log; a restarted node appends to it.
        log_file: the open log.
        command: its command line.
        env: its environment.
        restarts: how often it was started again.
    """

    spec: NodeSpec
    process: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]
    command: list[str]
    env: dict[str, str]
    restarts: int = 0

    def restart(self) -> None:
        """Start the node again with the same command and environment."""
        self.restarts += 1
        self.log_file.write(
            f"\n[aerialdojo] restart {self.restarts} of {self.spec.name}\n".encode()
        )
        self.log_file.flush()
        self.process = _popen(self.command, self.log_file, self.env)


@dataclass(frozen=True)
class GraphOutcome:
    """How a run of the graph ended.

    Attributes:
        finished: the evaluator exited on its own with status 0.
        failed_node: the node that died first, if one did.
        exit_codes: node name -> exit status (None: had to be stopped).
        message: a one-line account for the user.
        forced: nodes that ignored SIGINT for the grace period and were terminated or killed.
    """

    finished: bool
    failed_node: str | None
    exit_codes: dict[str, int | None]
    message: str
    forced: tuple[str, ...] = ()


#: Domains a run claims when the user chose none: within 0-101, the ids whose ports stay
#: clear of Linux's ephemeral port range (ROS 2 documentation, "The ROS_DOMAIN_ID"), and above
#: the 1-50 the test suite takes.
PRIVATE_DOMAINS = range(51, 102)

#: Where graphs on one host take their domains: an exclusive lock on ``<domain>.lock`` for
#: the graph's life (the kernel drops it when its process dies).
DOMAIN_LOCKS = Path(tempfile.gettempdir()) / "aerialdojo-domains"


@contextmanager
def claimed_domain(locks: Path = DOMAIN_LOCKS, run_dir: Path | None = None) -> Iterator[int]:
    """A ``ROS_DOMAIN_ID`` of ``PRIVATE_DOMAINS`` that no other graph on this host holds,
    held until the block ends. Every user's runs share ``locks``, as they share /tmp.

    Raises:
        ConfigError: every private domain is taken, or ``locks`` admits no new lock.
    """
    make_shared_directory(locks)
    domains = list(PRIVATE_DOMAINS)
    random.SystemRandom().shuffle(domains)  # two runs starting together rarely collide
    for domain in domains:
        descriptor = _locked(locks, domain)
        if descriptor is None:
            continue
        try:
            _write_holder(locks, domain, run_dir)
            yield domain
        finally:
            os.close(descriptor)
        return
    raise ConfigError(
        f"every private ROS domain ({PRIVATE_DOMAINS.start}-{PRIVATE_DOMAINS.stop - 1}) is "
        f"taken on {socket.gethostname()}: fewer runs or workers per host"
    )


@contextmanager
def held_domain(
    domain: str, locks: Path = DOMAIN_LOCKS, run_dir: Path | None = None
) -> Iterator[str]:
    """The domain the user chose, held against every other run on this host for the block.

    Raises:
        DomainTakenError: another run on this host holds it (named, with the ways out).
        ConfigError: ``locks`` admits no new lock.
    """
    make_shared_directory(locks)
    descriptor = _locked(locks, domain)
    if descriptor is None:
        raise DomainTakenError(domain_taken_message(domain, [_holder(locks, domain)]))
    try:
        _write_holder(locks, domain, run_dir)
        yield domain
    finally:
        os.close(descriptor)


def _locked(locks: Path, domain: int | str) -> int | None:
    """A descriptor holding the exclusive lock of ``domain``, or None where another process
    holds it (or another user's lock file cannot be opened).

    Raises:
        ConfigError: no lock file can be made in ``locks``.
    """
    lock = locks / f"{domain}.lock"
    try:
        # Read-only is enough for flock, and opens another user's lock file too.
        descriptor = os.open(lock, os.O_RDONLY | os.O_CREAT, 0o644)
    except PermissionError as error:
        if lock.exists():
            return None  # another user's, unreadable: taken as far as this run can tell
        raise ConfigError(
            f"cannot claim a ROS domain: no lock can be made in {locks} "
            f"({error.strerror}); set ROS_DOMAIN_ID to choose one"
        ) from error
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def _write_holder(locks: Path, domain: int | str, run_dir: Path | None) -> None:
    """Say which run holds ``domain`` beside its lock, for a run refused it to name."""
    holder = {"run_dir": str(run_dir or ""), "host": socket.gethostname(), "pid": os.getpid()}
    path = locks / f"{domain}.holder.json"
    with contextlib.suppress(OSError):  # another user's file: the refusal names less
        path.unlink(missing_ok=True)
        path.write_text(json.dumps(holder), encoding="utf-8")


def _holder(locks: Path, domain: int | str) -> RunSighting:
    """The run that holds ``domain``, as far as its holder file says."""
    try:
        holder = json.loads((locks / f"{domain}.holder.json").read_text(encoding="utf-8"))
        return RunSighting(str(holder["run_dir"]), str(holder["host"]), int(holder["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return RunSighting()


def make_shared_directory(path: Path) -> None:
    """Create ``path`` as /tmp is made: every user may add files, none remove another's."""
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        return
    path.chmod(0o1777)  # after mkdir: the umask would strip the bits mkdir was given


@contextmanager
def run_domain(
    environ: Mapping[str, str], locks: Path = DOMAIN_LOCKS, run_dir: Path | None = None
) -> Iterator[str]:
    """The DDS domain of a run, for the block: the user's ``ROS_DOMAIN_ID``, or a private one
    claimed from every other run and worker on the host; either is held against every other
    run on the host, and its holder file names ``run_dir``.

    Nodes only meet within a domain, so two runs on one host (two users, a test next to a
    demo) must not share one, where their task managers and bridges would answer each other's
    requests.

    Raises:
        DomainTakenError: another run on this host holds the domain the user chose.
    """
    chosen = environ.get("ROS_DOMAIN_ID", "")
    if chosen:
        with held_domain(chosen, locks, run_dir):
            yield chosen
        return
    with claimed_domain(locks, run_dir) as domain:
        yield str(domain)


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
    specs: Sequence[NodeSpec],
    run_dir: Path,
    env: Mapping[str, str] | None = None,
    *,
    append_logs: bool = False,
) -> list[NodeProcess]:
    """Start every node with the shipped transport profile of the run's discovery setting
    applied (``dds.run_environment``), its run directory named; logs go to
    ``run_dir/logs/<node>.log`` (after what they hold with ``append_logs``: a node started
    again for a kept graph's next batch), parameter files to ``run_dir/params``."""
    base_env = dict(os.environ if env is None else env)
    # The shipped DDS transport profile the run's discovery setting names, unless the user
    # chose other settings.
    child_env = {
        **base_env,
        **run_environment(discovery_of(specs), environ=base_env),
        LAUNCHER_PID_ENV: str(os.getpid()),
        RUN_DIR_ENV: str(run_dir),
    }
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    (run_dir / "params").mkdir(parents=True, exist_ok=True)
    started = []
    for spec in specs:
        params_file = write_params_file(spec, run_dir / "params")
        log_path = run_dir / "logs" / f"{spec.name}.log"
        log_file = log_path.open("ab" if append_logs else "wb")
        if append_logs:
            log_file.write(f"\n[aerialdojo] {spec.name} started for the next batch\n".encode())
            log_file.flush()
        command = node_command(spec, params_file)
        process = _popen(command, log_file, child_env)
        started.append(NodeProcess(spec, process, log_path, log_file, command, child_env))
    return started


def _popen(command: list[str], log_file: IO[bytes], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,  # a Ctrl-C reaches the CLI, which stops nodes in order
    )


def wait_for_graph(
    nodes: Sequence[NodeProcess],
    timeout_s: float,
    on_tick: Callable[[], None] | None = None,
    keep: Collection[str] = (),
) -> GraphOutcome:
    """Wait until the evaluator exits, a node dies, or ``timeout_s`` passes; then stop the
    rest (SIGINT, then SIGTERM, then SIGKILL) and report how it ended; the nodes named in
    ``keep`` are left running when the evaluator finished (a graph kept for another batch).
    A node of ``RESTARTABLE`` that dies is started again while it has restarts left."""
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
            elif (restarts := RESTARTABLE.get(node.spec.name)) is not None and restarts.allows(
                code, node.restarts
            ):
                node.restart()
                continue
            else:
                failed = node.spec.name
                message = f"node {failed} exited with status {code}; see {node.log_path}"
            break
        else:
            time.sleep(0.2)
            continue
        break
    forced = stop_graph([node for node in nodes if not finished or node.spec.name not in keep])
    return GraphOutcome(
        finished=finished,
        failed_node=failed,
        exit_codes={node.spec.name: node.process.returncode for node in nodes},
        message=message,
        forced=tuple(forced),
    )


def stop_graph(nodes: Sequence[NodeProcess], grace_s: float = 10.0) -> list[str]:
    """Stop every still-running node in the reverse of their start order (agents before the
    task manager that serves them, before the bridge it waits on), the evaluator last so it
    can close its bag. A server stopped before its clients leaves a client's request waiting
    for its timeout, past the grace period (issue 16: ``--timeout 8`` took 20 s).

    Returns:
        The nodes that ignored SIGINT for ``grace_s`` and had to be terminated or killed.
    """
    backwards = list(reversed(nodes))
    ordered = [node for node in backwards if node.spec.name != FINISHING_NODE] + [
        node for node in backwards if node.spec.name == FINISHING_NODE
    ]
    forced: list[str] = []
    for node in ordered:
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            if node.process.poll() is not None:
                break
            if sig != signal.SIGINT and node.spec.name not in forced:
                forced.append(node.spec.name)
            os.killpg(node.process.pid, sig)
            try:
                node.process.wait(wait_s)
            except subprocess.TimeoutExpired:
                continue
        node.log_file.close()
    return forced


#: A Fast DDS shared-memory segment (``fastdds_`` from Fast DDS 3 on, ``fastrtps_`` before);
#: ``<segment>_el`` is the lock its owner holds while alive.
_SEGMENT = re.compile(r"^fast(?:dds|rtps)_[0-9a-f]{16}$")
SHM_DIR = Path("/dev/shm")
_NEWBORN_S = 2.0


def shm_segments(directory: Path = SHM_DIR) -> set[str]:
    """Names of the Fast DDS shared-memory segments in ``directory``."""
    if not directory.is_dir():
        return set()
    return {path.name for path in directory.iterdir() if _SEGMENT.match(path.name)}


def segment_owner_alive(name: str, directory: Path = SHM_DIR) -> bool:
    """Whether a live process holds the Fast DDS segment ``name``: Fast DDS holds an
    exclusive ``flock`` on ``<segment>_el`` for the life of its owner
    (``RobustExclusiveLock`` in its SHM transport). True where that cannot be told (no lock
    file, a lock file younger than ``_NEWBORN_S``: its owner may be about to take it)."""
    lock_path = directory / f"{name}_el"
    try:
        if time.time() - lock_path.stat().st_mtime < _NEWBORN_S:
            return True
        descriptor = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return False
    finally:
        os.close(descriptor)


def remove_dead_segments(before: set[str], directory: Path = SHM_DIR) -> list[str]:
    """Remove the Fast DDS segments created since ``before`` whose owner has died.

    A participant killed outright never removes its segment (64 MB with the shipped transport
    profile), and RAM-backed ``/dev/shm`` keeps it until reboot. Segments older than the run
    (other users') are left alone, and so is every segment a live process holds.

    Returns:
        The names removed.
    """
    removed = []
    for name in sorted(shm_segments(directory) - before):
        if segment_owner_alive(name, directory):
            continue
        for path in (directory / name, directory / f"{name}_el"):
            path.unlink(missing_ok=True)
        removed.append(name)
    return removed


#: How long the cleaner of a launch keeps looking once its launcher is gone: nodes outlive
#: their launcher while they stop (the evaluator writes its report), and a segment is removed
#: only once its owner is dead.
CLEANER_LINGER_S = 600.0


def start_segment_cleaner(before: set[str]) -> None:
    """Remove, once this process (a ``ros2 launch``) has exited and its nodes with it, the
    Fast DDS segments of dead processes created since ``before``: ``aerialdojo eval``'s
    clean-up (``remove_dead_segments``) for the launch route, where no process of ours
    outlives the nodes. The cleaner is its own session, so a Ctrl-C to the launch's
    process group does not reach it."""
    cleaner = subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.runner", "--remove-segments-after", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert cleaner.stdin is not None
    cleaner.stdin.write("".join(f"{name}\n" for name in sorted(before)).encode())
    cleaner.stdin.close()


def remove_segments_after(
    launcher_pid: int,
    before: set[str],
    *,
    directory: Path = SHM_DIR,
    poll_s: float = 0.5,
    linger_s: float = CLEANER_LINGER_S,
) -> list[str]:
    """Wait until ``launcher_pid`` has exited, then remove the dead Fast DDS segments created
    since ``before`` until every such segment is gone or ``linger_s`` has passed.

    Returns:
        The names removed.
    """
    while _running(launcher_pid):
        time.sleep(poll_s)
    removed: list[str] = []
    deadline = time.monotonic() + linger_s
    while True:
        removed += remove_dead_segments(before, directory)
        if not shm_segments(directory) - before or time.monotonic() > deadline:
            return removed
        time.sleep(poll_s)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie awaiting its parent's
    wait has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"  # the state follows the command name


def log_tail(path: Path, lines: int = 20) -> str:
    """The last lines of a node's log, for error messages."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


if __name__ == "__main__":
    # The cleaner of start_segment_cleaner: the launcher's pid as argument, the segments that
    # existed before its nodes on stdin.
    if sys.argv[1:2] == ["--remove-segments-after"] and len(sys.argv) == 3:
        remove_segments_after(int(sys.argv[2]), set(sys.stdin.read().split()))
