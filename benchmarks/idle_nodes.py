"""CPU that the graph's nodes use while nothing happens: no node may poll (issue 30: an idle
node uses under 1 % of a core).

The graph of ``config/eval.yaml`` (bridge, task manager, UAV agent, evaluator) starts with
``task_manager.auto_run: false``, so once it has settled every node waits: the agent for a
task, the task manager for a ``start_episode`` request, the bridge for a reset, the evaluator
for events. Beside it runs a bare rclpy node (one subscription, ``rclpy.spin``), started the
same way in the same domain: the least a ROS 2 Python process costs when idle. After
``--settle`` seconds each process's CPU time (user + system, all threads, /proc) is read over
``--seconds``.

    tools/run.sh python benchmarks/idle_nodes.py [--settle 15] [--seconds 20]

Last line: RESULT idle_node_core_percent value=<busiest node, % of a core>
baseline=<bare node> ratio=<v/b>; the aim is a value under 1.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aerialdojo.graph import node_specs
from aerialdojo.params import validate_parameters
from aerialdojo.runner import run_domain, start_graph, stop_graph

BARE_NODE = """
import rclpy
from rclpy.executors import ExternalShutdownException
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node("bare_idle_node")
node.create_subscription(String, "/bare_idle_topic", lambda _: None, 10)
try:
    rclpy.spin(node)
except (KeyboardInterrupt, ExternalShutdownException):
    pass
"""

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of a process, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=15.0, help="seconds before measuring")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds measured")
    args = parser.parse_args()
    config = {
        "sim_bridge": validate_parameters("sim_bridge", {}, "bench"),
        "task_manager": validate_parameters("task_manager", {"auto_run": False}, "bench"),
        "uav_agent": validate_parameters("uav_agent", {}, "bench"),
        "evaluator": validate_parameters("evaluator", {}, "bench"),
    }
    with tempfile.TemporaryDirectory() as run_dir, run_domain(os.environ) as domain:
        # A domain held for these nodes: in a shared one another run's messages would wake
        # them, and its requests reach them.
        env = {**os.environ, "ROS_DOMAIN_ID": domain}
        nodes = start_graph(node_specs(config), Path(run_dir), env)
        bare = subprocess.Popen([sys.executable, "-c", BARE_NODE], env=env)
        try:
            time.sleep(args.settle)
            pids = {node.spec.name: node.process.pid for node in nodes} | {"bare rclpy": bare.pid}
            dead = [name for name, pid in pids.items() if not Path(f"/proc/{pid}").exists()]
            if dead:
                sys.exit(f"not running after {args.settle} s: {', '.join(dead)} (logs: {run_dir})")
            before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            started = time.monotonic()
            time.sleep(args.seconds)
            after = {name: cpu_seconds(pid) for name, pid in pids.items()}
            elapsed = time.monotonic() - started
        finally:
            bare.send_signal(signal.SIGINT)
            bare.wait(10)
            stop_graph(nodes, grace_s=5.0)
    percent = {name: 100.0 * (after[name] - before[name]) / elapsed for name in pids}
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"idle for {elapsed:.1f} s after {args.settle:.0f} s of start-up (load average {load}):")
    for name, value in percent.items():
        print(f"  {name:14s} {value:5.2f} % of a core")
    busiest = max(value for name, value in percent.items() if name != "bare rclpy")
    baseline = percent["bare rclpy"]
    # A tick is 10 ms: below one over the window the bare node may read 0.
    floor = 100.0 / _TICKS / elapsed
    print(
        f"RESULT idle_node_core_percent value={busiest:.2f} baseline={baseline:.2f} "
        f"ratio={busiest / max(baseline, floor):.2f}"
    )


if __name__ == "__main__":
    main()
