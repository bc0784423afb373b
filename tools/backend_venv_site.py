"""Startup hook of a backend venv: the main venv's packages come after this venv's own.

tools/bootstrap_backend.sh copies this file into ``.venv-<backend>/.../site-packages`` as
``aerialdojo_main_venv.py`` and imports it from a ``.pth`` file, so the backend's simulator
client (and its msgpack) wins over anything of the same name in ``.venv``, while rclpy, the
ROS message packages and aerialdojo's own dependencies come from ``.venv`` without a second
copy. The ROS wheels load shared libraries from ``.venv``: their loader path must be set before
the process starts, so the interpreter re-executes itself once with it (the same thing the
wheels' own bootstrapper does, which would look in this venv instead).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MAIN_VENV = Path(sys.prefix).parent / ".venv"
MAIN_SITE_PACKAGES = (
    MAIN_VENV / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
)


def _ros_library_dirs() -> list[str]:
    return [str(MAIN_VENV / "lib"), *sorted(map(str, MAIN_SITE_PACKAGES.glob("ros_*.libs")))]


def _activate() -> None:
    current = [part for part in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if part]
    missing = [directory for directory in _ros_library_dirs() if directory not in current]
    if missing:
        environment = {
            **os.environ,
            "LD_LIBRARY_PATH": os.pathsep.join(missing + current),
            # The ROS wheels' bootstrapper checks this before re-executing on its own.
            "_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1",
        }
        os.execve(sys.executable, sys.orig_argv, environment)
    sys.path.append(str(MAIN_SITE_PACKAGES))


if MAIN_SITE_PACKAGES.is_dir():
    _activate()
