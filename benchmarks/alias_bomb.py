"""How long the run-config loader takes to refuse the 578-byte YAML alias bomb of issue 29
(item 9: it passed 3 GB before), against loading the shipped config it stands in for.

  value:    median seconds ``graph.load_config`` takes to refuse the bomb (nine levels of
            nine aliases, 9**9 strings once expanded, padded to 578 bytes);
  baseline: median seconds ``graph.load_config`` takes to load ``config/eval.yaml``.

The aim is under a second for the value. The peak memory the refusal adds is measured in a
fresh process (``ru_maxrss``), so that it is the bomb's alone.

    tools/run.sh python benchmarks/alias_bomb.py [--repeats 20]

Last line: RESULT alias_bomb_refusal_s value=<bomb> baseline=<shipped config> ratio=<v/b>.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aerialdojo.errors import ConfigError
from aerialdojo.graph import load_config

SHIPPED = Path(__file__).resolve().parents[1] / "config" / "eval.yaml"
BOMB_BYTES = 578


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """Billion laughs: ``levels`` levels of ``width`` aliases each, padded by a comment to
    ``BOMB_BYTES``."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [
        f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]"
        for level in range(1, levels)
    ]
    text = "\n".join(lines) + "\n"
    return text + "#" * (BOMB_BYTES - len(text) - 1) + "\n"


def _seconds(path: Path, repeats: int, refused: bool) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        try:
            load_config(path)
        except ConfigError:
            if not refused:
                raise
        else:
            if refused:
                raise SystemExit(f"{path} was loaded, not refused")
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _peak_growth_mib(path: Path) -> float:
    """MiB of resident memory that refusing ``path`` adds, in a fresh process."""
    probe = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from aerialdojo.errors import ConfigError\n"
        "from aerialdojo.graph import load_config\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    load_config(Path(sys.argv[1]))\n"
        "except ConfigError:\n"
        "    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True
    )
    return int(done.stdout) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        bomb = Path(scratch) / "bomb.yaml"
        bomb.write_text(alias_bomb())
        assert len(bomb.read_bytes()) == BOMB_BYTES
        baseline = _seconds(SHIPPED, args.repeats, refused=False)
        value = _seconds(bomb, args.repeats, refused=True)
        grown = _peak_growth_mib(bomb)
    print(f"shipped config loaded in {baseline * 1e3:.2f} ms (median of {args.repeats})")
    print(f"alias bomb refused in {value * 1e3:.2f} ms; peak memory grew {grown:.1f} MiB")
    print(f"load average {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(
        f"RESULT alias_bomb_refusal_s value={value:.6f} baseline={baseline:.6f} "
        f"ratio={value / baseline:.3f}"
    )


if __name__ == "__main__":
    main()
