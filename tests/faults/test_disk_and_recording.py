"""A run's disk fills, or its evaluator stalls (issue 29, items 3 and 7), with the real
processes of ``aerialdojo eval``.

The full disk is a 5 MB tmpfs mounted in a private mount namespace (``unshare``: an
unprivileged user namespace where the test is not root), so nothing outside the test sees
it; the run, its rerun and a second rerun all run inside that namespace, and what they
left is copied out for the checks."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, **evaluator: object) -> Path:
    config = yaml.safe_load((REPO / "config" / "eval.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=200, image_height=200)
    config["evaluator"]["ros__parameters"].update(evaluator)
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _private_mounts(where: Path) -> list[str]:
    """The unshare command that gives a private mount namespace, or skip the test."""
    command = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        command[1:1] = ["--user", "--map-root-user"]
    where.mkdir()
    probe = subprocess.run(
        [*command, "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs {where}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace with a tmpfs here: {probe.stderr.strip()}")
    return command


def test_a_run_on_a_5_mb_tmpfs_ends_with_its_records_and_rerun_completes_it(
    tmp_path: Path,
) -> None:
    # Before: the evaluator and the CLI died with tracebacks, no run_status.json was
    # written (so rerun refused), and the plots had been written but never metrics.json.
    unshare = _private_mounts(tmp_path / "probe")
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    cli = shlex.join([sys.executable, "-m", "aerialdojo.cli"])
    script = f"""
        mount -t tmpfs -o size=5m tmpfs {disk}
        {cli} eval --config {_config(tmp_path, image_decimation=1)} --episodes 3 \\
            --output {disk} --run-id full > {out}/eval.txt 2>&1
        echo $? > {out}/eval.code
        cp {disk}/full/run_status.json {out}/status.json
        df -k {disk} > {out}/df.txt
        mount -o remount,size=100m {disk}  # the user makes room
        {cli} rerun {disk}/full > {out}/rerun.txt 2>&1
        echo $? > {out}/rerun.code
        {cli} rerun {disk}/full > {out}/again.txt 2>&1
        echo $? > {out}/again.code
        cp -r {disk}/full {disk}/full-rerun {out}/
    """
    subprocess.run([*unshare, "sh", "-c", script], check=True, timeout=900)
    said = (out / "eval.txt").read_text()
    assert (out / "eval.code").read_text().strip() == "3", said[-3000:]  # incomplete
    assert "could not be written: No space left on device; recording stopped" in said
    assert "Traceback" not in said
    status = json.loads((out / "status.json").read_text())
    assert not status["complete"] and status["excluded"], status
    accounted = [*status["scored"], *(e["episode_id"] for e in status["excluded"])]
    assert sorted(accounted + status["not_started"]) == sorted(status["selected"])
    assert any("No space left on device" in e["reason"] for e in status["excluded"])
    if status["scored"]:  # what ended before the disk filled is scored and kept
        metrics = json.loads((out / "full" / "metrics.json").read_text())
        assert sorted(e["episode_id"] for e in metrics["episodes"]) == sorted(status["scored"])
    assert (out / "rerun.code").read_text().strip() == "0", (out / "rerun.txt").read_text()
    combined = json.loads((out / "full-rerun" / "combined" / "run_status.json").read_text())
    assert combined["complete"] and sorted(combined["scored"]) == sorted(status["selected"])
    assert (out / "again.code").read_text().strip() == "0"
    assert "nothing to rerun" in (out / "again.txt").read_text()


def test_a_stalled_evaluator_says_per_topic_what_its_bag_lost(tmp_path: Path) -> None:
    # Before: a 30 s stall thinned the bag (356 of 1,209 messages, 23 of 273 poses) and the
    # run still said it was complete, without a word.
    run_dir = tmp_path / "runs" / "stalled"
    config = _config(tmp_path)
    cli = subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(config),
         "--episodes", "2", "--output", str(tmp_path / "runs"), "--run-id", "stalled"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        log = run_dir / "logs" / "task_manager.log"
        deadline = time.monotonic() + 600
        while not (log.exists() and "started (attempt 1)" in log.read_text(errors="replace")):
            assert cli.poll() is None and time.monotonic() < deadline
            time.sleep(0.3)
        evaluator = _pid_of(run_dir / "params" / "evaluator.yaml")
        os.kill(evaluator, signal.SIGSTOP)
        time.sleep(25.0)  # past Fast DDS's 20 s participant lease: its matches are dropped
        os.kill(evaluator, signal.SIGCONT)
        stderr = cli.communicate(timeout=600)[1]
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)
            cli.wait()
    assert cli.returncode == 0, stderr[-3000:]
    notes = (run_dir / "run_notes.md").read_text()
    for topic in ("/uav/odom", "/sim/ground_truth/uav/pose", "/tf"):
        assert f"message(s) of {topic}: they never reached the evaluator" in notes, notes
    # The episodes themselves were scored from events that all arrived, and the bag scores
    # the same.
    replay = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "evaluate-bag", str(run_dir / "bag"),
         "--out", str(tmp_path / "replay")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()


def _pid_of(params: Path) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if str(params) in command:
                return int(entry.name)
    raise AssertionError(f"no process runs with {params}")
