"""The fake ProjectAirSim server in a process of its own, driven through its stdin (it needs
msgpack and pynng: run it on .venv-projectairsim's interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


class FakeServerProcess:
    """Starts ``projectairsim_server.py`` and reads its ports.

    Args:
        python: the interpreter to run it on.
        log: file that receives its stderr.
        arguments: its command-line options (``--obstacle``, ``--load-delay``,
            ``--topics-protocol``, ``--depth-scale``, ``--black-frames``, ``--render-offset``,
            ``--level-object``).
    """

    def __init__(self, python: Path, log: Path, arguments: Sequence[str] = ()) -> None:
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [str(python), "-m", "fakes.projectairsim_server", *arguments],
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        assert self.process.stdout is not None
        self.ports: dict[str, int] = json.loads(self.process.stdout.readline())

    def command(self, text: str) -> None:
        """Send ``drop N``, ``hang`` or ``answer`` and wait until it is in force."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "ok"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
