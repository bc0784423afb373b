"""Whose decision comes next: a clock of simulated time per agent (AGOS-Bench, "Task
Description": the UAV and the UGV "simultaneously search", and "at each step t" each chooses
its next action).

The paper does not say how the two decision streams interleave; its worked cases report 36
UAV and 44 UGV decisions, and 20 UAV and 9 UGV, so neither strict alternation nor equal
shares. Here every decision occupies its agent for the simulated time its action takes (a
flight or a drive at the platform's speed, a fixed time for an action in place), and the
agent that is free first decides next, the UAV on a tie. The schedule depends only on the
decisions made, so a rerun makes the same decisions whatever the processes' speeds, while
each agent decides at its own pace: a UGV stepping 10 m along a road decides about twice as
often as a UAV flying 40 m between grid nodes, and a UGV driving a long route to a candidate
lets the UAV decide many times meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from aerialdojo.agos.vocabulary import UAV, UGV

#: Platform speeds (m/s) of the decision clock and of the mTSP expert; AGOS-Bench gives
#: none, so these are ours: a multirotor's cruise and a car's urban crawl.
UAV_SPEED_MPS = 10.0
UGV_SPEED_MPS = 6.0
#: Simulated time of a decision that moves nothing (WAIT, ANNOTATE_CANDIDATE,
#: NO_RELIABLE_CANDIDATE, STOP_OBSERVE, CONFIRM, REJECT), and the least any decision takes.
IN_PLACE_S = 2.0
_SPEEDS = {UAV: UAV_SPEED_MPS, UGV: UGV_SPEED_MPS}
#: Who decides on a tie.
_ORDER = (UAV, UGV)


def decision_seconds(agent: str, distance_m: float) -> float:
    """Simulated time a decision of ``agent`` that moved it ``distance_m`` takes (flight
    distance for the UAV, the driven route for the UGV; 0 for an action in place)."""
    return max(distance_m / _SPEEDS[agent], IN_PLACE_S)


@dataclass
class DecisionClock:
    """When each agent is free to decide again, in simulated seconds from the start.

    Attributes:
        free_at: agent -> the time its last decision's action ends.
    """

    free_at: dict[str, float] = field(default_factory=lambda: dict.fromkeys(_ORDER, 0.0))

    def next_agent(self, ready: Sequence[str]) -> str:
        """Of the agents that may decide, the one free first (the UAV on a tie).

        Raises:
            ValueError: no agent may decide.
        """
        if not ready:
            raise ValueError("no agent may decide")
        return min(ready, key=lambda agent: (self.free_at[agent], _ORDER.index(agent)))

    def advance(self, agent: str, seconds: float) -> None:
        """``agent`` made a decision whose action takes ``seconds``."""
        self.free_at[agent] += seconds

    def hold_until(self, agent: str, time_s: float) -> None:
        """``agent`` could not decide before ``time_s`` (the UAV frozen while the UGV
        verified a candidate)."""
        self.free_at[agent] = max(self.free_at[agent], time_s)
