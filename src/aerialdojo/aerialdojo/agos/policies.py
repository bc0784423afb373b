"""AGOS policies: what an AGOS agent node hands its policy (``AgosTask`` per episode,
``AgosObservation`` per decision) and gets back (``Decision``), behind the ``AgosPolicy``
protocol; and the image-driven policies (the role-conditioned UAV and UGV decision makers of
AGOS-Bench, without a VLM): colour and shape evidence from the rendered views against the
reference images, and the search-handoff-verify workflow on top, or, in the Baseline mode,
the message-based coordination of AGOS-Bench, appendix A.4.2. Every policy sees only what
its agent sees (its own views, its map-frame pose, the public town map, the shared
candidates, the teammate's messages), never ground truth.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy import ndimage

from aerialdojo.agents.observation import ViewData
from aerialdojo.agos.grid import Region, cell_of_pixel
from aerialdojo.agos.planning import road_options
from aerialdojo.agos.projection import pixel_to_ground
from aerialdojo.agos.sensors import RING_VIEWS, UAV_VIEW, UGV_FRONT_VIEW
from aerialdojo.agos.town import TownMap
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    CONFIRM,
    GO_TO_CANDIDATE,
    MODE_AGENT,
    MODE_BASELINE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    REJECT,
    STOP_OBSERVE,
    WAIT,
)
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.protocols.referee import TeammateMessage

#: Hue histogram bins of the reference colour, and the tolerance of a match (degrees).
_HUE_BIN_DEG = 10.0
HUE_TOLERANCE_DEG = 16.0
#: A view pixel matches when its saturation reaches this share of the reference's.
SATURATION_SHARE = 0.6
#: Coloured area a vehicle shows from above, m^2 (bonnet and boot of a car at least).
MIN_TOP_AREA_M2 = 1.2
MAX_TOP_AREA_M2 = 40.0
#: Ground views: the fewest matching pixels that count, and how near a match must be.
MIN_GROUND_PIXELS = 6
VERIFY_RANGE_M = 45.0
NOTICE_RANGE_M = 30.0
#: Detections this close to a rejected candidate are not proposed again.
REJECTED_RADIUS_M = 20.0
#: The UAV annotates a detection once it is this close to it horizontally (or no
#: neighbouring waypoint is closer).
CENTRED_M = 30.0


@dataclass(frozen=True)
class Decision:
    """One decision: an action, its argument ("" where it takes none) and a message to the
    teammate sent with it ("" none)."""

    action: str
    argument: str = ""
    message: str = ""


#: A place a message names: "(x, y)" in metres (parentheses optional, as a model may write it).
_POINT = re.compile(r"\(?\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)?")


def anchor_message(pose: Pose) -> str:
    """The Baseline UAV's message over a centred match: its own position as an approximate
    search anchor (AGOS-Bench, appendix A.4.2)."""
    return f"clear match below me; search anchor ({pose.x:.1f}, {pose.y:.1f})"


def rejection_message(point: tuple[float, float]) -> str:
    """The Baseline UGV's message after rejecting the anchor at ``point``."""
    return f"rejected: no matching vehicle near ({point[0]:.1f}, {point[1]:.1f})"


def confirmation_message(pose: Pose) -> str:
    """The Baseline UGV's message after confirming the target from ``pose``."""
    return f"confirmed the target from ({pose.x:.1f}, {pose.y:.1f})"


def message_point(text: str) -> tuple[float, float] | None:
    """The (x, y) a message names (its last, if it names several), if any."""
    found = _POINT.findall(text)
    return (float(found[-1][0]), float(found[-1][1])) if found else None


def search_anchor(messages: Sequence[TeammateMessage]) -> tuple[float, float] | None:
    """The place the newest message naming one gives (AGOS-Bench, appendix A.4.2, "Search
    Anchor": the UGV reads the UAV's reported position from its messages)."""
    for message in reversed(messages):
        point = message_point(message.text)
        if point is not None:
            return point
    return None


def is_rejection(text: str) -> bool:
    """Whether a message reports a rejected anchor (``rejection_message``)."""
    return text.startswith("rejected:")


def hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue in degrees [0, 360), saturation and value in [0, 1] of an RGB uint8 image."""
    colour = rgb.astype(np.float32) / 255.0
    high, low = colour.max(axis=-1), colour.min(axis=-1)
    chroma = high - low
    safe = np.where(chroma > 0, chroma, 1.0)
    r, g, b = colour[..., 0], colour[..., 1], colour[..., 2]
    hue = np.where(
        high == r,
        ((g - b) / safe) % 6.0,
        np.where(high == g, (b - r) / safe + 2.0, (r - g) / safe + 4.0),
    )
    hue = np.where(chroma > 0, hue * 60.0, 0.0)
    saturation = np.where(high > 0, chroma / np.where(high > 0, high, 1.0), 0.0)
    return hue, saturation, high


def _hue_gap(hue: np.ndarray, reference: float) -> np.ndarray:
    gap = np.abs(hue - reference) % 360.0
    return np.asarray(np.minimum(gap, 360.0 - gap))


@dataclass(frozen=True)
class TargetSignature:
    """The target's colour and shape as the reference images show it.

    Attributes:
        hue: dominant body hue, degrees.
        saturation: median saturation of the body pixels.
        aspects: width / height of the body's bounding box in each reference view.
    """

    hue: float
    saturation: float
    aspects: tuple[float, ...]

    @classmethod
    def from_references(cls, images: Sequence[np.ndarray]) -> TargetSignature:
        """Read the signature from reference images whose background is white.

        Raises:
            ConfigError: no image shows a coloured object.
        """
        hues, weights, saturations = [], [], []
        for image in images:
            hue, chroma_share, value = hsv(image)
            body = (chroma_share >= 0.25) & (value >= 0.15)
            hues.append(hue[body])
            weights.append(chroma_share[body])
            saturations.append(chroma_share[body])
        all_hues, all_weights = np.concatenate(hues), np.concatenate(weights)
        if not all_hues.size:
            raise ConfigError("the reference images show no coloured object")
        counts, edges = np.histogram(
            all_hues, bins=int(360 / _HUE_BIN_DEG), range=(0.0, 360.0), weights=all_weights
        )
        peak = int(np.argmax(counts))
        inside = (all_hues >= edges[peak]) & (all_hues < edges[peak + 1])
        dominant = float(np.median(all_hues[inside]))
        match = _hue_gap(all_hues, dominant) <= HUE_TOLERANCE_DEG
        aspects = []
        for image in images:
            mask = cls(dominant, 0.0, ()).mask(image)
            if mask.any():
                rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
                aspects.append((cols[-1] - cols[0] + 1) / (rows[-1] - rows[0] + 1))
        saturation = float(np.median(np.concatenate(saturations)[match]))
        return cls(dominant, saturation, tuple(aspects))

    def mask(self, rgb: np.ndarray) -> np.ndarray:
        """Pixels of ``rgb`` whose colour matches the target's."""
        hue, saturation, value = hsv(rgb)
        return np.asarray(
            (_hue_gap(hue, self.hue) <= HUE_TOLERANCE_DEG)
            & (saturation >= max(0.2, SATURATION_SHARE * self.saturation))
            & (value >= 0.12)
        )

    def plausible_aspect(self, aspect: float) -> bool:
        """Whether a matching blob's width/height ratio fits the reference views' range."""
        if not self.aspects:
            return True
        return min(self.aspects) / 1.8 <= aspect <= max(self.aspects) * 1.8


@dataclass(frozen=True)
class Blob:
    """A connected region of matching pixels."""

    u: float
    v: float
    pixels: int
    aspect: float
    depth_m: float


def find_blobs(mask: np.ndarray, depth: np.ndarray | None = None) -> list[Blob]:
    """Connected matching regions (gaps of one pixel closed, so that a car's bonnet and boot
    either side of its glass count as one), largest first."""
    closed = ndimage.binary_closing(mask, structure=np.ones((3, 3)), iterations=1) | mask
    labels, _ = ndimage.label(closed)
    blobs = []
    for index, region in enumerate(ndimage.find_objects(labels), start=1):
        if region is None:
            continue
        own = (labels[region] == index) & mask[region]
        pixels = int(own.sum())
        if not pixels:
            continue
        rows, cols = np.nonzero(own)
        height = rows.max() - rows.min() + 1
        width = cols.max() - cols.min() + 1
        distance = math.inf
        if depth is not None:
            values = depth[region][own]
            finite = values[np.isfinite(values)]
            distance = float(np.median(finite)) if finite.size else math.inf
        blobs.append(
            Blob(
                u=float(cols.mean() + region[1].start + 0.5),
                v=float(rows.mean() + region[0].start + 0.5),
                pixels=pixels,
                aspect=width / height,
                depth_m=distance,
            )
        )
    return sorted(blobs, key=lambda blob: -blob.pixels)


@dataclass(frozen=True)
class CandidateView:
    """A candidate as the agents see it on ``/agos/candidates``."""

    candidate_id: str
    center: tuple[float, float]
    active: bool
    confirmed: bool = False


@dataclass(frozen=True, kw_only=True)
class AgosTask:
    """What an AGOS agent knows of an episode: its task (``TaskSpec``) and the public town map.

    Attributes:
        episode_id: the episode (a rerun has the same one).
        agent: ``uav`` or ``ugv``.
        town: the public map of the episode's town.
        region: the search region.
        instruction: the task text both agents get.
        reference_images: the target's reference views (RGB).
        actions: this agent's actions in the episode.
        mode: ``agent`` (AGOS-Agent: candidates and their tools) or ``baseline``
            (AGOS-Bench's Baseline, appendix A.4.2: coordination by messages only).
        max_uses: action -> most uses per episode, where limited (the annotation and
            confirmation budgets).
        action_budget: the decisions both agents share.
        success_radius_m: the UGV must confirm from within this distance of the target.
    """

    episode_id: str
    agent: str
    town: TownMap
    region: Region
    instruction: str
    reference_images: tuple[np.ndarray, ...]
    actions: tuple[str, ...]
    mode: str = MODE_AGENT
    max_uses: dict[str, int] = field(default_factory=dict)
    action_budget: int
    success_radius_m: float

    @property
    def baseline(self) -> bool:
        """The episode runs AGOS-Bench's Baseline (appendix A.4.2)."""
        return self.mode == MODE_BASELINE


@dataclass(frozen=True, kw_only=True)
class AgosObservation:
    """What an AGOS agent decides on.

    Attributes:
        pose: its pose, map frame.
        views: the views of the awaited observation set (the UAV's nadir view; the UGV's
            front view, or its six ring views after STOP_OBSERVE).
        candidates: the episode's candidates so far, by id.
        active: the candidate under verification, as the turn names it; None if none.
        messages: the messages the teammate's decisions carried this attempt, in the order
            sent (the task manager numbers and delivers them; the turn counts them).
        decision: the team's decision this one is (1-based), 0 when not announced.
    """

    pose: Pose
    views: dict[str, ViewData]
    candidates: dict[str, CandidateView] = field(default_factory=dict)
    active: CandidateView | None = None
    messages: tuple[TeammateMessage, ...] = ()
    decision: int = 0


class AgosPolicy(Protocol):
    """What an AGOS agent node runs: reset per episode, one decision per turn. A policy may
    raise ``errors.PolicyFaultError`` when a service it needs fails (an infrastructure
    failure: the attempt is rerun). It may also have ``refused(reason: str) -> None``: the
    referee refused its last decision for ``reason`` and the node's next ``act`` asks again
    in the same turn (``agents.observation.tell_refused``)."""

    def reset(self, task: AgosTask) -> None:
        """Start a new episode (or a rerun of one) with ``task``."""

    def act(self, observation: AgosObservation) -> Decision:
        """The next decision, from this observation and the policy's own memory."""


@dataclass
class UavSearchPolicy:
    """The UAV's search and handoff: on a target-coloured blob of a vehicle's size (away
    from rejected places) it first flies to the neighbour nearest to it while that brings it
    closer than ``CENTRED_M``, then annotates its cell (the paper's baseline UAV centres an
    off-centre match too; the candidate is then good with or without E2A) or, in the
    Baseline mode, waits over it and sends its own position as a search anchor; without one
    it flies to the unvisited neighbour with the most unvisited waypoints around it.

    Args:
        town: the public town map.
        region: the episode region.
        signature: the target's colour and shape.
        seed: breaks ties between equally good waypoints.
        mode: ``agent`` (annotate candidates) or ``baseline`` (messages).
        annotation_budget: annotations allowed (0: no limit); once used, matches are passed
            by and the search goes on.
    """

    town: TownMap
    region: Region
    signature: TargetSignature
    seed: int = 0
    mode: str = MODE_AGENT
    annotation_budget: int = 0
    visited: set[str] = field(default_factory=set)
    rejected: list[tuple[float, float]] = field(default_factory=list)
    annotations: int = 0
    _annotated: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def candidate_rejected(self) -> None:
        """The last annotated detection was rejected: never propose its place again."""
        if self._annotated is not None:
            self.rejected.append(self._annotated)
            self._annotated = None

    def act(self, pose: Pose, nadir: ViewData) -> Decision:
        """The next decision from the nadir view at ``pose``."""
        grid = self.town.uav_grid
        here = grid.nearest_active(pose.x, pose.y, self.region)
        self.visited.add(here.waypoint_id)
        detection = self.detect(pose, nadir)
        options = grid.options(pose.x, pose.y, self.region)
        exhausted = 0 < self.annotation_budget <= self.annotations
        if detection is not None and not (self.mode == MODE_AGENT and exhausted):
            cell, ground = detection
            nearer = min(options, key=lambda w: math.dist((w.x, w.y), ground), default=None)
            if (
                nearer is not None
                and math.dist((pose.x, pose.y), ground) > CENTRED_M
                and math.dist((nearer.x, nearer.y), ground) < math.dist((pose.x, pose.y), ground)
            ):
                return Decision(MOVE_TO_UAV_WAYPOINT, nearer.waypoint_id)
            self._annotated = ground
            if self.mode == MODE_BASELINE:
                return Decision(WAIT, message=anchor_message(pose))
            self.annotations += 1
            return Decision(ANNOTATE_CANDIDATE, cell)
        if not options:
            return Decision(WAIT)
        active = grid.active(self.region)
        unvisited = [w for w in active if w.waypoint_id not in self.visited]
        fresh = [w for w in options if w.waypoint_id not in self.visited]
        reach = 1.6 * grid.spacing_m
        if fresh:
            scores = [
                sum(math.hypot(u.x - w.x, u.y - w.y) <= reach for u in unvisited)
                + self._rng.random() * 0.1
                for w in fresh
            ]
            return Decision(MOVE_TO_UAV_WAYPOINT, fresh[int(np.argmax(scores))].waypoint_id)
        if unvisited:
            goal = min(unvisited, key=lambda u: math.hypot(u.x - pose.x, u.y - pose.y))
            best = min(options, key=lambda w: math.hypot(goal.x - w.x, goal.y - w.y))
            return Decision(MOVE_TO_UAV_WAYPOINT, best.waypoint_id)
        return Decision(
            MOVE_TO_UAV_WAYPOINT, options[int(self._rng.integers(len(options)))].waypoint_id
        )

    def detect(self, pose: Pose, nadir: ViewData) -> tuple[str, tuple[float, float]] | None:
        """The grid cell and ground point of the most central plausible target in the nadir
        view, if any."""
        height, width = nadir.rgb.shape[:2]
        metres_per_pixel = (pose.z - self.town.ground_z) / nadir.intrinsics[0, 0]
        pixel_area = metres_per_pixel**2
        best: tuple[float, str, tuple[float, float]] | None = None
        for blob in find_blobs(self.signature.mask(nadir.rgb)):
            area = blob.pixels * pixel_area
            if not MIN_TOP_AREA_M2 <= area <= MAX_TOP_AREA_M2:
                continue
            ground = pixel_to_ground(blob.u, blob.v, pose, nadir.intrinsics, self.town.ground_z)
            if not self.region.contains(*ground) or any(
                math.dist(ground, place) <= REJECTED_RADIUS_M for place in self.rejected
            ):
                continue
            offset = math.hypot(blob.u - width / 2.0, blob.v - height / 2.0)
            if best is None or offset < best[0]:
                best = (offset, cell_of_pixel(blob.u, blob.v, width, height), ground)
        return None if best is None else (best[1], best[2])


@dataclass
class UgvVerifyPolicy:
    """The UGV's exploration, approach and verification.

    With an active candidate it drives there (GO_TO_CANDIDATE, or road waypoints towards it
    without RGPP), stops for the six views and confirms when a target-coloured, plausibly
    shaped blob lies within ``VERIFY_RANGE_M``, else rejects. Without one it explores
    unvisited road anchors of the region and stops to inspect when its front view shows a
    near match.

    Args:
        town: the public town map.
        region: the episode region.
        signature: the target's colour and shape.
        actions: the UGV's legal actions (GO_TO_CANDIDATE is missing under no_rgpp).
        seed: breaks ties between equally good anchors.
    """

    town: TownMap
    region: Region
    signature: TargetSignature
    actions: tuple[str, ...]
    seed: int = 0
    visited: set[int] = field(default_factory=set)
    inspected: list[tuple[float, float]] = field(default_factory=list)
    _arrived: str = ""
    _last: str = ""

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def act(
        self, pose: Pose, views: dict[str, ViewData], candidate: CandidateView | None
    ) -> Decision:
        """The next decision from the views of the last decision and the active candidate."""
        roads = self.town.roads
        self.visited.add(roads.nearest_anchor(pose.x, pose.y))
        decision = self._decide(pose, views, candidate)
        self._last = decision.action
        return decision

    def _decide(
        self, pose: Pose, views: dict[str, ViewData], candidate: CandidateView | None
    ) -> Decision:
        if self._last == STOP_OBSERVE and any(name in views for name in RING_VIEWS):
            self.inspected.append((pose.x, pose.y))
            return Decision(CONFIRM if self.verified(views) else REJECT)
        if candidate is not None:
            if self._arrived == candidate.candidate_id:
                return Decision(STOP_OBSERVE)
            if GO_TO_CANDIDATE in self.actions:
                self._arrived = candidate.candidate_id
                return Decision(GO_TO_CANDIDATE, candidate.candidate_id)
            return self._towards(pose, candidate)
        front = views.get(UGV_FRONT_VIEW)
        if front is not None and self.noticed(pose, front):
            return Decision(STOP_OBSERVE)
        return self._explore(pose)

    def verified(self, views: dict[str, ViewData]) -> bool:
        """Whether a ring view shows a near, plausibly shaped target-coloured blob."""
        for name in RING_VIEWS:
            view = views.get(name)
            if view is None:
                continue
            for blob in find_blobs(self.signature.mask(view.rgb), view.depth):
                if (
                    blob.pixels >= MIN_GROUND_PIXELS
                    and blob.depth_m <= VERIFY_RANGE_M
                    and self.signature.plausible_aspect(blob.aspect)
                ):
                    return True
        return False

    def noticed(self, pose: Pose, front: ViewData) -> bool:
        """Whether the front view shows a near match away from places already inspected."""
        if any(math.dist((pose.x, pose.y), place) < REJECTED_RADIUS_M for place in self.inspected):
            return False
        return any(
            blob.pixels >= MIN_GROUND_PIXELS and blob.depth_m <= NOTICE_RANGE_M
            for blob in find_blobs(self.signature.mask(front.rgb), front.depth)
        )

    def _towards(self, pose: Pose, candidate: CandidateView) -> Decision:
        """Without RGPP: the road option that gets closest to the candidate (A.5 no_rgpp)."""
        here = math.dist((pose.x, pose.y), candidate.center)
        options = road_options(self.town.roads, pose)
        if here <= NOTICE_RANGE_M or not options:
            self._arrived = candidate.candidate_id
            return Decision(STOP_OBSERVE)
        best = min(options, key=lambda o: math.dist(self.town.roads.xy(o.anchor), candidate.center))
        if math.dist(self.town.roads.xy(best.anchor), candidate.center) >= here:
            self._arrived = candidate.candidate_id
            return Decision(STOP_OBSERVE)
        return Decision(MOVE_TO_ROAD_WAYPOINT, best.waypoint_id)

    def _explore(self, pose: Pose) -> Decision:
        roads = self.town.roads
        options = road_options(roads, pose)
        if not options:
            return Decision(WAIT)
        inside = [o for o in options if self.region.contains(*roads.xy(o.anchor))] or options
        fresh = [o for o in inside if o.anchor not in self.visited]
        if fresh:
            far = max(fresh, key=lambda o: (o.distance_m, self._rng.random()))
            return Decision(MOVE_TO_ROAD_WAYPOINT, far.waypoint_id)
        unvisited = [
            a for a in roads.anchors if a not in self.visited and self.region.contains(*roads.xy(a))
        ]
        if unvisited:
            goal = min(unvisited, key=lambda a: math.dist(roads.xy(a), (pose.x, pose.y)))
            best = min(inside, key=lambda o: math.dist(roads.xy(o.anchor), roads.xy(goal)))
            return Decision(MOVE_TO_ROAD_WAYPOINT, best.waypoint_id)
        pick = inside[int(self._rng.integers(len(inside)))]
        return Decision(MOVE_TO_ROAD_WAYPOINT, pick.waypoint_id)


@dataclass
class ColourShapeUav:
    """``UavSearchPolicy`` as an ``AgosPolicy`` (``policy: colour_shape`` of the UAV), in the
    task's mode and within its annotation budget, told when the UGV rejected its last match.

    AGOS-Agent: the UAV gets no turn while its candidate is verified and a valid CONFIRM
    ends the episode, so its next decision after an annotation means the candidate closed
    without success (rejected, a false CONFIRM with confirmations left, no serviceable
    approach). Baseline: the decision clock gives the UAV turns while the UGV drives to the
    anchor it sent, so only the UGV's messages say that the anchor was rejected.

    Args:
        seed: breaks ties between equally good waypoints.
    """

    seed: int = 0
    _policy: UavSearchPolicy | None = None
    _annotated: bool = False
    _messages_read: int = 0

    def reset(self, task: AgosTask) -> None:
        signature = TargetSignature.from_references(task.reference_images)
        self._policy = UavSearchPolicy(
            task.town,
            task.region,
            signature,
            seed=self.seed,
            mode=task.mode,
            annotation_budget=task.max_uses.get(ANNOTATE_CANDIDATE, 0),
        )
        self._annotated = False
        self._messages_read = 0

    def act(self, observation: AgosObservation) -> Decision:
        assert self._policy is not None, "act() before reset()"
        if self._policy.mode == MODE_BASELINE:
            news = observation.messages[self._messages_read :]
            self._messages_read = len(observation.messages)
            if any(is_rejection(message.text) for message in news):
                self._policy.candidate_rejected()
        elif self._annotated:
            self._policy.candidate_rejected()
        decision = self._policy.act(observation.pose, observation.views[UAV_VIEW])
        self._annotated = decision.action == ANNOTATE_CANDIDATE
        return decision


@dataclass
class ColourShapeUgv:
    """``UgvVerifyPolicy`` as an ``AgosPolicy`` (``policy: colour_shape`` of the UGV). In the
    Baseline the place the UAV's newest message names is its candidate (unless it rejected
    that place), approached by road waypoints, and a CONFIRM or REJECT tells the UAV so.

    Args:
        seed: breaks ties between equally good anchors.
    """

    seed: int = 0
    _policy: UgvVerifyPolicy | None = None
    _baseline: bool = False
    _rejected: list[tuple[float, float]] = field(default_factory=list)

    def reset(self, task: AgosTask) -> None:
        signature = TargetSignature.from_references(task.reference_images)
        self._policy = UgvVerifyPolicy(
            task.town, task.region, signature, task.actions, seed=self.seed
        )
        self._baseline = task.baseline
        self._rejected = []

    def act(self, observation: AgosObservation) -> Decision:
        assert self._policy is not None, "act() before reset()"
        if not self._baseline:
            return self._policy.act(observation.pose, observation.views, observation.active)
        anchor = self._anchor(observation.messages)
        decision = self._policy.act(observation.pose, observation.views, anchor)
        if decision.action == CONFIRM:
            return Decision(CONFIRM, message=confirmation_message(observation.pose))
        if decision.action == REJECT and anchor is not None:
            self._rejected.append(anchor.center)
            return Decision(REJECT, message=rejection_message(anchor.center))
        return decision

    def _anchor(self, messages: Sequence[TeammateMessage]) -> CandidateView | None:
        """The UAV's search anchor, unless the UGV rejected that place."""
        point = search_anchor(messages)
        if point is None or any(
            math.dist(point, place) <= REJECTED_RADIUS_M for place in self._rejected
        ):
            return None
        return CandidateView(f"anchor ({point[0]:.1f}, {point[1]:.1f})", point, active=True)
