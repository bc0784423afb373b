"""CityNav agent node (namespace ``/uav``): builds its geographic semantic map and flies to
the goal a description names (CityNav, sections 3.1 and 4.2).

Subscribes to ``camera/down/{image,depth,camera_info}``, ``odom`` (map frame: GNSS is allowed)
and the latched ``/aerialdojo/task``; calls ``/aerialdojo/step``. The landmark map is the
city's public map (``maps_dir``, or an embedded city's), looked up by the task's scene.

Publishes the GSM it builds from each observation set, stamped with that set's stamp, in
the map frame: each layer as ``gsm/<layer>`` (nav_msgs/OccupancyGrid, viewable in RViz and
Foxglove) and all five as ``gsm/layers`` (GeoSemanticMap). The GSM lives in the agent, not in
a node of its own: it is the agent's memory of its own observations, and the policy must
act on the map of the very step it decides on.

The ``policy`` parameter names the GSM policy, the colour baseline, the oracle or a
``package.module:ClassName`` plug-in implementing ``Policy`` (given the nadir view and the
map-frame pose; ``agents.plugins``).

A separate executable rather than a role of ``uav_agent``: that node acts on four
odometry-relative views with the AerialDojo action set; this one on one map-frame view, the
CityNav action set and a map it builds.
"""

from __future__ import annotations

from array import array

from aerialdojo_interfaces.msg import GeoSemanticMap as GeoSemanticMapMsg
from aerialdojo_interfaces.msg import TaskSpec
from nav_msgs.msg import MapMetaData, OccupancyGrid
from std_msgs.msg import Header

from aerialdojo.agents.observation import AgentObservation, ViewData, tell_refused
from aerialdojo.agents.plugins import citynav_policy, policy_identity
from aerialdojo.citynav.city import load_city_map
from aerialdojo.citynav.gsm import LAYERS, GeoSemanticMap
from aerialdojo.citynav.policies import ColourSearchPolicy, GsmPolicy
from aerialdojo.geometry import Pose
from aerialdojo.nodes.agent_node import AgentNode, spin_agent
from aerialdojo.nodes.common import param, parameters_of, time_of_ns
from aerialdojo.nodes.conversions import goal_description
from aerialdojo.nodes.qos import GSM_QOS
from aerialdojo.protocols.referee import StepRequest
from aerialdojo.sim.backend import NADIR_VIEW
from aerialdojo.tf_tree import MAP_FRAME

_SEARCH_POLICIES = {"gsm": GsmPolicy, "colour": ColourSearchPolicy}


class CityNavAgent(AgentNode):
    """Updates the GSM with each observation set, publishes it and runs the policy."""

    def __init__(self) -> None:
        super().__init__("citynav_agent", default_agent="uav")
        name = str(param(self, "policy"))
        self._policy = citynav_policy(parameters_of(self, "citynav_agent"), "citynav_agent")
        self._search = _SEARCH_POLICIES[name]() if self._policy is None else None
        self._gsm: GeoSemanticMap | None = None
        self._layer_pubs = {
            layer: self.create_publisher(OccupancyGrid, f"gsm/{layer}", GSM_QOS) for layer in LAYERS
        }
        self._layers_pub = self.create_publisher(GeoSemanticMapMsg, "gsm/layers", GSM_QOS)
        self.announce(name, **policy_identity(self._policy))

    def subscribed_views(self) -> list[str]:
        return [NADIR_VIEW]

    def expected_views(self) -> tuple[str, ...]:
        return (NADIR_VIEW,)

    def begin_episode(self, task: TaskSpec) -> None:
        city = load_city_map(task.scene, param(self, "maps_dir"))
        self._gsm = GeoSemanticMap(
            city, task.goal.description, float(param(self, "gsm_resolution_m"))
        )
        if self._search is not None:
            self._search.reset(self._gsm, int(task.action_budget))
        if self._policy is not None:
            self._policy.reset(goal_description(task, (NADIR_VIEW,), odometry=True))
        self.get_logger().info(f"episode {task.episode_id}: {task.goal.description!r}")

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        assert self._gsm is not None
        view = views[NADIR_VIEW]
        self._gsm.update(pose, view.rgb, view.depth, view.intrinsics)
        self._publish_gsm()
        if self._policy is not None:
            action = self._policy.act(AgentObservation(views=views, odometry=pose))
        else:
            assert self._search is not None
            action = self._search.act(pose)
        return StepRequest(agent=self.agent, action=action.name, magnitude=action.magnitude)

    def refused(self, request: StepRequest, reason: str) -> None:
        tell_refused(self._policy if self._policy is not None else self._search, reason)

    def _publish_gsm(self) -> None:
        assert self._gsm is not None
        grid = self._gsm.grid
        stamp_ns = self.awaited_stamp_ns or 0
        header = Header(
            stamp=time_of_ns(stamp_ns),
            frame_id=MAP_FRAME,
        )
        info = MapMetaData(
            map_load_time=header.stamp,
            resolution=float(grid.resolution_m),
            width=grid.width,
            height=grid.height,
        )
        info.origin.position.x, info.origin.position.y = grid.origin
        info.origin.position.z = float(self._gsm.city.ground_z)
        info.origin.orientation.w = 1.0
        stacked = self._gsm.stacked()
        for layer, values in zip(LAYERS, stacked, strict=True):
            self._layer_pubs[layer].publish(
                OccupancyGrid(header=header, info=info, data=array("b", values.tobytes()))
            )
        self._layers_pub.publish(
            GeoSemanticMapMsg(
                header=header,
                info=info,
                episode_id=self.episode_id,
                layers=list(LAYERS),
                data=array("b", stacked.tobytes()),
            )
        )


def main(args: list[str] | None = None) -> None:
    spin_agent(CityNavAgent, args)


if __name__ == "__main__":
    main()
