"""Checks that the pinned requirements resolve on every Python version the README names.

    tools/run.sh python tools/check_pythons.py      (make check-pythons; CI runs it)

For each version of the README's "python3 (3.X-3.Y" range, pip resolves requirements/
python.txt, ros-kilted.txt (the ROS 2 Kilted wheels) and dev.txt for that interpreter
(``pip install --dry-run --ignore-installed --only-binary=:all: --python-version``), so a pin
without wheels for one of them fails here instead of in a user's bootstrap. Needs PyPI and
nothing else; the versions resolve in parallel.

EmPy, which the ROS wheels and colcon need, is published as an sdist only, and pip resolves
for another interpreter from wheels only: it is built once into a wheel (pure Python, any
version) that the resolutions find beside the index.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REQUIREMENTS = ("python.txt", "ros-kilted.txt", "dev.txt")
#: The README's promise, e.g. "`python3` (3.11-3.13, with ...".
PROMISE = re.compile(r"`python3` \(3\.(\d+)-3\.(\d+)")


def named_versions(readme: str) -> list[str]:
    """The Python versions the README promises, oldest first.

    Raises:
        ValueError: the README names no range.
    """
    match = PROMISE.search(readme)
    if match is None:
        raise ValueError("README.md names no `python3` (3.X-3.Y) range")
    return [f"3.{minor}" for minor in range(int(match[1]), int(match[2]) + 1)]


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _empy_wheel(directory: Path) -> None:
    try:
        wanted = f"empy=={metadata.version('empy')}"  # the one the bootstrap installed
    except metadata.PackageNotFoundError:
        wanted = "empy"
    built = _pip("wheel", "--quiet", "--no-deps", wanted, "--wheel-dir", str(directory))
    if built.returncode != 0:
        sys.exit(f"cannot build an EmPy wheel: {built.stderr.strip()}")


def resolve(version: str, wheels: Path, target: Path) -> str:
    """An empty string when the requirements resolve on Python ``version``, else pip's
    errors."""
    files = [arg for name in REQUIREMENTS for arg in ("-r", str(REPO / "requirements" / name))]
    resolved = _pip(
        "install", "--quiet", "--dry-run", "--ignore-installed", "--only-binary=:all:",
        "--python-version", version, "--target", str(target), "--find-links", str(wheels),
        *files,
    )  # fmt: skip
    if resolved.returncode == 0:
        return ""
    return "\n".join(line for line in resolved.stderr.splitlines() if "ERROR" in line)


def main() -> int:
    """Resolve for every named version; print one line each; 1 if any fails."""
    versions = named_versions((REPO / "README.md").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as scratch:
        wheels = Path(scratch) / "wheels"
        _empy_wheel(wheels)
        with ThreadPoolExecutor(max_workers=len(versions)) as pool:
            errors = dict(
                zip(
                    versions,
                    pool.map(lambda v: resolve(v, wheels, Path(scratch) / v), versions),
                    strict=True,
                )
            )
    for version, error in errors.items():
        print(f"Python {version}: {'resolves' if not error else 'does not resolve'}")
        if error:
            print("  " + error.replace("\n", "\n  "))
    return 1 if any(errors.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
