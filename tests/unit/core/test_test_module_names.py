"""Every test module has a name of its own under pytest's default import mode.

pytest ("prepend" import mode) imports a test module by its basename, or, inside directories
with ``__init__.py``, by its dotted path from the first directory without one. Two modules
with the same such name stop the whole session at collection, and a developer running only
the tests next to a change does not collect the other one: CI met this twice.

The same holds for ``conftest``: every test directory has one, and the first imported takes
the name, so ``from conftest import ...`` gets another directory's in a session that collects
both (``tests/unit/sim_remote`` before ``tests/unit/vlm``). Shared helpers live in modules
with names of their own.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def import_name(module: Path) -> str:
    """The module name pytest's "prepend" import mode gives a test file."""
    parts = [module.stem]
    package = module.parent
    while (package / "__init__.py").exists():
        parts.insert(0, package.name)
        package = package.parent
    return ".".join(parts)


def test_no_two_test_modules_share_an_import_name() -> None:
    modules = defaultdict(list)
    for module in TESTS.rglob("test_*.py"):
        modules[import_name(module)].append(str(module.relative_to(TESTS)))
    shared = {name: paths for name, paths in modules.items() if len(paths) > 1}
    assert not shared, f"rename one of each: {shared}"


def test_a_repeated_basename_outside_packages_is_found(tmp_path: Path) -> None:
    for directory in ("node", "unit/vlm", "unit/sim"):
        (tmp_path / directory).mkdir(parents=True)
        (tmp_path / directory / "test_images.py").touch()
    (tmp_path / "unit/sim/__init__.py").touch()
    names = [import_name(module) for module in sorted(tmp_path.rglob("test_images.py"))]
    assert names == ["test_images", "sim.test_images", "test_images"]


def test_no_test_module_imports_a_conftest() -> None:
    importers = []
    for module in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            names = (
                [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if "conftest" in names:
                importers.append(str(module.relative_to(TESTS)))
    assert not importers, f"import these helpers from a module of their own: {importers}"
