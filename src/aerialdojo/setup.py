"""ament_python package of aerialdojo; the top-level launch/ and config/ go to share/aerialdojo."""

from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "aerialdojo"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NODES = (
    "sim_bridge",
    "task_manager",
    "uav_agent",
    "citynav_agent",
    "agos_uav_agent",
    "ugv_agent",
    "evaluator",
    "safety_gate",
    "sim_robot",
    "operator_console",
)


def _tree(top: str) -> list[tuple[str, list[str]]]:
    """data_files entries installing REPO/<top>/** under share/aerialdojo/<top>/."""
    entries: dict[str, list[str]] = {}
    for path in sorted((REPO / top).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            relative = path.relative_to(REPO)
            entries.setdefault(f"share/{PACKAGE}/{relative.parent}", []).append(
                str(Path("..", "..", relative))
            )
    return sorted(entries.items())


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    package_data={
        PACKAGE: ["schemas/*.json", "suites/*.json", "suites/**/*", "agents/vlm/prompts/**/*"]
    },
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        *_tree("launch"),
        *_tree("config"),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="aerialdojo maintainers",
    maintainer_email="maintainers@aerialdojo.dev",
    description="ROS 2 evaluation harness for aerial and air-ground object-goal search",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            f"{PACKAGE} = {PACKAGE}.cli:main",
            *(f"{node} = {PACKAGE}.nodes.{node}:main" for node in NODES),
        ],
    },
)
