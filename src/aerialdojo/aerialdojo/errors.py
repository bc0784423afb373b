"""Exception types of aerialdojo; messages name the offending value and where it came from."""

from __future__ import annotations


class AerialDojoError(Exception):
    """Base class of every error aerialdojo raises on purpose."""


class ConfigError(AerialDojoError):
    """A configuration file or parameter is malformed; the message names file and field.

    Attributes:
        problems: one line per problem (a single one for most errors); a configuration is
            checked whole, so that a user fixes every mistake in one pass.
    """

    def __init__(self, *problems: str) -> None:
        self.problems = list(problems)
        if len(problems) == 1:
            super().__init__(problems[0])
        else:
            listing = "\n".join(f"  {problem}" for problem in problems)
            super().__init__(f"{len(problems)} problems:\n{listing}")


class DomainTakenError(AerialDojoError):
    """Another aerialdojo run is in this run's ROS domain; the message names it and the ways
    out."""


class TaskFileError(AerialDojoError):
    """A task suite file failed validation.

    Attributes:
        problems: one line per problem, each naming file, task id and field.
    """

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        listing = "\n".join(f"  {problem}" for problem in problems)
        super().__init__(f"{path}: {len(problems)} problem(s)\n{listing}")


class UnknownSceneError(AerialDojoError):
    """A scene or scene type name that no generator knows."""


class CameraConfigError(AerialDojoError):
    """A camera configuration that cannot be rendered (zero FOV, zero size, ...)."""


class InvalidActionError(AerialDojoError):
    """An action name or magnitude outside the episode's action set."""


class SimulatorFaultError(AerialDojoError):
    """The simulator failed (died, timed out, answered nonsense): an infrastructure failure,
    never scored against the agent."""


class SafetyInterventionError(AerialDojoError):
    """An operator or the robot's safety layer stopped the robot (an e-stop, the operator's
    dead-man released, the pilot taking over, low battery, a fence breach): the attempt is
    neither the agent's success nor its failure. It is counted and reported as an
    operator/safety intervention, never scored, and rerun (``aerialdojo rerun``)."""


class PolicyFaultError(AerialDojoError):
    """A policy could not decide for reasons outside it (its model server died, hangs or
    refuses every request; a replayed transcript diverged): an infrastructure failure of the
    attempt, which is rerun and never scored against the agent. A plug-in policy raises it
    for faults of its own services."""


class BagError(AerialDojoError):
    """A bag is missing, unreadable or lacks the topics a computation needs."""


class MetricsError(AerialDojoError):
    """A trace, trajectory log or metrics file that cannot be scored or compared; the message
    names the episode or file and the field."""


class TrajectoryLogError(MetricsError):
    """A trajectory log (JSON lines) failed validation.

    Attributes:
        path: the log file.
        problems: one line per problem, each ``file:line: field: problem``.
    """

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        listing = "\n".join(f"  {problem}" for problem in problems)
        super().__init__(f"{path}: {len(problems)} problem(s)\n{listing}")


class TransportError(AerialDojoError):
    """An image could not be converted, encoded or decoded, or a queued message could not be
    published."""


class TaskGenerationError(AerialDojoError):
    """No valid episode or reference path can be made for a goal; the message says why."""
