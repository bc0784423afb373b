"""Fixtures of the task tests (helpers live in ``task_worlds``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from task_worlds import courtyard_source, make_courtyard

from aerialdojo.tasks.generate import build_suite


@pytest.fixture(scope="session")
def yard_suite_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A suite generated from an in-distribution and an out-of-distribution courtyard."""
    out = tmp_path_factory.mktemp("yard_suite")
    sources = [
        courtyard_source(make_courtyard("Yard_0")),
        courtyard_source(make_courtyard("Yard_1")),
    ]
    return build_suite(sources, out, name="yards", seed=5, per_scene=None).path
