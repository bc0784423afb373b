"""The operator's console on the robot route (docs/robots.md, "Operator flow").

Before each attempt the task manager announces the episode on ``/aerialdojo/operator/
prompt``; the console shows it with each robot's pose (its odometry, site frame) and how far
that is from its start, and its safety gate's state. The operator places each robot, then
starts: the console engages each gate (the consent to arm and enter offboard,
``safety/engage``), waits until every gate holds its robot ready, and calls
``/aerialdojo/operator/start``. While it runs it sends each gate the operator's heartbeat
(``safety/deadman``): a console that dies or loses its link stops the robots. The operator
can also e-stop every robot (``safety/estop``), clear a latched fault (``safety/clear``),
mark a collision (``<agent>/operator/collision``) and fly a robot to its start through its
gate.

``mode: interactive`` reads commands from the terminal (``aerialdojo console``);
``mode: automatic`` is the operator of a rehearsal on the simulated robot and of the tests:
it clears faults, engages, places by flying (``placement: fly``) and starts by itself
(``robot.console.next_step``). Never run it automatic on a real robot.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from aerialdojo_interfaces.msg import EpisodeEvent, EpisodePrompt, SafetyStatus
from aerialdojo_interfaces.srv import VehicleGoal
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node
from std_msgs.msg import Empty, Header
from std_srvs.srv import Trigger

from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.nodes.common import (
    RunFilter,
    announce_node,
    declare_node_parameters,
    param,
    wait_for_future,
)
from aerialdojo.nodes.conversions import pose_from_msg, pose_msg
from aerialdojo.nodes.qos import EVENTS_QOS, TASK_QOS, latched_qos
from aerialdojo.nodes.spinning import run_nodes, steady_clock
from aerialdojo.nodes.vehicles.base import DRIVER_QOS
from aerialdojo.robot.console import (
    Next,
    Prompt,
    gate_text,
    is_placed,
    next_step,
    placement_path,
    render,
)
from aerialdojo.robot.link import SafetyState, resolve
from aerialdojo.robot.safety import FaultClass, GateState
from aerialdojo.step_origin import attempt_name
from aerialdojo.tf_tree import MAP_FRAME

#: What the terminal accepts, and what each does.
COMMANDS = {
    "s": "start: engage every gate, have each hold its robot at its start, start the episode",
    "f": "fly each robot to its start through its gate (you watch it)",
    "c": "clear the latched faults (after you made the robots safe)",
    "e": "e-stop every robot",
    "m": "mark a collision of the robot in motion (m <agent> where several)",
    "p": "print the episode card again",
    "h": "this help",
}
_ENDINGS = {
    EpisodeEvent.STOPPED: "stopped",
    EpisodeEvent.COLLIDED: "collided",
    EpisodeEvent.BUDGET_EXHAUSTED: "budget exhausted",
    EpisodeEvent.INFRA_FAILURE: "infrastructure failure (not scored)",
    EpisodeEvent.INTERVENTION: "operator/safety intervention (not scored)",
}
#: How long a start waits for the gate to engage and then take a goal: it engages once its
#: watchdogs are content, and the vehicle enters the gate's mode only once the keep-alive
#: runs (PX4 after 1 s of it; through MAVROS the pilot's switch).
GOAL_WAIT_S = 10.0
#: How close a robot flown to its start must come to each waypoint, metres and radians.
_FLY_REACHED_M = 0.15
_FLY_REACHED_RAD = 0.05


class OperatorConsole(Node):
    """The operator's side of every robot the bridge drives."""

    def __init__(self) -> None:
        super().__init__("operator_console")
        declare_node_parameters(self, "operator_console")
        announce_node(self)
        self._run = RunFilter(self)
        self._agents = [str(agent) for agent in param(self, "agents")]
        self._automatic = param(self, "mode") == "automatic"
        self._fly = param(self, "placement") == "fly"
        self._timeout_s = float(param(self, "service_timeout_s"))
        self._lock = threading.Lock()
        self._print_lock = threading.Lock()
        self._prompt: Prompt | None = None
        self._poses: dict[str, Pose | None] = dict.fromkeys(self._agents)
        self._gates: dict[str, SafetyState | None] = dict.fromkeys(self._agents)
        self._started: str | None = None  # the prompt whose start was asked
        self._running: str | None = None  # the episode under way: no goal of ours then
        group = ReentrantCallbackGroup()

        def client(kind: type, agent: str, name: str) -> Client:
            return self.create_client(kind, f"{agent}/{name}", callback_group=group)

        self._gate_services = {
            agent: {
                name: client(Trigger, agent, f"safety/{name}")
                for name in ("engage", "clear", "estop")
            }
            for agent in self._agents
        }
        self._goals = {agent: client(VehicleGoal, agent, "safety/goal") for agent in self._agents}
        self._start = self.create_client(
            Trigger, "/aerialdojo/operator/start", callback_group=group
        )
        self._deadman = {
            agent: self.create_publisher(Empty, f"{agent}/safety/deadman", 10)
            for agent in self._agents
        }
        self._marks = {
            agent: self.create_publisher(Empty, f"{agent}/operator/collision", 10)
            for agent in self._agents
        }
        odometry_topic = str(param(self, "odometry_topic"))
        for agent in self._agents:
            self.create_subscription(
                Odometry,
                resolve(agent, odometry_topic),
                partial(self._on_odometry, agent),
                DRIVER_QOS,
                callback_group=group,
            )
            self.create_subscription(
                SafetyStatus,
                f"{agent}/safety/status",
                partial(self._on_status, agent),
                latched_qos(1),
                callback_group=group,
            )
        self.create_subscription(
            EpisodePrompt, "/aerialdojo/operator/prompt", self._on_prompt, TASK_QOS,
            callback_group=group,
        )  # fmt: skip
        self.create_subscription(
            EpisodeEvent, "/aerialdojo/episode_events", self._on_event, EVENTS_QOS,
            callback_group=group,
        )  # fmt: skip
        self.create_timer(
            1.0 / float(param(self, "deadman_rate_hz")), self._beat, group, clock=steady_clock()
        )
        worker = self._operate if self._automatic else self._read_terminal
        threading.Thread(target=worker, daemon=True).start()
        self._say(
            f"operator console for {', '.join(self._agents)} "
            f"({'automatic' if self._automatic else 'interactive: h for help'})"
        )

    # -- inputs -----------------------------------------------------------------------------

    def _on_odometry(self, agent: str, msg: Odometry) -> None:
        self._poses[agent] = pose_from_msg(msg.pose.pose)

    def _on_status(self, agent: str, msg: SafetyStatus) -> None:
        previous = self._gates[agent]
        state = SafetyState(
            state=GateState(msg.state),
            fault_class=FaultClass(msg.fault_class),
            fault=msg.fault,
            detail=msg.detail,
        )
        self._gates[agent] = state
        if previous is None or (previous.state, previous.fault) != (state.state, state.fault):
            self._say(f"{agent} gate: {gate_text(state)}")

    def _on_prompt(self, msg: EpisodePrompt) -> None:
        prompt = Prompt(
            episode_id=msg.episode_id,
            attempt=int(msg.attempt),
            index=int(msg.episode_index),
            count=int(msg.episode_count),
            starts={
                agent: pose_from_msg(pose)
                for agent, pose in zip(msg.agents, msg.starts, strict=True)
            },
            task=msg.task,
            tolerance_m=float(msg.start_tolerance_m),
            tolerance_deg=float(msg.start_tolerance_deg),
            status=msg.status,
        )
        with self._lock:
            self._prompt = prompt
            self._started = None
        self._say(render(prompt, self._poses, self._gates))

    def _on_event(self, event: EpisodeEvent) -> None:
        if self._run.foreign(event.run_id, "an episode event"):
            return
        if event.kind == EpisodeEvent.STARTED:
            self._running = event.episode_id
            self._say(f"episode {event.episode_id} started ({attempt_name(event.attempt)})")
        elif event.kind in _ENDINGS:
            self._running = None
            ending = _ENDINGS[event.kind]
            self._say(
                f"episode {event.episode_id} ended: {ending} after {event.step} actions"
                + (f" ({event.message})" if event.message else "")
            )

    def _beat(self) -> None:
        for publisher in self._deadman.values():
            publisher.publish(Empty())

    # -- what the operator does ---------------------------------------------------------------

    def engage(self) -> str:
        """Engage every gate of the announced attempt that is not engaged yet; returns what
        went wrong ("" nothing)."""
        prompt = self._prompt
        if self._running is not None:
            # Its robots are the robot backend's now: a goal of ours would replace its own.
            return f"episode {self._running} is under way"
        if prompt is None:
            return "no episode waits for the operator"
        for agent in prompt.starts:
            gate = self._gates[agent]
            if gate is not None and gate.state is GateState.FAULT:
                return f"{agent}: the gate is in fault ({gate.description}); clear it first (c)"
            if gate is None or gate.state is GateState.STANDBY:
                # The gate refuses until its own watchdogs are content (its first odometry).
                engage = self._gate_services[agent]["engage"]
                refused = self._until_accepted(partial(self._trigger, engage))
                if refused:
                    return f"{agent}: engaging refused: {refused}"
        return ""

    def start(self) -> str:
        """Engage every gate, have each hold its robot exactly at its start, and start the
        announced attempt; returns what happened.

        A robot placed within the start tolerance is held exactly at its start, one placed
        farther where it is (the task manager then says how far off it is: flying it there
        is the operator's call, ``f``). The hold is a goal, so it also proves the gate's
        goals are accepted: an
        engaged gate streams its keep-alive before the vehicle enters the gate's mode (through
        MAVROS the pilot switches to OFFBOARD once the stream runs), and refuses goals until
        then, saying which mode the vehicle is in."""
        prompt = self._prompt
        problem = self.engage()
        if prompt is None or problem:
            return problem
        if not self._wait(lambda: all(self._ready(agent) for agent in prompt.starts)):
            return "the gates did not become ready: " + "; ".join(
                f"{agent} {gate_text(self._gates[agent])}" for agent in prompt.starts
            )
        holds = {agent: self._hold_pose(prompt, agent) for agent in prompt.starts}
        for agent, pose in holds.items():
            refused = self._until_accepted(partial(self._goal, agent, pose))
            if refused:
                return f"{agent}: the gate does not take goals: {refused}"
        if not self._wait(lambda: all(self._reached(agent, pose) for agent, pose in holds.items())):
            return "the robots did not settle"
        with self._lock:
            self._started = prompt.episode_id
        refused = self._trigger(self._start)
        return refused or f"starting {prompt.episode_id}"

    def fly_to_starts(self) -> str:
        """Fly each robot to its start through its gate; returns what happened."""
        prompt = self._prompt
        if self._running is not None:
            return f"episode {self._running} is under way"
        if prompt is None:
            return "no episode waits for the operator"
        for agent, start in prompt.starts.items():
            pose = self._poses[agent]
            if pose is None:
                return f"{agent}: no odometry"
            path = placement_path(
                pose,
                start,
                max_leg_m=float(param(self, "max_leg_m")),
                transit_z=float(param(self, "transit_altitude_m")),
            )
            for waypoint in path:
                refused = self._goal(agent, waypoint)
                if refused:
                    return f"{agent}: the gate refused {_pose_text(waypoint)}: {refused}"
                if not self._wait(partial(self._reached, agent, waypoint), 60.0):
                    return f"{agent}: did not reach {_pose_text(waypoint)}"
        return "placed"

    def clear(self) -> str:
        answers = [
            f"{agent}: {self._trigger(clients['clear']) or 'cleared'}"
            for agent, clients in self._gate_services.items()
        ]
        return "; ".join(answers)

    def estop(self) -> str:
        answers = [
            f"{agent}: {self._trigger(clients['estop']) or 'e-stopped'}"
            for agent, clients in self._gate_services.items()
        ]
        return "; ".join(answers)

    def mark(self, agent: str) -> str:
        if agent not in self._marks:
            return f"no agent {agent!r}; agents: {', '.join(self._agents)}"
        self._marks[agent].publish(Empty())
        return f"{agent}: collision marked"

    # -- automatic and interactive operators --------------------------------------------------

    def _operate(self) -> None:
        """The automatic operator: for each announced attempt, clear, engage, place, start."""
        while self.context.ok():
            time.sleep(0.2)
            prompt = self._prompt
            if prompt is None or self._started == prompt.episode_id:
                continue
            steps = [
                next_step(agent, prompt, self._poses[agent], self._gates[agent], fly=self._fly)
                for agent in prompt.starts
            ]
            if Next.CLEAR in steps:
                self._say(self.clear())
            elif Next.ENGAGE in steps:
                self._say(self.engage() or "engaged")
            elif Next.PLACE in steps:
                self._say(f"placing: {self.fly_to_starts()}")
            elif all(step is Next.START for step in steps):
                self._say(self.start())

    def _read_terminal(self) -> None:
        """The interactive operator: one command per line."""
        for line in sys.stdin:
            if line.strip():
                self._say(self.command(line))

    def command(self, line: str) -> str:
        """Do one typed command (``COMMANDS``); returns what to show."""
        command, *rest = line.split()
        if command == "m":
            return self.mark(rest[0] if rest else self._agents[0])
        if command == "p":
            if self._prompt is None:
                return "no episode waits for the operator"
            return render(self._prompt, self._poses, self._gates)
        if command == "h":
            return "\n".join(f"  {key}: {text}" for key, text in COMMANDS.items())
        actions = {"s": self.start, "f": self.fly_to_starts, "c": self.clear, "e": self.estop}
        action = actions.get(command)
        return action() if action else f"unknown command {command!r}; h for help"

    # -- plumbing -------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        if self._automatic:
            self.get_logger().info(text)
            return
        with self._print_lock:  # lines of two threads never interleave
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def _hold_pose(self, prompt: Prompt, agent: str) -> Pose:
        """Where ``start`` holds ``agent``'s robot: its start, when within the tolerance."""
        pose, start = self._poses[agent], prompt.starts[agent]
        if pose is None or is_placed(pose, start, prompt, share=1.0):
            return start
        return pose

    def _ready(self, agent: str) -> bool:
        gate = self._gates[agent]
        return gate is not None and gate.state is GateState.READY

    def _reached(self, agent: str, target: Pose) -> bool:
        pose = self._poses[agent]
        gate = self._gates[agent]
        if pose is None or gate is None or gate.state is GateState.FAULT:
            return False
        yaw_error = abs(wrap_angle(pose.yaw - target.yaw))
        return pose.distance_to(target.position) < _FLY_REACHED_M and yaw_error < _FLY_REACHED_RAD

    def _wait(self, condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True

    def _goal(self, agent: str, target: Pose) -> str:
        request = VehicleGoal.Request(
            target=PoseStamped(header=Header(frame_id=MAP_FRAME), pose=pose_msg(target)),
            max_speed_m_s=float(param(self, "fly_speed_m_s")),
        )
        answer = self._call(self._goals[agent], request)
        if isinstance(answer, str):
            return answer
        return "" if answer.accepted else answer.reason

    def _until_accepted(self, ask: Callable[[], str]) -> str:
        """Ask until the gate accepts (``GOAL_WAIT_S`` at most); returns its last refusal, ""
        once accepted."""
        deadline = time.monotonic() + GOAL_WAIT_S
        refused = ask()
        while refused and time.monotonic() < deadline:
            time.sleep(0.2)
            refused = ask()
        return refused

    def _trigger(self, client: Client) -> str:
        answer = self._call(client, Trigger.Request())
        if isinstance(answer, str):
            return answer
        return "" if answer.success else answer.message

    def _call(self, client: Client, request: object) -> Any:
        if not self.context.ok():
            return "the console is shutting down"
        if not client.wait_for_service(timeout_sec=self._timeout_s):
            return f"{client.srv_name} is not served"
        future = client.call_async(request)
        if not wait_for_future(future, self._timeout_s, self.context):
            client.remove_pending_request(future)
            return f"{client.srv_name} did not answer within {self._timeout_s:g} s"
        return future.result()


def _pose_text(pose: Pose) -> str:
    return f"({pose.x:.2f}, {pose.y:.2f}, {pose.z:.2f})"


def main(args: list[str] | None = None) -> None:
    run_nodes(lambda: [OperatorConsole()], threads=4, args=args)


if __name__ == "__main__":
    main()
