"""The house stays layered: the layer table of docs/architecture.md holds for the imports of
every module of the package, there is no import circle, and nothing imports the CLI.

Imports are read from the source with ``ast``, so a lazy import inside a function counts like
any other: it saves start-up time, it does not lift the rule. Imports under ``if
TYPE_CHECKING:`` count for the layers (a type is a dependency) but not for circles (they never
run). A plug-in that a registry loads by its dotted name (``importlib``) is not an import.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PACKAGE_DIR = REPO / "src" / "aerialdojo" / "aerialdojo"
ARCHITECTURE = REPO / "docs" / "architecture.md"
PACKAGE = "aerialdojo"
#: Only these modules may import ROS client libraries and message packages.
ROS_ROOM = "nodes"
_ROS_TOP_LEVEL = re.compile(r"^(rclpy|rosidl\w*|aerialdojo_interfaces|\w+_msgs)$")


@dataclass(frozen=True)
class Import:
    """One import statement's target inside the package.

    Attributes:
        target: the imported module (a package's ``__init__`` is the package name).
        line: where the statement is.
        lazy: inside a function.
        type_only: under ``if TYPE_CHECKING:``.
    """

    target: str
    line: int
    lazy: bool
    type_only: bool


@dataclass(frozen=True)
class Layer:
    """One row of the layer table: its name and the modules or packages it holds."""

    name: str
    members: tuple[str, ...]


def module_names(package_dir: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    names = {}
    for path in package_dir.rglob("*.py"):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def module_imports(name: str, path: Path, modules: Mapping[str, Path]) -> list[Import]:
    """The package modules that module ``name`` (its source at ``path``) imports.

    ``from package import name`` counts as an import of the submodule where ``name`` is one,
    else of the package; relative imports are resolved against ``name``.
    """

    def resolve(dotted: str) -> str:
        while dotted not in modules and "." in dotted:
            dotted = dotted.rpartition(".")[0]
        return dotted

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [resolve(alias.name) for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else resolve(base)
                    for alias in child.names
                ]
            found.extend(
                Import(target, child.lineno, lazy, type_only)
                for target in dict.fromkeys(targets)  # one per module a statement imports
                if target.split(".")[0] == PACKAGE
            )
            visit(
                child,
                lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda),
                type_only or (isinstance(child, ast.If) and _is_type_checking(child)),
            )

    visit(ast.parse(path.read_text(encoding="utf-8")), False, False)
    return found


def package_imports(package_dir: Path) -> dict[str, list[Import]]:
    """Module -> the package modules it imports, for every module of the package."""
    modules = module_names(package_dir)
    return {name: module_imports(name, path, modules) for name, path in sorted(modules.items())}


def declared_layers(document: str) -> list[Layer]:
    """The layer table of ``docs/architecture.md``, bottom layer first.

    The table is the code block after the ``## Layers`` heading: boxes of ``| name |
    members |`` rows between ``+---`` rules, the top layer first; a layer's name and members
    may wrap over several rows.
    """
    section = document.partition("\n## Layers\n")[2]
    block = section.partition("```text\n")[2].partition("```")[0]
    layers: list[Layer] = []
    name_words: list[str] = []
    members: list[str] = []
    for line in [*block.splitlines(), "+"]:
        if line.startswith("+"):
            if name_words:
                layers.append(Layer(" ".join(name_words), tuple(members)))
            name_words, members = [], []
        elif line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            name_words += cells[0].split()
            members += cells[1].split()
    return layers[::-1]


def layer_index(module: str, layers: Sequence[Layer]) -> int | None:
    """The layer holding ``module``: the one naming it or its nearest enclosing package."""
    best: tuple[int, int] | None = None
    relative = module.removeprefix(f"{PACKAGE}.")
    for index, layer in enumerate(layers):
        for member in layer.members:
            inside = relative == member or relative.startswith(f"{member}.")
            if inside and (best is None or len(member) > best[1]):
                best = (index, len(member))
    return None if best is None else best[0]


def upward_imports(imports: Mapping[str, Sequence[Import]], layers: Sequence[Layer]) -> list[str]:
    """Every import from a module into a layer above its own, as ``module:line -> target``
    with both layers named."""
    problems = []
    for module, found in imports.items():
        own = layer_index(module, layers)
        for entry in found:
            target = layer_index(entry.target, layers)
            if own is not None and target is not None and target > own:
                how = " (inside a function)" if entry.lazy else ""
                how += " (for typing)" if entry.type_only else ""
                problems.append(
                    f"{module}:{entry.line} imports {entry.target}{how}: "
                    f"{layers[own].name} -> {layers[target].name}"
                )
    return problems


def import_circles(imports: Mapping[str, Sequence[Import]]) -> list[list[str]]:
    """The import circles among the modules (strongly connected components of more than one
    module), each sorted.

    Every import that runs counts, lazy ones included, and so does the implicit import of
    a module's enclosing packages (their ``__init__`` runs first) where the importer is not
    inside them.
    """
    edges: dict[str, set[str]] = {module: set() for module in imports}
    for module, found in imports.items():
        for entry in found:
            if entry.type_only:
                continue
            parts = entry.target.split(".")
            for depth in range(1, len(parts) + 1):
                enclosing = ".".join(parts[:depth])
                if enclosing != module and not module.startswith(f"{enclosing}."):
                    edges[module].add(enclosing)
    return [sorted(component) for component in _strong_components(edges) if len(component) > 1]


def _strong_components(edges: Mapping[str, set[str]]) -> Iterator[list[str]]:
    """Tarjan's algorithm, iterative (the graph is deeper than the recursion limit allows)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    yield component


@pytest.fixture(scope="module")
def imports() -> dict[str, list[Import]]:
    return package_imports(PACKAGE_DIR)


@pytest.fixture(scope="module")
def layers() -> list[Layer]:
    found = declared_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(found) > 3, f"{ARCHITECTURE}: no layer table under '## Layers'"
    return found


def test_every_module_has_a_layer(imports: dict[str, list[Import]], layers: list[Layer]) -> None:
    unplaced = [m for m in imports if m != PACKAGE and layer_index(m, layers) is None]
    assert not unplaced, (
        f"modules in no layer of {ARCHITECTURE.name} (add them, or their package, to the "
        f"table under '## Layers'): {', '.join(unplaced)}"
    )


def test_every_layer_member_exists(imports: dict[str, list[Import]], layers: list[Layer]) -> None:
    # The table names real modules only, so it cannot drift from the code unnoticed.
    missing = [
        f"{layer.name}: {member}"
        for layer in layers
        for member in layer.members
        if f"{PACKAGE}.{member}" not in imports
    ]
    assert not missing, f"{ARCHITECTURE.name} places modules that do not exist: {missing}"


def test_no_import_runs_up_the_layers(
    imports: dict[str, list[Import]], layers: list[Layer]
) -> None:
    problems = upward_imports(imports, layers)
    assert not problems, "imports from a lower layer up to a higher one:\n" + "\n".join(problems)


def test_no_import_circle(imports: dict[str, list[Import]]) -> None:
    circles = import_circles(imports)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_nothing_in_the_package_imports_the_cli(imports: dict[str, list[Import]]) -> None:
    importers = [
        f"{module}:{entry.line}"
        for module, found in imports.items()
        for entry in found
        if entry.target == f"{PACKAGE}.cli"
    ]
    assert not importers, f"modules importing {PACKAGE}.cli: {', '.join(importers)}"


def test_only_nodes_import_ros() -> None:
    offenders = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if path.relative_to(PACKAGE_DIR).parts[0] == ROS_ROOM:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            offenders += [
                f"{path.relative_to(PACKAGE_DIR)}:{node.lineno} imports {name}"
                for name in names
                if _ROS_TOP_LEVEL.match(name.split(".")[0])
            ]
    assert not offenders, "ROS imports outside nodes/:\n" + "\n".join(offenders)


def _write_package(root: Path, files: Mapping[str, str]) -> Path:
    package_dir = root / PACKAGE
    for relative, text in {"__init__.py": "", **files}.items():
        (package_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        (package_dir / relative).write_text(text, encoding="utf-8")
    return package_dir


def test_the_checks_see_lazy_relative_and_package_imports(tmp_path: Path) -> None:
    # The checker itself: a circle closed only by a lazy import inside a function, a
    # relative import, and a submodule imported through its package's __init__.
    package_dir = _write_package(
        tmp_path,
        {
            "low.py": "def late():\n    from aerialdojo.high import thing\n",
            "high.py": "from . import low\nthing = 1\n",
            "room/__init__.py": "from aerialdojo.top import x\n",
            "room/inner.py": "",
            "top.py": "import aerialdojo.room.inner\nx = 1\n",
            "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from aerialdojo import high\n",
        },
    )
    imports = package_imports(package_dir)
    assert imports["aerialdojo.low"] == [Import("aerialdojo.high", 2, True, False)]
    assert imports["aerialdojo.high"] == [Import("aerialdojo.low", 1, False, False)]
    assert imports["aerialdojo.typed"] == [Import("aerialdojo.high", 3, False, True)]
    assert import_circles(imports) == [
        ["aerialdojo.high", "aerialdojo.low"],
        ["aerialdojo.room", "aerialdojo.top"],
    ]
    table = (
        "\n## Layers\n\n```text\n+---+\n| upper | high  |\n| room  | typed |\n+---+\n"
        "| lower | low room top |\n+---+\n```\n"
    )
    layers = declared_layers(table)
    assert layers == [
        Layer("lower", ("low", "room", "top")),
        Layer("upper room", ("high", "typed")),
    ]
    assert upward_imports(imports, layers) == [
        "aerialdojo.low:2 imports aerialdojo.high (inside a function): lower -> upper room"
    ]
