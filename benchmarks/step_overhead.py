"""Where the wall time of one step goes, and what the harness costs a whole run, at 256x256
per view.

1. One step. Baseline: the same actions from the same start, stepping the embedded backend
   directly in this process (every view rendered, as the bridge does) and running the same
   policy on the same observation set the stack gives it (the task's views: by default the
   front view, no odometry; AerialDojo-200K's evaluated prompt). Stack: the simulator bridge
   and the task manager as separate node processes, and the real ``UavAgent`` node in this
   process driving them through ``/aerialdojo/step``, with a timing wrapper around its
   policy. Both execute one fixed action sequence, so they do the same simulator work; the
   policy is asked for its action each step, so its cost counts on both sides. The ratio is
   the stack's step over the direct step: 1.05 means the harness adds 5 %. Since the bridge
   publishes each view as soon as it is rendered (docs/performance.md, change 55), the
   agent decides on its views while the others still render, which the direct loop (one
   ``observe`` of every view, then the policy) cannot; so the CPU both sides spend per step
   is printed beside the ratio (Linux: every graph process's, from ``/proc``), and the
   stack's CPU over the direct's is the harness's cost that overlap does not show.
2. Episodes per hour (``--episodes``, 20 by default; ``--skip-run`` leaves it out):
   ``aerialdojo eval`` of the colour agent on the first episodes of the whole suite, command
   start to report, against the sum of the same episodes' direct backend time (each
   episode's reset, then every action the run executed, as its bag records them, each
   followed by the observation the bridge renders).

    tools/run.sh python benchmarks/step_overhead.py [--size 256] [--steps 60] [--episodes 20]

Last lines: RESULT step_wall_ms_<size>px value=<stack> baseline=<direct> (aim: ratio <= 1.05)
and RESULT episodes_per_hour_<size>px value=<stack> baseline=<direct backend>.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from itertools import cycle, islice
from pathlib import Path
from typing import Any

import rclpy
from aerialdojo_interfaces.srv import StartEpisode
from idle_nodes import cpu_seconds
from rclpy.executors import SingleThreadedExecutor
from rclpy.task import Future

from aerialdojo.actions import STOP, Action
from aerialdojo.agents.colour_seeker import ColourSeekerPolicy
from aerialdojo.agents.observation import AgentObservation, GoalDescription, ViewData
from aerialdojo.bags.replay import read_events
from aerialdojo.events import EventKind
from aerialdojo.geometry import Pose
from aerialdojo.graph import node_specs
from aerialdojo.nodes.uav_agent import UavAgent
from aerialdojo.params import validate_parameters
from aerialdojo.protocols.settings import aerialdojo_observation
from aerialdojo.runner import run_domain, start_graph, stop_graph
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.tasks.suite import load_suite, resolve_suite

#: Steps left out of the CPU per step on both sides: the first renders' numba compilation
#: and caches, and the stack's first set.
CPU_WARM_UP_STEPS = 10

#: Longest the stack's agent may take for all its decisions.
DEADLINE_S = 600.0

# Motions that exercise rendering and collision sweeps without ending the episode early.
ACTIONS = (
    Action("TurnLeft", 15.0),
    Action("MoveUp", 1.0),
    Action("TurnRight", 15.0),
    Action("MoveDown", 1.0),
)


class TimedFixedPolicy:
    """Asks the real policy (its cost is the agent's), then returns the next fixed action;
    records when each observation set became complete, when the decision was made and the
    CPU its thread spent deciding."""

    def __init__(self, steps: int, on_decided: Callable[[int], None]) -> None:
        self.inner = ColourSeekerPolicy(seed=0)
        self.actions = list(islice(cycle(ACTIONS), steps))
        self.on_decided = on_decided
        self.ready: list[float] = []
        self.decided: list[float] = []
        self.policy_cpu: list[float] = []

    def reset(self, goal: GoalDescription) -> None:
        self.inner.reset(goal)

    def act(self, observation: AgentObservation) -> Action:
        self.ready.append(time.perf_counter())
        started_cpu = time.thread_time()
        self.inner.act(observation)
        self.policy_cpu.append(time.thread_time() - started_cpu)
        self.decided.append(time.perf_counter())
        self.on_decided(len(self.decided))
        index = len(self.decided) - 1
        return self.actions[index] if index < len(self.actions) else Action("Stop")


def direct(episode, size: int, steps: int) -> tuple[list[float], list[float], float]:
    """Simulator and agent seconds of each step, no ROS; the policy sees what the stack's
    agent node hands it (the task's views, odometry only where the task gives it); and the
    CPU seconds per step after ``CPU_WARM_UP_STEPS`` (this process, all its threads)."""
    rig = aerialdojo_uav_rig(size, size)
    backend = EmbeddedBackend(rigs={"uav": rig})
    backend.reset(episode.scene, {"uav": episode.start})
    intrinsics = {spec.name: spec.intrinsics() for spec in rig}
    views, odometry = aerialdojo_observation({})
    policy = ColourSeekerPolicy(seed=0)
    policy.reset(
        GoalDescription(
            episode_id=episode.episode_id,
            object_name=episode.goal.object_name,
            landmark_name="",
            direction="",
            description=episode.goal.description,
            views=views,
            odometry=odometry,
        )
    )
    simulator, agent = [], []
    cpu_start = 0.0
    for index, action in enumerate(islice(cycle(ACTIONS), steps)):
        if index == CPU_WARM_UP_STEPS:
            cpu_start = time.process_time()
        start = time.perf_counter()
        backend.execute("uav", action)
        observation = backend.observe("uav")
        rendered = time.perf_counter()
        frames = observation.frames
        policy.act(
            AgentObservation(
                views={
                    name: ViewData(rgb=frames[name].rgb, depth=frames[name].depth,
                                   intrinsics=intrinsics[name])
                    for name in views
                },
                odometry=observation.pose if odometry else None,
            )
        )  # fmt: skip
        simulator.append(rendered - start)
        agent.append(time.perf_counter() - rendered)
    return simulator, agent, (time.process_time() - cpu_start) / (steps - CPU_WARM_UP_STEPS)


def stack(
    suite: str, episode_id: str, size: int, steps: int, run_dir: Path
) -> tuple[list[float], list[float], dict[str, float], tuple[float, float]]:
    """Per-step wall times through the node graph, and the agent's share of each; the CPU
    seconds per step of each process after ``CPU_WARM_UP_STEPS`` (the agent's is this
    process); and of those, the agent's thread's and its policy's. The agent spins on this
    thread: what it spends outside the policy is the harness's (rclpy's executor, taking the
    messages, the step's call)."""
    config = {
        "sim_bridge": validate_parameters(
            "sim_bridge", {"image_width": size, "image_height": size}, "bench"
        ),
        "task_manager": validate_parameters(
            "task_manager", {"auto_run": False, "suite": suite}, "bench"
        ),
        "evaluator": {},
        "uav_agent": {},
    }
    specs = node_specs(config)
    processes = start_graph([s for s in specs if s.name in ("sim_bridge", "task_manager")], run_dir)
    pids = {node.spec.name: node.process.pid for node in processes}
    cpu: dict[int, dict[str, float]] = {}
    agent_thread_cpu: dict[int, float] = {}
    all_decided = Future()

    def on_decided(decided: int) -> None:
        if decided in (CPU_WARM_UP_STEPS, steps):
            cpu[decided] = {name: cpu_seconds(pid) for name, pid in pids.items()}
            cpu[decided]["uav_agent"] = time.process_time()
            agent_thread_cpu[decided] = time.thread_time()
        if decided == steps + 1:
            all_decided.set_result(decided)

    policy = TimedFixedPolicy(steps, on_decided)
    # The agent subscribes to the views the graph gives it (``aerialdojo eval``'s).
    views = next(s for s in specs if s.name == "uav_agent").parameters["views"]
    rclpy.init(
        args=["--ros-args", "-r", "__ns:=/uav", "-p", "use_sim_time:=true",
              "-p", f"views:=[{','.join(views)}]"]
    )  # fmt: skip
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
        # Spun as ``spin_agent`` spins a shipped agent, with no timeout: a spin with one
        # makes and waits on a timer of its own at every wake-up, a cost the stack does not
        # have. The deadline completes the future from another thread instead (not
        # ``cancel``: rclpy's spin until a future completes waits on through a cancelled one).
        deadline = threading.Timer(DEADLINE_S, all_decided.set_result, args=(None,))
        deadline.start()
        try:
            executor.spin_until_future_complete(all_decided)
        finally:
            deadline.cancel()
        if all_decided.result() is None:
            sys.exit(
                f"the stack's agent decided {len(policy.decided)} of {steps + 1} actions "
                f"in {DEADLINE_S:.0f} s"
            )
    finally:
        rclpy.shutdown()
        stop_graph(processes, grace_s=5.0)
    # Step i: from deciding action i to deciding action i+1 (sim + stack + agent).
    walls = [b - a for a, b in itertools.pairwise(policy.decided)]
    agents = [d - r for r, d in zip(policy.ready[1:], policy.decided[1:], strict=True)]
    cpu_per_step = {
        name: (cpu[steps][name] - cpu[CPU_WARM_UP_STEPS][name]) / (steps - CPU_WARM_UP_STEPS)
        for name in cpu[steps]
    }
    agent_thread = (agent_thread_cpu[steps] - agent_thread_cpu[CPU_WARM_UP_STEPS]) / (
        steps - CPU_WARM_UP_STEPS
    )
    agent_policy = statistics.fmean(policy.policy_cpu[CPU_WARM_UP_STEPS:steps])
    return walls[:steps], agents[:steps], cpu_per_step, (agent_thread, agent_policy)


def executed_actions(bag: Path) -> list[tuple[dict[str, Any], list[Action]]]:
    """Each scored episode of a run's bag: its STARTED record and the actions its last
    attempt executed (Stop executes nothing), in order."""
    episodes: dict[str, tuple[dict[str, Any], list[Action]]] = {}
    current: list[Action] = []
    for event in read_events(bag):
        kind = EventKind(event.kind)
        if kind is EventKind.STARTED:
            current = []
            episodes[event.episode_id] = (json.loads(event.episode_json), current)
        elif kind in (EventKind.STEP, EventKind.STOPPED, EventKind.COLLIDED,
                      EventKind.BUDGET_EXHAUSTED) and event.action != STOP:  # fmt: skip
            current.append(Action(event.action, event.magnitude))
    return list(episodes.values())


def whole_run(episodes: int, size: int, work: Path) -> tuple[float, float, int, int]:
    """Seconds of ``aerialdojo eval`` of ``episodes`` episodes, and of the same episodes
    stepped directly on the backend; also the episodes and actions replayed."""
    command = [
        sys.executable, "-m", "aerialdojo.cli", "eval", "--episodes", str(episodes),
        "--output", str(work), "--run-id", "run", "task_manager.filter=all",
        f"sim_bridge.image_width={size}", f"sim_bridge.image_height={size}",
    ]  # fmt: skip
    started = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    stack_s = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"aerialdojo eval failed ({run.returncode}):\n{run.stderr[-3000:]}")
    replayed = executed_actions(work / "run" / "bag")
    backend = EmbeddedBackend(rigs={"uav": aerialdojo_uav_rig(size, size)})
    backend_s, actions = 0.0, 0
    for record, executed in replayed:
        started = time.perf_counter()
        backend.reset(record["scene"], {"uav": Pose(*record["start"])})
        backend.observe("uav")
        for action in executed:
            backend.execute("uav", action)
            backend.observe("uav")
        backend_s += time.perf_counter() - started
        actions += len(executed)
    return stack_s, backend_s, len(replayed), actions


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=256, help="pixels per side of every view")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--suite", default="aerialdojo_mini", help="suite name or path")
    parser.add_argument("--episodes", type=int, default=20, help="episodes of the whole run")
    parser.add_argument("--skip-run", action="store_true", help="leave out the whole run")
    args = parser.parse_args()
    suite = load_suite(resolve_suite(args.suite))
    episode = suite.episode(suite.select()[0])
    if args.steps + 1 > episode.action_budget:
        # The stack's agent decides steps + 1 actions; past the budget the episode has ended
        # and the run would wait out its deadline for decisions that never come.
        parser.error(
            f"--steps {args.steps}: episode {episode.episode_id} allows "
            f"{episode.action_budget} actions, so at most {episode.action_budget - 1} steps"
        )

    print(f"load average before: {_load()}")
    # Direct stepping before and after the stack run, so a load change during the run
    # shows in both; medians throughout.
    simulator, agent, cpu_before = direct(episode, args.size, args.steps)
    chosen_domain = os.environ.get("ROS_DOMAIN_ID")
    with tempfile.TemporaryDirectory() as run_dir, run_domain(os.environ) as domain:
        # A domain held for the stack: in a shared one another run's bridge refuses this
        # run's episode (and answers its steps). The whole run below claims its own.
        os.environ["ROS_DOMAIN_ID"] = domain
        walls, agents, stack_cpu, (agent_thread, agent_policy) = stack(
            args.suite, episode.episode_id, args.size, args.steps, Path(run_dir)
        )
    if chosen_domain is None:
        del os.environ["ROS_DOMAIN_ID"]
    simulator_after, agent_after, cpu_after = direct(episode, args.size, args.steps)
    simulator_s = statistics.median(simulator + simulator_after)
    agent_s = statistics.median(agent + agent_after)
    stack_s = statistics.median(walls)
    agent_stack_s = statistics.median(agents)
    overhead_s = stack_s - simulator_s - agent_stack_s
    direct_s = simulator_s + agent_s
    print(f"episode {episode.episode_id}, {args.steps} steps, 4 RGB-D views at {args.size}px; "
          f"the policy gets {', '.join(aerialdojo_observation({})[0])}")  # fmt: skip
    print(f"direct: simulator {simulator_s * 1e3:.1f} ms + agent {agent_s * 1e3:.1f} ms (medians)")
    print(
        f"stack:  {stack_s * 1e3:.1f} ms per step (median; p90 "
        f"{statistics.quantiles(walls, n=10)[-1] * 1e3:.1f} ms), agent {agent_stack_s * 1e3:.1f} ms"
    )
    # The agent decides while the views it is not given still render (change 55): the
    # simulator's and the agent's shares may add up to more than the step.
    print(
        f"split of a stack step: simulator {simulator_s / stack_s:.0%}, "
        f"agent {agent_stack_s / stack_s:.0%}, the rest {overhead_s / stack_s:.0%}"
    )
    direct_cpu = (cpu_before + cpu_after) / 2
    print(
        f"CPU per step: direct {direct_cpu * 1e3:.1f} ms; stack {sum(stack_cpu.values()) * 1e3:.1f}"
        f" ms ({', '.join(f'{name} {value * 1e3:.1f}' for name, value in stack_cpu.items())}), "
        f"{sum(stack_cpu.values()) / direct_cpu:.2f}x the direct loop's"
    )
    print(
        f"the agent's process per step: its policy {agent_policy * 1e3:.2f} ms, the rest of its "
        f"thread (rclpy's executor, the messages, the step's call) "
        f"{(agent_thread - agent_policy) * 1e3:.2f} ms, its other threads "
        f"{(stack_cpu['uav_agent'] - agent_thread) * 1e3:.2f} ms"
    )
    print(f"load average after the steps: {_load()}")
    if not args.skip_run:
        with tempfile.TemporaryDirectory() as work:
            run_s, backend_s, count, actions = whole_run(args.episodes, args.size, Path(work))
        print(
            f"whole run: {count} episodes, {actions} actions: aerialdojo eval {run_s:.1f} s, "
            f"the backend alone {backend_s:.1f} s; load average after: {_load()}"
        )
        print(
            f"RESULT episodes_per_hour_{args.size}px value={count / run_s * 3600:.1f} "
            f"baseline={count / backend_s * 3600:.1f} ratio={backend_s / run_s:.3f}"
        )
    print(
        f"RESULT step_wall_ms_{args.size}px value={stack_s * 1e3:.2f} "
        f"baseline={direct_s * 1e3:.2f} ratio={stack_s / direct_s:.3f}"
    )


if __name__ == "__main__":
    main()
