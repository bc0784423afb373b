"""How often a node stopped by a signal ends wrongly: with a SIGSEGV (rclpy's signal thread
triggering a guard condition an executor's shutdown freed) or with status 1 (an executor's
wait set built on the context that thread had just shut down). The runner and
``eval.launch.py`` restart a stopped task manager or agent only after status 0.

Each stop starts a node shaped like the task manager (two executors, one spun on a thread of
its own, both shut down in its clean-up), waits until it spins, waits ``--after-s``, and
sends SIGINT or SIGTERM (alternately). This tree's ``node_process`` against the baseline,
rclpy's own stop handling (``rclpy.init``, then ``rclpy.try_shutdown`` at the end, a
KeyboardInterrupt or ExternalShutdownException ending the body, a thread's error status 1:
``node_process`` before it took over the stop), in alternating batches. The races need a
busy machine to show.

    tools/run.sh python benchmarks/stop_signals.py [--stops 100] [--batch 25] [--after-s 0.2]

Last line: RESULT wrong_stops value=<this tree's wrong endings> baseline=<rclpy's own>
ratio=<v/b> (ratio 0 when the baseline had none either: the run showed nothing).
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import textwrap
import time

#: The node, its session given by the first argument: ``node_process`` or rclpy's own.
NODE = textwrap.dedent(
    """
    import contextlib, sys, threading
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from aerialdojo.nodes.common import node_process

    @contextlib.contextmanager
    def rclpy_own():
        # A thread that died of an error ends the node with status 1, as in node_process.
        failures = []
        threading.excepthook = failures.append
        try:
            rclpy.init()
            try:
                yield
            finally:
                rclpy.try_shutdown()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        if failures:
            sys.exit(1)

    with node_process() if sys.argv[1] == "node_process" else rclpy_own():
        node = rclpy.create_node("stopped_by_a_signal")
        link_node = rclpy.create_node("stopped_by_a_signal_link")
        node.create_timer(0.01, lambda: None)
        link_node.create_timer(0.01, lambda: None)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        link_executor = SingleThreadedExecutor()
        link_executor.add_node(link_node)

        def spin_link():
            with contextlib.suppress(ExternalShutdownException):
                link_executor.spin()

        link = threading.Thread(target=spin_link)
        link.start()
        print("spinning", flush=True)
        try:
            executor.spin()
        finally:
            link_executor.shutdown(timeout_sec=5.0)
            link.join(timeout=5.0)
            executor.shutdown(timeout_sec=5.0)
    """
)


def _stop_once(session: str, stop: signal.Signals, after_s: float) -> int | str:
    """The exit status of one node stopped by ``stop`` (negative: the signal that killed it)."""
    node = subprocess.Popen(
        [sys.executable, "-c", NODE, session],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert node.stdout is not None
        if node.stdout.readline() != "spinning\n":
            return f"did not start ({node.wait()})"
        time.sleep(after_s)
        node.send_signal(stop)
        return node.wait(timeout=60)
    except subprocess.TimeoutExpired:
        return "hung"
    finally:
        node.kill()
        node.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", type=int, default=100, help="stops of each session")
    parser.add_argument("--batch", type=int, default=25, help="stops before switching session")
    parser.add_argument("--after-s", type=float, default=0.2, help="spinning before the stop")
    args = parser.parse_args()
    endings: dict[str, collections.Counter] = {
        "node_process": collections.Counter(),
        "rclpy_own": collections.Counter(),
    }
    stops = (signal.SIGINT, signal.SIGTERM)
    for first in range(0, args.stops, args.batch):
        for session, counter in endings.items():
            load = os.getloadavg()[0]
            batch = collections.Counter(
                _stop_once(session, stops[i % 2], args.after_s)
                for i in range(first, min(first + args.batch, args.stops))
            )
            counter.update(batch)
            print(f"{session}: {dict(batch)} (load {load:.2f})", flush=True)
    wrong = {session: sum(n for end, n in c.items() if end != 0) for session, c in endings.items()}
    for session, counter in endings.items():
        print(f"{session}: {dict(counter)} over {args.stops} stops")
    value, baseline = wrong["node_process"], wrong["rclpy_own"]
    ratio = value / baseline if baseline else 0.0
    print(f"RESULT wrong_stops value={value} baseline={baseline} ratio={ratio:.3f}")


if __name__ == "__main__":
    main()
