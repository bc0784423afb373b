"""Point the ROS wheels' exported CMake targets at this venv's Python and NumPy headers.

The PyPI ROS 2 wheels are built in a manylinux container, and the CMake export files of
every ``*__rosidl_generator_py`` target keep that container's include paths
(``/opt/python/cpXY-cpXY/...``). CMake refuses imported targets whose include directories do
not exist, so ``colcon build`` of any interface package that depends on them fails. This
rewrites those paths, inside the venv only, to the headers of the interpreter running it.
It is idempotent and prints what it changed.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

import numpy

_NUMPY_INCLUDE = re.compile(
    r"/opt/python/cp\d+-cp\d+t?/lib/python3\.\d+t?/site-packages/numpy/_core/include"
)
_PYTHON_INCLUDE = re.compile(r"/opt/python/cp\d+-cp\d+t?/include/python3\.\d+t?")


def repair(prefix: Path) -> list[Path]:
    """Rewrite the container include paths in every CMake file under ``prefix/share``.

    Args:
        prefix: the venv (``sys.prefix``) holding the ROS wheels' ``share`` tree.

    Returns:
        The files that were changed.

    Raises:
        FileNotFoundError: the interpreter's own Python headers are missing, so no path
            could make the targets valid (install the python3-dev package).
    """
    python_include = sysconfig.get_paths()["include"]
    if not Path(python_include, "Python.h").is_file():
        raise FileNotFoundError(
            f"Python headers not found at {python_include}; install the python3-dev package"
        )
    numpy_include = numpy.get_include()
    changed = []
    for cmake_file in sorted((prefix / "share").glob("*/cmake/*.cmake")):
        text = cmake_file.read_text()
        if "/opt/python/" not in text:
            continue
        fixed = _PYTHON_INCLUDE.sub(python_include, _NUMPY_INCLUDE.sub(numpy_include, text))
        if fixed != text:
            cmake_file.write_text(fixed)
            changed.append(cmake_file)
    return changed


def main() -> int:
    changed = repair(Path(sys.prefix))
    print(f"repaired {len(changed)} CMake export file(s) under {sys.prefix}/share")
    return 0


if __name__ == "__main__":
    sys.exit(main())
