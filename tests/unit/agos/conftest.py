"""A loaded town shared by the AGOS unit tests (building it takes under a second)."""

from __future__ import annotations

import pytest

from aerialdojo.agos.town import Town, load_town


@pytest.fixture(scope="session")
def town() -> Town:
    return load_town("AgosTown_1")
