"""Scene montages for the README and ``aerialdojo render``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from aerialdojo.errors import CameraConfigError, UnknownSceneError
from aerialdojo.sim.embedded.montage import write_montage


def test_montage_has_four_views_and_an_overview(tmp_path: Path) -> None:
    out = write_montage("Island_1", tmp_path / "nested" / "island.png", size=48)
    image = np.asarray(Image.open(out))
    assert image.shape == (48, 5 * 48, 3)
    # The overview of an island shows both sea and land: several distinct colours.
    overview = image[:, 4 * 48 :].reshape(-1, 3)
    assert len(np.unique(overview // 32, axis=0)) >= 4


def test_montage_refuses_bad_input_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UnknownSceneError, match="Moon_0"):
        write_montage("Moon_0", tmp_path / "x.png")
    with pytest.raises(CameraConfigError, match="0"):
        write_montage("Mall_0", tmp_path / "x.png", size=0)
