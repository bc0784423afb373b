"""Whether a step belongs to the attempt under way: the attempt it was decided for, and the
agent process that decided it (issue 29).

Each ``Step`` names the episode and attempt its agent decided it for (``TaskSpec.attempt``).
An agent that was still deciding on an earlier attempt's observations (a slow model) when
the episode was rerun (after a restart of the bridge or of the task manager) must not have
that decision applied to the rerun: it is refused as stale, uses no budget and counts as
none of the agent's actions. A step that names no episode (a client started by hand,
``ros2 service call``) is the running attempt's.

Each step, and each node's announcement on ``/aerialdojo/nodes``, also names the agent's
process. An agent process started in place of one that died (``runner.RESTARTABLE``) has lost
its memory of the attempt under way, which then cannot go on as if nothing happened: the task
manager ends it as an infrastructure failure and reruns the episode.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


def attempt_name(attempt: int) -> str:
    """How logs, answers and reports name an attempt: counted from 1, as ``run_status.json``
    does, though messages carry it counted from 0 (``TaskSpec.attempt``, ``EpisodeEvent``)."""
    return f"attempt {attempt + 1}"


def stale_refusal(
    episode_id: str, attempt: int, running_episode_id: str, running_attempt: int
) -> str:
    """Why a step decided for ``attempt`` of ``episode_id`` does not belong to the running
    attempt, or "" when it does or names no episode (a client started by hand)."""
    if not episode_id or (episode_id, attempt) == (running_episode_id, running_attempt):
        return ""
    running = attempt_name(running_attempt)
    if episode_id != running_episode_id:
        running += f" of episode {running_episode_id}"
    return (
        f"stale: decided for {attempt_name(attempt)} of episode {episode_id}; {running} is running"
    )


def restarted_agent_message(agent: str, ended_process: str) -> str:
    """The reason an attempt whose agent was restarted during it is not scored."""
    return (
        f"the {agent} agent was restarted during the episode (its process {ended_process} "
        "ended); this attempt is not scored"
    )


@dataclass
class AgentProcesses:
    """The process acting for each agent of one attempt: the one announced when the attempt
    started, else the first the attempt heard from (a step, an announcement)."""

    _acting: dict[str, str] = field(default_factory=dict)

    @classmethod
    def at_start(cls, announced: Mapping[str, str], agents: Iterable[str]) -> AgentProcesses:
        """The processes ``announced`` for the attempt's ``agents`` when it starts."""
        return cls({agent: announced[agent] for agent in agents if agent in announced})

    def replaced(self, agent: str, process: str) -> str:
        """The process ``process`` replaced as ``agent``'s during the attempt, or "" when
        it is the acting one, the first heard of, or names none (a client started by hand)."""
        if not process:
            return ""
        acting = self._acting.setdefault(agent, process)
        return acting if acting != process else ""
