"""Idle cores counted from what the kernel says each core did over a short window, not from
the load average; the load average only where there is no per-core account."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aerialdojo import cores
from aerialdojo.cores import idle_cores
from aerialdojo.scale import records

# proc_stat(5): "cpuN user nice system idle iowait irq softirq steal guest guest_nice",
# in clock ticks since boot; the aggregate "cpu" line first.
_BEFORE = """cpu  300 0 100 900 20 0 0 0 0 0
cpu0 100 0 50 400 10 0 0 0 0 0
cpu1 100 0 25 300 10 0 0 0 0 0
cpu7 100 0 25 200 0 0 0 0 0 0
intr 1 2 3
"""
# Over the window: cpu0 busy for 15 ticks of 20 (4 idle, 1 iowait), cpu1 idle throughout
# but for a tick of steal (the hypervisor's, not this machine's to give), cpu7 (not ours)
# idle throughout; guest time is already in user and must not count twice.
_AFTER = """cpu  330 0 110 930 21 0 0 1 5 0
cpu0 110 0 55 404 11 0 0 0 5 0
cpu1 100 0 25 319 10 0 0 1 0 0
cpu7 100 0 25 220 0 0 0 0 0 0
intr 1 2 3
"""


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})


def test_idle_share_of_each_allowed_core_over_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    stat = tmp_path / "stat"
    stat.write_text(_BEFORE)
    windows = []

    def window_passes(seconds: float) -> None:  # the kernel counts on while the caller waits
        windows.append(seconds)
        stat.write_text(_AFTER)

    monkeypatch.setattr(cores.time, "sleep", window_passes)
    assert idle_cores(0.2, stat_path=str(stat)) == pytest.approx(5 / 20 + 19 / 20)
    assert windows == [0.2]


def test_without_per_core_times_the_load_average_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (0.6, 3.0, 3.0))
    assert idle_cores(stat_path=str(tmp_path / "missing")) == pytest.approx(1.4)
    unreadable = tmp_path / "garbled"
    unreadable.write_text("cpu0 a b c d\n")
    assert idle_cores(stat_path=str(unreadable)) == pytest.approx(1.4)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.7, 3.0, 3.0))
    assert idle_cores(stat_path=str(tmp_path / "missing")) == 0.0


def test_this_machine_reports_between_none_and_all_of_its_cores() -> None:
    assert 0.0 <= idle_cores(0.05) <= len(os.sched_getaffinity(0))


@pytest.mark.parametrize(("idle", "readers"), [(0.0, 1), (1.4, 1), (1.6, 2), (9.0, 2)])
def test_a_merge_starts_a_reader_per_idle_core(
    monkeypatch: pytest.MonkeyPatch, two_cores: None, idle: float, readers: int
) -> None:
    monkeypatch.setattr(records, "idle_cores", lambda: idle)
    assert records.reader_processes() == readers
