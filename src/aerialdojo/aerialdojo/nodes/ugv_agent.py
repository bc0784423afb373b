"""AGOS UGV agent node (namespace ``/ugv``): explores the roads, approaches candidates and
verifies them from its six-view ring (AGOS-Bench, "Search" and "Verify").

Subscribes to ``camera/front/*`` and the six ``camera/ring_*/*`` views, ``odom`` (map frame),
the task, ``/agos/candidates``, ``/agos/messages`` and ``/agos/turn``; calls
``/aerialdojo/step``. Messages: the initial position exchange, an arrival message after
reaching a candidate and the confirmation signal after each CONFIRM or REJECT of one
(information), and the message its policy sends with a decision (in the Baseline mode, which
has no candidates, the verdict on the UAV's search anchor).
"""

from __future__ import annotations

from aerialdojo_interfaces.msg import AgentMessage

from aerialdojo.agos.policies import Decision
from aerialdojo.agos.sensors import RING_VIEWS, UGV_FRONT_VIEW
from aerialdojo.agos.vocabulary import (
    CONFIRM,
    GO_TO_CANDIDATE,
    MODE_BASELINE,
    REJECT,
    STOP_OBSERVE,
    UAV,
    UGV,
)
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
        self._deciding_for = ""
        self._greeted = False

    def start_episode(self) -> None:
        self._last_action = ""
        self._greeted = False

    def expected_views(self) -> tuple[str, ...]:
        return tuple(RING_VIEWS) if self._last_action == STOP_OBSERVE else (UGV_FRONT_VIEW,)

    def deciding(self, decision: Decision, pose: Pose) -> None:
        if not self._greeted:
            self._greeted = True
            self.send(AgentMessage.INITIAL, f"UGV at ({pose.x:.1f}, {pose.y:.1f})", UAV)
        active = self.active_candidate()
        # The candidate this decision is about; it may be closed before the answer arrives.
        self._deciding_for = active.candidate_id if active is not None else ""

    def stepped(self, decision: StepRequest, pose: Pose) -> None:
        self._last_action = decision.action
        candidate_id = self._deciding_for
        if decision.action == GO_TO_CANDIDATE:
            self.send(
                AgentMessage.ARRIVAL,
                f"arrived near {decision.argument}; stopping to observe",
                UAV,
                decision.argument,
            )
        elif decision.action in (CONFIRM, REJECT) and self.mode != MODE_BASELINE:
            verdict = "confirmed" if decision.action == CONFIRM else "rejected"
            self.send(
                AgentMessage.CONFIRMATION,
                f"{verdict} {candidate_id or 'the vehicle here'} at ({pose.x:.1f}, {pose.y:.1f})",
                UAV,
                candidate_id,
            )


def main(args: list[str] | None = None) -> None:
    spin_agent(UgvAgent, args)


if __name__ == "__main__":
    main()
