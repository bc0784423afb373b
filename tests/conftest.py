"""Shared test set-up: an isolated DDS domain per test session, and node subprocesses that
run the package from this source tree (as pytest does)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "aerialdojo"

# Concurrent test runs on one machine must not hear each other's nodes.
os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(SOURCE), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)


@pytest.fixture
def repo() -> Path:
    return REPO
