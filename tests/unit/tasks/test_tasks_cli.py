"""``aerialdojo scenes``, ``render`` and ``tasks generate|validate|stats`` run as a user runs
them (a subprocess): one surface for AerialDojo scenes and AGOS towns, progress while
generating, and no silent generation of every scene."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

from aerialdojo.agos.episodes import load_agos_suite
from aerialdojo.tasks.suite import load_suite, resolve_suite


def _aerialdojo(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        check=False,
    )


def test_validate_and_stats_read_the_shipped_agos_suite() -> None:
    validated = _aerialdojo("tasks", "validate", "agos_mini")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert validated.stdout == ""
    assert validated.stderr.strip() == "agos_mini (shipped suite): ok"
    stats = _aerialdojo("tasks", "stats", "agos_mini")
    assert stats.returncode == 0, stats.stderr
    assert "| AgosTown_1 | 2 | 2 | 2 | 6 |" in stats.stdout
    for output in (validated, stats):
        assert "site-packages" not in output.stdout + output.stderr


def test_a_broken_agos_suite_lists_each_problem_once_by_the_path_given(tmp_path: Path) -> None:
    shutil.copytree(resolve_suite("agos_mini").parent, tmp_path / "broken")
    suite_file = tmp_path / "broken" / "suite.json"
    document = json.loads(suite_file.read_text())
    document["episodes"][0]["setting"] = "extreme"
    missing_image = tmp_path / "broken" / document["episodes"][1]["reference_images"][0]
    missing_image.unlink()
    suite_file.write_text(json.dumps(document))
    validated = _aerialdojo("tasks", "validate", "broken", cwd=tmp_path)
    assert validated.returncode == 1
    problems = validated.stdout.splitlines()
    assert len(set(problems)) == len(problems) == 3
    assert all(line.startswith("broken/suite.json: ") for line in problems)
    assert "AgosTown_1-easy-0001: setting: expected one of easy, mid, hard" in problems[0]
    assert "AgosTown_1-easy-0002: reference_images: missing" in problems[1]
    assert "default_selection names unknown episodes ['AgosTown_1-easy-0001']" in problems[2]
    assert validated.stderr.strip() == "broken/suite.json: 3 problem(s)"
    stats = _aerialdojo("tasks", "stats", "broken", cwd=tmp_path)
    assert stats.returncode == 2
    assert stats.stderr.count("extreme") == 1 and "site-packages" not in stats.stderr


def test_generate_names_its_scenes_rather_than_starting_on_all_42(tmp_path: Path) -> None:
    refused = _aerialdojo("tasks", "generate", "--out", tmp_path / "everything")
    assert refused.returncode == 2
    assert "--scenes" in refused.stderr
    assert not (tmp_path / "everything").exists()
    mixed = _aerialdojo(
        "tasks", "generate", "--out", tmp_path / "mixed", "--scenes", "Park_1", "AgosTown_1"
    )
    assert mixed.returncode == 2 and "mixes AGOS towns" in mixed.stderr


def test_generate_prints_progress_lines_when_stdout_is_not_a_terminal(tmp_path: Path) -> None:
    out = tmp_path / "park"
    generated = _aerialdojo(
        "tasks", "generate", "--out", out, "--scenes", "Park_1", "--per-scene", "2",
        "--max-candidates", "12", "--seed", "3",
    )  # fmt: skip
    assert generated.returncode == 0, generated.stderr
    lines = generated.stdout.splitlines()
    assert lines[-1] == str(out / "suite.json")
    # A line as the scene starts, one every 10 s, one when it is done; then the suite.
    assert lines[0].startswith("[0/1 scenes] Park_1: running, 1/12 candidate pairs, ")
    assert lines[-2].startswith("[1/1 scenes] Park_1: done, ")
    assert "candidate pairs" in lines[-2] and " kept" in lines[-2]
    suite = load_suite(out / "suite.json")
    assert suite.name == "park" and {e.scene for e in suite.episodes} == {"Park_1"}


def test_generate_draws_live_progress_bars_on_a_terminal(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", "tasks", "generate", "--out",
         str(tmp_path / "live"), "--scenes", "Desert_1", "--per-scene", "1",
         "--max-candidates", "6"],
        stdout=terminal, stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "120"},
    )  # fmt: skip
    os.close(terminal)
    screen = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        screen += chunk
    assert process.wait(timeout=600) == 0, process.stderr.read() if process.stderr else ""
    os.close(controller)
    text = screen.decode(errors="replace")
    assert "\x1b[" in text  # cursor control: a live display, not plain lines
    assert "Desert_1" in text and "scenes" in text
    assert "[1/1 scenes]" not in text


def test_scenes_render_and_generate_know_the_agos_towns(tmp_path: Path) -> None:
    listed = _aerialdojo("scenes", "list")
    agos = [line.split()[:2] for line in listed.stdout.splitlines() if " agos " in line]
    assert agos == [["AgosTown_0", "agos"], ["AgosTown_1", "agos"]]
    rendered = _aerialdojo(
        "render", "--scene", "AgosTown_1", "--out", tmp_path / "town.png", "--size", "48"
    )
    assert rendered.returncode == 0, rendered.stderr
    assert (tmp_path / "town.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    helped = _aerialdojo("tasks", "generate", "--help")
    assert "AGOS towns" in helped.stdout and "--per-setting" in helped.stdout
    out = tmp_path / "towns"
    generated = _aerialdojo(
        "tasks", "generate", "--out", out, "--scenes", "AgosTown_1", "--per-setting", "2",
        "--seed", "0",
    )  # fmt: skip
    assert generated.returncode == 0, generated.stderr
    assert "AgosTown_1: done, 6/6 episodes" in generated.stdout
    assert load_agos_suite(out / "suite.json").name == "towns"  # not the shipped suite's
    assert _aerialdojo("tasks", "validate", out).returncode == 0
    # The shipped agos_mini is this command's output under its own name.
    shipped = resolve_suite("agos_mini")
    ours, theirs = (json.loads(path.read_text()) for path in (out / "suite.json", shipped))
    assert {**ours, "name": "agos_mini"} == theirs
    for image in (shipped.parent / "references").iterdir():
        assert (out / "references" / image.name).read_bytes() == image.read_bytes()
    wrong = _aerialdojo(
        "tasks", "generate", "--out", tmp_path / "x", "--scenes", "AgosTown_1", "--per-scene", "2"
    )
    assert wrong.returncode == 2 and "--per-scene: only for AerialDojo scenes" in wrong.stderr
    # The generation rules AGOS-Bench does not give are named options, off unless asked for.
    unknown = _aerialdojo(
        "tasks", "generate", "--out", tmp_path / "y", "--scenes", "AgosTown_1",
        "--extra-rule", "no_red_cars",
    )  # fmt: skip
    assert unknown.returncode == 2 and "unknown extra rule(s) no_red_cars" in unknown.stderr
    assert not (tmp_path / "y").exists()
    assert "--extra-rule NAME" in helped.stdout and "uav_start_out_of_view" in helped.stdout
