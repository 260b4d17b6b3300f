r"""Disk meshes and the nested prolongation between consecutive levels.

Mesh ``nrefs`` is ``MeshTri.init_circle(nrefs)`` scaled by R: 4 triangles, then
``nrefs`` times a uniform refinement followed by projecting the boundary vertices
onto |x| = R, so it has N_b = 4·2^nrefs boundary vertices at the angles 2πj/N_b.
Building the hierarchy level by level (the same construction) gives the exact
nested P1 prolongation for free: the fine vertices are the coarse vertices and
one midpoint per coarse edge.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import scipy.sparse as sp
from skfem import MeshTri

from .heat_problem import HEAT, _check_int, _check_real

__all__ = ["disk_meshes", "longest_edge", "nested_prolongation"]


def _refine_disk(mesh: MeshTri, R: float) -> MeshTri:
    """One ``init_circle`` step: uniform refinement, boundary nodes onto |x| = R.

    The projection is done in place on the new mesh (as ``init_circle`` does on
    its copy) so that the facets computed for ``boundary_nodes`` stay cached for
    the next refinement and for the bases: they are the dominant mesh cost.
    """
    fine = mesh.refined()
    D = fine.boundary_nodes()
    p = fine.doflocs
    p[:, D] *= R / np.linalg.norm(p[:, D], axis=0)
    return fine


def disk_meshes(nrefs: int, R: float = HEAT.R) -> Iterator[MeshTri]:
    """Yield ``MeshTri.init_circle(n).scaled(R)`` for n = 0, 1, ..., nrefs, each
    built from the previous one (nested up to the boundary projection)."""
    _check_int("nrefs", nrefs, 0)
    R = _check_real("R", R, positive=True)
    mesh = MeshTri.init_circle(0).scaled([R, R])
    yield mesh
    for _ in range(nrefs):
        mesh = _refine_disk(mesh, R)
        yield mesh


def longest_edge(mesh: MeshTri) -> float:
    """h = max edge length (``mesh.param()`` without its per-element arrays)."""
    return float(
        np.max(np.linalg.norm(np.diff(mesh.p[:, mesh.facets], axis=1), axis=0))
    )


def nested_prolongation(coarse: MeshTri, fine: MeshTri) -> sp.csr_matrix:
    """Exact P1 prolongation from ``coarse`` to the next mesh of
    :func:`disk_meshes` (one refinement + boundary projection).

    skfem numbers the new vertices after the old ones, one per coarse facet at
    its midpoint: (P u)_i = u_i for old vertices and (u_a + u_b)/2 for the
    midpoint of facet (a, b).  At the boundary midpoints (projected outward onto
    |x| = R, outside the coarse polygon) this is the coarse solution at the
    chord midpoint, i.e. at the radial clamp onto the coarse polygon.  The
    layout is checked, not assumed.
    """
    nc, facets = coarse.nvertices, coarse.facets
    nf = facets.shape[1]
    mid = coarse.p[:, facets].mean(axis=1)
    bf = coarse.boundary_facets()
    R = np.linalg.norm(coarse.p[:, facets[0, bf]], axis=0).mean()
    mid[:, bf] *= R / np.linalg.norm(mid[:, bf], axis=0)
    if (
        fine.nvertices != nc + nf
        or not np.allclose(fine.p[:, :nc], coarse.p, rtol=0.0, atol=1e-12 * R)
        or not np.allclose(fine.p[:, nc:], mid, rtol=0.0, atol=1e-12 * R)
    ):
        raise ValueError("fine mesh is not a disk refinement of the coarse mesh")
    rows = np.concatenate([np.arange(nc), np.tile(np.arange(nc, nc + nf), 2)])
    cols = np.concatenate([np.arange(nc), facets[0], facets[1]])
    vals = np.concatenate([np.ones(nc), np.full(2 * nf, 0.5)])
    return sp.csr_matrix((vals, (rows, cols)), shape=(nc + nf, nc))
