"""One run per ROS domain: a second ``aerialdojo eval`` in the domain of a running one refuses
to start, names the running one and the ways out, and leaves it to finish with the metrics it
has alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from aerialdojo.run_contract import EXIT_USAGE

pytestmark = [pytest.mark.ros, pytest.mark.e2e]


@pytest.fixture
def shared_domain() -> str:
    """The test session's own domain (tests/conftest.py), exported to both runs as a user
    would export one."""
    return os.environ["ROS_DOMAIN_ID"]


def _config(repo: Path, tmp_path: Path) -> Path:
    config = yaml.safe_load((repo / "config" / "oracle.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=48, image_height=48)
    path = tmp_path / "oracle.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _eval_command(config: Path, output: Path, run_id: str) -> list[str]:
    return [
        sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(config),
        "--episodes", "2", "--output", str(output), "--run-id", run_id,
    ]  # fmt: skip


def test_a_second_run_in_the_domain_refuses_and_the_first_scores_as_alone(
    repo: Path, tmp_path: Path, shared_domain: str
) -> None:
    config = _config(repo, tmp_path)
    env = {**os.environ, "ROS_DOMAIN_ID": shared_domain}
    lone = subprocess.run(
        _eval_command(config, tmp_path, "lone"), env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert lone.returncode == 0, lone.stderr[-3000:]

    first_dir = tmp_path / "first"
    with subprocess.Popen(
        _eval_command(config, tmp_path, "first"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as first:
        # The first run is held in its first episode (its agent stopped) while the second
        # starts: the refusal must not depend on how fast the first's few episodes run.
        task_manager_log = first_dir / "logs" / "task_manager.log"
        deadline = time.monotonic() + 120
        while "episode 1/2" not in _text(task_manager_log):
            assert first.poll() is None, first.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the first run's first episode never started"
            time.sleep(0.1)
        agent = _process_of(first_dir / "params" / "uav_agent.yaml")
        os.kill(agent, signal.SIGSTOP)
        try:
            second = subprocess.run(
                _eval_command(config, tmp_path, "second"), env=env, capture_output=True,
                text=True, timeout=60, check=False,
            )  # fmt: skip
        finally:
            os.kill(agent, signal.SIGCONT)
        _stdout, stderr = first.communicate(timeout=600)
    assert second.returncode == EXIT_USAGE, second.stderr[-3000:]
    assert f"ROS_DOMAIN_ID={shared_domain} is in use by another aerialdojo run" in second.stderr
    assert f"run {first_dir}" in second.stderr  # the first run, named by its directory
    assert "another domain" in second.stderr and "wait until that run ends" in second.stderr
    assert not (tmp_path / "second").exists()  # nothing of the refused run is left

    assert first.returncode == 0, stderr[-3000:]
    lone_metrics = json.loads((tmp_path / "lone" / "metrics.json").read_text())
    assert json.loads((first_dir / "metrics.json").read_text()) == lone_metrics
    assert len(lone_metrics["episodes"]) == 2


def _process_of(marker: Path) -> int:
    """The pid of the live process whose command line names ``marker``."""
    for process in Path("/proc").glob("[0-9]*"):
        try:
            if str(marker) in (process / "cmdline").read_text(errors="replace"):
                return int(process.name)
        except OSError:  # ended meanwhile
            continue
    raise AssertionError(f"no process runs with {marker}")


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
