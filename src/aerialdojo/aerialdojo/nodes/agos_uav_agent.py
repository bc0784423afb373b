"""AGOS UAV agent node (namespace ``/uav``): searches from its nadir view and hands targets
to the UGV (AGOS-Bench, "Search" and "Handoff").

Subscribes to ``camera/down/*``, ``odom`` (map frame), the task, ``/agos/candidates`` and
``/agos/messages`` and ``/agos/turn``; calls ``/aerialdojo/step``. The task manager gives it
no turn while a candidate it proposed is being verified (it is frozen); its next turn means
the UGV rejected the candidate. Messages: the initial position exchange, and an inspection
request naming each new candidate. In the Baseline mode it has no candidates: it waits over
a match and sends its position with that decision, and learns of a rejection from the
UGV's messages.

A separate executable rather than a role of ``uav_agent``: the AerialDojo node acts on four
odometry-relative views with magnitude actions and no teammate; this one on one map-frame
view with argument actions and the handoff topics, so a shared node would be two nodes in one.
"""

from __future__ import annotations

import rclpy
from aerialdojo_interfaces.msg import AgentMessage
from rclpy.executors import ExternalShutdownException

from aerialdojo.agents.observation import ViewData
from aerialdojo.agos.policies import (
    CandidateView,
    TargetSignature,
    UavSearchPolicy,
    is_rejection,
)
from aerialdojo.agos.sensors import UAV_VIEW
from aerialdojo.agos.vocabulary import ANNOTATE_CANDIDATE, MODE_BASELINE, UAV, UGV
from aerialdojo.geometry import Pose
from aerialdojo.nodes.agos_agent import AgosAgentNode
from aerialdojo.nodes.common import param
from aerialdojo.nodes.lifetime import exit_with_launcher
from aerialdojo.protocols.referee import StepRequest

#: The ``policy`` parameter's choices.
_POLICIES = {"colour_shape": UavSearchPolicy}


class AgosUavAgent(AgosAgentNode):
    """Runs ``UavSearchPolicy`` on the nadir view."""

    def __init__(self) -> None:
        super().__init__("agos_uav_agent", UAV, (UAV_VIEW,))
        self._policy: UavSearchPolicy | None = None
        self._annotations = 0
        self._outstanding: str | None = None
        self._requested: set[str] = set()
        self._greeted = False
        self._read = 0

    def start_episode(self, signature: TargetSignature) -> None:
        assert self.town is not None and self.region is not None
        policy = _POLICIES[param(self, "policy")]
        self._policy = policy(
            self.town,
            self.region,
            signature,
            seed=self.seed,
            mode=self.mode,
            annotation_budget=self.limits.get(ANNOTATE_CANDIDATE, 0),
        )
        self._annotations = 0
        self._outstanding = None
        self._requested = set()
        self._greeted = False
        self._read = 0

    def expected_views(self) -> tuple[str, ...]:
        return (UAV_VIEW,)

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        assert self._policy is not None
        if not self._greeted:
            self._greeted = True
            self.send(AgentMessage.INITIAL, f"UAV at ({pose.x:.1f}, {pose.y:.1f})", UGV)
        if self.mode == MODE_BASELINE:
            # The UGV's messages say whether the anchor the UAV sent was rejected.
            if any(is_rejection(text) for text in self.inbox[self._read :]):
                self._policy.candidate_rejected()
            self._read = len(self.inbox)
        elif self._outstanding is not None:
            # The UAV gets no turn while its candidate is verified, and a CONFIRM ends the
            # episode: this candidate was rejected.
            self._policy.candidate_rejected()
            self._outstanding = None
        decision = self._policy.act(pose, views[UAV_VIEW])
        return StepRequest(
            agent=self.agent,
            action=decision.action,
            argument=decision.argument,
            teammate_message=decision.message,
        )

    def stepped(self, decision: StepRequest, pose: Pose) -> None:
        if decision.action == ANNOTATE_CANDIDATE:
            # The task manager numbers candidates in proposal order: C001, C002, ...
            self._annotations += 1
            self._outstanding = f"C{self._annotations:03d}"
            self._request(self._outstanding)

    def candidate_changed(self, candidate: CandidateView) -> None:
        if candidate.candidate_id == self._outstanding:
            self._request(candidate.candidate_id)

    def _request(self, candidate_id: str) -> None:
        """The inspection request, once the candidate's projected centre is known."""
        candidate = self.candidates.get(candidate_id)
        if candidate is None or not candidate.active or candidate_id in self._requested:
            return
        self._requested.add(candidate_id)
        x, y = candidate.center
        self.send(
            AgentMessage.INSPECTION_REQUEST,
            f"suspected target at ({x:.1f}, {y:.1f}); please verify {candidate_id}",
            UGV,
            candidate_id,
        )


def main(args: list[str] | None = None) -> None:
    exit_with_launcher()
    try:
        with rclpy.init(args=args):
            rclpy.spin(AgosUavAgent())
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
