"""The real ``ros2 launch`` route (issue 15): ``eval.launch.py`` and ``agos.launch.py`` run to
the end with the metrics of ``aerialdojo eval``, byte for byte, and a Ctrl-C that reaches the
launch's whole process group (as a terminal's does; launch forwards a second SIGINT to each
node) still leaves a readable bag and a report. Launch is not on PyPI: Jazzy's vendored
sources (the wheels' distribution) are installed into a temporary directory
(``ros2_launch_route``), or the tests skip."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from ros2_launch_route import TARBALL, find_tarball, install
from rosbags.highlevel import AnyReader

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def launch_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tarball = find_tarball()
    if tarball is None:
        pytest.skip(
            f"no shared/vendor/{TARBALL} beside the checkout (or in $AERIALDOJO_VENDOR_DIR): "
            "the ros2 launch route cannot be installed here"
        )
    return install(tarball, tmp_path_factory.mktemp("ros2_launch"))


def _config(tmp_path: Path, name: str) -> Path:
    config = yaml.safe_load((REPO / "config" / name).read_text())
    if name == "eval.yaml":
        config["sim_bridge"]["ros__parameters"].update(image_width=96, image_height=96)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def _launch_command(
    config: Path, episodes: int, output: Path, run_id: str, *overrides: str
) -> list[str]:
    launch_file = "agos.launch.py" if config.name == "agos.yaml" else "eval.launch.py"
    return ["ros2", "launch", "aerialdojo", launch_file, f"config:={config}",
            f"episodes:={episodes}", f"output_dir:={output}", f"run_id:={run_id}",
            *(override.replace("=", ":=", 1) for override in overrides)]  # fmt: skip


#: Issue 16, item 7: the launch files take the CLI's section.key=value overrides as
#: section.key:=value arguments (AGOS through its include of eval.launch.py).
OVERRIDES = {
    "eval.yaml": ["evaluator.success_radii_m=[3,5,7]", "uav_agent.seed=2"],
    "agos.yaml": ["ugv_agent.seed=2"],
}


@pytest.mark.parametrize("config_name", ["eval.yaml", "agos.yaml"])
def test_ros2_launch_gives_the_metrics_of_aerialdojo_eval(
    launch_env: dict[str, str], tmp_path: Path, config_name: str
) -> None:
    config = _config(tmp_path, config_name)
    overrides = OVERRIDES[config_name]
    launched = subprocess.run(
        _launch_command(config, 1, tmp_path / "runs", "launched", *overrides),
        env=launch_env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert launched.returncode == 0, launched.stdout[-3000:] + launched.stderr[-3000:]
    evaluated = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(config),
         "--episodes", "1", "--output", str(tmp_path / "runs"), "--run-id", "evaluated",
         *overrides],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    runs = tmp_path / "runs"
    launched_metrics = (runs / "launched" / "metrics.json").read_bytes()
    assert launched_metrics == (runs / "evaluated" / "metrics.json").read_bytes()
    assert json.loads((runs / "launched" / "run_status.json").read_text())["complete"]
    if config_name == "eval.yaml":
        assert json.loads(launched_metrics)["radii_m"] == [3.0, 5.0, 7.0]
        refused = subprocess.run(
            _launch_command(config, 1, runs, "refused", "uav_agent.seed=-1"),
            env=launch_env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert refused.returncode != 0
        output = refused.stdout + refused.stderr
        assert "launch arguments: uav_agent.seed: -1 is below the minimum 0" in output
        assert not (runs / "refused").exists()
        # A run id taken by an earlier run is refused before any node starts: nothing of
        # that run is overwritten.
        recorded = {p: p.read_bytes() for p in (runs / "launched").rglob("*") if p.is_file()}
        again = subprocess.run(
            _launch_command(config, 1, runs, "launched"),
            env=launch_env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert again.returncode != 0
        assert "run_id:=launched: the run directory" in again.stdout + again.stderr
        assert {p: p.read_bytes() for p in (runs / "launched").rglob("*") if p.is_file()} == (
            recorded
        )


@contextmanager
def _launched(
    command: list[str], env: dict[str, str], output: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """``ros2 launch`` in a process group of its own, its output in ``output``; killed with
    its group if the block leaves it running."""
    with output.open("wb") as log:
        launch = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            yield launch
        finally:
            if launch.poll() is None:
                os.killpg(launch.pid, signal.SIGKILL)
                launch.wait()


def _wait_for_output(
    launch: subprocess.Popen[bytes], output: Path, marker: str, never: str, poll_s: float = 0.5
) -> None:
    """Wait until the launch has printed ``marker``; fail with ``never`` after 600 s, or with
    its output if it ends first."""
    deadline = time.monotonic() + 600
    while marker not in output.read_text(errors="replace"):
        assert launch.poll() is None, output.read_text(errors="replace")[-3000:]
        assert time.monotonic() < deadline, never
        time.sleep(poll_s)


def test_ctrl_c_to_the_launch_process_group_leaves_a_readable_bag_and_a_report(
    launch_env: dict[str, str], tmp_path: Path
) -> None:
    # Issue 15, row 13: the second SIGINT interrupted the evaluator inside the bag writer's
    # close(): a 43-byte bag.mcap, no metadata.yaml, no report.
    run_dir = tmp_path / "runs" / "interrupted"
    output = tmp_path / "launch.log"
    command = _launch_command(_config(tmp_path, "eval.yaml"), 3, tmp_path / "runs", run_dir.name)
    with _launched(command, launch_env, output) as launch:
        _wait_for_output(launch, output, "[1/3]", "the first episode never ended")
        os.killpg(launch.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        launch.wait(timeout=120)
    assert (run_dir / "bag" / "metadata.yaml").is_file(), output.read_text()[-3000:]
    with AnyReader([run_dir / "bag"]) as reader:
        assert any(c.topic == "/aerialdojo/episode_events" for c in reader.connections)
    status = json.loads((run_dir / "run_status.json").read_text())
    assert status["scored"] and not status["complete"]
    accounted = [*status["scored"], *(e["episode_id"] for e in status["excluded"])]
    assert sorted(accounted + status["not_started"]) == sorted(status["selected"])
    assert (run_dir / "report.md").is_file()


def _launched_node(run_dir: Path, node: str) -> int:
    """The pid of a node a launch started for ``run_dir`` (its environment names the run)."""
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"__node:={node}".encode() in command and (
            f"AERIALDOJO_RUN_DIR={run_dir}".encode() in environment
        ):
            return int(entry.name)
    raise AssertionError(f"no {node} process for {run_dir}")


def _killed_in_the_first_episode(launch_env: dict[str, str], tmp_path: Path, node: str) -> str:
    """Launch two episodes, SIGKILL ``node`` during the first (the agent held meanwhile if it is
    another node, so the episode cannot end first), and check that the launch still completed the
    run; its output."""
    run_dir = tmp_path / "runs" / node
    output = tmp_path / "launch.log"
    command = _launch_command(_config(tmp_path, "eval.yaml"), 2, tmp_path / "runs", run_dir.name)
    with _launched(command, launch_env, output) as launch:
        _wait_for_output(
            launch, output, "started (attempt 1)", "the first episode never started", poll_s=0.05
        )
        agent = _launched_node(run_dir, "uav_agent")
        victim = _launched_node(run_dir, node)
        if victim == agent:
            # A killed process may be reaped by the launch at once: no SIGCONT can follow.
            os.kill(victim, signal.SIGKILL)
        else:
            os.kill(agent, signal.SIGSTOP)
            try:
                os.kill(victim, signal.SIGKILL)
            finally:
                os.kill(agent, signal.SIGCONT)
        launch.wait(timeout=600)
    said = output.read_text(errors="replace")
    assert launch.returncode == 0, said[-3000:]
    status = json.loads((run_dir / "run_status.json").read_text())
    assert status["complete"] and sorted(status["scored"]) == sorted(status["selected"])
    return said


def test_a_killed_task_manager_is_started_again_and_the_launch_completes_the_run(
    launch_env: dict[str, str], tmp_path: Path
) -> None:
    # Issue 29, last aim, on the launch route: a dead task manager left the launch waiting for
    # a run nobody served. eval.launch.py starts it again as aerialdojo eval does.
    said = _killed_in_the_first_episode(launch_env, tmp_path, "task_manager")
    assert "the task manager was restarted during the episode" in said


def test_a_killed_agent_is_started_again_and_the_launch_reruns_its_attempt(
    launch_env: dict[str, str], tmp_path: Path
) -> None:
    # Issue 29: a dead agent left the launch's episodes to end by the agent timeout. Started
    # again as aerialdojo eval starts it, its lost attempt is rerun within the run.
    said = _killed_in_the_first_episode(launch_env, tmp_path, "uav_agent")
    assert "the uav agent was restarted during the episode" in said


#: A plug-in policy that raises on its first decision: the agent node exits with status 1.
RAISING_POLICY = """
class RaisesAtOnce:
    def reset(self, goal):
        pass

    def act(self, observation):
        raise RuntimeError("this policy fails on its first decision")
"""


def test_an_agent_that_fails_ends_the_launch_as_it_ends_aerialdojo_eval(
    launch_env: dict[str, str], tmp_path: Path
) -> None:
    # Only the evaluator's exit ended the launch: an agent whose policy raised (not restarted,
    # its failure is its own) left every later episode to the agent timeout, here an hour.
    (tmp_path / "raising_policy.py").write_text(RAISING_POLICY)
    env = {**launch_env, "PYTHONPATH": os.pathsep.join([str(tmp_path), launch_env["PYTHONPATH"]])}
    run_dir = tmp_path / "runs" / "failed"
    output = tmp_path / "launch.log"
    command = _launch_command(
        _config(tmp_path, "eval.yaml"), 3, tmp_path / "runs", run_dir.name,
        "uav_agent.policy=raising_policy:RaisesAtOnce", "task_manager.agent_timeout_s=3600.0",
    )  # fmt: skip
    with _launched(command, env, output) as launch:
        launch.wait(timeout=600)
    said = output.read_text(errors="replace")
    assert "node uav_agent exited with status 1" in said, said[-3000:]
    status = json.loads((run_dir / "run_status.json").read_text())
    # The episode under way is the agent's failure, scored; the others never started.
    assert not status["complete"] and status["excluded"] == []
    assert status["scored"] == status["selected"][:1]
    assert status["endings"] == {"agent_error": 1}
    assert sorted(status["not_started"]) == sorted(status["selected"][1:])
