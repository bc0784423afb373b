"""The oracle: replays each episode's reference actions, then stops.

It exists to prove the harness, not to be an agent: it reads ground truth (the suite's
reference trajectories), so every run it takes part in is marked privileged in its report.
Through the whole graph it must reach every target: SR 100 %, SPL 1 and no collision on a
suite whose references are valid (``tests/e2e``), which shows that actions, kinematics,
collision checks, events, bags and scoring agree end to end.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from aerialdojo.actions import STOP, Action
from aerialdojo.agents.observation import AgentObservation, GoalDescription
from aerialdojo.errors import ConfigError

if TYPE_CHECKING:
    from aerialdojo.protocols.task import SuiteLike


class ReferenceReplayPolicy:
    """Replays the reference actions of the episode it is given, then Stop.

    Any benchmark's suite whose episodes carry a ``reference`` with ``actions`` will do
    (AerialDojo, CityNav); the policy registry loads it (``agents.plugins.reference_replay``).

    Args:
        suite: the loaded suite holding the episodes' references.
        name: how the suite was named (shipped name or path), for the report and errors.

    Raises:
        ConfigError: a suite without reference actions (a site surveyed without a
            free-space map: docs/sites.md).
    """

    #: The policy reads ground truth: reports mark its runs.
    privileged = True

    def __init__(self, suite: SuiteLike, name: str) -> None:
        self.suite = suite
        unplanned = [
            episode_id
            for episode_id in self.suite.select("all")
            if not self.suite.episode(episode_id).reference.actions
        ]
        if unplanned:
            raise ConfigError(
                f"oracle: suite {name}: {len(unplanned)} episode(s) have no reference actions "
                f"(e.g. {unplanned[0]}: a site surveyed without a free-space map); there is "
                "nothing to replay"
            )
        #: What the run's report says the policy read.
        self.description = f"reference actions of {name}"
        self._actions: deque[Action] = deque()

    def reset(self, goal: GoalDescription) -> None:
        """Queue the reference actions of ``goal.episode_id`` and a Stop.

        Raises:
            ConfigError: the suite has no such episode.
        """
        try:
            episode = self.suite.episode(goal.episode_id)
        except KeyError as error:
            raise ConfigError(
                f"oracle: {error.args[0]} (its suite is {self.suite.path})"
            ) from error
        self._actions = deque([*episode.reference.actions, Action(STOP)])

    def act(self, observation: AgentObservation) -> Action:
        """The next reference action; Stop once they are used up."""
        return self._actions.popleft() if self._actions else Action(STOP)
