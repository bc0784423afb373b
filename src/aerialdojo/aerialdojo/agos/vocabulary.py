"""Names the AGOS referee, simulator and nodes share: agents, actions, ablations and candidate
states (AGOS-Bench, appendix A.1, A.4, A.5). Light on purpose: every node process imports it."""

from __future__ import annotations

from aerialdojo.errors import InvalidActionError

UAV = "uav"
UGV = "ugv"

MOVE_TO_UAV_WAYPOINT = "MOVE_TO_UAV_WAYPOINT"
ANNOTATE_CANDIDATE = "ANNOTATE_CANDIDATE"
NO_RELIABLE_CANDIDATE = "NO_RELIABLE_CANDIDATE"
WAIT = "WAIT"
MOVE_TO_ROAD_WAYPOINT = "MOVE_TO_ROAD_WAYPOINT"
GO_TO_CANDIDATE = "GO_TO_CANDIDATE"
STOP_OBSERVE = "STOP_OBSERVE"
CONFIRM = "CONFIRM"
REJECT = "REJECT"

UAV_ACTIONS = (MOVE_TO_UAV_WAYPOINT, ANNOTATE_CANDIDATE, NO_RELIABLE_CANDIDATE, WAIT)
UGV_ACTIONS = (MOVE_TO_ROAD_WAYPOINT, GO_TO_CANDIDATE, STOP_OBSERVE, CONFIRM, REJECT, WAIT)
#: Actions whose Step.argument names something (waypoint, grid cell, candidate).
ARGUMENT_ACTIONS = (
    MOVE_TO_UAV_WAYPOINT,
    ANNOTATE_CANDIDATE,
    MOVE_TO_ROAD_WAYPOINT,
    GO_TO_CANDIDATE,
)

#: AGOS-Agent's tools an agent decides with: the UAV's candidate annotation (E2A turns it into a
#: ground region) and the UGV's candidate navigation (RGPP). The Baseline of AGOS-Bench
#: (appendix A.4.2) has neither and coordinates by messages only.
TOOL_ACTIONS = (ANNOTATE_CANDIDATE, GO_TO_CANDIDATE)

#: ``AgentMessage.kind`` values by index (INITIAL=0 .. FREE_TEXT=4), as ROS-free names.
MESSAGE_KINDS = ("initial", "inspection_request", "arrival", "confirmation", "free_text")

#: The 2x2 ablation of AGOS-Bench, appendix A.5: E2A projection and RGPP planning on or off.
ABLATIONS = ("full", "no_e2a", "no_rgpp", "no_both")

STATUS_ACTIVE = "active"
STATUS_CONFIRMED = "confirmed"
STATUS_REJECTED = "rejected"


def uses_e2a(ablation: str) -> bool:
    """Whether ``ablation`` keeps the ego-to-allocentric projection."""
    return ablation in ("full", "no_rgpp")


def uses_rgpp(ablation: str) -> bool:
    """Whether ``ablation`` keeps road-graph path planning (GO_TO_CANDIDATE)."""
    return ablation in ("full", "no_e2a")


def action_set(agent: str, ablation: str = "full") -> tuple[str, ...]:
    """The legal actions of ``agent`` under ``ablation`` (no_rgpp removes GO_TO_CANDIDATE).

    Raises:
        InvalidActionError: an unknown agent or ablation.
    """
    if ablation not in ABLATIONS:
        raise InvalidActionError(f"ablation {ablation!r} is not one of {', '.join(ABLATIONS)}")
    if agent == UAV:
        return UAV_ACTIONS
    if agent == UGV:
        return tuple(a for a in UGV_ACTIONS if a != GO_TO_CANDIDATE or uses_rgpp(ablation))
    raise InvalidActionError(f"agent {agent!r} is not one of {UAV}, {UGV}")
