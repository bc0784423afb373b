"""Evaluation progress as a user sees it: a live line per episode and a run bar with its ETA
on a terminal, plain unwrapped lines elsewhere (issue 16, item 6)."""

from __future__ import annotations

import io

from rich.console import Console

from aerialdojo.eval_progress import EpisodeProgress, EvalProgress

EPISODE = "Community_0-hard-0000-sem-with-a-long-name-that-a-narrow-console-would-wrap"


def _episode(progress: EvalProgress, count: int) -> None:
    progress(EpisodeProgress(episode_id=EPISODE, index=0, count=count))
    for step in range(1, 4):
        action = f"MoveForward {step}"
        progress(
            EpisodeProgress(episode_id=EPISODE, index=0, count=count, step=step, action=action)
        )
    if progress._progress is not None:
        progress._progress.refresh()  # what its timer does while the episode runs
    ended = EpisodeProgress(
        episode_id=EPISODE, index=0, count=count, step=4, ended="stopped", scored=True
    )
    progress(ended)


def test_a_terminal_gets_a_live_episode_line_and_a_run_bar() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=200, color_system=None)
    progress = EvalProgress(console)
    _episode(progress, count=2)
    progress.close()
    shown = screen.getvalue()
    assert "\x1b[" in shown  # drawn in place, not appended
    assert "3/? last action: MoveForward 3" in shown  # the episode's line: step, last action
    assert f"[1/2] {EPISODE}: stopped after 4 actions" in shown
    assert "episodes" in shown and "1/2" in shown
    assert "-:--:--" in shown or "0:00:0" in shown  # the run bar's time remaining


def test_elsewhere_one_plain_unwrapped_line_per_episode() -> None:
    log = io.StringIO()
    console = Console(file=log, force_terminal=False, width=40, soft_wrap=True)
    progress = EvalProgress(console)
    _episode(progress, count=1)
    progress.close()
    lines = log.getvalue().splitlines()
    assert lines == [f"  [1/1] {EPISODE}: stopped after 4 actions (0 s)"]
