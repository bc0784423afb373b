"""Scene annotations shared by simulator backends, task generation and evaluation."""

from __future__ import annotations

from dataclasses import dataclass, field

from aerialdojo.geometry import Pose

#: Scene families of AerialDojo-200K (AerialDojo-200K, section 3.1).
FAMILIES = ("urban", "natural", "infrastructure", "disaster")


@dataclass(frozen=True, kw_only=True)
class Landmark:
    """A visually salient spatial reference (AerialDojo-200K, section 3.1 "Manual annotation")."""

    name: str
    position: tuple[float, float, float]
    description: str = ""


@dataclass(frozen=True, kw_only=True)
class TargetObject:
    """A searchable object instance and its anchor.

    Attributes:
        object_id: unique within the scene, e.g. ``"obj_007"``.
        instance_id: id written into instance-id images (> 0).
        name: short name used in goals, e.g. ``"red pickup truck"``.
        category: vocabulary category, e.g. ``"pickup_truck"``.
        colour: dominant colour name, e.g. ``"red"``.
        attributes: further distinguishing attributes.
        description: text that tells this instance apart from similar ones.
        centroid: centre of the object's bounding box, map frame.
        bbox_min: axis-aligned bounding box minimum corner.
        bbox_max: axis-aligned bounding box maximum corner.
        anchor: collision-free viewpoint 1 m outside the boundary, facing the centroid.
    """

    object_id: str
    instance_id: int
    name: str
    category: str
    colour: str
    attributes: tuple[str, ...] = ()
    description: str
    centroid: tuple[float, float, float]
    bbox_min: tuple[float, float, float]
    bbox_max: tuple[float, float, float]
    anchor: Pose


@dataclass(frozen=True, kw_only=True)
class SceneAnnotations:
    """Everything about a scene that is not geometry.

    Attributes:
        scene: scene name, e.g. ``"Mall_0"``.
        scene_type: e.g. ``"Mall"``.
        family: one of ``FAMILIES``.
        distribution: ``"id"`` for ``<Type>_0``, ``"ood"`` for ``<Type>_1``.
        bounds_min: lower corner of the flyable region, map frame.
        bounds_max: upper corner of the flyable region, map frame.
        landmarks: named landmarks.
        objects: target objects with anchors.
        road_nodes: road graph vertices (x, y, z), empty where the type has no roads.
        road_edges: directed road graph edges as index pairs into ``road_nodes``.
    """

    scene: str
    scene_type: str
    family: str
    distribution: str
    bounds_min: tuple[float, float, float]
    bounds_max: tuple[float, float, float]
    landmarks: tuple[Landmark, ...]
    objects: tuple[TargetObject, ...]
    road_nodes: tuple[tuple[float, float, float], ...] = field(default=())
    road_edges: tuple[tuple[int, int], ...] = field(default=())

    def object_by_id(self, object_id: str) -> TargetObject:
        for obj in self.objects:
            if obj.object_id == object_id:
                return obj
        raise KeyError(f"scene {self.scene}: no object {object_id!r}")
