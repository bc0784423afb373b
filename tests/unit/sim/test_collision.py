"""Swept-sphere collision: exact first contact, thin obstacles, grazing, overhangs."""

from __future__ import annotations

import numpy as np
import pytest

from aerialdojo.sim.embedded.collision import (
    BOUNDARY_NAME,
    CollisionWorld,
    closest_points_on_triangles,
    first_contact_times,
)
from aerialdojo.sim.embedded.primitives import SEAT_M, box_between, heightfield
from aerialdojo.sim.embedded.world import EmbeddedScene

from .toy import OVERHANG_Z, POLE, WALL_X

RADIUS = 0.25


def test_wall_stops_a_five_metre_move_at_exact_contact(toy_scene: EmbeddedScene) -> None:
    start = np.array((WALL_X - 3.0, 0.0, 5.0))
    hit = toy_scene.sweep_sphere(start, start + np.array((5.0, 0.0, 0.0)), RADIUS)
    assert hit is not None
    assert hit.name == "wall"
    assert hit.position[0] == pytest.approx(WALL_X - RADIUS, abs=1e-9)
    assert hit.fraction == pytest.approx((3.0 - RADIUS) / 5.0, abs=1e-12)


def test_thin_pole_is_not_tunnelled_by_a_five_metre_move(toy_scene: EmbeddedScene) -> None:
    x, y, pole_radius = POLE
    start = np.array((x - 2.5, y, 4.0))
    hit = toy_scene.sweep_sphere(start, start + np.array((5.0, 0.0, 0.0)), RADIUS)
    assert hit is not None and hit.name == "pole"
    # The pole is a 16-gon inscribed in the circle, so contact is at most a sliver later.
    assert (
        x - pole_radius - RADIUS
        <= hit.position[0]
        <= x - pole_radius * np.cos(np.pi / 16) - RADIUS + 1e-9
    )


def test_grazing_pass_misses_by_a_millimetre_and_hits_by_a_millimetre(
    toy_scene: EmbeddedScene,
) -> None:
    x, y, pole_radius = POLE
    clearance = pole_radius + RADIUS
    passing = np.array((x - 3.0, y + clearance + 1e-3, 4.0))
    assert toy_scene.sweep_sphere(passing, passing + np.array((6.0, 0.0, 0.0)), RADIUS) is None
    touching = np.array((x - 3.0, y + clearance * np.cos(np.pi / 16) - 1e-3, 4.0))
    hit = toy_scene.sweep_sphere(touching, touching + np.array((6.0, 0.0, 0.0)), RADIUS)
    assert hit is not None and hit.name == "pole"


def test_overhang_blocks_climbing_underneath_but_not_flying_beside(
    toy_scene: EmbeddedScene,
) -> None:
    below = np.array((-25.0, 0.0, OVERHANG_Z - 1.0))
    hit = toy_scene.sweep_sphere(below, below + np.array((0.0, 0.0, 2.0)), RADIUS)
    assert hit is not None and hit.name == "canopy"
    assert hit.position[2] == pytest.approx(OVERHANG_Z - RADIUS, abs=1e-9)
    # Flying in under the slab at low height is free: it is an overhang, not a block.
    outside = np.array((-15.0, 0.0, 2.0))
    assert toy_scene.sweep_sphere(outside, outside + np.array((-5.0, 0.0, 0.0)), RADIUS) is None
    assert toy_scene.sphere_is_free(np.array((-25.0, 0.0, 2.0)), RADIUS)


def test_contact_pose_can_back_off_but_not_push_in(toy_scene: EmbeddedScene) -> None:
    start = np.array((WALL_X - 3.0, 2.0, 5.0))
    hit = toy_scene.sweep_sphere(start, start + np.array((5.0, 0.0, 0.0)), RADIUS)
    assert hit is not None
    assert toy_scene.sphere_is_free(hit.position, RADIUS)
    assert (
        toy_scene.sweep_sphere(hit.position, hit.position + np.array((-3.0, 0.0, 0.0)), RADIUS)
        is None
    )
    again = toy_scene.sweep_sphere(hit.position, hit.position + np.array((1.0, 0.0, 0.0)), RADIUS)
    assert again is not None and again.fraction == 0.0


def test_ground_and_scene_boundary_are_obstacles(toy_scene: EmbeddedScene) -> None:
    start = np.array((0.0, 0.0, 1.0))
    down = toy_scene.sweep_sphere(start, start + np.array((0.0, 0.0, -2.0)), RADIUS)
    assert down is not None and down.name == "terrain"
    # The ground's sheet lies SEAT_M above z = 0 (primitives.SEAT_M).
    assert down.position[2] == pytest.approx(RADIUS + SEAT_M, abs=1e-9)
    edge = np.array((toy_scene.annotations.bounds_max[0] - 1.0, -30.0, 5.0))
    out = toy_scene.sweep_sphere(edge, edge + np.array((5.0, 0.0, 0.0)), RADIUS)
    assert out is not None and out.name == BOUNDARY_NAME and out.fraction == pytest.approx(0.2)


def test_inside_closed_geometry_is_not_free(toy_scene: EmbeddedScene) -> None:
    # Far from every face, yet inside the wall's slab or under the ground: not free.
    assert not toy_scene.sphere_is_free(np.array((WALL_X + 0.1, 0.0, 6.0)), 0.05)
    assert not toy_scene.sphere_is_free(np.array((0.0, 0.0, -3.0)), RADIUS)
    assert toy_scene.sphere_is_free(np.array((0.0, 0.0, 3.0)), RADIUS)


def test_sweep_agrees_with_dense_sampling_on_random_segments(toy_scene: EmbeddedScene) -> None:
    rng = np.random.default_rng(7)
    world = toy_scene.collision
    checked_hits = 0
    for _ in range(150):
        start = rng.uniform((-45.0, -45.0, 0.5), (45.0, 45.0, 10.0))
        if not world.sphere_is_free(start, RADIUS):
            continue
        end = start + rng.normal(size=3) * 4.0
        hit = world.sweep_sphere(start, end, RADIUS)
        fractions = np.linspace(0.0, 1.0, 401)
        stop = 1.0 if hit is None else hit.fraction
        for fraction in fractions[fractions < stop - 1e-3]:
            distance, _ = world.distance_to_geometry(start + (end - start) * fraction, RADIUS)
            assert distance >= RADIUS - 1e-6
        if hit is not None and hit.name != BOUNDARY_NAME:
            checked_hits += 1
            distance, _ = world.distance_to_geometry(hit.position, RADIUS + 0.01)
            assert distance == pytest.approx(RADIUS, abs=1e-6)
    assert checked_hits >= 10


def test_closest_point_regions_match_brute_force() -> None:
    rng = np.random.default_rng(3)
    triangles = rng.normal(size=(40, 3, 3))
    barycentric = rng.dirichlet((1.0, 1.0, 1.0), size=4000)
    for point in rng.normal(size=(20, 3)) * 2.0:
        closest = closest_points_on_triangles(point, triangles)
        exact = np.linalg.norm(closest - point, axis=1)
        samples = np.einsum("sk,tkd->tsd", barycentric, triangles)
        sampled = np.linalg.norm(samples - point, axis=2).min(axis=1)
        assert np.all(exact <= sampled + 1e-9)
        assert np.all(sampled - exact < 0.15)


def test_first_contact_with_a_single_triangle_face_edge_and_vertex() -> None:
    triangle = np.array([[[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0]]])
    face = first_contact_times(np.array((1.0, 1.0, 3.0)), np.array((0.0, 0.0, -4.0)), 0.5, triangle)
    assert face[0] == pytest.approx(2.5 / 4.0)
    edge = first_contact_times(np.array((2.0, -3.0, 0.0)), np.array((0.0, 4.0, 0.0)), 0.5, triangle)
    assert edge[0] == pytest.approx(2.5 / 4.0)
    vertex = first_contact_times(
        np.array((-3.0, -3.0, 0.0)), np.array((4.0, 4.0, 0.0)), 0.5, triangle
    )
    assert vertex[0] == pytest.approx((np.hypot(3.0, 3.0) - 0.5) / np.hypot(4.0, 4.0))
    miss = first_contact_times(np.array((5.0, 5.0, 1.0)), np.array((1.0, 1.0, 0.0)), 0.5, triangle)
    assert np.isinf(miss[0])


def test_broad_phase_finds_triangles_spanning_many_cells() -> None:
    big = np.array([[[-100.0, -100.0, 0.0], [100.0, -100.0, 0.0], [0.0, 100.0, 0.0]]])
    world = CollisionWorld(
        big, np.zeros(1), ["floor"], bounds_min=(-90.0, -90.0, -5.0), bounds_max=(90.0, 90.0, 50.0)
    )
    hit = world.sweep_sphere(np.array((10.0, 10.0, 2.0)), np.array((10.0, 10.0, -2.0)), RADIUS)
    assert hit is not None and hit.name == "floor"


def _slab_on_box_world(slab_first: bool) -> CollisionWorld:
    """A 10 m box with a roof slab whose bottom lies exactly on the box's top (z = 12): the
    tie the scenes once had, with the two pieces in either order (a ray tracer reports one of
    two faces at one distance by an order of its own)."""
    wall = box_between((0.0, 0.0, 0.0), (10.0, 10.0, 12.0)).triangles
    roof = box_between((0.3, 0.3, 12.0), (9.7, 9.7, 12.6)).triangles
    pieces = [roof, wall] if slab_first else [wall, roof]
    return CollisionWorld(
        np.concatenate(pieces),
        np.concatenate([np.full(len(piece), index) for index, piece in enumerate(pieces)]),
        ["first", "second"],
        bounds_min=(-20.0, -20.0, -1.0),
        bounds_max=(30.0, 30.0, 40.0),
        solid=True,
    )


@pytest.mark.parametrize("slab_first", [False, True])
def test_enclosure_counts_both_coincident_faces_whichever_comes_first(slab_first: bool) -> None:
    world = _slab_on_box_world(slab_first)
    # Straight under the slab: the upward ray meets the box's top (leaving) and the slab's
    # bottom (entering) at one distance, then leaves through the slab's top.
    under_the_slab = np.array((5.0, 5.0, 11.0))
    assert world.encloses(under_the_slab)
    assert not world.sphere_is_free(under_the_slab, 0.01)
    # Under the box's rim (no slab above), in the slab, above it, beside the box.
    assert world.encloses(np.array((0.1, 5.0, 11.0)))
    assert world.encloses(np.array((5.0, 5.0, 12.3)))
    assert not world.encloses(np.array((5.0, 5.0, 13.0)))
    assert world.sphere_is_free(np.array((-1.0, 5.0, 11.0)), 0.5)


def test_enclosure_holds_inside_overlapping_solids_and_below_a_sheet() -> None:
    # A slab sunk 5 mm into its box: right under it the first face upward is the slab's
    # bottom (entering), yet the point is inside the box.
    wall = box_between((0.0, 0.0, 0.0), (10.0, 10.0, 12.0)).triangles
    roof = box_between((0.3, 0.3, 11.995), (9.7, 9.7, 12.6)).triangles
    ground = heightfield(np.array((-20.0, 30.0)), np.array((-20.0, 30.0)), np.zeros((2, 2)))
    triangles = np.concatenate((wall, roof, ground.triangles))
    world = CollisionWorld(
        triangles,
        np.zeros(len(triangles), dtype=np.int64),
        ["all"],
        bounds_min=(-20.0, -20.0, -5.0),
        bounds_max=(30.0, 30.0, 40.0),
        solid=True,
    )
    assert world.encloses(np.array((5.0, 5.0, 11.99)))
    assert world.encloses(np.array((-5.0, 5.0, -1.0)))
    assert world.encloses(np.array((5.0, 5.0, -1.0)))
    assert not world.encloses(np.array((-5.0, 5.0, 1.0)))


def test_a_ray_through_the_edge_two_triangles_share_counts_it_once() -> None:
    # The box's top is two triangles split along its diagonal x = y; these rays reach z = 12
    # on that diagonal. Counted twice, the point below the box would be inside; not at all,
    # the point in it would be outside.
    wall = box_between((0.0, 0.0, 0.0), (10.0, 10.0, 12.0))
    world = CollisionWorld(
        wall.triangles,
        np.zeros(len(wall.faces), dtype=np.int64),
        ["wall"],
        bounds_min=(-20.0, -20.0, -1.0),
        bounds_max=(30.0, 30.0, 40.0),
        solid=True,
    )
    for x in (2.0, 5.0, 8.0):
        for z, inside in ((6.0, True), (-0.5, False)):
            rise = 12.0 - z
            point = np.array((x - 0.013 * rise, x - 0.007 * rise, z))
            assert world.encloses(point) is inside, (x, z)
