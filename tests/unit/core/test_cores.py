"""Free cores counted from what the kernel says each core did while the caller watched, not
from the load average; the load average only where there is no per-core account."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aerialdojo import cores
from aerialdojo.cores import free_cores
from aerialdojo.scale import records

# proc_stat(5): "cpuN user nice system idle iowait irq softirq steal guest guest_nice",
# in clock ticks since boot; the aggregate "cpu" line first.
_BEFORE = """cpu  300 0 100 900 20 0 0 0 0 0
cpu0 100 0 50 400 10 0 0 0 0 0
cpu1 100 0 25 300 10 0 0 0 0 0
cpu7 100 0 25 200 0 0 0 0 0 0
intr 1 2 3
"""
# Over one look: cpu0 busy for 15 ticks of 20 (4 idle, 1 iowait), as the kernel's write-back
# of files just written holds a core for a moment; cpu1 idle throughout but for a tick of
# steal (the hypervisor's, not this machine's to give), cpu7 (not ours) idle throughout;
# guest time is already in user and must not count twice.
_AFTER = """cpu  330 0 110 930 21 0 0 1 5 0
cpu0 110 0 55 404 11 0 0 0 5 0
cpu1 100 0 25 319 10 0 0 1 0 0
cpu7 100 0 25 220 0 0 0 0 0 0
intr 1 2 3
"""


# Another look on: cpu0 idle 19 ticks of 20 (its write-back over), cpu1 idle throughout.
_LATER = """cpu  331 0 110 970 21 0 0 1 5 0
cpu0 111 0 55 423 11 0 0 0 5 0
cpu1 100 0 25 339 10 0 0 1 0 0
cpu7 100 0 25 240 0 0 0 0 0 0
"""
# Or two more looks in which cpu0 stayed busy: 5 idle ticks of 40, then of 60, since the start.
_STILL_BUSY = [
    """cpu0 130 0 55 404 11 0 0 0 5 0
cpu1 100 0 25 339 10 0 0 1 0 0
""",
    """cpu0 150 0 55 404 11 0 0 0 5 0
cpu1 100 0 25 359 10 0 0 1 0 0
""",
]


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})


def _kernel_counting(
    monkeypatch: pytest.MonkeyPatch, stat: Path, looks: list[str], first: str = _BEFORE
) -> list[float]:
    """``stat`` holds ``first``, then each of ``looks`` after each sleep of the caller's (the
    kernel counts on while it waits); returns the sleeps."""
    stat.write_text(first)
    sleeps: list[float] = []

    def look_passes(seconds: float) -> None:
        sleeps.append(seconds)
        stat.write_text(looks[len(sleeps) - 1])

    monkeypatch.setattr(cores.time, "sleep", look_passes)
    return sleeps


def test_a_core_busy_for_a_moment_is_free_once_watched_longer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    stat = tmp_path / "stat"
    sleeps = _kernel_counting(monkeypatch, stat, [_AFTER, _LATER])
    # cpu0 idle 5 ticks of 20 in the first look (not free), 24 of 40 by the second (free).
    assert free_cores(0.2, stat_path=str(stat)) == 2
    assert sleeps == [0.2, 0.2]


def test_a_core_busy_on_is_not_free_and_the_watch_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    stat = tmp_path / "stat"
    sleeps = _kernel_counting(monkeypatch, stat, [_AFTER, *_STILL_BUSY])
    assert free_cores(0.2, windows=3, stat_path=str(stat)) == 1
    assert sleeps == [0.2, 0.2, 0.2]
    # One look only: the moment's work reads as a busy core.
    sleeps = _kernel_counting(monkeypatch, stat, [_AFTER])
    assert free_cores(0.2, windows=1, stat_path=str(stat)) == 1
    assert sleeps == [0.2]


def test_every_core_free_at_the_first_look_ends_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    stat = tmp_path / "stat"
    # From _AFTER on, cpu0 idle 19 ticks of 20, cpu1 all 20.
    sleeps = _kernel_counting(monkeypatch, stat, [_LATER], first=_AFTER)
    assert free_cores(0.2, stat_path=str(stat)) == 2
    assert sleeps == [0.2]


def test_without_per_core_times_the_load_average_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (0.6, 3.0, 3.0))
    assert free_cores(stat_path=str(tmp_path / "missing")) == 1
    unreadable = tmp_path / "garbled"
    unreadable.write_text("cpu0 a b c d\n")
    assert free_cores(stat_path=str(unreadable)) == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 3.0, 3.0))
    assert free_cores(stat_path=str(tmp_path / "missing")) == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (3.7, 3.0, 3.0))
    assert free_cores(stat_path=str(tmp_path / "missing")) == 0


def test_this_machine_reports_between_none_and_all_of_its_cores() -> None:
    assert 0 <= free_cores(0.05, windows=2) <= len(os.sched_getaffinity(0))


@pytest.mark.parametrize(("free", "readers"), [(0, 1), (1, 1), (2, 2)])
def test_a_merge_starts_a_reader_per_free_core(
    monkeypatch: pytest.MonkeyPatch, free: int, readers: int
) -> None:
    monkeypatch.setattr(records, "free_cores", lambda: free)
    assert records.reader_processes() == readers
