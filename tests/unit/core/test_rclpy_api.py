"""The nodes keep to the rclpy that Humble has (README, "ROS 2 distributions"): Humble's rclpy
is not on PyPI, so no test here can run it; this one fails when code outside the tests uses
a call that only newer distributions provide. Each was looked up in ros2/rclpy, branches
humble (3.3.x) and jazzy (7.1.x)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
#: Where code that runs in a node lives: the package and the launch files (the tests and
#: benchmarks run on the wheels' Jazzy only).
SOURCES = ("src/aerialdojo/aerialdojo", "launch")
#: Keyword arguments newer than Humble, by the call they belong to.
NEWER_KEYWORDS = {"enable_logger_service": "Node(...) (Iron)"}
#: Methods newer than Humble.
NEWER_METHODS = {
    "get_publisher_count": "Subscription (Iron); Node.count_publishers is in Humble",
    "add_pre_set_parameters_callback": "Iron",
    "add_post_set_parameters_callback": "Iron",
    "get_type_description": "Iron",
}
#: Objects that are context managers only from Jazzy (rclpy.init: Kilted) on.
NEWER_CONTEXT_MANAGERS = {
    "init": "rclpy.init (Kilted); use aerialdojo.nodes.common.node_process",
    "Context": "Context (Jazzy)",
    "Node": "Node (Jazzy)",
    "SingleThreadedExecutor": "an executor (Jazzy)",
    "MultiThreadedExecutor": "an executor (Jazzy)",
}


def _called_name(call: ast.expr) -> str:
    if not isinstance(call, ast.Call):
        return ""
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def newer_than_humble(source: str) -> list[str]:
    """Lines of ``source`` that use an rclpy call Humble lacks, each with what it is."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                name = _called_name(item.context_expr)
                if name in NEWER_CONTEXT_MANAGERS:
                    found.append(f"line {node.lineno}: with {NEWER_CONTEXT_MANAGERS[name]}")
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in NEWER_KEYWORDS:
                    found.append(
                        f"line {node.lineno}: {keyword.arg}= of {NEWER_KEYWORDS[keyword.arg]}"
                    )
            name = _called_name(node)
            if isinstance(node.func, ast.Attribute) and name in NEWER_METHODS:
                found.append(f"line {node.lineno}: {name} ({NEWER_METHODS[name]})")
    return found


def test_the_check_finds_each_newer_call() -> None:
    source = (
        "with rclpy.init(args=args):\n    pass\n"
        "with SingleThreadedExecutor() as executor:\n    pass\n"
        "node = Node('n', enable_logger_service=True)\n"
        "node.add_post_set_parameters_callback(print)\n"
        "subscription.get_publisher_count()\n"
        "rclpy.init(args=args)\n"  # the Humble form: fine
        "with node_process(args):\n    pass\n"
    )
    assert [line.split(":")[0] for line in newer_than_humble(source)] == [
        "line 1", "line 3", "line 5", "line 6", "line 7",
    ]  # fmt: skip


@pytest.mark.parametrize("root", SOURCES)
def test_no_code_uses_an_rclpy_call_that_humble_lacks(root: str) -> None:
    problems = {
        str(path.relative_to(REPO)): found
        for path in sorted((REPO / root).rglob("*.py"))
        if (found := newer_than_humble(path.read_text(encoding="utf-8")))
    }
    assert problems == {}
