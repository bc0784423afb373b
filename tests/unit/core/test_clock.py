"""The bridge's published clock never repeats or goes back, whatever the backend's does."""

from __future__ import annotations

import pytest

from aerialdojo.errors import SimulatorFaultError
from aerialdojo.sim.clock import BridgeClock


def test_follows_the_backend_and_continues_past_a_restarted_clock() -> None:
    clock = BridgeClock(step_s=1.0)
    assert [clock.stamp(t, reset=r) for t, r in [(5.0, True), (6.0, False), (7.0, False)]] == [
        5.0,
        6.0,
        7.0,
    ]
    # The backend restarts its clock on reset (real simulators do): published time goes on.
    assert clock.stamp(0.0, reset=True) == 8.0
    assert clock.stamp(1.0, reset=False) == 9.0
    # A backend whose clock kept running needs no offset.
    assert clock.stamp(20.0, reset=True) == 28.0


def test_a_clock_that_goes_back_mid_episode_is_a_simulator_fault() -> None:
    clock = BridgeClock(step_s=1.0)
    clock.stamp(5.0, reset=True)
    with pytest.raises(SimulatorFaultError, match=r"went back from 5\.000 s to 5\.000 s"):
        clock.stamp(5.0, reset=False)


def test_a_restarted_bridge_continues_the_runs_clock() -> None:
    # Issue 15, row 2: a dead bridge is restarted; its first stamp must come after every stamp
    # the run has seen, or agents take the retried task for one they already had.
    restarted = BridgeClock(step_s=1.0)
    assert restarted.stamp(0.0, reset=True, after_s=41.0) == 42.0
    assert restarted.stamp(1.0, reset=False) == 43.0


def test_no_stamp_is_zero() -> None:
    # Stamp 0 is ROS's "no time". And a bridge killed before the first step of a run had
    # published only stamp 0: restarted, it repeated it, and the agent ignored the retried
    # task as one it already had (an attempt lost to the agent timeout).
    first = BridgeClock(step_s=1.0).stamp(0.0, reset=True)
    assert first == 1.0
    assert BridgeClock(step_s=1.0).stamp(0.0, reset=True, after_s=first) == 2.0
