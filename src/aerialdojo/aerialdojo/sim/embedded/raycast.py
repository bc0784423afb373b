"""Embree ray casting (through ``embreex``) spread over the machine's cores."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple, TypeVar

import numpy as np
from embreex import rtcore_scene
from embreex.mesh_construction import TriangleMesh

# embreex releases the GIL while it traces, so threads give real parallelism.
WORKERS = max(1, os.cpu_count() or 1)
_POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="aerialdojo-ray")
Job = TypeVar("Job")
# Rays per work item: small enough to balance the cores, large enough to amortise numpy calls.
CHUNK_RAYS = 65536


class RayHits(NamedTuple):
    """What a batch of rays met.

    Attributes:
        primitive: (N,) int32 triangle index, -1 for a miss.
        distance: (N,) float32 hit parameter in units of each direction's length
            (meaningless for misses).
        normal: (N, 3) float32 unnormalised geometric normal of the triangle hit.
    """

    primitive: np.ndarray
    distance: np.ndarray
    normal: np.ndarray


class RayCaster:
    """One Embree scene over a triangle mesh.

    Args:
        vertices: (V, 3) positions.
        faces: (T, 3) vertex indices; primitive ids returned by ``cast`` index these.
    """

    def __init__(self, vertices: np.ndarray, faces: np.ndarray) -> None:
        self._scene = rtcore_scene.EmbreeScene()
        TriangleMesh(
            self._scene,
            np.ascontiguousarray(vertices, dtype=np.float32),
            np.ascontiguousarray(faces, dtype=np.int32),
        )

    def cast(
        self, origins: np.ndarray, directions: np.ndarray, distances: np.ndarray | None = None
    ) -> RayHits:
        """Trace rays on the calling thread.

        Args:
            origins: (N, 3) float32.
            directions: (N, 3) float32, not necessarily unit length.
            distances: (N,) float32 each ray's far limit, overwritten with its hit distance
                (a miss keeps its limit) and returned as ``RayHits.distance``: a caller that
                wants the distances in its own buffer gets them there without a copy. By
                default a new array whose limit is embreex's, 1e37.
        """
        result = self._scene.run(origins, directions, dists=distances, output=1)
        return RayHits(result["primID"], result["tfar"], result["Ng"])


def run_chunked(count: int, work: Callable[[slice], None]) -> None:
    """Call ``work`` on consecutive slices of ``range(count)`` on the shared thread pool."""
    run_in_pool(
        work,
        [slice(start, min(start + CHUNK_RAYS, count)) for start in range(0, count, CHUNK_RAYS)],
    )


def run_in_pool(work: Callable[[Job], None], jobs: Sequence[Job]) -> None:
    """Run ``work`` on every job on the shared thread pool and wait; re-raises the first error."""
    for future in submit_to_pool(work, jobs):
        future.result()


def submit_to_pool(work: Callable[[Job], None], jobs: Sequence[Job]) -> list[Future[None]]:
    """Start ``work`` on every job on the shared thread pool, taken in order; the caller waits
    on the futures (``Future.result`` re-raises a job's error)."""
    return [_POOL.submit(work, job) for job in jobs]
