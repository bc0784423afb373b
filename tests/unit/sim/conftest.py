"""Fixtures of the embedded-simulator tests."""

from __future__ import annotations

import pytest

from aerialdojo.sim.embedded.world import EmbeddedScene

from .toy import build_toy_scene


@pytest.fixture(scope="session")
def toy_scene() -> EmbeddedScene:
    return build_toy_scene()
