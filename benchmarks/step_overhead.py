"""Where the wall time of one step goes: simulator, stack (ROS services, DDS, conversion) and
agent, at 256x256 per view.

Baseline: the same actions from the same start, stepping the embedded backend directly in
this process (simulator time) and running the same policy on each observation (agent time).
Stack: the simulator bridge and the task manager as separate node processes, and the real
``UavAgent`` node in this process driving them through ``/aerialdojo/step``, with a timing
wrapper around its policy. Both runs execute one fixed action sequence, so they do the same
simulator work; the policy is still asked for its action each step, so its cost counts.

    tools/run.sh python benchmarks/step_overhead.py [--size 256] [--steps 60]

Overhead share = (stack step time - simulator time - agent time) / stack step time; the aim
is at most 0.20. Last line: RESULT step_wall_ms_<size>px value=<stack> baseline=<direct>.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path

import rclpy
from aerialdojo_interfaces.srv import StartEpisode
from rclpy.executors import SingleThreadedExecutor

from aerialdojo.actions import Action
from aerialdojo.agents.colour_seeker import ColourSeekerPolicy
from aerialdojo.agents.observation import AgentObservation, GoalDescription, ViewData
from aerialdojo.graph import node_specs
from aerialdojo.nodes.uav_agent import UavAgent
from aerialdojo.params import validate_parameters
from aerialdojo.runner import start_graph, stop_graph
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.tasks.suite import load_suite, resolve_suite

# Motions that exercise rendering and collision sweeps without ending the episode early.
ACTIONS = (
    Action("TurnLeft", 15.0),
    Action("MoveUp", 1.0),
    Action("TurnRight", 15.0),
    Action("MoveDown", 1.0),
)


class TimedFixedPolicy:
    """Asks the real policy (its cost is the agent's), then returns the next fixed action;
    records when each observation set became complete and when the decision was made."""

    def __init__(self, steps: int) -> None:
        self.inner = ColourSeekerPolicy(seed=0)
        self.actions = list(islice(cycle(ACTIONS), steps))
        self.ready: list[float] = []
        self.decided: list[float] = []

    def reset(self, goal: GoalDescription) -> None:
        self.inner.reset(goal)

    def act(self, observation: AgentObservation) -> Action:
        self.ready.append(time.perf_counter())
        self.inner.act(observation)
        self.decided.append(time.perf_counter())
        index = len(self.decided) - 1
        return self.actions[index] if index < len(self.actions) else Action("Stop")


def direct(episode, size: int, steps: int) -> tuple[list[float], list[float]]:
    """Simulator and agent seconds of each step, no ROS."""
    rig = aerialdojo_uav_rig(size, size)
    backend = EmbeddedBackend(rigs={"uav": rig})
    backend.reset(episode.scene, {"uav": episode.start})
    intrinsics = {spec.name: spec.intrinsics() for spec in rig}
    policy = ColourSeekerPolicy(seed=0)
    policy.reset(GoalDescription(object_name=episode.goal.object_name, landmark_name="",
                                 direction="", description=episode.goal.description))  # fmt: skip
    simulator, agent = [], []
    for action in islice(cycle(ACTIONS), steps):
        start = time.perf_counter()
        backend.execute("uav", action)
        observation = backend.observe("uav")
        rendered = time.perf_counter()
        policy.act(
            AgentObservation(
                views={
                    name: ViewData(rgb=f.rgb, depth=f.depth, intrinsics=intrinsics[name])
                    for name, f in observation.frames.items()
                },
                odometry=observation.pose,
            )
        )
        simulator.append(rendered - start)
        agent.append(time.perf_counter() - rendered)
    return simulator, agent


def stack(
    suite: str, episode_id: str, size: int, steps: int, run_dir: Path
) -> tuple[list[float], list[float]]:
    """Per-step wall times through the node graph, and the agent's share of each."""
    config = {
        "sim_bridge": validate_parameters(
            "sim_bridge", {"image_width": size, "image_height": size}, "bench"
        ),
        "task_manager": validate_parameters(
            "task_manager", {"auto_run": False, "suite": suite}, "bench"
        ),
        "evaluator": {},
    }
    specs = [s for s in node_specs(config) if s.name in ("sim_bridge", "task_manager")]
    processes = start_graph(specs, run_dir)
    policy = TimedFixedPolicy(steps)
    rclpy.init(args=["--ros-args", "-r", "__ns:=/uav", "-p", "use_sim_time:=true"])
    try:
        agent = UavAgent(policy=policy)
        executor = SingleThreadedExecutor()
        executor.add_node(agent)
        client = agent.create_client(StartEpisode, "/aerialdojo/start_episode")
        if not client.wait_for_service(timeout_sec=120):
            sys.exit("the task manager never offered /aerialdojo/start_episode")
        future = client.call_async(StartEpisode.Request(episode_id=episode_id))
        executor.spin_until_future_complete(future, timeout_sec=120)
        if not future.result().success:
            sys.exit(f"start_episode failed: {future.result().message}")
        deadline = time.monotonic() + 600
        while len(policy.decided) < steps + 1 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
    finally:
        rclpy.shutdown()
        stop_graph(processes, grace_s=5.0)
    # Step i: from deciding action i to deciding action i+1 (sim + stack + agent).
    walls = [b - a for a, b in itertools.pairwise(policy.decided)]
    agents = [d - r for r, d in zip(policy.ready[1:], policy.decided[1:], strict=True)]
    return walls[:steps], agents[:steps]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=256, help="pixels per side of every view")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--suite", default="aerialdojo_mini", help="suite name or path")
    args = parser.parse_args()
    suite = load_suite(resolve_suite(args.suite))
    episode = suite.episode(suite.select()[0])

    # Direct stepping before and after the stack run, so a load change during the run
    # shows in both; medians throughout.
    simulator, agent = direct(episode, args.size, args.steps)
    with tempfile.TemporaryDirectory() as run_dir:
        walls, agents = stack(args.suite, episode.episode_id, args.size, args.steps, Path(run_dir))
    simulator_after, agent_after = direct(episode, args.size, args.steps)
    simulator_s = statistics.median(simulator + simulator_after)
    agent_s = statistics.median(agent + agent_after)
    stack_s = statistics.median(walls)
    agent_stack_s = statistics.median(agents)
    overhead_s = stack_s - simulator_s - agent_stack_s
    direct_s = simulator_s + agent_s
    print(f"episode {episode.episode_id}, {args.steps} steps, 4 RGB-D views at {args.size}px")
    print(f"direct: simulator {simulator_s * 1e3:.1f} ms + agent {agent_s * 1e3:.1f} ms (medians)")
    print(
        f"stack:  {stack_s * 1e3:.1f} ms per step (median; p90 "
        f"{statistics.quantiles(walls, n=10)[-1] * 1e3:.1f} ms), agent {agent_stack_s * 1e3:.1f} ms"
    )
    print(
        f"split of a stack step: simulator {simulator_s / stack_s:.0%}, "
        f"agent {agent_stack_s / stack_s:.0%}, stack overhead {overhead_s / stack_s:.0%} "
        f"(aim <= 20%)"
    )
    print(
        f"RESULT step_wall_ms_{args.size}px value={stack_s * 1e3:.2f} "
        f"baseline={direct_s * 1e3:.2f} ratio={stack_s / direct_s:.3f}"
    )


if __name__ == "__main__":
    main()
