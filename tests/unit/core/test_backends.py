"""The simulator backend registry: lookups import nothing, and a new backend is one entry."""

from __future__ import annotations

import subprocess
import sys

import pytest

from aerialdojo import backends
from aerialdojo.backends import (
    BackendEntry,
    backend_names,
    backend_venv,
    camera_views,
    create_backend,
    load_scene,
    register,
)
from aerialdojo.errors import ConfigError
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.sim.backend import BackendOptions
from aerialdojo.sim.embedded.backend import EmbeddedBackend


def test_the_bridge_parameter_offers_every_registered_backend() -> None:
    (spec,) = (p for p in NODE_PARAMETERS["sim_bridge"] if p.name == "backend")
    assert spec.choices == backend_names()
    assert {"embedded", "agos", "citynav", "pointcloud", "projectairsim", "carla_air"} <= set(
        backend_names()
    )


def test_looking_backends_up_imports_no_simulator() -> None:
    # The remote bridges run in venvs without Embree: the registry must not pull it in.
    code = (
        "import sys, aerialdojo.backends as b; b.backend_venv('carla_air'); "
        "b.camera_views('carla_air', ['uav']); "
        "print(sorted(m for m in sys.modules "
        "if m.startswith(('embreex', 'aerialdojo.sim.embedded'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_venvs_views_and_unknown_names() -> None:
    assert backend_venv("embedded") is None
    assert backend_venv("projectairsim") == ".venv-projectairsim"
    assert camera_views("projectairsim", ["uav"]) is None
    assert camera_views("embedded", ["uav"]) == {"uav": ["front", "left", "right", "down"]}
    with pytest.raises(ConfigError, match="unknown simulator backend 'gazebo'; known: embedded"):
        backend_venv("gazebo")


def test_scene_sources_answer_for_their_own_scenes_only() -> None:
    town = load_scene("AgosTown_0")
    assert town is not None and town.name == "AgosTown_0"
    assert load_scene("Alley_0") is not None
    assert load_scene("Blocks") is None  # a ProjectAirSim world: no source here


def test_a_new_backend_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "_REGISTRY", dict(backends._REGISTRY))
    entry = BackendEntry(
        name="embedded_copy",
        backend="aerialdojo.sim.embedded.backend:EmbeddedBackend",
        description="the embedded simulator under a second name",
    )
    register(entry)
    register(entry)  # the same entry again is harmless
    built = create_backend(
        "embedded_copy",
        BackendOptions(agents=["uav"], image_width=4, image_height=4, fov_deg=90.0, seed=3),
    )
    assert isinstance(built, EmbeddedBackend) and built.seed == 3
    with pytest.raises(ConfigError, match="registered twice"):
        register(BackendEntry(name="embedded_copy", backend="x:Y", description="another"))
