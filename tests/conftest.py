"""Shared test set-up: an isolated DDS domain per test session, and node subprocesses that
run the package from this source tree (as pytest does)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "aerialdojo"

# Test nodes must not hear (or answer) any other graph on this machine: another test run, a
# user's robot, an evaluation left running. Tests take domains 1-50 and runs 51-101
# (``runner.PRIVATE_DOMAINS``): on Linux only 0-101 are clear of the ephemeral port range that
# higher domains' ports fall into (ROS 2 documentation, "The ROS_DOMAIN_ID").
# AERIALDOJO_TEST_DOMAINS ("first-last") narrows the range, so that sessions run side by side
# (CI's lanes) never share a domain.
_first, _last = map(int, os.environ.get("AERIALDOJO_TEST_DOMAINS", "1-50").split("-"))
os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(_first, _last))
# The session's domain is its own: a starting run need not listen 5 s for another run in it
# (tests/node/test_domain_guard.py restores the window where the refusal is tested).
os.environ["AERIALDOJO_DOMAIN_WINDOW_S"] = "0"
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(SOURCE), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)


@pytest.fixture
def repo() -> Path:
    return REPO
