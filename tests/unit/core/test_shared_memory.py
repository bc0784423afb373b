"""A run removes the shared-memory segments its dead processes left, and nothing else
(issue 15, row 5): the rule is Fast DDS's own, a segment whose ``_el`` lock no process holds
has no owner left."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from aerialdojo.runner import (
    remove_dead_segments,
    remove_segments_after,
    segment_owner_alive,
    shm_segments,
)


def _segment(directory: Path, name: str, *, age_s: float = 60.0) -> None:
    for path in (directory / name, directory / f"{name}_el"):
        path.write_bytes(b"")
        old = time.time() - age_s
        os.utime(path, (old, old))


def test_only_new_segments_without_a_live_owner_are_removed(tmp_path: Path) -> None:
    older, dead, alive, newborn = (f"fastdds_{n:016x}" for n in range(4))
    _segment(tmp_path, older)
    before = shm_segments(tmp_path)
    _segment(tmp_path, dead)
    _segment(tmp_path, alive)
    _segment(tmp_path, newborn, age_s=0.0)
    (tmp_path / "fastdds_port7411").write_bytes(b"")  # port files are meant to stay
    owner = os.open(tmp_path / f"{alive}_el", os.O_RDONLY)
    fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a live participant holds it
    try:
        assert not segment_owner_alive(dead, tmp_path)
        assert segment_owner_alive(alive, tmp_path) and segment_owner_alive(newborn, tmp_path)
        assert remove_dead_segments(before, tmp_path) == [dead]
    finally:
        os.close(owner)
    assert shm_segments(tmp_path) == {older, alive, newborn}
    assert not (tmp_path / f"{dead}_el").exists()
    assert (tmp_path / "fastdds_port7411").exists()


def test_the_cleaner_of_a_launch_waits_for_its_launcher_then_removes_the_dead(
    tmp_path: Path,
) -> None:
    # Issue 29, item 10: an interrupted ros2 launch left its dead nodes' segments behind.
    import subprocess
    import sys

    older, dead, alive = (f"fastdds_{n:016x}" for n in range(3))
    _segment(tmp_path, older)
    before = shm_segments(tmp_path)
    _segment(tmp_path, dead)
    _segment(tmp_path, alive)
    owner = os.open(tmp_path / f"{alive}_el", os.O_RDONLY)
    fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    launcher = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.0)"])
    try:
        started = time.monotonic()
        removed = remove_segments_after(
            launcher.pid, before, directory=tmp_path, poll_s=0.05, linger_s=0.5
        )
        assert launcher.poll() is not None  # it waited for the launcher to exit
        assert time.monotonic() - started >= 0.5  # and lingered for the live one
    finally:
        os.close(owner)
        launcher.wait()
    assert removed == [dead]
    assert shm_segments(tmp_path) == {older, alive}
