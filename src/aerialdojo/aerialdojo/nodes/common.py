"""ROS wiring shared by the nodes: the process's ROS session, parameter declaration, time and
waiting."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import rclpy
from aerialdojo_interfaces.msg import NodeInfo
from builtin_interfaces.msg import Time
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy import executors
from rclpy.clock import Clock, ClockType
from rclpy.context import Context
from rclpy.exceptions import ParameterUninitializedException
from rclpy.executors import ExternalShutdownException
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.signals import (
    SignalHandlerOptions,
    get_current_signal_handlers_options,
    uninstall_signal_handlers,
)
from rclpy.task import Future
from rclpy.timer import Timer
from std_msgs.msg import Header

from aerialdojo.errors import ConfigError
from aerialdojo.nodes.lifetime import exit_with_launcher
from aerialdojo.nodes.qos import NODES_QOS, publisher_without_events
from aerialdojo.params import NODE_PARAMETERS, ParamSpec
from aerialdojo.runtime import (
    NODES_TOPIC,
    RUN_DIR_ENV,
    another_runs,
    python_version,
    ros_distro,
    run_id_of,
)

#: What a failed rcl call raises (rclpy exports it from its extension only).
RCLError = rclpy_implementation.RCLError


@contextlib.contextmanager
def node_process(args: list[str] | None = None) -> Iterator[None]:
    """The ROS session of a node's process, around the body of its ``main``: the process tied
    to its launcher, rclpy initialised (with ``args``), shut down at the end, and a Ctrl-C or
    an external shutdown ending the body quietly.

    An exception that escapes any thread of the node (the task manager's episode thread, a
    backend's worker) ends the node with that error (``WorkerFailure``), never leaving a
    process up that waits for a thread that died: the hook logs it, shuts rclpy down so
    that the body's spin returns, and the process exits with status 1.

    Written out because ``with rclpy.init(...)`` exists only from Kilted on: Jazzy's and
    Humble's ``rclpy.init`` return None (README, "ROS 2 distributions").
    """
    exit_with_launcher()
    failures: list[BaseException] = []
    threading.excepthook = functools.partial(_end_on_thread_failure, failures)
    # Before rclpy.init: rclpy's own handlers call the handler they replace.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, _stop_on_signal)
    try:
        rclpy.init(args=args)
        _stopping.context, _stopping.requested = rclpy.get_default_context().handle, False
        try:
            yield
        except RCLError:
            if rclpy.ok():
                raise
            # A stop's context shutdown met an executor building its wait set: the stop.
        finally:
            rclpy.try_shutdown()
            _stopping.context = None
            # Nothing may walk the executors' guard conditions while the interpreter frees
            # them at exit.
            _remove_rclpy_signal_handling()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    if failures:
        raise WorkerFailure(failures[0])


def _stop_on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGINT or SIGTERM. Once rclpy is up, the first one stops the node through rclpy: its
    signal thread wakes every executor and then shuts the context down, so each spin ends.
    This handler first waits until that thread is done and gone: it wakes the executors
    through guard conditions it holds by bare pointer, with no lock against an executor's
    shutdown freeing them (rclpy ``signal_handler.cpp``, ``trigger_guard_conditions`` and
    ``unregister_sigint_guard_condition``), and a clean-up that shut an executor down while
    the thread still walked them ended the process with SIGSEGV in
    ``rcl_trigger_guard_condition``. Then, if the main thread is spinning (a callback waiting
    on a model or a simulator included), a ``KeyboardInterrupt`` ends the spin at once; its
    clean-up is never interrupted. Before rclpy is up, and for every later signal (a second
    Ctrl-C, a launcher's SIGTERM after its grace period), a ``KeyboardInterrupt``, as
    Python's own handler raises."""
    if _stopping.context is None or _stopping.requested:
        raise KeyboardInterrupt
    _stopping.requested = True
    # The context's own handle: its Python wrapper's lock may be held by the code this
    # handler interrupted.
    deadline = time.monotonic() + STOP_HANDOVER_S
    while _stopping.context.ok() and time.monotonic() < deadline:
        time.sleep(0.001)
    _remove_rclpy_signal_handling()
    if _spinning(frame):
        raise KeyboardInterrupt


def _spinning(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside an executor's spin."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename == executors.__file__ and code.co_name.startswith("spin"):
            return True
        frame = frame.f_back
    return False


def _remove_rclpy_signal_handling() -> None:
    """Uninstall rclpy's signal handlers, which joins its signal thread, if they are
    installed (uninstalling twice leaves SIGINT with the default handler for a moment)."""
    if get_current_signal_handlers_options() != SignalHandlerOptions.NO:
        uninstall_signal_handlers()


#: How long a stop signal's handler waits for rclpy's signal thread to shut the context down
#: (it takes well under a millisecond; the bound only keeps a stop from hanging on it).
STOP_HANDOVER_S = 2.0


class _Stopping:
    """Where this process's node stands for ``_stop_on_signal``."""

    #: The handle of the context rclpy's signal thread shuts down; None until rclpy is up.
    context: Any = None
    #: A stop signal came once rclpy was up.
    requested = False


_stopping = _Stopping()


class WorkerFailure(SystemExit):
    """A thread of the node died of ``error``: the process exits with status 1 and the
    error (its traceback is already in the log)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(f"a thread of this node failed, so the node ends: {error!r}")


def _end_on_thread_failure(
    failures: list[BaseException], failure: threading.ExceptHookArgs
) -> None:
    # A thread that stops because rclpy shut down (SIGINT, SIGTERM) did not fail, nor one
    # whose executor was building its wait set when the stop shut the context down.
    if failure.exc_type in (SystemExit, ExternalShutdownException) or failure.exc_value is None:
        return
    if failure.exc_type is RCLError and not rclpy.ok():
        return
    failures.append(failure.exc_value)
    thread = failure.thread.name if failure.thread is not None else "a thread"
    detail = "".join(
        traceback.format_exception(failure.exc_type, failure.exc_value, failure.exc_traceback)
    )
    print(f"[aerialdojo] {thread} failed; ending the node:\n{detail}", file=sys.stderr, flush=True)
    rclpy.try_shutdown()  # the body's spin returns, and node_process raises WorkerFailure


def announce_node(node: Node) -> Publisher:
    """Publish what ``node`` runs on, its ROS 2 distribution and Python, and the run, host
    and process it belongs to, latched on ``/aerialdojo/nodes``: the evaluator records it
    with the run and warns when the graph's nodes run different distributions, and a run
    starting in the same domain names this one (``nodes.domain_guard``). Every aerialdojo
    node calls it once, at start."""
    # Without event handlers: every wake-up of the node's executor would rebuild them into
    # its wait set (``qos.publisher_without_events``).
    publisher = publisher_without_events(node, NodeInfo, NODES_TOPIC, NODES_QOS)
    publisher.publish(
        NodeInfo(
            header=Header(stamp=node.get_clock().now().to_msg()),
            node=node.get_fully_qualified_name(),
            ros_distro=ros_distro(),
            python_version=python_version(),
            run_dir=os.environ.get(RUN_DIR_ENV, ""),
            host=socket.gethostname(),
            pid=os.getpid(),
        )
    )
    return publisher


class RunFilter:
    """Tells a node's own run's messages and requests from another run's, by the run id they
    carry, and logs once per other run that it ignores them: a second layer under the domain
    refusal (``nodes.domain_guard``), for whatever another run, or a stray process that says
    it belongs to one, sends into this run's domain. A message that names no run (a node
    started by hand) is everyone's, as is every message to a node started by hand."""

    def __init__(self, node: Node) -> None:
        self.run_id = run_id_of()
        self._node = node
        self._logged: set[str] = set()

    def foreign(self, run_id: str, what: str) -> bool:
        """Whether ``what`` (e.g. "a step request"), which names ``run_id``, is another
        run's, and so to be ignored."""
        if not another_runs(run_id, self.run_id):
            return False
        if run_id not in self._logged:
            self._logged.add(run_id)
            self._node.get_logger().warning(
                f"ignoring {what} of run {run_id!r} (and all that run sends later): this node "
                f"belongs to run {self.run_id!r}; two runs share ROS_DOMAIN_ID "
                f"{os.environ.get('ROS_DOMAIN_ID', '0')}, give each its own (docs/isolation.md)"
            )
        return True

    def refusal(self, run_id: str) -> str:
        """The answer to a request of the other run ``run_id``, which a service must give."""
        return (
            f"ignored: the request belongs to run {run_id!r}, and {self._node.get_name()} "
            f"serves run {self.run_id!r} (two runs share a ROS domain)"
        )


def process_name(host: str | None = None, pid: int | None = None) -> str:
    """``<host>:<pid>`` of a process (default: this one), as ``NodeInfo`` names it: tells a
    restarted node from the one it replaced."""
    return f"{socket.gethostname() if host is None else host}:{os.getpid() if pid is None else pid}"


def declare_node_parameters(node: Node, table: str) -> None:
    """Declare every parameter of ``NODE_PARAMETERS[table]`` with its descriptor.

    The check is registered first, so a bad value from a params file stops the node at start
    with the field named, instead of surfacing later as odd behaviour.
    """
    specs = {spec.name: spec for spec in NODE_PARAMETERS[table]}

    def check(parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            spec = specs.get(parameter.name)
            if spec is None or parameter.type_ == Parameter.Type.NOT_SET:
                continue  # undeclared, or a list declared by type and left unset
            try:
                spec.check(parameter.value, f"{node.get_name()}.{parameter.name}")
            except ConfigError as error:
                return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(check)
    for spec in specs.values():
        # rclpy types an empty list as a byte array, which would refuse the list a params
        # file gives; such a parameter is declared by type and reads [] when unset.
        default = _EMPTY_LIST_TYPES[spec.item_type] if spec.default == [] else spec.default
        node.declare_parameter(spec.name, default, _descriptor(spec))


_EMPTY_LIST_TYPES = {
    str: Parameter.Type.STRING_ARRAY,
    float: Parameter.Type.DOUBLE_ARRAY,
    int: Parameter.Type.INTEGER_ARRAY,
}


def _descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """Descriptor shown by ``ros2 param describe``; values are read once, at start."""
    constraints = []
    if spec.choices:
        constraints.append(f"one of: {', '.join(spec.choices)}")
    if spec.minimum is not None:
        constraints.append(f">= {spec.minimum:g}")
    if spec.above is not None:
        constraints.append(f"> {spec.above:g}")
    if spec.maximum is not None:
        constraints.append(f"<= {spec.maximum:g}")
    return ParameterDescriptor(
        description=spec.description,
        additional_constraints=", ".join(constraints),
        read_only=True,
    )


def parameters_of(node: Node, table: str) -> dict[str, Any]:
    """Every declared parameter of ``table`` with its value (for ROS-free constructors)."""
    return {spec.name: param(node, spec.name) for spec in NODE_PARAMETERS[table]}


def param(node: Node, name: str) -> Any:
    """The value of a declared parameter ([] for an unset list declared by type)."""
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return []


def time_msg(seconds: float) -> Time:
    """builtin_interfaces/Time of a simulation time in seconds."""
    return time_of_ns(round(seconds * 1e9))


def time_of_ns(nanoseconds: int) -> Time:
    """builtin_interfaces/Time of nanoseconds (the inverse of ``time_ns``)."""
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def time_ns(stamp: Time) -> int:
    """Nanoseconds of a builtin_interfaces/Time."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


#: How often ``wait_for_future`` checks whether its context has shut down, seconds.
_SHUTDOWN_POLL_S = 0.2


def wait_for_future(future: Future, timeout_s: float, context: Context) -> bool:
    """Block the calling thread until ``future`` is done (another executor thread completes
    it), ``timeout_s`` passes or ``context`` shuts down. Returns whether it completed.

    A shut-down context ends the wait: the executor's threads are joined when the process
    exits, so one waiting out the timeout would keep a node whose launcher died alive, and
    answering in its DDS domain, that long."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    deadline = time.monotonic() + timeout_s
    while not done.wait(min(_SHUTDOWN_POLL_S, max(0.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline or not context.ok():
            return False
    return True


def wall_timer(node: Node, period_s: float, callback: Callable[[], None]) -> Timer:
    """A timer on the steady clock: nodes on simulation time would otherwise wait for /clock
    to move, which it does only when a simulation step happens."""
    return node.create_timer(period_s, callback, clock=Clock(clock_type=ClockType.STEADY_TIME))
