r"""Exact error norms and point evaluation of FEM solutions.

Errors and inter-level differences are integrated exactly on a solution's mesh
with a degree-4 quadrature rule (6 points per triangle), over element chunks.

Point sampling clamps points between the circle and the mesh polygon radially
onto the polygon and locates them in chunks with a k-nearest-centroid search
whose memory is O(chunk · k) (skfem's own finder can fall back to a
points × elements array: >100 GiB on the fine meshes).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree
from skfem import Basis, DiscreteField, Functional, MeshTri, asm
from skfem.helpers import dot, grad

from .solver import ELEMENTS, HeatSolution, _chunk_bases

__all__ = ["error_norms", "probe_matrix", "sample_solution"]

CHUNK_POINTS = 2000  # points per location query: bounds the candidate arrays


def _interpolate(cb: Basis, u: np.ndarray) -> DiscreteField:
    """``cb.interpolate(u)`` for a scalar element: Σ_i u[dofs_i] φ_i at the
    quadrature points.  (skfem's version first takes ``np.unique`` of all the
    mesh's element DOFs, which costs seconds per call on an element chunk.)"""
    dofs = cb.element_dofs
    value = sum(
        u[dofs[i]][:, None] * np.asarray(cb.basis[i][0]) for i in range(cb.Nbfun)
    )
    grad_ = sum(
        u[dofs[i]][None, :, None] * cb.basis[i][0].grad for i in range(cb.Nbfun)
    )
    return DiscreteField(value=value, grad=grad_)


def error_norms(
    sol: HeatSolution, w: np.ndarray | None = None
) -> dict[str, float | None]:
    """Exact integrals on ``sol``'s mesh (degree-4 rule, element-chunked).

    ``err_L2`` = ‖θ_h - θ*‖_L², ``err_H1`` = |θ_h - θ*|_H¹ (∇θ* = -Qx/(2k)) and,
    if ``w`` (a DOF vector on the same space) is given, ``diff_L2`` = ‖w‖_L² and
    ``diff_H1`` = |w|_H¹ (else None).  All integrands are polynomials of degree
    <= 4 (θ* is quadratic), so the 6-point rule is exact.
    """
    pb = sol.problem

    @Functional
    def err_l2(v):
        return (v["u"] - pb.exact_theta(np.hypot(v.x[0], v.x[1]))) ** 2

    @Functional
    def err_h1(v):
        gx = grad(v["u"])[0] + pb.Q * v.x[0] / (2.0 * pb.k)
        gy = grad(v["u"])[1] + pb.Q * v.x[1] / (2.0 * pb.k)
        return gx**2 + gy**2

    @Functional
    def l2(v):
        return v["w"] ** 2

    @Functional
    def h1(v):
        return dot(grad(v["w"]), grad(v["w"]))

    out = dict.fromkeys(["err_L2", "err_H1", "diff_L2", "diff_H1"], 0.0)
    elem = ELEMENTS[sol.element]()
    for cb in _chunk_bases(sol.mesh, elem, sol.dofmap, 4):
        u = _interpolate(cb, sol.theta)
        out["err_L2"] += asm(err_l2, cb, u=u)
        out["err_H1"] += asm(err_h1, cb, u=u)
        if w is not None:
            wi = _interpolate(cb, w)
            out["diff_L2"] += asm(l2, cb, w=wi)
            out["diff_H1"] += asm(h1, cb, w=wi)
    res: dict[str, float | None] = {k: math.sqrt(v) for k, v in out.items()}
    if w is None:
        res["diff_L2"] = res["diff_H1"] = None
    return res


def _polygon_clamp(x: np.ndarray, R: float, n_b: int) -> tuple[np.ndarray, float]:
    """Clamp points (2, M) radially onto the regular n_b-gon inscribed in |x| = R
    with vertices at angles 2πj/n_b; points beyond R(1 + 1e-9) are an error.

    Polygon radius at angle φ: R cos(π/n_b) / cos((φ mod 2π/n_b) - π/n_b).
    Returns the clamped points and the largest displacement (m), at most
    R(1 - cos(π/n_b)).
    """
    r = np.hypot(x[0], x[1])
    if np.any(r > R * (1.0 + 1e-9)):
        raise ValueError(f"points outside the disk of radius {R} (max r = {r.max()})")
    a = 2.0 * np.pi / n_b
    phi = np.mod(np.arctan2(x[1], x[0]), a)
    rho = R * np.cos(np.pi / n_b) / np.cos(phi - np.pi / n_b) * (1.0 - 1e-13)
    scale = np.where(r > rho, rho / np.where(r > 0, r, 1.0), 1.0)
    return x * scale, float(np.max(r * (1.0 - scale), initial=0.0))


def _locate(
    mesh: MeshTri, tree: cKDTree, x: np.ndarray, k: int = 8, tol: float = 1e-9
) -> np.ndarray:
    """Element containing each point of x (2, n).

    Candidates are the k elements with the nearest centroids; the one whose
    smallest barycentric coordinate is largest wins (points on edges are fine).
    Memory is O(n·k); unresolved points retry with 8k candidates, then fail.
    """
    n = x.shape[1]
    _, cand = tree.query(x.T, k=min(k, mesh.nelements))
    cand = cand.reshape(n, -1)
    X = mesh.mapping().invF(
        np.repeat(x, cand.shape[1], axis=1)[:, :, None], tind=cand.ravel()
    )
    lam = np.vstack([1.0 - X[0, :, 0] - X[1, :, 0], X[0, :, 0], X[1, :, 0]])
    worst = lam.min(axis=0).reshape(cand.shape)
    best = worst.argmax(axis=1)
    ok = worst[np.arange(n), best] >= -tol
    cells = cand[np.arange(n), best]
    if not ok.all():
        if k >= mesh.nelements or k > 64:
            raise ValueError(f"{int((~ok).sum())} points are outside the mesh")
        cells[~ok] = _locate(mesh, tree, x[:, ~ok], 8 * k, tol)
    return cells


def _probe(sol: HeatSolution, x: np.ndarray, cells: np.ndarray) -> sp.csr_matrix:
    """Matrix evaluating a DOF vector of ``sol`` at points x (2, n) lying in
    ``cells`` (``Basis.probes`` with the elements given)."""
    elem = ELEMENTS[sol.element]()
    X = sol.mesh.mapping().invF(x[:, :, None], tind=cells)
    dofs = sol.dofmap.element_dofs[:, cells]
    phis = np.array([elem.lbasis(X, j)[0][:, 0] for j in range(dofs.shape[0])])
    rows = np.tile(np.arange(x.shape[1]), dofs.shape[0])
    return sp.csr_matrix(
        (phis.ravel(), (rows, dofs.ravel())), shape=(x.shape[1], sol.ndofs)
    )


def probe_matrix(
    sol: HeatSolution, x: np.ndarray, chunk: int = CHUNK_POINTS
) -> tuple[sp.csr_matrix, float]:
    """Sparse (M, ndofs) matrix evaluating a DOF vector of ``sol`` at physical
    points x (2, M), clamped onto the mesh polygon and located ``chunk`` points
    at a time; also returns the largest clamp displacement (m)."""
    x, shift = _polygon_clamp(x, sol.problem.R, sol.boundary_vertices)
    centroids = sol.mesh.p[:, sol.mesh.t].mean(axis=1).T
    tree = cKDTree(centroids, compact_nodes=False, balanced_tree=False)
    blocks = []
    for s in range(0, x.shape[1], chunk):
        xc = x[:, s : s + chunk]
        blocks.append(_probe(sol, xc, _locate(sol.mesh, tree, xc)))
    return sp.vstack(blocks, format="csr"), shift


def sample_solution(
    sol: HeatSolution, points: np.ndarray, chunk: int = CHUNK_POINTS
) -> np.ndarray:
    """Temperature T = T∞ + θ_h (K) of ``sol`` at physical points (M, 2) (m).

    Points with r <= R(1 + 1e-9) between the circle and the mesh polygon are
    clamped radially onto the polygon; farther points raise ``ValueError``.
    """
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"points must have shape (M, 2), got {pts.shape}")
    if pts.shape[0] == 0:
        return np.zeros(0)
    Pm, _ = probe_matrix(sol, pts.T, chunk)
    return sol.problem.T_inf + Pm @ sol.theta
