"""Checks that the pinned requirements resolve on every Python version the README names.

    tools/run.sh python tools/check_pythons.py      (make check-pythons; CI runs it)

For each version of the README's "python3 (3.X-3.Y" range, pip resolves what the bootstrap
installs on each route (``ROUTES``: the wheels route's requirements/python.txt, ros-jazzy.txt
(the ROS 2 Jazzy wheels) and dev.txt; on a sourced ROS 2 whose numpy is 1.x, numpy1.txt in
place of python.txt's numpy) for that interpreter (``pip install --dry-run --ignore-installed
--only-binary=:all: --python-version``), so a pin without wheels for one of them fails here
instead of in a user's bootstrap. Needs PyPI and nothing else; the resolutions run in
parallel.

pip evaluates environment markers (``; python_version < "3.11"``) against the interpreter
running it, not against ``--python-version``: the requirements are first narrowed here to the
lines whose markers hold on the version resolved for.

EmPy, which the ROS wheels and colcon need, is published as an sdist only, and pip resolves
for another interpreter from wheels only: it is built once into a wheel (pure Python, any
version) that the resolutions find beside the index.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
#: What tools/bootstrap.sh installs on each route: requirement files, the projects whose
#: python.txt pins it leaves out there, and the newest Python the route meets (no
#: distribution ships numpy 1.x with a Python newer than 3.12: there are no such wheels).
ROUTES: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]] = {
    "wheels route": (("python.txt", "ros-jazzy.txt", "dev.txt"), (), 99),
    "sourced ROS 2, numpy 1": (("python.txt", "numpy1.txt", "dev.txt"), ("numpy",), 12),
}
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


def requirements_for(version: str, lines: Iterable[str], left_out: Iterable[str] = ()) -> list[str]:
    """The requirement lines that apply on Python ``version`` (e.g. ``3.10``), markers
    dropped; comments, blank lines and the projects ``left_out`` left out."""
    environment = {**default_environment(), "python_version": version,
                   "python_full_version": f"{version}.0"}  # fmt: skip
    wanted = []
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        requirement = Requirement(text)
        if requirement.name in left_out:
            continue
        if requirement.marker is None or requirement.marker.evaluate(environment):
            requirement.marker = None
            wanted.append(str(requirement))
    return wanted


def resolve(version: str, route: str, wheels: Path, target: Path) -> str:
    """An empty string when the requirements of ``route`` resolve on Python ``version``, else
    pip's errors."""
    files, left_out, _ = ROUTES[route]
    wanted = [
        requirement
        for name in files
        for requirement in requirements_for(
            version,
            (REPO / "requirements" / name).read_text(encoding="utf-8").splitlines(),
            left_out if name == "python.txt" else (),
        )
    ]
    narrowed = target.parent / f"{target.name}.txt"
    narrowed.write_text("\n".join(wanted) + "\n", encoding="utf-8")
    resolved = _pip(
        "install", "--quiet", "--dry-run", "--ignore-installed", "--only-binary=:all:",
        "--python-version", version, "--target", str(target), "--find-links", str(wheels),
        "-r", str(narrowed),
    )  # fmt: skip
    if resolved.returncode == 0:
        return ""
    return "\n".join(line for line in resolved.stderr.splitlines() if "ERROR" in line)


def main() -> int:
    """Resolve every route for every named version; print one line each; 1 if any fails."""
    versions = named_versions((REPO / "README.md").read_text(encoding="utf-8"))
    cases = [
        (version, route)
        for version in versions
        for route, (_, _, newest) in ROUTES.items()
        if int(version.split(".")[1]) <= newest
    ]
    with tempfile.TemporaryDirectory() as scratch:
        wheels = Path(scratch) / "wheels"
        _empy_wheel(wheels)

        def resolve_case(case: tuple[str, str]) -> str:
            version, route = case
            return resolve(version, route, wheels, Path(scratch) / f"{version}-{route[:7]}")

        with ThreadPoolExecutor(max_workers=4) as pool:
            errors = dict(zip(cases, pool.map(resolve_case, cases), strict=True))
    for (version, route), error in errors.items():
        print(f"Python {version}, {route}: {'resolves' if not error else 'does not resolve'}")
        if error:
            print("  " + error.replace("\n", "\n  "))
    return 1 if any(errors.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
