"""AGOS UGV agent node (namespace ``/ugv``): explores the roads, approaches candidates and
verifies them from its six-view ring (AGOS-Bench, "Search" and "Verify").

Subscribes to ``camera/front/*`` and the six ``camera/ring_*/*`` views, ``odom`` (map frame),
the task, ``/agos/candidates``, ``/agos/messages`` and ``/agos/turn``; calls
``/aerialdojo/step``. The messages its policy sends with decisions go with its steps (in the
Baseline mode, which has no candidates, the verdict on the UAV's search anchor); the
protocol's notices (the initial exchange, arrival at a candidate, the confirmation signal)
are the task manager's.
"""

from __future__ import annotations

from aerialdojo.agos.sensors import RING_VIEWS, UGV_FRONT_VIEW
from aerialdojo.agos.vocabulary import STOP_OBSERVE, UGV
from aerialdojo.geometry import Pose
from aerialdojo.nodes.agent_node import spin_agent
from aerialdojo.nodes.agos_agent import AgosAgentNode
from aerialdojo.protocols.referee import StepRequest


class UgvAgent(AgosAgentNode):
    """Runs the UGV's ``AgosPolicy`` (``policy`` parameter) on the front view or, after
    STOP_OBSERVE, the ring."""

    def __init__(self) -> None:
        super().__init__("ugv_agent", UGV, (UGV_FRONT_VIEW, *RING_VIEWS))
        self._last_action = ""

    def start_episode(self) -> None:
        self._last_action = ""

    def expected_views(self) -> tuple[str, ...]:
        return tuple(RING_VIEWS) if self._last_action == STOP_OBSERVE else (UGV_FRONT_VIEW,)

    def stepped(self, request: StepRequest, pose: Pose) -> None:
        self._last_action = request.action


def main(args: list[str] | None = None) -> None:
    spin_agent(UgvAgent, args)


if __name__ == "__main__":
    main()
