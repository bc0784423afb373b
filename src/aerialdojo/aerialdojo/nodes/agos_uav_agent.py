"""AGOS UAV agent node (namespace ``/uav``): searches from its nadir view and hands targets
to the UGV (AGOS-Bench, "Search" and "Handoff").

Subscribes to ``camera/down/*``, ``odom`` (map frame), the task, ``/agos/candidates`` and
``/agos/messages`` and ``/agos/turn``; calls ``/aerialdojo/step``. The task manager gives it
no turn while a candidate it proposed is being verified (it is frozen); its next turn means
the UGV rejected the candidate. Messages: the initial position exchange and an inspection
request naming each new candidate (information), and the message its policy sends with a
decision (in the Baseline mode the only coordination: a match's position as the UGV's search
anchor, AGOS-Bench, appendix A.4.2).

A separate executable rather than a role of ``uav_agent``: the AerialDojo node acts on four
odometry-relative views with magnitude actions and no teammate; this one on one map-frame
view with argument actions and the handoff topics, so a shared node would be two nodes in one.
"""

from __future__ import annotations

from aerialdojo_interfaces.msg import AgentMessage

from aerialdojo.agos.policies import CandidateView, Decision
from aerialdojo.agos.sensors import UAV_VIEW
from aerialdojo.agos.vocabulary import ANNOTATE_CANDIDATE, UAV, UGV
from aerialdojo.geometry import Pose
from aerialdojo.nodes.agent_node import spin_agent
from aerialdojo.nodes.agos_agent import AgosAgentNode
from aerialdojo.protocols.referee import StepRequest


class AgosUavAgent(AgosAgentNode):
    """Runs the UAV's ``AgosPolicy`` (``policy`` parameter) on the nadir view."""

    def __init__(self) -> None:
        super().__init__("agos_uav_agent", UAV, (UAV_VIEW,))
        self._annotations = 0
        self._outstanding: str | None = None
        self._requested: set[str] = set()
        self._greeted = False

    def start_episode(self) -> None:
        self._annotations = 0
        self._outstanding = None
        self._requested = set()
        self._greeted = False

    def expected_views(self) -> tuple[str, ...]:
        return (UAV_VIEW,)

    def deciding(self, decision: Decision, pose: Pose) -> None:
        if not self._greeted:
            self._greeted = True
            self.send(AgentMessage.INITIAL, f"UAV at ({pose.x:.1f}, {pose.y:.1f})", UGV)
        # The UAV gets no turn while its candidate is verified, and a CONFIRM ends the
        # episode: a candidate still outstanding now was rejected.
        self._outstanding = None

    def stepped(self, request: StepRequest, pose: Pose) -> None:
        if request.action == ANNOTATE_CANDIDATE:
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
    spin_agent(AgosUavAgent, args)


if __name__ == "__main__":
    main()
