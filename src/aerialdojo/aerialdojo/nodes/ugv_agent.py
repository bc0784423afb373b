"""AGOS UGV agent node (namespace ``/ugv``): explores the roads, approaches candidates and
verifies them from its six-view ring (AGOS-Bench, "Search" and "Verify").

Subscribes to ``camera/front/*`` and the six ``camera/ring_*/*`` views, ``odom`` (map frame),
the task, ``/agos/candidates``, ``/agos/messages`` and ``/agos/turn``; calls
``/aerialdojo/step``. Messages:
the initial position exchange, an arrival message after reaching a candidate, and the
confirmation signal after each CONFIRM or REJECT. In the Baseline mode there are no
candidates: the newest place the UAV's messages name is its search anchor, approached by
road waypoints, and the verdict on it goes back with the CONFIRM or REJECT decision.
"""

from __future__ import annotations

import math

import rclpy
from aerialdojo_interfaces.msg import AgentMessage
from rclpy.executors import ExternalShutdownException

from aerialdojo.agents.observation import ViewData
from aerialdojo.agos.policies import (
    REJECTED_RADIUS_M,
    CandidateView,
    TargetSignature,
    UgvVerifyPolicy,
    confirmation_message,
    message_point,
    rejection_message,
)
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
from aerialdojo.nodes.agos_agent import AgosAgentNode
from aerialdojo.nodes.common import param
from aerialdojo.nodes.lifetime import exit_with_launcher
from aerialdojo.protocols.referee import StepRequest

#: The ``policy`` parameter's choices.
_POLICIES = {"colour_shape": UgvVerifyPolicy}


class UgvAgent(AgosAgentNode):
    """Runs ``UgvVerifyPolicy`` on the front view or, after STOP_OBSERVE, the ring."""

    def __init__(self) -> None:
        super().__init__("ugv_agent", UGV, (UGV_FRONT_VIEW, *RING_VIEWS))
        self._policy: UgvVerifyPolicy | None = None
        self._last_action = ""
        self._deciding_for = ""
        self._greeted = False
        self._rejected: list[tuple[float, float]] = []

    def start_episode(self, signature: TargetSignature) -> None:
        assert self.town is not None and self.region is not None
        self._policy = _POLICIES[param(self, "policy")](
            self.town, self.region, signature, self.actions, seed=self.seed
        )
        self._last_action = ""
        self._greeted = False
        self._rejected = []

    def expected_views(self) -> tuple[str, ...]:
        return tuple(RING_VIEWS) if self._last_action == STOP_OBSERVE else (UGV_FRONT_VIEW,)

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        assert self._policy is not None
        if not self._greeted:
            self._greeted = True
            self.send(AgentMessage.INITIAL, f"UGV at ({pose.x:.1f}, {pose.y:.1f})", UAV)
        baseline = self.mode == MODE_BASELINE
        active = self._search_anchor() if baseline else self.active_candidate()
        # The candidate this decision is about; it may be closed before the answer arrives.
        self._deciding_for = active.candidate_id if active is not None else ""
        decision = self._policy.act(pose, views, active)
        message = ""
        if baseline and decision.action == CONFIRM:
            message = confirmation_message(pose)
        elif baseline and decision.action == REJECT and active is not None:
            self._rejected.append(active.center)
            message = rejection_message(active.center)
        return StepRequest(
            agent=self.agent,
            action=decision.action,
            argument=decision.argument,
            teammate_message=message,
        )

    def _search_anchor(self) -> CandidateView | None:
        """Baseline: the place the UAV's newest message names, unless it was rejected."""
        point = message_point(self.inbox[-1]) if self.inbox else None
        if point is None or any(
            math.dist(point, place) <= REJECTED_RADIUS_M for place in self._rejected
        ):
            return None
        return CandidateView(f"anchor ({point[0]:.1f}, {point[1]:.1f})", point, active=True)

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
    exit_with_launcher()
    try:
        with rclpy.init(args=args):
            rclpy.spin(UgvAgent())
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
