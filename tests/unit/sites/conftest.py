"""Fixtures of the site tests (helpers live in ``site_files``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from site_files import SiteWriter, write_site_file


@pytest.fixture
def write_site(tmp_path: Path) -> SiteWriter:
    """``write_site_file`` into a directory of the test's own (``name``)."""

    def write(edit: Callable[[dict[str, Any]], None] | None = None, name: str = "site") -> Path:
        return write_site_file(tmp_path / name, edit)

    return write
