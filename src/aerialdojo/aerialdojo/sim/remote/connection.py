"""Where a simulator server is, how long to wait for it, and turning its failures into faults.

Every failure to reach or hear from a server ends as ``SimulatorFaultError`` naming the server,
its host and port, so the task manager reruns the episode (an infrastructure failure) and the
user sees which process to look at.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from aerialdojo.errors import ConfigError, SimulatorFaultError

T = TypeVar("T")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endpoint:
    """One server a backend talks to.

    Attributes:
        server: what runs there, for messages (e.g. ``"AirSim"``).
        host: host name or address.
        port: TCP port.
    """

    server: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.server} at {self.host}:{self.port}"


@dataclass(frozen=True, kw_only=True)
class CallPolicy:
    """How long to wait for one server call and how often to try a failing connection.

    Attributes:
        timeout_s: longest wait for one answer.
        attempts: tries of a failing connection before it is a fault (at least 1).
        backoff_s: pause before the second try; doubled before each further one.
    """

    timeout_s: float
    attempts: int
    backoff_s: float

    def __post_init__(self) -> None:
        if self.timeout_s <= 0.0:
            raise ConfigError(f"server_timeout_s={self.timeout_s} must be positive")
        if self.attempts < 1:
            raise ConfigError(f"server_attempts={self.attempts} must be at least 1")


def connect_with_retries(
    connect: Callable[[], T],
    endpoint: Endpoint,
    policy: CallPolicy,
    transient: tuple[type[BaseException], ...],
) -> T:
    """Call ``connect`` until it succeeds or ``policy.attempts`` tries failed.

    Args:
        connect: opens the connection (and checks it with one call).
        endpoint: the server, named in the error.
        policy: attempts and back-off.
        transient: exception types that mean "not reachable (yet)"; others propagate.

    Raises:
        SimulatorFaultError: every try failed; names host and port and the last error.
    """
    delay = policy.backoff_s
    for attempt in range(1, policy.attempts + 1):
        try:
            return connect()
        except transient as error:
            last = error
            if attempt < policy.attempts:
                _log.warning(
                    "cannot reach %s (try %d of %d): %s", endpoint, attempt, policy.attempts, error
                )
                time.sleep(delay)
                delay *= 2.0
    raise SimulatorFaultError(
        f"cannot connect to {endpoint} after {policy.attempts} tries: {type(last).__name__}: {last}"
    ) from last


def fault(endpoint: Endpoint, doing: str, error: BaseException) -> SimulatorFaultError:
    """The fault raised when a call to a connected server failed or timed out."""
    return SimulatorFaultError(f"{endpoint} failed while {doing}: {type(error).__name__}: {error}")


def check_version(
    component: str, found: str, tested: str, significant_parts: int = 2
) -> str | None:
    """Warn when ``found`` differs from the version aerialdojo was tested with.

    A mismatch is a warning, not an error: the wire protocols rarely change, and a hard pin is
    what users of existing bridges complain about.

    Args:
        component: what is compared, for the message.
        found: the version in use.
        tested: the version it is compared with.
        significant_parts: leading dotted parts compared (2: a patch release is assumed
            compatible; CARLA wants client and server of one release, so 3 there).

    Returns:
        The warning that was logged, or None.
    """
    if _leading(found, significant_parts) == _leading(tested, significant_parts):
        return None
    message = (
        f"{component} version {found} differs from the tested {tested}; expect protocol differences"
    )
    _log.warning(message)
    return message


def _leading(version: str, parts: int) -> tuple[str, ...]:
    return tuple(version.strip().lstrip("v").split(".")[:parts])
