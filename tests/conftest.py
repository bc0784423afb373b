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
# user's robot, an evaluation left running. Fast DDS accepts domains 0-232.
os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(1, 232))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(SOURCE), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)


@pytest.fixture
def repo() -> Path:
    return REPO
