"""Installs the real ``ros2 launch`` (launch, launch_ros, ros2cli and composition_interfaces,
from the vendored sources of Jazzy, ``shared/vendor/ros2_launch_sources_jazzy.tar.gz``, the
distribution of the wheels) into a directory, for
tests that run the launch route on a machine that has only the pip route. Their README says
how: the pure-Python packages with pip ``--no-deps --target``, composition_interfaces with
colcon like the project's own interfaces; osrf-pycommon and psutil come from
requirements/dev.txt."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARBALL = "ros2_launch_sources_jazzy.tar.gz"
PURE_PYTHON = (
    "launch/launch",
    "launch/launch_xml",
    "launch/launch_yaml",
    "launch_ros/launch_ros",
    "launch_ros/ros2launch",
    "ros2cli/ros2cli",
    "ros2cli/ros2pkg",
)


def find_tarball() -> Path | None:
    """The vendored sources: ``$AERIALDOJO_VENDOR_DIR``, else ``shared/vendor`` beside the
    checkout or beside one of its parents (CI lays shared/ beside the clone)."""
    chosen = os.environ.get("AERIALDOJO_VENDOR_DIR")
    candidates = [Path(chosen) / TARBALL] if chosen else []
    candidates += [parent / "shared" / "vendor" / TARBALL for parent in REPO.parents]
    return next((path for path in candidates if path.is_file()), None)


def install(tarball: Path, directory: Path) -> dict[str, str]:
    """Install the launch route into ``directory``; returns the environment that runs
    ``ros2 launch`` with it (on top of this process's, the workspace's)."""
    sources = directory / "src"
    with tarfile.open(tarball) as archive:
        archive.extractall(sources, filter="data")
    site = directory / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--no-build-isolation", "--target", str(site),
         *(str(sources / package) for package in PURE_PYTHON)],
        check=True, capture_output=True,
    )  # fmt: skip
    venv = Path(sys.prefix)
    build_env = {**os.environ, "AMENT_PREFIX_PATH": str(venv), "CMAKE_PREFIX_PATH": str(venv)}
    built = subprocess.run(
        [str(venv / "bin" / "colcon"), "--log-base", str(directory / "log"), "build",
         "--base-paths", str(sources / "rcl_interfaces" / "composition_interfaces"),
         "--build-base", str(directory / "build"), "--install-base", str(directory / "install"),
         "--metas", str(REPO / "colcon.meta"),
         "--cmake-args", f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF"],
        env=build_env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    prefix = directory / "install" / "composition_interfaces"
    python = f"python{sys.version_info.major}.{sys.version_info.minor}"

    def joined(name: str, *first: Path) -> str:
        return os.pathsep.join([*map(str, first), *filter(None, [os.environ.get(name, "")])])

    return {
        **os.environ,
        "PYTHONPATH": joined("PYTHONPATH", site, prefix / "lib" / python / "site-packages"),
        "PATH": joined("PATH", site / "bin"),
        "AMENT_PREFIX_PATH": joined("AMENT_PREFIX_PATH", site, prefix),
        "LD_LIBRARY_PATH": joined("LD_LIBRARY_PATH", prefix / "lib"),
    }
