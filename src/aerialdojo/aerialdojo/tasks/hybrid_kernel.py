"""The Hybrid A* search loop of ``planner.plan_actions``, compiled with numba.

The loop is the one ``planner._lazy_astar`` runs over its other spaces, step for step: the
same heap order (f, then heuristic, then expansion, then row), the same lazily checked
successors, bundles, closed set and length cap, and the same floating-point operations in
the same order for every position, key, cost and heuristic, so it expands the same nodes
and returns the same routes. (numba's ``math.atan2``, ``math.cos`` and ``math.hypot`` are
the C library's, as numpy's are for float64 on the CPUs numpy dispatches here; the
property test in ``tests/unit/tasks/test_hybrid_kernel.py`` holds them bit for bit.)

It stops and hands back to Python whenever it needs what only Python has:

- ``NEEDS_CHECK``: whether the move into a popped node is free (the collision world, its
  capsule screen and the rays known from earlier searches stay in Python);
- ``NEEDS_TERMINAL``: whether a node is within the goal tolerance, when its distance is
  within a few ulps of the tolerance (``math.dist`` decides those, as before);
- ``NEEDS_ROWS``: more room for successor rows.

Python answers in ``counters[ANSWER]`` (or grows the rows) and calls ``advance`` again.

Compiled once per machine and cached beside this file (numba's ``cache=True``: written to a
temporary file and renamed into place, so concurrent processes never read a half-written
one; where the package directory is read-only numba uses the user's cache directory).
"""

# numba compiles positional parameters only (no keyword-only ones): the kernels take their
# arrays one by one.
# ruff: noqa: PLR0917

from __future__ import annotations

import math

import numpy as np
from numba import njit

# What ``advance`` returns.
FOUND = 0
NOT_FOUND = 1
NEEDS_CHECK = 2
NEEDS_TERMINAL = 3
NEEDS_ROWS = 4

# counters[...]: the search's integers.
EXPANSIONS = 0
CHECKS = 1
HEAP_SIZE = 2
BUNDLES = 3
NODES = 4
ROWS = 5
PHASE = 6
PENDING_ROW = 7
PENDING_BUNDLE = 8
ANSWER = 9
RESULT = 10
QUERY_HEADING = 11
QUERY_LABEL = 12
MAX_EXPANSIONS = 13
COUNTERS = 14

# params[...]: the search's constants.
GOAL = 0  # 3 values
ORIGIN = 3  # 3
LOW = 6  # 3
HIGH = 9  # 3
INNER_LOW = 12  # 3
INNER_HIGH = 15  # 3
START_YAW = 18
HALF_STEP = 19
COS_HALF_STEP = 20
ACTION_SLACK = 21
LENGTH_SLACK = 22
ACTION_COST = 23
TOLERANCE = 24
MAX_LENGTH = 25
CELL = 26
LONGEST_HORIZONTAL = 27
LONGEST_VERTICAL = 28
WEIGHT_X = 29
WEIGHT_Y = 30
FIRST_CELL = 31
QUERY = 32  # 3 values: the position a question is about
PARAMS = 35

# bundles[b, ...]
B_PARENT = 0
B_FIRST = 1
B_COUNT = 2
B_TERMINAL = 3

# What the loop is doing when it returns to Python.
_POPPING = 0
_AWAITING_CHECK = 1
_AWAITING_TERMINAL = 2

#: How much a squared distance may be off the squared tolerance before ``math.dist`` is
#: asked: far beyond the few ulps either computation can be off by.
_TERMINAL_SLACK = 1e-9


@njit(cache=True)
def _before(f: float, h: float, e: int, i: int, g: float, k: float, x: int, j: int) -> bool:
    """Whether heap entry (f, h, e, i) comes before (g, k, x, j): tuples compared in order."""
    if f != g:
        return f < g
    if h != k:
        return h < k
    if e != x:
        return e < x
    return i < j


@njit(cache=True)
def _sift_down(heap_f: np.ndarray, heap_i: np.ndarray, start: int, pos: int) -> None:
    # heapq's _siftdown: the new item at pos moves up towards start.
    f, h = heap_f[pos, 0], heap_f[pos, 1]
    e, i = heap_i[pos, 0], heap_i[pos, 1]
    while pos > start:
        parent = (pos - 1) >> 1
        if _before(
            f, h, e, i, heap_f[parent, 0], heap_f[parent, 1], heap_i[parent, 0], heap_i[parent, 1]
        ):
            heap_f[pos, 0], heap_f[pos, 1] = heap_f[parent, 0], heap_f[parent, 1]
            heap_i[pos, 0], heap_i[pos, 1] = heap_i[parent, 0], heap_i[parent, 1]
            pos = parent
        else:
            break
    heap_f[pos, 0], heap_f[pos, 1] = f, h
    heap_i[pos, 0], heap_i[pos, 1] = e, i


@njit(cache=True)
def _sift_up(heap_f: np.ndarray, heap_i: np.ndarray, size: int, pos: int) -> None:
    # heapq's _siftup: the smaller child moves up until a leaf, then the item sifts down.
    start = pos
    f, h = heap_f[pos, 0], heap_f[pos, 1]
    e, i = heap_i[pos, 0], heap_i[pos, 1]
    child = 2 * pos + 1
    while child < size:
        right = child + 1
        if right < size and not _before(
            heap_f[child, 0], heap_f[child, 1], heap_i[child, 0], heap_i[child, 1],
            heap_f[right, 0], heap_f[right, 1], heap_i[right, 0], heap_i[right, 1],
        ):  # fmt: skip
            child = right
        heap_f[pos, 0], heap_f[pos, 1] = heap_f[child, 0], heap_f[child, 1]
        heap_i[pos, 0], heap_i[pos, 1] = heap_i[child, 0], heap_i[child, 1]
        pos = child
        child = 2 * pos + 1
    heap_f[pos, 0], heap_f[pos, 1] = f, h
    heap_i[pos, 0], heap_i[pos, 1] = e, i
    _sift_down(heap_f, heap_i, start, pos)


@njit(cache=True)
def _push(
    counters: np.ndarray, heap_f: np.ndarray, heap_i: np.ndarray, f: float, h: float, e: int, i: int
) -> None:
    size = counters[HEAP_SIZE]
    heap_f[size, 0], heap_f[size, 1] = f, h
    heap_i[size, 0], heap_i[size, 1] = e, i
    counters[HEAP_SIZE] = size + 1
    _sift_down(heap_f, heap_i, 0, size)


@njit(cache=True)
def _metric(params: np.ndarray, x: float, y: float, z: float) -> tuple[float, float]:
    """``_HybridSpace``'s polygonal norm of the horizontal offset to the goal, and the
    vertical offset's magnitude, in numpy's order of operations."""
    dx = params[GOAL] - x
    dy = params[GOAL + 1] - y
    half = params[HALF_STEP]
    past = math.atan2(dy, dx)
    past -= params[START_YAW]
    past = past % (2.0 * half)
    past -= half
    polygonal = math.cos(past)
    polygonal *= math.hypot(dx, dy)
    polygonal /= params[COS_HALF_STEP]
    return polygonal, abs(params[GOAL + 2] - z)


@njit(cache=True)
def _terminal_distance(params: np.ndarray, x: float, y: float, z: float) -> int:
    """1 within the goal tolerance, 0 beyond it, -1 too close to tell without math.dist."""
    dx, dy, dz = x - params[GOAL], y - params[GOAL + 1], z - params[GOAL + 2]
    squared = dx * dx + dy * dy + dz * dz
    limit = params[TOLERANCE] * params[TOLERANCE]
    if squared < limit * (1.0 - _TERMINAL_SLACK):
        return 1
    if squared > limit * (1.0 + _TERMINAL_SLACK):
        return 0
    return -1


@njit(cache=True)
def _expand(
    counters: np.ndarray,
    params: np.ndarray,
    displacement: np.ndarray,
    step_cost: np.ndarray,
    step_length: np.ndarray,
    heap_f: np.ndarray,
    heap_i: np.ndarray,
    bundles: np.ndarray,
    rows_f: np.ndarray,
    rows_i: np.ndarray,
    nodes_f: np.ndarray,
    nodes_i: np.ndarray,
    closed: np.ndarray,
    node: int,
    within: int,
) -> None:
    """The rest of an expansion once its node is added: its terminal entry if ``within``,
    then its successors' bundle."""
    x, y, z = nodes_f[node, 0], nodes_f[node, 1], nodes_f[node, 2]
    length, cost = nodes_f[node, 3], nodes_f[node, 4]
    heading = nodes_i[node, 0]
    bundle = counters[BUNDLES]
    bundles[bundle, B_TERMINAL] = -1
    if within:
        polygonal, vertical = _metric(params, x, y, z)
        bundles[bundle, B_TERMINAL] = node
        _push(counters, heap_f, heap_i, cost + (polygonal + vertical), 0.0, bundle, -1)
    inner = (
        params[INNER_LOW] < x < params[INNER_HIGH]
        and params[INNER_LOW + 1] < y < params[INNER_HIGH + 1]
        and params[INNER_LOW + 2] < z < params[INNER_HIGH + 2]
    )
    first = counters[ROWS]
    count = 0
    max_length = params[MAX_LENGTH]
    for label in range(displacement.shape[1]):
        px = displacement[heading, label, 0] + x
        py = displacement[heading, label, 1] + y
        pz = displacement[heading, label, 2] + z
        if not inner and not (
            params[LOW] <= px <= params[HIGH]
            and params[LOW + 1] <= py <= params[HIGH + 1]
            and params[LOW + 2] <= pz <= params[HIGH + 2]
        ):
            continue
        # _HybridSpace.lower_bounds
        polygonal, vertical = _metric(params, px, py, pz)
        actions = polygonal / params[LONGEST_HORIZONTAL]
        actions += vertical / params[LONGEST_VERTICAL]
        actions -= params[ACTION_SLACK]
        if not actions >= 0.0:
            actions = 0.0
        offset = polygonal
        offset += vertical
        heuristic = params[ACTION_COST] * actions
        heuristic += offset
        length_to_go = offset - params[LENGTH_SLACK]
        if not length_to_go >= 0.0:
            length_to_go = 0.0
        successor_length = length + step_length[heading, label]
        if not successor_length + length_to_go < max_length:
            continue
        # _HybridSpace.keys and _CellGrid.keys
        cell_x = math.floor((px - params[ORIGIN]) / params[CELL] + 0.5)
        cell_y = math.floor((py - params[ORIGIN + 1]) / params[CELL] + 0.5)
        number = cell_x * params[WEIGHT_X] + cell_y * params[WEIGHT_Y]
        number += np.rint(pz - params[ORIGIN + 2])
        number += params[FIRST_CELL]
        key = int(number)
        if closed[key]:
            continue
        successor_cost = cost + step_cost[heading, label]
        f = successor_cost + heuristic
        # Insert in (f, heuristic) order, after equal rows: numpy's stable lexsort.
        row = first + count
        while row > first and (
            rows_f[row - 1, 0] > f or (rows_f[row - 1, 0] == f and rows_f[row - 1, 1] > heuristic)
        ):
            rows_f[row, 0], rows_f[row, 1] = rows_f[row - 1, 0], rows_f[row - 1, 1]
            rows_f[row, 2], rows_f[row, 3] = rows_f[row - 1, 2], rows_f[row - 1, 3]
            rows_i[row, 0], rows_i[row, 1] = rows_i[row - 1, 0], rows_i[row - 1, 1]
            row -= 1
        rows_f[row, 0], rows_f[row, 1] = f, heuristic
        rows_f[row, 2], rows_f[row, 3] = successor_cost, successor_length
        rows_i[row, 0], rows_i[row, 1] = label, key
        count += 1
    bundles[bundle, B_PARENT] = node
    bundles[bundle, B_FIRST] = first
    bundles[bundle, B_COUNT] = count
    counters[BUNDLES] = bundle + 1
    counters[ROWS] = first + count
    if count:
        _push(counters, heap_f, heap_i, rows_f[first, 0], rows_f[first, 1], bundle, 0)


@njit(cache=True)
def advance(
    counters: np.ndarray,
    params: np.ndarray,
    displacement: np.ndarray,
    step_cost: np.ndarray,
    step_length: np.ndarray,
    next_heading: np.ndarray,
    heap_f: np.ndarray,
    heap_i: np.ndarray,
    bundles: np.ndarray,
    rows_f: np.ndarray,
    rows_i: np.ndarray,
    nodes_f: np.ndarray,
    nodes_i: np.ndarray,
    closed: np.ndarray,
    motions: np.ndarray,
    screen: np.ndarray,
    triangles: np.ndarray,
    triangle_bounds: np.ndarray,
    cell_start: np.ndarray,
    cell_triangles: np.ndarray,
) -> int:
    """Run the search until it ends or needs Python (the module's docstring).

    With ``screen[S_ENABLED]`` the move into a popped node is first tested by
    ``capsule_verdict`` (``motions``: each move's displacement as the screen sees it); only
    what it leaves open goes to Python.

    ``nodes_f`` rows are (x, y, z, length, cost), ``nodes_i`` rows (heading, parent node,
    label of the move into it); ``rows_f`` (f, heuristic, cost, length) and ``rows_i``
    (label, closed-set key) are the bundles' successors, best first.
    """
    most_rows = displacement.shape[1]
    while True:
        phase = counters[PHASE]
        if phase == _AWAITING_CHECK:
            counters[PHASE] = _POPPING
            if counters[ANSWER] == 0:
                continue
            row = counters[PENDING_ROW]
            parent = bundles[counters[PENDING_BUNDLE], B_PARENT]
            label = rows_i[row, 0]
            heading = nodes_i[parent, 0]
            node = counters[NODES]
            # _HybridSpace.successor: the same additions as the expansion's.
            nodes_f[node, 0] = nodes_f[parent, 0] + displacement[heading, label, 0]
            nodes_f[node, 1] = nodes_f[parent, 1] + displacement[heading, label, 1]
            nodes_f[node, 2] = nodes_f[parent, 2] + displacement[heading, label, 2]
            nodes_f[node, 3] = rows_f[row, 3]
            nodes_f[node, 4] = rows_f[row, 2]
            nodes_i[node, 0] = next_heading[heading, label]
            nodes_i[node, 1] = parent
            nodes_i[node, 2] = label
            closed[rows_i[row, 1]] = 1
            counters[NODES] = node + 1
            counters[EXPANSIONS] += 1
            x, y, z = nodes_f[node, 0], nodes_f[node, 1], nodes_f[node, 2]
            within = _terminal_distance(params, x, y, z)
            if within < 0:
                params[QUERY : QUERY + 3] = nodes_f[node, :3]
                counters[PHASE] = _AWAITING_TERMINAL
                return NEEDS_TERMINAL
            _expand(
                counters, params, displacement, step_cost, step_length, heap_f, heap_i,
                bundles, rows_f, rows_i, nodes_f, nodes_i, closed, node, within,
            )  # fmt: skip
            continue
        if phase == _AWAITING_TERMINAL:
            counters[PHASE] = _POPPING
            _expand(
                counters, params, displacement, step_cost, step_length, heap_f, heap_i,
                bundles, rows_f, rows_i, nodes_f, nodes_i, closed, counters[NODES] - 1,
                counters[ANSWER],
            )  # fmt: skip
            continue
        if counters[HEAP_SIZE] == 0 or counters[EXPANSIONS] >= counters[MAX_EXPANSIONS]:
            return NOT_FOUND
        if counters[ROWS] + most_rows > rows_f.shape[0]:
            return NEEDS_ROWS
        expansion, index = heap_i[0, 0], heap_i[0, 1]
        if index < 0:
            counters[RESULT] = bundles[expansion, B_TERMINAL]
            return FOUND
        first, count = bundles[expansion, B_FIRST], bundles[expansion, B_COUNT]
        # The bundle's next row not already closed takes its place.
        following = index + 1
        while following < count and closed[rows_i[first + following, 1]]:
            following += 1
        if following < count:
            row = first + following
            heap_f[0, 0], heap_f[0, 1] = rows_f[row, 0], rows_f[row, 1]
            heap_i[0, 0], heap_i[0, 1] = expansion, following
            _sift_up(heap_f, heap_i, counters[HEAP_SIZE], 0)
        else:
            size = counters[HEAP_SIZE] - 1
            counters[HEAP_SIZE] = size
            if size:
                heap_f[0, 0], heap_f[0, 1] = heap_f[size, 0], heap_f[size, 1]
                heap_i[0, 0], heap_i[0, 1] = heap_i[size, 0], heap_i[size, 1]
                _sift_up(heap_f, heap_i, size, 0)
        row = first + index
        if closed[rows_i[row, 1]]:
            continue
        parent = bundles[expansion, B_PARENT]
        if parent >= 0:
            counters[CHECKS] += 1
            counters[PENDING_ROW] = row
            counters[PENDING_BUNDLE] = expansion
            counters[PHASE] = _AWAITING_CHECK
            heading, label = nodes_i[parent, 0], rows_i[row, 0]
            if screen[S_ENABLED]:
                verdict = capsule_verdict(
                    screen, triangles, triangle_bounds, cell_start, cell_triangles,
                    nodes_f[parent, 0], nodes_f[parent, 1], nodes_f[parent, 2],
                    motions[heading, label, 0], motions[heading, label, 1],
                    motions[heading, label, 2],
                )  # fmt: skip
                if verdict >= 0:
                    counters[ANSWER] = verdict
                    continue
            params[QUERY : QUERY + 3] = nodes_f[parent, :3]
            counters[QUERY_HEADING] = heading
            counters[QUERY_LABEL] = label
            return NEEDS_CHECK
        # The start: its node is row 0 of the nodes, written by Python.
        closed[rows_i[row, 1]] = 1
        counters[NODES] = 1
        counters[EXPANSIONS] += 1
        within = _terminal_distance(params, nodes_f[0, 0], nodes_f[0, 1], nodes_f[0, 2])
        if within < 0:
            params[QUERY : QUERY + 3] = nodes_f[0, :3]
            counters[PHASE] = _AWAITING_TERMINAL
            return NEEDS_TERMINAL
        _expand(
            counters, params, displacement, step_cost, step_length, heap_f, heap_i,
            bundles, rows_f, rows_i, nodes_f, nodes_i, closed, 0, within,
        )  # fmt: skip


# The capsule screen of ``tasks.capsules``, compiled: the same two tests (a capsule of radius
# r - margin overlapping a triangle settles "blocked", one of r + margin overlapping none
# settles "free" inside the flyable box), by segment-triangle distances over a uniform grid
# of the triangles instead of FCL's, so a search asks Python only for the motions whose
# clearance is within the margin of r. screen[...] layout:
S_ORIGIN_X = 0
S_ORIGIN_Y = 1
S_CELL = 2
S_COLUMNS = 3
S_ROWS = 4
S_NARROW_SQUARED = 5  # (r - margin)^2, or -1 where the margin is wider than r
S_WIDE = 6  # r + margin
S_INNER_LOW = 7  # 3 values: the flyable box shrunk by the margin
S_INNER_HIGH = 10  # 3
S_ENABLED = 13  # 1 if the world has a compiled screen
SCREEN = 14


@njit(cache=True)
def _clamp01(value: float) -> float:
    return min(max(value, 0.0), 1.0)


@njit(cache=True)
def _segments_squared(
    px: float, py: float, pz: float, ux: float, uy: float, uz: float,
    ax: float, ay: float, az: float, vx: float, vy: float, vz: float,
) -> float:  # fmt: skip
    """Squared distance between segments p + s u and a + t v, s and t in [0, 1] (the
    closest points of two segments, Ericson, Real-Time Collision Detection, 5.1.9)."""
    rx, ry, rz = px - ax, py - ay, pz - az
    uu = ux * ux + uy * uy + uz * uz
    vv = vx * vx + vy * vy + vz * vz
    vr = vx * rx + vy * ry + vz * rz
    if uu <= 1e-300 and vv <= 1e-300:
        return rx * rx + ry * ry + rz * rz
    if uu <= 1e-300:
        s, t = 0.0, _clamp01(vr / vv)
    else:
        ur = ux * rx + uy * ry + uz * rz
        if vv <= 1e-300:
            s, t = _clamp01(-ur / uu), 0.0
        else:
            uv = ux * vx + uy * vy + uz * vz
            denominator = uu * vv - uv * uv
            s = _clamp01((uv * vr - ur * vv) / denominator) if denominator > 0.0 else 0.0
            t = (uv * s + vr) / vv
            if t < 0.0:
                s, t = _clamp01(-ur / uu), 0.0
            elif t > 1.0:
                s, t = _clamp01((uv - ur) / uu), 1.0
    dx = px + ux * s - (ax + vx * t)
    dy = py + uy * s - (ay + vy * t)
    dz = pz + uz * s - (az + vz * t)
    return dx * dx + dy * dy + dz * dz


@njit(cache=True)
def _over_triangle(
    triangle: np.ndarray, x: float, y: float, z: float, nx: float, ny: float, nz: float
) -> bool:
    """Whether the point projects into the triangle along its normal n."""
    for corner in range(3):
        a, b = triangle[corner], triangle[(corner + 1) % 3]
        ex, ey, ez = b[0] - a[0], b[1] - a[1], b[2] - a[2]
        wx, wy, wz = x - a[0], y - a[1], z - a[2]
        cx, cy, cz = ey * wz - ez * wy, ez * wx - ex * wz, ex * wy - ey * wx
        if cx * nx + cy * ny + cz * nz < 0.0:
            return False
    return True


@njit(cache=True)
def _segment_triangle_squared(
    triangle: np.ndarray, px: float, py: float, pz: float, ux: float, uy: float, uz: float
) -> float:
    """Squared distance between the segment p + s u (s in [0, 1]) and a triangle: zero if
    the segment crosses it; else the least of its ends over the triangle's face and the
    segment against the three edges (where two disjoint convex sets are closest, one of
    those pairs is)."""
    best = math.inf
    for corner in range(3):
        a, b = triangle[corner], triangle[(corner + 1) % 3]
        squared = _segments_squared(
            px, py, pz, ux, uy, uz, a[0], a[1], a[2], b[0] - a[0], b[1] - a[1], b[2] - a[2]
        )
        best = min(best, squared)
    a, b, c = triangle[0], triangle[1], triangle[2]
    e1 = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    e2 = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
    nx = e1[1] * e2[2] - e1[2] * e2[1]
    ny = e1[2] * e2[0] - e1[0] * e2[2]
    nz = e1[0] * e2[1] - e1[1] * e2[0]
    nn = nx * nx + ny * ny + nz * nz
    if nn <= 1e-300:
        return best  # a degenerate triangle is its edges
    side_p = (px - a[0]) * nx + (py - a[1]) * ny + (pz - a[2]) * nz
    qx, qy, qz = px + ux, py + uy, pz + uz
    side_q = (qx - a[0]) * nx + (qy - a[1]) * ny + (qz - a[2]) * nz
    if _over_triangle(triangle, px, py, pz, nx, ny, nz):
        best = min(best, side_p * side_p / nn)
    if _over_triangle(triangle, qx, qy, qz, nx, ny, nz):
        best = min(best, side_q * side_q / nn)
    if side_p != side_q and (side_p <= 0.0 <= side_q or side_q <= 0.0 <= side_p):
        s = side_p / (side_p - side_q)
        if _over_triangle(triangle, px + ux * s, py + uy * s, pz + uz * s, nx, ny, nz):
            return 0.0
    return best


@njit(cache=True)
def capsule_verdict(
    screen: np.ndarray,
    triangles: np.ndarray,
    bounds: np.ndarray,
    cell_start: np.ndarray,
    cell_triangles: np.ndarray,
    x: float,
    y: float,
    z: float,
    ux: float,
    uy: float,
    uz: float,
) -> int:
    """``CapsuleScreen.motion_verdict`` of the motion u from (x, y, z): 1 certainly free,
    0 certainly blocked, -1 only the exact sweep can tell."""
    wide = screen[S_WIDE]
    narrow_squared, wide_squared = screen[S_NARROW_SQUARED], wide * wide
    low_x, high_x = min(x, x + ux) - wide, max(x, x + ux) + wide
    low_y, high_y = min(y, y + uy) - wide, max(y, y + uy) + wide
    low_z, high_z = min(z, z + uz) - wide, max(z, z + uz) + wide
    columns, rows = int(screen[S_COLUMNS]), int(screen[S_ROWS])
    cell, origin_x, origin_y = screen[S_CELL], screen[S_ORIGIN_X], screen[S_ORIGIN_Y]
    first_x = min(max(math.floor((low_x - origin_x) / cell), 0), columns - 1)
    last_x = min(max(math.floor((high_x - origin_x) / cell), 0), columns - 1)
    first_y = min(max(math.floor((low_y - origin_y) / cell), 0), rows - 1)
    last_y = min(max(math.floor((high_y - origin_y) / cell), 0), rows - 1)
    near = False
    for row in range(first_y, last_y + 1):
        for entry in range(
            cell_start[row * columns + first_x], cell_start[row * columns + last_x + 1]
        ):
            index = cell_triangles[entry]
            if (
                bounds[index, 0] > high_x or bounds[index, 3] < low_x
                or bounds[index, 1] > high_y or bounds[index, 4] < low_y
                or bounds[index, 2] > high_z or bounds[index, 5] < low_z
            ):  # fmt: skip
                continue
            squared = _segment_triangle_squared(triangles[index], x, y, z, ux, uy, uz)
            if squared < narrow_squared:
                return 0
            if squared <= wide_squared:
                near = True
    if near:
        return -1
    low, high = screen[S_INNER_LOW : S_INNER_LOW + 3], screen[S_INNER_HIGH : S_INNER_HIGH + 3]
    inside = (
        low[0] < x < high[0] and low[1] < y < high[1] and low[2] < z < high[2]
        and low[0] < x + ux < high[0] and low[1] < y + uy < high[1] and low[2] < z + uz < high[2]
    )  # fmt: skip
    return 1 if inside else -1
