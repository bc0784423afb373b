"""What every benchmark's referee does with one requested action, ROS-free.

The task manager owns no rules: for each ``step`` request it asks the episode's referee to
``plan`` it (a refusal raises, uses no budget and goes back to the agent with the reason;
too many in a row end the episode as the agent's ``invalid_action``, ``RefusalCount``), has
the simulator execute the planned command when there is one, and hands the outcome to
``apply``, which accounts the action and returns the verdict: whether the episode goes on
or how it ended, why, and the ground-truth facts the evaluator scores with. One step path
serves every benchmark; each benchmark's rules live in its referee
(``protocols.aerialdojo.AerialDojoReferee``, ``agos.protocol.AgosReferee``) and are
unit-tested without ROS.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from aerialdojo.errors import InvalidActionError
from aerialdojo.events import EventKind
from aerialdojo.geometry import Pose


@dataclass(frozen=True, kw_only=True)
class StepRequest:
    """One action an agent asked for (the ``Step`` service request).

    Attributes:
        teammate_message: a short message to the other agent sent with this decision
            (AGOS); "" where none.
    """

    agent: str
    action: str
    magnitude: float = 0.0
    argument: str = ""
    teammate_message: str = ""


@dataclass(frozen=True, kw_only=True)
class SimCommand:
    """What the simulator bridge executes for a planned step (``SimExecute``)."""

    agent: str
    action: str
    magnitude: float = 0.0
    argument: str = ""


@dataclass(frozen=True, kw_only=True)
class PlannedStep:
    """A validated request and what, if anything, the simulator must execute for it.

    Attributes:
        request: the agent's request as it was accepted.
        command: the simulator's part; None where the action moves nothing (Stop).
    """

    request: StepRequest
    command: SimCommand | None


@dataclass(frozen=True, kw_only=True)
class SimOutcome:
    """What the simulator reported for an executed command.

    Attributes:
        pose: the commanded agent's ground-truth pose afterwards, map frame.
        collided: the motion touched geometry.
        collision_object: what was hit ("" if nothing).
        geofenced: the motion stopped at the edge of the simulated world.
    """

    pose: Pose
    collided: bool = False
    collision_object: str = ""
    geofenced: bool = False


class HandoffCandidate(Protocol):
    """A candidate region one agent hands to another (AGOS), as ``Candidate`` messages carry
    it."""

    candidate_id: str
    grid_cell: str
    polygon: tuple[tuple[float, float], ...]
    center: tuple[float, float, float]
    status: str


@dataclass(frozen=True, kw_only=True)
class TeammateMessage:
    """A message one agent sent another with a decision, as the referee delivers it.

    Attributes:
        sender, receiver: the agents.
        text: what it says.
        sequence: its 1-based number among the messages ``receiver`` was sent this episode.
    """

    sender: str
    receiver: str
    text: str
    sequence: int


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What one applied step did to the episode.

    Attributes:
        kind: ``EventKind.STEP`` while the episode goes on, else the ending
            (``STOPPED``, ``COLLIDED`` or ``BUDGET_EXHAUSTED``; the task manager adds the
            agent's ``INVALID_ACTION`` and ``AGENT_TIMEOUT``, which no applied step gives).
        reason: why it ended, or what limited a motion; "" otherwise.
        facts: ground-truth facts of this step for the evaluator (the event's
            ``episode_json``); None where the event's pose says all.
        collision_object: what was hit, where the step collided.
        candidate: a handoff candidate this step created or closed, to announce.
        message: a message the step carried to another agent, to deliver.
    """

    kind: EventKind
    reason: str = ""
    facts: dict[str, Any] | None = None
    collision_object: str = ""
    candidate: HandoffCandidate | None = None
    message: TeammateMessage | None = None

    @property
    def done(self) -> bool:
        """The step ended the episode."""
        return self.kind is not EventKind.STEP


@dataclass(frozen=True, kw_only=True)
class Turn:
    """Whose decision comes next in a turn-taking episode, and what it must have seen first.

    Attributes:
        agent: who decides.
        candidate_id: the candidate under verification ("" none).
        decision: the 1-based number of the decision among the episode's.
        budget: decisions allowed.
        messages: messages ``agent`` has been sent with decisions so far this episode.
    """

    agent: str
    candidate_id: str
    decision: int
    budget: int
    messages: int = 0

    @property
    def text(self) -> str:
        """How the turn announcement says which decision of the budget comes next."""
        return f"decision {self.decision} of {self.budget}"


def parse_turn_text(text: str) -> int:
    """The decision number a turn announcement (``Turn.text``) names; 0 if none."""
    match = re.fullmatch(r"decision (\d+) of \d+", text.strip())
    return int(match.group(1)) if match else 0


class Referee(Protocol):
    """The rules of one running episode.

    Attributes:
        starts: map-frame start pose of each agent, in the order the simulator places them.
        scored_pose: the pose of the agent whose path is scored (AerialDojo: the UAV; AGOS:
            the UGV), after the last applied step.
        steps_used: actions (decisions) accounted so far.
        steps_left: actions left in the budget.
    """

    @property
    def starts(self) -> dict[str, Pose]: ...

    @property
    def scored_pose(self) -> Pose: ...

    @property
    def steps_used(self) -> int: ...

    @property
    def steps_left(self) -> int: ...

    def start_record(self) -> dict[str, Any]:
        """The ground-truth record of the STARTED event: what the evaluator scores with."""
        ...

    def plan(self, request: StepRequest) -> PlannedStep:
        """Validate ``request``.

        Raises:
            InvalidActionError: not legal now; the message says why. No budget is used.
        """
        ...

    def apply(self, planned: PlannedStep, outcome: SimOutcome | None) -> Verdict:
        """Account an accepted step; ``outcome`` is None when ``planned.command`` was."""
        ...

    def turn(self) -> Turn | None:
        """The next turn where agents take turns; None where they do not."""
        ...


#: Refused steps in a row an agent may follow with another request before the next refusal
#: ends its episode (``task_manager.refusals_allowed``): as many as the model agents' repair
#: turns (``vlm_repair_turns``).
REFUSALS_ALLOWED = 2


@dataclass
class RefusalCount:
    """The referee's refusals of each agent's steps in a row, in one attempt.

    A refused step goes back to the agent with the reason and uses no budget; an agent may
    ask again ``allowed`` times in a row; the refusal after those ends the episode as the
    agent's decision failure (``EventKind.INVALID_ACTION``, scored, never an infrastructure
    failure: issue 25). An accepted step starts the count again.

    Args:
        allowed: refusals in a row an agent may follow with another request.
    """

    allowed: int = REFUSALS_ALLOWED
    _in_a_row: dict[str, int] = field(default_factory=dict)

    def refused(self, agent: str) -> bool:
        """Count a refusal of ``agent``'s step; True when it ends the episode."""
        count = self._in_a_row.get(agent, 0) + 1
        self._in_a_row[agent] = count
        return count > self.allowed

    def accepted(self, agent: str) -> None:
        """``agent``'s step was accepted."""
        self._in_a_row.pop(agent, None)

    def in_a_row(self, agent: str) -> int:
        """Refusals of ``agent``'s steps since its last accepted one."""
        return self._in_a_row.get(agent, 0)


def refuse_message(request: StepRequest) -> None:
    """Raise ``InvalidActionError`` if a single-agent benchmark's step carries a message."""
    if request.teammate_message:
        raise InvalidActionError("this benchmark has one agent: a step carries no message")


def check_agent(episode_id: str, agents: Sequence[str], agent: str) -> None:
    """Raise ``InvalidActionError`` unless ``agent`` takes part in the episode."""
    if agent not in agents:
        raise InvalidActionError(
            f"agent {agent!r} is not in episode {episode_id} (agents: {', '.join(agents)})"
        )
