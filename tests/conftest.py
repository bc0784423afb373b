"""Shared test set-up: an isolated DDS domain per test session, and node subprocesses that
run the package from this source tree (as pytest does)."""

from __future__ import annotations

import fcntl
import os
import random
from pathlib import Path

import pytest

from aerialdojo.runner import DOMAIN_LOCKS, make_shared_directory

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "aerialdojo"

# Test nodes must not hear (or answer) any other graph on this machine: another test run, a
# user's robot, an evaluation left running. Tests take domains 1-50 and runs 51-101
# (``runner.PRIVATE_DOMAINS``): on Linux only 0-101 are clear of the ephemeral port range that
# higher domains' ports fall into (ROS 2 documentation, "The ROS_DOMAIN_ID").
# AERIALDOJO_TEST_DOMAINS ("first-last") narrows the range (CI's lanes take a half each).
# Sessions run side by side on one host (developers, helpers) never share a domain: each holds
# an exclusive lock on ``<domain>.test-session.lock`` beside the runs' domain locks for its
# life, and the kernel drops it when the session ends. A run's own ``<domain>.lock`` is another
# file, so the session's runs still claim the domain they inherit.
_first, _last = map(int, os.environ.get("AERIALDOJO_TEST_DOMAINS", "1-50").split("-"))


def _hold_a_free_test_domain(first: int, last: int) -> int:
    """A domain of ``first``-``last`` that no other test session on this host holds, now held
    by this one (the lock's descriptor stays open until the process ends); a random one,
    unheld, where every lock is taken."""
    make_shared_directory(DOMAIN_LOCKS)
    domains = list(range(first, last + 1))
    random.SystemRandom().shuffle(domains)
    for domain in domains:
        try:
            lock = os.open(DOMAIN_LOCKS / f"{domain}.test-session.lock", os.O_RDONLY | os.O_CREAT)
        except OSError:
            continue  # another user's lock file: theirs
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock)
            continue
        return domain
    return domains[0]


os.environ["ROS_DOMAIN_ID"] = str(_hold_a_free_test_domain(_first, _last))
# The session's domain is its own: a starting run need not listen 5 s for another run in it
# (tests/node/test_domain_guard.py restores the window where the refusal is tested).
os.environ["AERIALDOJO_DOMAIN_WINDOW_S"] = "0"
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(SOURCE), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)


@pytest.fixture
def repo() -> Path:
    return REPO
