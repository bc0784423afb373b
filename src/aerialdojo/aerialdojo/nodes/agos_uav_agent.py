"""AGOS UAV agent node (namespace ``/uav``): searches from its nadir view and hands targets
to the UGV (AGOS-Bench, "Search" and "Handoff").

Subscribes to ``camera/down/*``, ``odom`` (map frame), the task, ``/agos/candidates``,
``/agos/messages`` and ``/agos/turn``; calls ``/aerialdojo/step``. The task manager gives it
no turn while a serviceable candidate it proposed is being verified (it is frozen). The
messages its policy sends with decisions go with its steps (in the Baseline mode the only
coordination: a match's position as the UGV's search anchor, AGOS-Bench, appendix A.4.2);
the protocol's notices (the initial exchange, the inspection request of each candidate) are
the task manager's.

A separate executable rather than a role of ``uav_agent``: the AerialDojo node acts on four
odometry-relative views with magnitude actions and no teammate; this one on one map-frame
view with argument actions and the handoff topics, so a shared node would be two nodes in one.
"""

from __future__ import annotations

from aerialdojo.agos.sensors import UAV_VIEW
from aerialdojo.agos.vocabulary import UAV
from aerialdojo.nodes.agent_node import spin_agent
from aerialdojo.nodes.agos_agent import AgosAgentNode


class AgosUavAgent(AgosAgentNode):
    """Runs the UAV's ``AgosPolicy`` (``policy`` parameter) on the nadir view."""

    def __init__(self) -> None:
        super().__init__("agos_uav_agent", UAV, (UAV_VIEW,))

    def expected_views(self) -> tuple[str, ...]:
        return (UAV_VIEW,)


def main(args: list[str] | None = None) -> None:
    spin_agent(AgosUavAgent, args)


if __name__ == "__main__":
    main()
