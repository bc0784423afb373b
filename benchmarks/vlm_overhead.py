"""The model agent's own time per decision beyond the server's reply time: prompt building,
image encoding (four 640x640 RGB views and their depth), the request's serialization and
transfer, reply parsing and the transcript, against a real chat-completions server on
127.0.0.1 that replies at once. Baseline: base64-encoding the same images' raw pixels alone,
the least any client must do to send them. Aim (issue 30): at most 25 ms a decision.

Run: tools/run.sh python benchmarks/vlm_overhead.py [--decisions 20]
"""

from __future__ import annotations

import argparse
import base64
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src" / "aerialdojo"))

from fakes.chat_server import ChatServer, Reply, Script  # noqa: E402

from aerialdojo.agents.observation import AgentObservation, GoalDescription, ViewData  # noqa: E402
from aerialdojo.agents.plugins import uav_policy  # noqa: E402
from aerialdojo.geometry import Pose  # noqa: E402
from aerialdojo.params import NODE_PARAMETERS  # noqa: E402

SIZE = 640
VIEWS = ("front", "left", "right", "down")


def _observation(rng: np.random.Generator) -> AgentObservation:
    """Four views with scene-like content (smooth gradients and blocks, not noise, which no
    codec compresses and no camera produces)."""
    ys, xs = np.mgrid[0:SIZE, 0:SIZE]
    views = {}
    for name in VIEWS:
        base = rng.integers(0, 200, 3)
        rgb = np.stack([(xs * (k + 1) // 7 + base[k]) % 256 for k in range(3)], axis=-1)
        top, left = rng.integers(0, SIZE - 200, 2)
        rgb[top : top + 200, left : left + 200] = rng.integers(0, 256, 3)
        depth = (5.0 + ys / SIZE * 60.0).astype(np.float32)
        depth[: SIZE // 4] = np.inf
        k = np.array([[SIZE / 2, 0, SIZE / 2], [0, SIZE / 2, SIZE / 2], [0, 0, 1.0]])
        views[name] = ViewData(rgb=rgb.astype(np.uint8), depth=depth, intrinsics=k)
    return AgentObservation(views=views, odometry=Pose(0.0, 0.0, 5.0, 0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    observations = [_observation(rng) for _ in range(4)]
    goal = GoalDescription(
        object_name="red van", landmark_name="tower", direction="north", action_budget=10_000,
        episode_id="bench", views=VIEWS,  # a task with task_manager.observation: four_views
    )  # fmt: skip
    reply = Reply(text='{"action": "TurnLeft", "magnitude": 15}')
    adapter_ms, baseline_ms = [], []
    with (
        ChatServer(Script.sequence([], then=reply)) as server,
        tempfile.TemporaryDirectory() as out,
    ):
        values = {spec.name: spec.default for spec in NODE_PARAMETERS["uav_agent"]}
        values.update(
            policy="vlm",
            vlm_base_url=server.base_url,
            vlm_model="test-vlm",
            transcript_dir=str(Path(out) / "transcripts"),
        )
        policy = uav_policy(values, "uav_agent")
        policy.reset(goal)
        policy.act(observations[0])  # warm up: connection, imports
        for index in range(args.decisions):
            observation = observations[index % len(observations)]
            received = len(server.received)
            started = time.perf_counter()
            policy.act(observation)
            total = time.perf_counter() - started
            server_s = sum(r.handling_s for r in server.received[received:])
            adapter_ms.append(1000.0 * (total - server_s))
            started = time.perf_counter()
            for view in observation.views.values():
                base64.b64encode(view.rgb.tobytes())
                base64.b64encode(view.depth.tobytes())
            baseline_ms.append(1000.0 * (time.perf_counter() - started))
    value, baseline = statistics.median(adapter_ms), statistics.median(baseline_ms)
    print(f"adapter per decision: median {value:.1f} ms (server time excluded); "
          f"{100.0 * value / 1000.0:.1f} % of a 1 s reply")  # fmt: skip
    print(f"RESULT vlm_adapter_ms_per_decision value={value:.2f} baseline={baseline:.2f} "
          f"ratio={value / baseline:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
