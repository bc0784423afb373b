"""Names the AGOS referee, simulator and nodes share: agents, actions, modes, ablations,
budgets and candidate states (AGOS-Bench, appendix A.1, A.4, A.5). Light on purpose: every
node process imports it."""

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

#: AGOS-Bench, Table 3: AGOS-Agent's structured search-handoff-verify protocol, or the
#: Baseline, which has "no candidate annotation tool, no grid-to-ground candidate conversion,
#: no dedicated candidate navigation action" and coordinates "through short natural-language
#: messages" (appendix A.4.2).
MODE_AGENT = "agent"
MODE_BASELINE = "baseline"
MODES = (MODE_AGENT, MODE_BASELINE)
#: The 2x2 ablation of AGOS-Bench, appendix A.5: E2A projection and RGPP planning on or off.
ABLATIONS = ("full", "no_e2a", "no_rgpp", "no_both")
#: What episodes of the Baseline record as their ablation: it has no tools to ablate.
NO_TOOLS = "none"
#: The Baseline's actions: moves, waiting (with a message) and the two-step verification
#: (appendix A.4.2 forbids candidate annotations and GO_TO_CANDIDATE).
BASELINE_UAV_ACTIONS = (MOVE_TO_UAV_WAYPOINT, WAIT)
BASELINE_UGV_ACTIONS = (MOVE_TO_ROAD_WAYPOINT, STOP_OBSERVE, CONFIRM, REJECT, WAIT)
#: The UAV's annotation budget A ("annotations used a/A", appendix A.4.3) and the UGV's
#: confirmation budget ("remaining confirmation budget", A.4.1). The paper gives neither
#: size; one confirmation makes "a false CONFIRM terminates the episode as failure" hold.
ANNOTATION_BUDGET = 5
CONFIRMATION_BUDGET = 1
#: The longest message a decision may carry ("short natural-language messages", A.4.2).
MESSAGE_MAX_CHARS = 280

STATUS_ACTIVE = "active"
STATUS_CONFIRMED = "confirmed"
STATUS_REJECTED = "rejected"


def uses_e2a(ablation: str) -> bool:
    """Whether ``ablation`` keeps the ego-to-allocentric projection."""
    return ablation in ("full", "no_rgpp")


def uses_rgpp(ablation: str) -> bool:
    """Whether ``ablation`` keeps road-graph path planning (GO_TO_CANDIDATE)."""
    return ablation in ("full", "no_e2a")


def settings_problems(mode: str, ablation: str) -> list[str]:
    """What is wrong with a mode and ablation: an unknown one, or an ablation of the
    Baseline, which has no tools to remove."""
    problems = []
    if mode not in MODES:
        problems.append(f"mode {mode!r} is not one of {', '.join(MODES)}")
    if ablation not in ABLATIONS:
        problems.append(f"ablation {ablation!r} is not one of {', '.join(ABLATIONS)}")
    elif mode == MODE_BASELINE and ablation != "full":
        problems.append(
            f"ablation {ablation!r} removes AGOS-Agent tools; the baseline mode has none "
            "(use mode agent, or ablation full)"
        )
    return problems


def action_set(agent: str, ablation: str = "full", mode: str = MODE_AGENT) -> tuple[str, ...]:
    """The legal actions of ``agent`` under ``mode`` and ``ablation`` (no_rgpp removes
    GO_TO_CANDIDATE; the Baseline has neither candidates nor their actions).

    Raises:
        InvalidActionError: an unknown agent, mode or ablation, or an ablated Baseline.
    """
    problems = settings_problems(mode, ablation)
    if problems:
        raise InvalidActionError("; ".join(problems))
    if agent not in (UAV, UGV):
        raise InvalidActionError(f"agent {agent!r} is not one of {UAV}, {UGV}")
    if mode == MODE_BASELINE:
        return BASELINE_UAV_ACTIONS if agent == UAV else BASELINE_UGV_ACTIONS
    if agent == UAV:
        return UAV_ACTIONS
    return tuple(a for a in UGV_ACTIONS if a != GO_TO_CANDIDATE or uses_rgpp(ablation))
