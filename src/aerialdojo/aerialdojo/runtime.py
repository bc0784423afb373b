"""What a node runs on (its ROS 2 distribution and Python) and which run it belongs to; the rule
that one graph runs one distribution (ROS 2 does not support traffic between distributions), and
the rule that one ROS domain holds one run. ROS-free."""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Where every node publishes what it runs on (``NodeInfo``, latched).
NODES_TOPIC = "/aerialdojo/nodes"
#: Set in each node's environment by its launcher (``runner.start_graph``, the launch file): the
#: run directory it was started for, which its ``NodeInfo`` names.
RUN_DIR_ENV = "AERIALDOJO_RUN_DIR"
#: Set in its nodes' environment by a launcher that holds the run's ROS domain on this host
#: and has looked for other runs in it (``aerialdojo eval``): the value is that domain.
DOMAIN_CHECKED_ENV = "AERIALDOJO_DOMAIN_CHECKED"
#: Set in its nodes' environment by a launcher that shows the run's progress from the episode
#: events (``aerialdojo eval``): the name of its listening node, which the task manager waits
#: for before the first episode. Not a parameter: the run's saved config must not wait for
#: a listener when it is run again another way (``ros2 launch``).
PROGRESS_LISTENER_ENV = "AERIALDOJO_PROGRESS_LISTENER"
#: The node that serves a run's episodes: one per run, so two in a domain are two runs.
TASK_MANAGER_NODE = "task_manager"
#: What a node reports when neither a sourced installation nor the wheels name a distribution.
UNKNOWN = "unknown"
#: The wheels route's meta package of rclpy, e.g. ``ros_jazzy_rclpy-7.1.6.dist-info``.
_META_PACKAGE = re.compile(r"^ros_([a-z]+)_rclpy-[^-]+\.dist-info$")


def run_id_of(environ: Mapping[str, str] | None = None) -> str:
    """The run this process belongs to: the name of the run directory its launcher named
    (``RUN_DIR_ENV``), "" for a node started by hand. Messages and requests carry it, and a
    node of one run ignores another run's (``nodes.common.RunFilter``)."""
    run_dir = (os.environ if environ is None else environ).get(RUN_DIR_ENV, "")
    return os.path.basename(os.path.normpath(run_dir)) if run_dir else ""


def another_runs(sender: str, own: str) -> bool:
    """Whether a message that names the run ``sender`` is another run's than ``own``: a
    message that names no run, and every message to a receiver of no run (both started by
    hand), is everyone's."""
    return bool(sender) and bool(own) and sender != own


def ros_distro(
    environ: Mapping[str, str] | None = None, search_path: Sequence[str] | None = None
) -> str:
    """The ROS 2 distribution of this process: ``ROS_DISTRO`` where an installation is sourced
    (its setup script sets it), else that of the ``ros-<distro>-rclpy`` wheel installed on
    ``search_path`` (the wheels route), else ``UNKNOWN``.

    Args:
        environ: the environment; ``os.environ`` if None.
        search_path: where packages are installed; ``sys.path`` if None.
    """
    distro = (os.environ if environ is None else environ).get("ROS_DISTRO", "")
    if distro:
        return distro
    for entry in sys.path if search_path is None else search_path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            match = _META_PACKAGE.match(name)
            if match:
                return match[1]
    return UNKNOWN


def python_version() -> str:
    """This interpreter's version, e.g. ``3.12.1``."""
    return platform.python_version()


@dataclass(frozen=True)
class NodeRecord:
    """What one node of a run reported it runs on (a ``NodeInfo`` message, duck-typed).

    Attributes:
        node: its fully qualified name.
        ros_distro: its ROS 2 distribution (``UNKNOWN`` when it could not tell).
        python_version: its interpreter's version.
    """

    node: str
    ros_distro: str
    python_version: str

    @classmethod
    def of(cls, info: Any) -> NodeRecord:
        """The record of a ``NodeInfo`` message (live or from a bag)."""
        return cls(str(info.node), str(info.ros_distro), str(info.python_version))

    def to_dict(self) -> dict[str, str]:
        return {
            "node": self.node,
            "ros_distro": self.ros_distro,
            "python_version": self.python_version,
        }


def distribution_mismatch(nodes: Iterable[NodeRecord]) -> str:
    """A warning that names each distribution and its nodes when the nodes report more than
    one; "" when they agree (nodes that could not tell are left out)."""
    by_distro: dict[str, list[str]] = {}
    for record in nodes:
        if record.ros_distro != UNKNOWN:
            by_distro.setdefault(record.ros_distro, []).append(record.node)
    if len(by_distro) < 2:
        return ""
    listed = "; ".join(
        f"{distro}: {', '.join(sorted(names))}" for distro, names in sorted(by_distro.items())
    )
    return (
        f"the graph's nodes run different ROS 2 distributions ({listed}); ROS 2 does not support "
        "traffic between distributions (messages can be dropped silently): run every node, the "
        "robot's included, on one distribution"
    )


def platform_summary(nodes: Sequence[NodeRecord]) -> dict[str, str]:
    """What ``metrics.json`` records of the run's nodes: the distributions and the Python
    versions they reported, each one value when the graph agrees, else every one,
    comma-separated. (Which node reported what is in the report and, on a mismatch, the
    notes: a node heard late may be missing there, while these values stay the same.)"""
    return {
        "ros_distro": ", ".join(sorted({record.ros_distro for record in nodes})),
        "python_version": ", ".join(sorted({record.python_version for record in nodes})),
    }


def announces_task_manager(info: Any) -> bool:
    """Whether a ``NodeInfo`` (duck-typed) is a task manager's, in whichever namespace."""
    return str(info.node).rsplit("/", 1)[-1] == TASK_MANAGER_NODE


@dataclass(frozen=True)
class RunSighting:
    """Another run's task manager seen in this run's ROS domain (from its ``NodeInfo``, or
    from the ROS graph alone when it announced nothing yet: then the fields are empty).

    Attributes:
        run_dir: the run directory its launcher named ("" when unknown or started by hand).
        host: the host it runs on ("" when unknown).
        pid: its process id on that host (0 when unknown).
    """

    run_dir: str = ""
    host: str = ""
    pid: int = 0

    @classmethod
    def of(cls, info: Any) -> RunSighting:
        """The sighting of a ``NodeInfo`` message (duck-typed)."""
        return cls(str(info.run_dir), str(info.host), int(info.pid))

    def describe(self) -> str:
        """E.g. ``run runs/20261203-144000 (host lab-3, pid 4242)``."""
        place = ", ".join(
            part
            for part in (
                f"host {self.host}" if self.host else "",
                f"pid {self.pid}" if self.pid else "",
            )
            if part
        )
        if self.run_dir:
            run = f"run {self.run_dir}"
        elif place:
            run = "a run started by hand (no run directory)"
        else:
            return "a run that has not announced itself yet"
        return f"{run} ({place})" if place else run


def domain_taken_message(domain: str, others: Sequence[RunSighting]) -> str:
    """Why a run refuses to start in ``domain`` where ``others`` run, and the ways out.

    Nodes only meet within a domain: two runs in one would answer each other's requests and
    record each other's episodes, and both would be scored wrong."""
    listed = "; ".join(sighting.describe() for sighting in others)
    shown = domain or "0 (ROS_DOMAIN_ID unset)"
    return (
        f"ROS_DOMAIN_ID={shown} is in use by another aerialdojo run: {listed}. Two runs in "
        "one domain answer each other's requests and both are scored wrong, so this run did "
        "not start. Run it in another domain (export another "
        "ROS_DOMAIN_ID between 0 and 101, or unset ROS_DOMAIN_ID and `aerialdojo eval` "
        "claims a free one), or wait until that run ends."
    )
