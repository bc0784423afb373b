"""A node's life tied to the launcher that started it (``runner.start_graph``), ROS-free."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Mapping

#: Set in each node's environment by ``start_graph``: the pid of the process that started it.
LAUNCHER_PID_ENV = "AERIALDOJO_LAUNCHER_PID"

#: prctl(2) option: the signal a process gets when the thread that started it exits.
_PR_SET_PDEATHSIG = 1


def exit_with_launcher(environ: Mapping[str, str] | None = None) -> None:
    """Have Linux send this node SIGTERM when the ``start_graph`` launcher dies.

    Nodes run in sessions of their own (so a Ctrl-C reaches only the launcher, which stops
    them in order); without this, a launcher killed outright (SIGKILL, the OOM killer, a test
    timeout) would leave them running in the run's DDS domain. The node asks for it itself,
    at start: a ``preexec_fn`` could deadlock in a launcher whose DDS threads are running.
    No-op outside Linux and for nodes started by anything else (``ros2 launch``).
    """
    launcher = (os.environ if environ is None else environ).get(LAUNCHER_PID_ENV, "")
    if not launcher or sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != int(launcher):  # the launcher died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)
