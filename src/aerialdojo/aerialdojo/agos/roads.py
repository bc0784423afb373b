"""Directed road graphs of a town (AGOS-Bench, appendix A.1.1): a fine graph and a decision graph.

The fine graph samples every street at about ``FINE_SPACING_M`` along its centreline; its
edges follow the direction of travel (both ways on two-way streets, one way otherwise). The
decision graph keeps cruising anchors about every ``CRUISE_SPACING_M`` plus structural anchors
(junction entries and exits ``JUNCTION_OFFSET_M`` from an intersection, dead ends); each of its
edges stores the fine-node sequence between its two anchors. Shortest paths are Dijkstra on
the directed graphs (``scipy.sparse.csgraph``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra

from aerialdojo.errors import InvalidActionError

FINE_SPACING_M = 2.0
CRUISE_SPACING_M = 10.0
JUNCTION_OFFSET_M = 6.0

ANCHOR_CRUISE = "cruise"
ANCHOR_JUNCTION = "junction"
ANCHOR_DEAD_END = "dead_end"

Point2 = tuple[float, float]


@dataclass(frozen=True)
class Street:
    """A straight street segment between two points (intersections or ends).

    Attributes:
        start: first end, map frame (x, y).
        end: second end.
        one_way: traffic flows only from ``start`` to ``end``.
    """

    start: Point2
    end: Point2
    one_way: bool = False

    @property
    def length(self) -> float:
        return math.dist(self.start, self.end)


@dataclass(frozen=True)
class DecisionEdge:
    """A decision-graph edge: the fine nodes from one anchor to the next, both included."""

    source: int
    target: int
    fine_nodes: tuple[int, ...]
    length_m: float


@dataclass
class RoadNetwork:
    """The fine and decision graphs of a street layout.

    Attributes:
        positions: (N, 2) fine-node positions, map frame.
        successors: fine node -> fine nodes it leads to (direction of travel).
        anchors: decision-anchor fine-node ids, ascending.
        anchor_kinds: anchor -> ``ANCHOR_*``.
        decision_edges: anchor -> its outgoing decision edges.
    """

    positions: np.ndarray
    successors: dict[int, tuple[int, ...]]
    anchors: tuple[int, ...]
    anchor_kinds: dict[int, str]
    decision_edges: dict[int, tuple[DecisionEdge, ...]]
    _fine_matrix: csr_matrix = field(init=False, repr=False)
    _anchor_index: dict[int, int] = field(init=False, repr=False)
    _decision_matrix: csr_matrix = field(init=False, repr=False)

    def __post_init__(self) -> None:
        count = len(self.positions)
        rows, cols, lengths = [], [], []
        for node, following in self.successors.items():
            for successor in following:
                rows.append(node)
                cols.append(successor)
                lengths.append(self.distance(node, successor))
        self._fine_matrix = csr_matrix((lengths, (rows, cols)), shape=(count, count))
        self._anchor_index = {anchor: index for index, anchor in enumerate(self.anchors)}
        edges = [edge for out in self.decision_edges.values() for edge in out]
        self._decision_matrix = csr_matrix(
            (
                [edge.length_m for edge in edges],
                (
                    [self._anchor_index[edge.source] for edge in edges],
                    [self._anchor_index[edge.target] for edge in edges],
                ),
            ),
            shape=(len(self.anchors), len(self.anchors)),
        )

    # -- lookup ------------------------------------------------------------------------

    def xy(self, node: int) -> Point2:
        """Position of a fine node."""
        x, y = self.positions[node]
        return (float(x), float(y))

    def distance(self, a: int, b: int) -> float:
        """Straight-line distance between two fine nodes."""
        return float(np.hypot(*(self.positions[a] - self.positions[b])))

    def nearest_node(self, x: float, y: float) -> int:
        """The fine node closest to (x, y)."""
        return int(np.argmin(np.hypot(self.positions[:, 0] - x, self.positions[:, 1] - y)))

    def nearest_anchor(self, x: float, y: float) -> int:
        """The decision anchor closest to (x, y)."""
        anchors = np.asarray(self.anchors)
        offsets = self.positions[anchors] - (x, y)
        return int(anchors[int(np.argmin(np.hypot(offsets[:, 0], offsets[:, 1])))])

    def anchor_positions(self) -> np.ndarray:
        """(A, 2) positions of the decision anchors, in ``anchors`` order."""
        return np.asarray(self.positions[np.asarray(self.anchors)])

    def edge(self, source: int, target: int) -> DecisionEdge | None:
        """The decision edge from ``source`` to ``target``, if there is one."""
        return next((e for e in self.decision_edges.get(source, ()) if e.target == target), None)

    # -- planning ----------------------------------------------------------------------

    def fine_path(self, source: int, target: int) -> list[int]:
        """Shortest directed path between two fine nodes (both included).

        Raises:
            InvalidActionError: ``target`` cannot be reached from ``source``.
        """
        return _shortest_path(self._fine_matrix, source, target, f"fine node {target}")

    def decision_path(self, source: int, target: int) -> list[int]:
        """Shortest directed path between two anchors on the decision graph (anchor ids).

        Raises:
            InvalidActionError: not anchors, or ``target`` cannot be reached.
        """
        for anchor in (source, target):
            if anchor not in self._anchor_index:
                raise InvalidActionError(f"fine node {anchor} is not a decision anchor")
        indices = _shortest_path(
            self._decision_matrix,
            self._anchor_index[source],
            self._anchor_index[target],
            f"anchor {target}",
        )
        return [self.anchors[index] for index in indices]

    def decision_distances(self, source: int) -> dict[int, float]:
        """Road distance from anchor ``source`` to every anchor it can reach."""
        distances = dijkstra(
            self._decision_matrix, directed=True, indices=self._anchor_index[source]
        )
        return {
            self.anchors[index]: float(value)
            for index, value in enumerate(distances)
            if math.isfinite(value)
        }

    def expand(self, anchor_path: Sequence[int]) -> list[int]:
        """The fine nodes of a decision path, each edge's stored sequence joined."""
        nodes = [anchor_path[0]]
        for source, target in itertools.pairwise(anchor_path):
            edge = self.edge(source, target)
            if edge is None:
                raise InvalidActionError(f"no decision edge from anchor {source} to {target}")
            nodes.extend(edge.fine_nodes[1:])
        return nodes

    def path_length(self, nodes: Sequence[int]) -> float:
        """Length of a fine-node path in metres."""
        return sum(self.distance(a, b) for a, b in itertools.pairwise(nodes))

    def strongly_connected(self) -> bool:
        """Whether every fine node can be reached from every other in travel direction."""
        count, _ = connected_components(self._fine_matrix, directed=True, connection="strong")
        return bool(count == 1)

    def follows_directed_edges(self, nodes: Sequence[int]) -> bool:
        """Whether every consecutive pair of ``nodes`` is a fine edge in travel direction."""
        return all(b in self.successors.get(a, ()) for a, b in itertools.pairwise(nodes))


def _shortest_path(matrix: csr_matrix, source: int, target: int, what: str) -> list[int]:
    distances, predecessors = dijkstra(
        matrix, directed=True, indices=source, return_predecessors=True
    )
    if not math.isfinite(distances[target]):
        raise InvalidActionError(f"{what} cannot be reached from {source} along the road graph")
    path = [target]
    while path[-1] != source:
        path.append(int(predecessors[path[-1]]))
    return path[::-1]


def build_road_network(
    streets: Sequence[Street],
    *,
    spacing_m: float = FINE_SPACING_M,
    cruise_m: float = CRUISE_SPACING_M,
    junction_offset_m: float = JUNCTION_OFFSET_M,
) -> RoadNetwork:
    """Sample ``streets`` into the fine graph and select the decision anchors.

    Street ends that meet (within 0.5 m) share one fine node; a node where three or more
    streets meet is an intersection, one with a single street a dead end.

    Args:
        streets: the layout; no street shorter than ``2 * junction_offset_m + cruise_m``.
        spacing_m: fine-node spacing.
        cruise_m: spacing of cruising anchors.
        junction_offset_m: distance of junction entry/exit anchors from the intersection.
    """
    positions: list[Point2] = []
    successors: dict[int, set[int]] = {}

    def node_at(point: Point2) -> int:
        for index, existing in enumerate(positions):
            if math.dist(existing, point) < 0.5:
                return index
        positions.append(point)
        successors[len(positions) - 1] = set()
        return len(positions) - 1

    ends: dict[int, int] = {}
    sampled: list[tuple[Street, list[int]]] = []
    for street in streets:
        first, last = node_at(street.start), node_at(street.end)
        ends[first] = ends.get(first, 0) + 1
        ends[last] = ends.get(last, 0) + 1
        steps = max(1, math.ceil(street.length / spacing_m))
        interior = []
        for step in range(1, steps):
            fraction = step / steps
            positions.append(
                (
                    street.start[0] + fraction * (street.end[0] - street.start[0]),
                    street.start[1] + fraction * (street.end[1] - street.start[1]),
                )
            )
            successors[len(positions) - 1] = set()
            interior.append(len(positions) - 1)
        chain = [first, *interior, last]
        for a, b in itertools.pairwise(chain):
            successors[a].add(b)
            if not street.one_way:
                successors[b].add(a)
        sampled.append((street, chain))

    kinds: dict[int, str] = {}
    for street, chain in sampled:
        step_m = street.length / (len(chain) - 1)
        offset = max(1, round(junction_offset_m / step_m))
        first = _end_anchor(chain, 0, ends, offset, kinds)
        last = _end_anchor(chain, len(chain) - 1, ends, -offset, kinds)
        between = last - first
        count = max(1, round(between * step_m / cruise_m))
        for k in range(1, count):
            kinds.setdefault(chain[first + round(k * between / count)], ANCHOR_CRUISE)

    network_positions = np.asarray(positions, dtype=np.float64)
    frozen = {node: tuple(sorted(out)) for node, out in successors.items()}
    anchors = tuple(sorted(kinds))
    return RoadNetwork(
        positions=network_positions,
        successors=frozen,
        anchors=anchors,
        anchor_kinds=kinds,
        decision_edges=_decision_edges(network_positions, frozen, set(anchors)),
    )


def _end_anchor(
    chain: list[int], end: int, ends: dict[int, int], offset: int, kinds: dict[int, str]
) -> int:
    """Mark the structural anchor at one end of a street; returns its index in ``chain``."""
    node = chain[end]
    if ends[node] == 1:
        kinds[node] = ANCHOR_DEAD_END
        return end
    index = end + offset
    kinds[chain[index]] = ANCHOR_JUNCTION
    return index


def _decision_edges(
    positions: np.ndarray, successors: dict[int, tuple[int, ...]], anchors: set[int]
) -> dict[int, tuple[DecisionEdge, ...]]:
    """From each anchor, walk the fine graph in travel direction to the next anchors."""
    edges: dict[int, tuple[DecisionEdge, ...]] = {}
    for anchor in sorted(anchors):
        found: list[DecisionEdge] = []
        parents = {anchor: anchor}
        frontier = [anchor]
        while frontier:
            following = []
            for node in frontier:
                for successor in successors[node]:
                    if successor in parents:
                        continue
                    parents[successor] = node
                    if successor in anchors:
                        chain = [successor]
                        while chain[-1] != anchor:
                            chain.append(parents[chain[-1]])
                        chain.reverse()
                        length = float(np.sum(np.hypot(*np.diff(positions[chain], axis=0).T)))
                        found.append(DecisionEdge(anchor, successor, tuple(chain), length))
                    else:
                        following.append(successor)
            frontier = following
        edges[anchor] = tuple(sorted(found, key=lambda edge: edge.target))
    return edges


def build_lane_network(
    positions: np.ndarray,
    successors: Sequence[Sequence[int]],
    in_junction: Sequence[bool],
    lane_changes: Sequence[tuple[int, int]] = (),
    *,
    cruise_m: float = CRUISE_SPACING_M,
) -> RoadNetwork:
    """The fine and decision graphs of lanes sampled from a map (a CARLA map's OpenDRIVE
    lanes, ``carla_maps``): structural anchors where the lanes branch, merge or end, or
    enter or leave a junction's connecting lanes (A.1.1: "junction entrances, junction
    exits, forks, merges, and dead ends"), cruising anchors after about ``cruise_m`` of
    lane between them, and both ends of every lane change (cruising anchors unless
    structural), so that a change of lane is a decision edge of its own.

    Args:
        positions: (N, 2+) fine-node positions, map frame (x, y first).
        successors: fine node -> the nodes its lane leads to in the direction of travel.
        in_junction: whether each node lies on a junction's connecting lane.
        lane_changes: (from, to) fine-node pairs changing to a neighbouring lane.
        cruise_m: spacing of cruising anchors.
    """
    count = len(positions)
    xy = np.asarray(positions, dtype=np.float64)[:, :2]
    along = {node: tuple(sorted(set(successors[node]))) for node in range(count)}
    incoming = [0] * count
    for out in along.values():
        for node in out:
            incoming[node] += 1
    kinds: dict[int, str] = {}
    for node, out in along.items():
        if not out:
            kinds[node] = ANCHOR_DEAD_END
        elif len(out) > 1 or incoming[node] != 1:
            kinds[node] = ANCHOR_JUNCTION
        elif in_junction[out[0]] != in_junction[node]:
            # The last node before a junction's lanes, or the first after them.
            kinds[node if not in_junction[node] else out[0]] = ANCHOR_JUNCTION
    for source, target in lane_changes:
        kinds.setdefault(source, ANCHOR_CRUISE)
        kinds.setdefault(target, ANCHOR_CRUISE)
    # Cruising anchors along every stretch of lane between two anchors; a closed loop of
    # lane without any anchor gets one first.
    pending = set(range(count)) - set(kinds)
    for start in [*sorted(kinds), *sorted(pending)]:
        if start not in kinds:
            if start not in pending:
                continue
            kinds[start] = ANCHOR_CRUISE
        for first in along[start]:
            travelled, previous, node = 0.0, start, first
            while node in pending:
                pending.discard(node)
                travelled += float(np.hypot(*(xy[node] - xy[previous])))
                if travelled >= cruise_m - 1e-6:
                    kinds[node] = ANCHOR_CRUISE
                    travelled = 0.0
                previous, node = node, along[node][0]
    frozen = {node: tuple(sorted({*along[node]})) for node in range(count)}
    for source, target in lane_changes:
        frozen[source] = tuple(sorted({*frozen[source], target}))
    anchors = tuple(sorted(kinds))
    return RoadNetwork(
        positions=xy,
        successors=frozen,
        anchors=anchors,
        anchor_kinds=kinds,
        decision_edges=_decision_edges(xy, frozen, set(anchors)),
    )
