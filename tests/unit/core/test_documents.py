"""Bounded parsing (issue 29, item 9): every document a user hands aerialdojo is read with
size, depth and alias limits and refused with its file and the reason, and run records are
written whole or not at all."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from aerialdojo.documents import (
    CONFIG,
    RECORD,
    DocumentError,
    Limits,
    json_depth,
    load_json,
    load_yaml,
    parse_json,
    parse_yaml,
    write_atomic,
)

#: Billion laughs: nine levels of nine aliases each, 9**9 strings once expanded, padded by a
#: comment to the 578 bytes of the issue's bomb.
_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)
ALIAS_BOMB = _LAUGHS + "#" * (578 - len(_LAUGHS) - 1) + "\n"


def test_the_alias_bomb_is_578_bytes() -> None:
    assert len(ALIAS_BOMB.encode()) == 578


def test_a_578_byte_alias_bomb_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    # Issue 29, item 9: the bomb passed 3 GB. Measured in a fresh process, so that the
    # peak resident memory is the bomb's alone; the time it takes is benchmarks/alias_bomb.py's.
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    probe = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from aerialdojo.graph import load_config\n"
        "from aerialdojo.errors import ConfigError\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    load_config(Path(sys.argv[1]))\n"
        "except ConfigError as error:\n"
        "    print(error)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True
    )
    message, grown_kib = done.stdout.strip().splitlines()
    assert message.startswith(f"{path}: line ") and "expands to more than 100,000 nodes" in message
    assert int(grown_kib) < 50 * 1024  # MiB grown while refusing it, in KiB


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a: " + "[" * 200_000, "nested deeper than a run config can be (32 levels)"),
        ("x: &x [1, *x]", "alias *x refers to a node that contains it"),
        ("".join(f"k{i}: &a{i} 1\n" for i in range(101)) + "l: [" + ", ".join(
            f"*a{i}" for i in range(101)) + "]", "more than 100 aliases (*name) in a run config"),
        ("a: *nowhere", "not YAML: found undefined alias"),
        ("n: " + "9" * 5000, "not YAML: Exceeds the limit"),
        # Found by tests/fuzz: the reader refuses a control character before parsing starts.
        ("a: \x07", "not YAML: unacceptable character #x0007"),
    ],
)  # fmt: skip
def test_yaml_beyond_its_limits_is_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(DocumentError) as refused:
        parse_yaml(text, CONFIG, "command line: uav_agent.seed")
    assert str(refused.value).startswith("command line: uav_agent.seed: ")
    assert reason in str(refused.value)


def test_a_site_file_takes_no_alias_at_all() -> None:
    with pytest.raises(DocumentError, match=r"aliases \(\*name\) are not allowed in a site file"):
        parse_yaml("a: &a 1\nb: *a\n", Limits("site file", 2**20), "site.yaml")


def test_yaml_within_its_limits_loads(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("base: &base {seed: 1}\nuav_agent: {ros__parameters: *base}\n")
    assert load_yaml(path, CONFIG) == {
        "base": {"seed": 1},
        "uav_agent": {"ros__parameters": {"seed": 1}},
    }


def test_dev_zero_and_directories_are_refused_without_reading_them_whole(tmp_path: Path) -> None:
    # Read whole, /dev/zero never ends: that it is refused at all shows the bound.
    with pytest.raises(
        DocumentError, match=r"/dev/zero: larger than a run config can be \(1 MiB\)"
    ):
        load_yaml(Path("/dev/zero"), CONFIG)
    with pytest.raises(DocumentError, match="is a directory"):
        load_yaml(tmp_path, CONFIG)
    with pytest.raises(DocumentError, match="cannot read: No such file"):
        load_json(tmp_path / "missing.json", RECORD)


def test_json_depth_counts_brackets_outside_strings_only() -> None:
    assert json_depth(b'{"a": [1, {"b": "]]]][[[["}], "c": "\\\\", "d": "\\"[["}') == 3
    assert json_depth(b"[]" * 10) == 1
    assert json_depth(b'"[[["') == 0
    # Across the scanner's 16 MiB blocks: a string opened in one block closes in the next.
    padding = b"x" * (16 * 2**20)
    document = b'[["' + padding + b'[[[", [[1]]]]'
    assert json_depth(document) == 4 == 2 + 2


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"[" * 200_000 + b"]" * 200_000, "nested 200000 levels deep; a run record has at most 32"),
        (b"[1, NaN]", "not JSON: NaN is not a JSON number"),
        (b'{"a": Infinity}', "not JSON: Infinity is not a JSON number"),
        (b'{"a": 1', "line 1 column 8: not JSON: Expecting ',' delimiter"),
        (b"\xff\xfe", "not a text file: byte 0 is not UTF-8"),
        (b"1" * 5000, "not JSON: Exceeds the limit"),
    ],
)
def test_json_beyond_its_limits_is_refused_with_the_reason(data: bytes, reason: str) -> None:
    with pytest.raises(DocumentError) as refused:
        parse_json(data, RECORD, "runs/x/metrics.json")
    assert str(refused.value) == f"runs/x/metrics.json: {reason}" or reason in str(refused.value)


def test_an_atomic_write_leaves_the_old_file_whole_when_the_disk_refuses(tmp_path: Path) -> None:
    # A file-size limit makes the write fail as a full disk does (Python ignores SIGXFSZ, so
    # the write raises OSError).
    path = tmp_path / "run_status.json"
    write_atomic(path, json.dumps({"complete": False}))
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    try:
        with pytest.raises(OSError):
            write_atomic(path, json.dumps({"complete": True, "padding": "x" * 8192}))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert json.loads(path.read_text()) == {"complete": False}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run_status.json"]
