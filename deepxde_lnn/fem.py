r"""scikit-fem reference for the circular heat benchmark (SPEC sections 3.3 and 5).

Steady conduction in the disk Ω = {|x| < R} with a Robin (convection) boundary::

    -k ΔT = Q            in Ω,
    -k ∂T/∂n = h (T - T∞)   on Γ = {|x| = R}   (outward normal n),

whose closed form is ``T*(r) = T∞ + QR/(2h) + Q(R² - r²)/(4k)``.  Because T∞ is a
constant, θ = T - T∞ solves the same problem with T∞ = 0, so the discrete problem
is posed for θ (this avoids the cancellation of A·T∞ against the boundary load
at ~800 K) and ``T = T∞ + θ``.  Weak form, for all v::

    ∫_Ω k ∇θ·∇v dx + ∫_Γ h θ v ds = ∫_Ω Q v dx
    (⇔ ∫ k∇T·∇v + ∫_Γ hTv = ∫ Qv + ∫_Γ hT∞v with T = T∞ + θ).

The matrix is SPD thanks to the Robin term.  Meshes are ``MeshTri.init_circle``
(4 triangles, each uniform refinement followed by projecting the boundary nodes
onto the circle) scaled by R, so mesh ``nrefs`` has 4·2^nrefs boundary vertices
at the angles 2πj/N_b.  The hierarchy is built level by level (the same
construction), which gives the exact nested prolongation for free:

* P1 is solved by conjugate gradients preconditioned with a geometric multigrid
  V-cycle over that hierarchy (weighted Jacobi smoothing, rediscretised coarse
  operators), started from the prolonged coarser solution (nested iteration);
  scipy only.  P2 (optional) uses a sparse direct solve on one level.
* Inter-level differences use w = T_f - P T_c on the fine mesh.  The fine
  vertices are coarse vertices or coarse-edge midpoints, so P is the exact P1
  interpolant; at the boundary midpoints (projected outward onto the circle,
  outside the coarse polygon) it takes the coarse value at the chord midpoint,
  which is the radial clamp of the point onto the coarse polygon.
* Point sampling clamps points between the circle and the polygon radially onto
  the polygon and locates them in chunks with a k-nearest-centroid search whose
  memory is O(chunk · k) (skfem's own finder can fall back to a
  points × elements array: >100 GiB on the fine meshes).

Errors and inter-level differences are integrated exactly on the fine mesh with
a degree-4 quadrature rule (6 points per triangle); assembly and integration run
over element chunks to bound memory.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import numbers
import time
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import skfem
from scipy.spatial import cKDTree
from skfem import (
    Basis,
    BilinearForm,
    DiscreteField,
    Dofs,
    ElementTriP1,
    ElementTriP2,
    FacetBasis,
    Functional,
    LinearForm,
    MeshTri,
    asm,
)
from skfem.helpers import dot, grad

from deepxde_lnn.io import (
    atomic_write_text,
    save_figure,
    save_npz,
    sha256_file,
    write_json,
)

__all__ = [
    "HeatProblem",
    "HeatSolution",
    "InvalidReferenceError",
    "convergence_slopes",
    "convergence_study",
    "disk_grid",
    "disk_meshes",
    "exact_temperature",
    "heat_system",
    "load_reference",
    "nested_prolongation",
    "points_sha256",
    "sample_solution",
    "solve_heat",
    "write_reference",
]

ELEMENTS = {"P1": ElementTriP1, "P2": ElementTriP2}
CHUNK_POINTS = 2000  # points per location query (SPEC 5.2: always query in chunks)
CHUNK_ELEMENTS = 1 << 18  # elements per quadrature chunk (~0.2 GB of basis data)
BOUNDARY_HANDLING = {
    "inter_level": (
        "nested prolongation along the refinement: vertices inherited from the "
        "coarse mesh keep their values, coarse-edge midpoints get the edge "
        "average; for boundary midpoints (projected onto r = R, outside the "
        "coarse polygon) this is the coarse solution at the radial clamp onto "
        "the coarse polygon (P1); P2 probes the coarse solution at the fine DOF "
        "locations radially clamped onto the coarse polygon"
    ),
    "sampling": (
        "points with r <= R(1 + 1e-9) outside the finest polygon are clamped "
        "radially onto it (distance <= R(1 - cos(pi/N_b)))"
    ),
}
FORMAT_VERSION = 1

# MATLAB PDE Toolbox numbers printed by the paper (SPEC 5.1): P2 meshes, Hmax_l.
PAPER_MATLAB = {
    "levels": [1, 2, 3, 4, 5, 6],
    "Hmax": [1.5e-2, 7.5e-3, 3.75e-3, 1.875e-3, 9.370e-4, 4.690e-4],
    "nodes": [1485, 6161, 24901, 92941, 365565, 1377045],
    "elements": [710, 3018, 12324, 46218, 182280, 687516],
    "diff_L2": [None, 2.2400e-4, 6.1744e-5, 1.4904e-5, 3.6877e-6, 9.3069e-7],
    "local_order_L2": [None, None, 1.859, 2.051, 2.015, 1.986],
    "slope_L2": 1.989,
    "slope_H1": 1.008,
}


class InvalidReferenceError(ValueError):
    """A stored FEM reference is corrupted, incomplete or stale."""


# ----------------------------------------------------------------------------
# problem


def _check_real(name: str, value: Any, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and value <= 0.0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


@dataclass(frozen=True)
class HeatProblem:
    r"""Disk radius R (m), conductivity k (W/(m·K)), convection coefficient h
    (W/(m²·K)), uniform source Q (W/m³) and ambient temperature T∞ (K).

    Defaults are the paper's silicon plate (SPEC 3.3).
    """

    R: float = 0.15
    k: float = 159.0
    h: float = 50.0
    Q: float = 2000.0
    T_inf: float = 800.0

    def __post_init__(self) -> None:
        for name in ("R", "k", "h", "Q", "T_inf"):
            value = _check_real(name, getattr(self, name), positive=name != "T_inf")
            object.__setattr__(self, name, value)

    def exact_theta(self, r: np.ndarray) -> np.ndarray:
        """θ*(r) = T*(r) - T∞ = QR/(2h) + Q(R² - r²)/(4k)."""
        r = np.asarray(r, dtype=np.float64)
        return self.Q * self.R / (2.0 * self.h) + self.Q * (self.R**2 - r**2) / (
            4.0 * self.k
        )

    def exact(self, r: np.ndarray) -> np.ndarray:
        """T*(r) = T∞ + QR/(2h) + Q(R² - r²)/(4k) (K)."""
        return self.T_inf + self.exact_theta(r)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def exact_temperature(
    r: np.ndarray, problem: HeatProblem = HeatProblem()
) -> np.ndarray:
    """Closed form T*(r) = T∞ + QR/(2h) + Q(R² - r²)/(4k) at radii ``r`` (m)."""
    return problem.exact(r)


def disk_grid(n: int = 401) -> np.ndarray:
    """Heat evaluation points (SPEC 3.3): ``linspace(-1, 1, n)`` per axis,
    ``meshgrid(indexing="xy")``, kept where x² + y² <= 1 + 1e-12 (float64), in
    C order of the grid (y slow, x fast).  Returns (M, 2) float64 nondimensional
    points; M = 125,629 for n = 401."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    g = np.linspace(-1.0, 1.0, int(n))
    X, Y = np.meshgrid(g, g, indexing="xy")
    keep = X**2 + Y**2 <= 1.0 + 1e-12
    return np.column_stack([X[keep], Y[keep]])


def points_sha256(points: np.ndarray) -> str:
    """SHA-256 of the (M, 2) float64 C-ordered bytes (identifies a point set)."""
    pts = np.ascontiguousarray(np.asarray(points, dtype=np.float64))
    h = hashlib.sha256(str(pts.shape).encode())
    h.update(pts.tobytes())
    return h.hexdigest()


# ----------------------------------------------------------------------------
# meshes


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


def disk_meshes(nrefs: int, R: float = 0.15) -> Iterator[MeshTri]:
    """Yield ``MeshTri.init_circle(n).scaled(R)`` for n = 0, 1, ..., nrefs, each
    built from the previous one (so consecutive meshes are nested up to the
    boundary projection)."""
    _check_nrefs("nrefs", nrefs)
    R = _check_real("R", R, positive=True)
    mesh = MeshTri.init_circle(0).scaled([R, R])
    yield mesh
    for _ in range(nrefs):
        mesh = _refine_disk(mesh, R)
        yield mesh


def _check_nrefs(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def nested_prolongation(coarse: MeshTri, fine: MeshTri) -> sp.csr_matrix:
    """Exact P1 prolongation from ``coarse`` to the next mesh of
    :func:`disk_meshes` (one refinement + boundary projection).

    skfem numbers the new vertices after the old ones, one per coarse facet at
    its midpoint; (P u)_i = u_i for old vertices and (u_a + u_b)/2 for the
    midpoint of facet (a, b).  The layout is checked, not assumed.
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


# ----------------------------------------------------------------------------
# weak forms


@BilinearForm
def conduction(u, v, w):
    """k ∇u·∇v."""
    return w.k * dot(grad(u), grad(v))


@BilinearForm
def robin(u, v, w):
    """h u v on the boundary facets."""
    return w.h * u * v


@LinearForm
def source(v, w):
    """Q v."""
    return w.Q * v


@LinearForm
def robin_load(v, w):
    """h T∞ v on the boundary facets."""
    return w.h * w.T_inf * v


def _element_chunks(nelements: int) -> Iterator[np.ndarray]:
    chunk = CHUNK_ELEMENTS
    for start in range(0, nelements, chunk):
        yield np.arange(start, min(start + chunk, nelements), dtype=np.int64)


def _chunk_bases(mesh: MeshTri, elem, dofmap: Dofs, intorder: int) -> Iterator[Basis]:
    """Cell bases over consecutive element chunks (bounded memory on 4 M
    elements; the affine mapping is computed once and cached by the mesh)."""
    for ix in _element_chunks(mesh.nelements):
        yield Basis(
            mesh,
            elem,
            intorder=intorder,
            elements=ix,
            dofs=dofmap,
            disable_doflocs=True,
        )


def heat_system(
    mesh: MeshTri, problem: HeatProblem, element: str = "P1"
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Assemble A = K + B and the loads of the weak form on ``mesh``.

    Returns ``(A, b_Q, b_Γ)`` with A_ij = ∫k∇φ_j·∇φ_i + ∫_Γ hφ_jφ_i,
    (b_Q)_i = ∫Qφ_i and (b_Γ)_i = ∫_Γ hT∞φ_i: T solves A T = b_Q + b_Γ and
    θ = T - T∞ solves A θ = b_Q.  Quadrature of degree p (the element degree) is
    exact for both cell integrals; the facet basis uses skfem's default (2p).
    """
    elem = ELEMENTS[_check_element(element)]()
    dofmap = Dofs(mesh, elem)
    fb = FacetBasis(mesh, elem, dofs=dofmap, disable_doflocs=True)
    A = asm(robin, fb, h=problem.h).tocsr()
    b_G = asm(robin_load, fb, h=problem.h, T_inf=problem.T_inf)
    b_Q = np.zeros_like(b_G)
    for cb in _chunk_bases(mesh, elem, dofmap, elem.maxdeg):
        A = A + asm(conduction, cb, k=problem.k).tocsr()
        b_Q += asm(source, cb, Q=problem.Q)
    return A.tocsr(), b_Q, b_G


# ----------------------------------------------------------------------------
# solver


@dataclass
class _Level:
    A: sp.csr_matrix
    inv_diag: np.ndarray
    P: sp.csr_matrix | None  # prolongation from the previous level


def _v_cycle(levels: list[_Level], lu, r: np.ndarray, nu: int, omega: float):
    """Symmetric V-cycle: ν weighted-Jacobi sweeps, coarse correction P A_c⁻¹ Pᵀ
    (recursively; direct on the coarsest mesh), ν sweeps."""
    if len(levels) == 1:
        return lu(r)
    lev = levels[-1]
    x = omega * lev.inv_diag * r
    for _ in range(nu - 1):
        x += omega * lev.inv_diag * (r - lev.A @ x)
    x += lev.P @ _v_cycle(levels[:-1], lu, lev.P.T @ (r - lev.A @ x), nu, omega)
    for _ in range(nu):
        x += omega * lev.inv_diag * (r - lev.A @ x)
    return x


def _mg_pcg(
    levels: list[_Level],
    lu,
    b: np.ndarray,
    x0: np.ndarray,
    rtol: float,
    maxiter: int = 100,
    nu: int = 2,
    omega: float = 0.7,
) -> tuple[np.ndarray, int, float]:
    """CG on A x = b (A = levels[-1].A) preconditioned by one V-cycle."""
    A = levels[-1].A
    M = spla.LinearOperator(
        A.shape, matvec=lambda r: _v_cycle(levels, lu, r, nu, omega), dtype=float
    )
    count = [0]

    def callback(_):
        count[0] += 1

    x, info = spla.cg(
        A, b, x0=x0, rtol=rtol, atol=0.0, maxiter=maxiter, M=M, callback=callback
    )
    res = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
    if info != 0 and res > 100 * rtol:
        raise RuntimeError(f"multigrid CG did not converge: relative residual {res}")
    return x, count[0], res


@dataclass(frozen=True, eq=False)
class HeatSolution:
    """One FEM solution: the mesh and θ = T - T∞ at the DOFs (K).

    ``h`` is the longest edge (m), ``nodes`` the mesh vertices, ``ndofs`` the
    unknowns (= nodes for P1); ``iterations``/``residual`` describe the solve
    (0 iterations: direct).  ``basis`` is built on first use.
    """

    problem: HeatProblem
    element: str
    nrefs: int
    mesh: MeshTri = field(repr=False)
    theta: np.ndarray = field(repr=False)
    h: float
    nodes: int
    elements: int
    ndofs: int
    iterations: int
    residual: float
    timings: dict = field(default_factory=dict, repr=False)

    @property
    def T(self) -> np.ndarray:
        """Temperature at the DOFs, T = T∞ + θ (K)."""
        return self.problem.T_inf + self.theta

    @property
    def boundary_vertices(self) -> int:
        """N_b = 4·2^nrefs vertices on the circle."""
        return 4 * 2**self.nrefs

    @cached_property
    def dofmap(self) -> Dofs:
        return Dofs(self.mesh, ELEMENTS[self.element]())

    @cached_property
    def basis(self) -> Basis:
        """``Basis(mesh, element)`` (e.g. for plotting)."""
        return Basis(self.mesh, ELEMENTS[self.element](), dofs=self.dofmap)

    @cached_property
    def doflocs(self) -> np.ndarray:
        """(2, ndofs) DOF locations: vertices, then facet midpoints (P2)."""
        x = np.empty((2, self.ndofs))
        x[:, self.dofmap.nodal_dofs[0]] = self.mesh.p
        if self.dofmap.facet_dofs.size:
            x[:, self.dofmap.facet_dofs[0]] = self.mesh.p[:, self.mesh.facets].mean(1)
        return x


def _check_element(element: str) -> str:
    if element not in ELEMENTS:
        raise ValueError(f"element must be one of {sorted(ELEMENTS)}, got {element!r}")
    return element


def _longest_edge(mesh: MeshTri) -> float:
    """h = max edge length (what ``mesh.param()`` returns, without its
    per-element arrays)."""
    return float(
        np.max(np.linalg.norm(np.diff(mesh.p[:, mesh.facets], axis=1), axis=0))
    )


def _iter_solutions(
    nrefs_max: int, problem: HeatProblem, element: str, first_nrefs: int, rtol: float
) -> Iterator[HeatSolution]:
    """Solve on init_circle(n) for n = 0..nrefs_max; yield those with n >= first.

    P1: nested iteration, every level by multigrid-preconditioned CG started
    from the prolonged coarser solution.  P2: one sparse direct solve per
    yielded level (SuperLU: practical up to nrefs ~7, 4·4^7 DOFs).
    """
    levels: list[_Level] = []
    lu, theta, prev_mesh = None, None, None
    t0 = time.perf_counter()
    for n, mesh in enumerate(disk_meshes(nrefs_max, problem.R)):
        t_mesh = time.perf_counter() - t0
        if element == "P2" and n < first_nrefs:
            t0 = time.perf_counter()
            continue
        t1 = time.perf_counter()
        A, b, _ = heat_system(mesh, problem, element)
        t2 = time.perf_counter()
        if element == "P1":
            P = nested_prolongation(prev_mesh, mesh) if n > 0 else None
            levels.append(_Level(A, 1.0 / A.diagonal(), P))
            if n == 0:
                lu = spla.factorized(A.tocsc())
                theta, iters, res = lu(b), 0, 0.0
            else:
                theta, iters, res = _mg_pcg(levels, lu, b, P @ theta, rtol)
        else:
            theta, iters = spla.spsolve(A.tocsc(), b), 0
            res = float(np.linalg.norm(b - A @ theta) / np.linalg.norm(b))
        del A, b
        t3 = time.perf_counter()
        prev_mesh = mesh
        if n >= first_nrefs:
            yield HeatSolution(
                problem=problem,
                element=element,
                nrefs=n,
                mesh=mesh,
                theta=theta,
                h=_longest_edge(mesh),
                nodes=int(mesh.nvertices),
                elements=int(mesh.nelements),
                ndofs=int(theta.size),
                iterations=int(iters),
                residual=res,
                timings={"mesh": t_mesh, "assemble": t2 - t1, "solve": t3 - t2},
            )
        t0 = time.perf_counter()


def solve_heat(
    nrefs: int,
    problem: HeatProblem = HeatProblem(),
    element: str = "P1",
    rtol: float = 1e-9,
) -> HeatSolution:
    """Solve the Robin heat problem on ``init_circle(nrefs)`` scaled by R.

    Weak form ∫k∇θ·∇v + ∫_Γ hθv = ∫Qv with θ = T - T∞ (module docstring);
    ``rtol`` is the relative residual of the P1 multigrid CG.
    """
    nrefs = _check_nrefs("nrefs", nrefs)
    _check_element(element)
    *_, sol = _iter_solutions(nrefs, problem, element, nrefs, rtol)
    return sol


# ----------------------------------------------------------------------------
# integrals and sampling


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


def _norms(sol: HeatSolution, w: np.ndarray | None) -> dict[str, float | None]:
    """Exact integrals on ``sol``'s mesh (degree-4 rule, element-chunked):

    ‖θ_h - θ*‖_L², |θ_h - θ*|_H¹ (∇θ* = -Qx/(2k)) and, if ``w`` (DOF vector on
    the same space) is given, ‖w‖_L² and |w|_H¹.  All integrands are polynomials
    of degree <= 4 (θ* is quadratic), so the 6-point rule is exact.
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
    res = {key: math.sqrt(val) for key, val in out.items()}
    if w is None:
        res["diff_L2"] = res["diff_H1"] = None
    return res


def _polygon_clamp(x: np.ndarray, R: float, n_b: int) -> tuple[np.ndarray, float]:
    """Clamp points (2, M) radially onto the regular n_b-gon inscribed in |x| = R
    with vertices at angles 2πj/n_b; points beyond R(1 + 1e-9) are an error.

    Polygon radius at angle φ: R cos(π/n_b) / cos((φ mod 2π/n_b) - π/n_b).
    Returns the clamped points and the largest displacement (m).
    """
    r = np.hypot(x[0], x[1])
    if np.any(r > R * (1.0 + 1e-9)):
        raise ValueError(f"points outside the disk of radius {R} (max r = {r.max()})")
    a = 2.0 * np.pi / n_b
    phi = np.mod(np.arctan2(x[1], x[0]), a)
    rho = R * np.cos(np.pi / n_b) / np.cos(phi - np.pi / n_b) * (1.0 - 1e-13)
    scale = np.where(r > rho, rho / np.where(r > 0, r, 1.0), 1.0)
    return x * scale, float(np.max(r * (1.0 - scale), initial=0.0))


def _locate(mesh, tree, x: np.ndarray, k: int = 8, tol: float = 1e-9) -> np.ndarray:
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


def _probe_matrix(
    sol: HeatSolution, x: np.ndarray, chunk: int = CHUNK_POINTS
) -> tuple[sp.csr_matrix, float]:
    """Chunked, clamped point evaluation matrix for x (2, M); also returns the
    largest clamp displacement (m)."""
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
    """Temperature T (K) of ``sol`` at physical points (M, 2) (m).

    Points between the circle and the mesh polygon are clamped radially onto
    the polygon; the location runs in chunks of ``chunk`` points.
    """
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"points must have shape (M, 2), got {pts.shape}")
    if pts.shape[0] == 0:
        return np.zeros(0)
    Pm, _ = _probe_matrix(sol, pts.T, chunk)
    return sol.problem.T_inf + Pm @ sol.theta


def _transfer(coarse: HeatSolution, fine: HeatSolution) -> np.ndarray:
    """Coarse θ at the fine DOFs (nested for P1, clamped probes for P2)."""
    if fine.element == "P1":
        return nested_prolongation(coarse.mesh, fine.mesh) @ coarse.theta
    Pm, _ = _probe_matrix(coarse, fine.doflocs)
    return Pm @ coarse.theta


# ----------------------------------------------------------------------------
# convergence study


def _local_order(e: Sequence, h: Sequence, i: int) -> float | None:
    if i < 1 or e[i] is None or e[i - 1] is None or e[i] <= 0 or e[i - 1] <= 0:
        return None
    return math.log(e[i - 1] / e[i]) / math.log(h[i - 1] / h[i])


def convergence_study(
    levels: int = 6,
    first_nrefs: int = 5,
    problem: HeatProblem = HeatProblem(),
    element: str = "P1",
    rtol: float = 1e-9,
    keep_finest: bool = False,
) -> list[dict] | tuple[list[dict], HeatSolution]:
    r"""Meshes ``init_circle(n)`` for n = first_nrefs … first_nrefs + levels - 1.

    Row ``i`` (level i+1): nrefs, h, nodes, elements, dofs; the inter-level
    differences D = ‖T_i - P T_{i-1}‖ in L² (K·m) and H¹-seminorm (K) with h_f =
    h_i and the local orders log(D_{i-1}/D_i)/log(h_{i-1}/h_i) (SPEC 5.1); the
    errors against T*: L², H¹-seminorm, max over DOFs, centre temperature, with
    local orders; solver iterations, residual and timings (``time_*``, s).
    With ``keep_finest`` also returns the finest :class:`HeatSolution`.
    """
    if isinstance(levels, bool) or not isinstance(levels, numbers.Integral):
        raise ValueError(f"levels must be an integer >= 1, got {levels!r}")
    if levels < 1:
        raise ValueError(f"levels must be an integer >= 1, got {levels!r}")
    first_nrefs = _check_nrefs("first_nrefs", first_nrefs)
    _check_element(element)
    last = first_nrefs + int(levels) - 1
    rows: list[dict] = []
    prev = None
    for sol in _iter_solutions(last, problem, element, first_nrefs, rtol):
        t0 = time.perf_counter()
        w = sol.theta - _transfer(prev, sol) if prev is not None else None
        norms = _norms(sol, w)
        x = sol.doflocs
        exact = problem.exact_theta(np.hypot(x[0], x[1]))
        i0 = sol.dofmap.nodal_dofs[0, np.argmin(np.hypot(*sol.mesh.p))]
        row = {
            "level": len(rows) + 1,
            "nrefs": sol.nrefs,
            "element": element,
            "h": sol.h,
            "nodes": sol.nodes,
            "elements": sol.elements,
            "dofs": sol.ndofs,
            "diff_L2": norms["diff_L2"],
            "diff_H1": norms["diff_H1"],
            "order_diff_L2": None,
            "order_diff_H1": None,
            "err_L2": norms["err_L2"],
            "err_H1": norms["err_H1"],
            "err_max": float(np.max(np.abs(sol.theta - exact))),
            "T_centre": float(problem.T_inf + sol.theta[i0]),
            "err_centre": float(sol.theta[i0] - problem.exact_theta(0.0)),
            "order_err_L2": None,
            "order_err_H1": None,
            "iterations": sol.iterations,
            "residual": sol.residual,
        }
        rows.append(row)
        hs = [r_["h"] for r_ in rows]
        i = len(rows) - 1
        for key in ("diff_L2", "diff_H1", "err_L2", "err_H1"):
            row[f"order_{key}"] = _local_order([r_[key] for r_ in rows], hs, i)
        row.update({f"time_{k}": v for k, v in sol.timings.items()})
        row["time_measure"] = time.perf_counter() - t0
        prev = sol
    return (rows, prev) if keep_finest else rows


def _slope(h: Sequence[float], e: Sequence) -> float | None:
    pairs = [(a, b) for a, b in zip(h, e) if b is not None and b > 0]
    if len(pairs) < 2:
        return None
    hh, ee = np.array(pairs).T
    return float(np.polyfit(np.log(hh), np.log(ee), 1)[0])


def convergence_slopes(rows: Sequence[dict]) -> dict[str, float | None]:
    """Least-squares slopes of log(quantity) against log(h) (h = fine h for the
    differences): ``diff_L2``, ``diff_H1`` (the paper's observed orders) and
    ``err_L2``, ``err_H1``, ``err_max`` (against the closed form)."""
    h = [r["h"] for r in rows]
    keys = ("diff_L2", "diff_H1", "err_L2", "err_H1", "err_max")
    return {key: _slope(h, [r[key] for r in rows]) for key in keys}


# ----------------------------------------------------------------------------
# reference files

CSV_COLUMNS = [
    "level",
    "nrefs",
    "element",
    "h",
    "nodes",
    "elements",
    "dofs",
    "diff_L2",
    "diff_H1",
    "order_diff_L2",
    "order_diff_H1",
    "err_L2",
    "err_H1",
    "err_max",
    "order_err_L2",
    "order_err_H1",
    "T_centre",
    "err_centre",
    "iterations",
    "residual",
]


def _fmt(v: Any, spec: str = ".4e") -> str:
    if v is None:
        return "—"
    if isinstance(v, (int, np.integer)):
        return f"{v:,}"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def _csv_text(rows: Sequence[dict]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        writer.writerow(
            [
                "" if r[c] is None else repr(r[c]) if isinstance(r[c], float) else r[c]
                for c in CSV_COLUMNS
            ]
        )
    return buf.getvalue()


def _table_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _markdown(rows, slopes, problem, element, params) -> str:
    pb = problem
    lines = [
        "# Circular heat: scikit-fem convergence study",
        "",
        f"−k ΔT = Q in the disk r < R, −k ∂T/∂n = h(T − T∞) on r = R; "
        f"R = {pb.R} m, k = {pb.k} W/(m·K), h = {pb.h} W/(m²·K), Q = {pb.Q} W/m³, "
        f"T∞ = {pb.T_inf} K. Exact T*(r) = T∞ + QR/(2h) + Q(R² − r²)/(4k), "
        f"centre {pb.exact(0.0):.7f} K.",
        "",
        f"Element {element} on `MeshTri.init_circle(nrefs)` scaled by R "
        f"(nrefs {params['nrefs'][0]}…{params['nrefs'][-1]}); "
        f"h = longest edge. Differences are integrated exactly on the fine mesh. "
        f"Boundary handling: {BOUNDARY_HANDLING['inter_level']}.",
        "",
        "## Inter-level differences (the paper's study)",
        "",
        "D_i = ‖T_i − P T_{i−1}‖ with h_f = h_i; local order at level i = "
        "log(D_{i−1}/D_i)/log(h_{i−1}/h_i) (the paper's (i−2)–(i−1)–i order).",
        "",
        _table_row(
            ["level", "nrefs", "h (m)", "nodes", "elements", "D L² (K·m)"]
            + ["D H¹ (K)", "order L²", "order H¹"]
        ),
        "|---" * 9 + "|",
    ]
    for r in rows:
        lines.append(
            _table_row(
                [_fmt(r["level"]), _fmt(r["nrefs"]), _fmt(r["h"], ".3e")]
                + [_fmt(r["nodes"]), _fmt(r["elements"]), _fmt(r["diff_L2"])]
                + [_fmt(r["diff_H1"]), _fmt(r["order_diff_L2"], ".3f")]
                + [_fmt(r["order_diff_H1"], ".3f")]
            )
        )
    lines += [
        "",
        "## Errors against the closed form T* (beyond the paper, SPEC 5.3)",
        "",
        "Integrated exactly over the mesh polygon; max over the DOFs; local "
        "order at level i from levels i−1 and i.",
        "",
        _table_row(
            ["level", "nrefs", "h (m)", "‖T−T*‖ L² (K·m)", "\\|T−T*\\| H¹ (K)"]
            + ["max \\|T−T*\\| (K)", "order L²", "order H¹", "T centre (K)"]
        ),
        "|---" * 9 + "|",
    ]
    for r in rows:
        lines.append(
            _table_row(
                [_fmt(r["level"]), _fmt(r["nrefs"]), _fmt(r["h"], ".3e")]
                + [_fmt(r["err_L2"]), _fmt(r["err_H1"]), _fmt(r["err_max"])]
                + [_fmt(r["order_err_L2"], ".3f"), _fmt(r["order_err_H1"], ".3f")]
                + [_fmt(r["T_centre"], ".7f")]
            )
        )
    lines += [
        "",
        "Least-squares slopes of log(quantity) vs log(h):",
        "",
        "| quantity | slope |",
        "|---|---|",
    ]
    names = {
        "diff_L2": "inter-level L² difference",
        "diff_H1": "inter-level H¹-seminorm difference",
        "err_L2": "L² error vs T*",
        "err_H1": "H¹-seminorm error vs T*",
        "err_max": "max nodal error vs T*",
    }
    for key, name in names.items():
        lines.append(f"| {name} | {_fmt(slopes[key], '.3f')} |")
    m = PAPER_MATLAB
    lines += [
        "",
        "## For comparison: the paper's MATLAB PDE Toolbox numbers (SPEC 5.1)",
        "",
        "Printed by the paper, not computed here: quadratic (6-node) meshes with "
        "Hmax_l = 0.015/2^(l−1), so ~4× more nodes than a P1 mesh with as many "
        "elements; magnitudes are not comparable one to one.",
        "",
        "| level | Hmax (m) | nodes | elements | D L² (K·m) | local order L² |",
        "|---|---|---|---|---|---|",
    ]
    for i in range(6):
        lines.append(
            f"| {m['levels'][i]} | {m['Hmax'][i]:.3e} | {m['nodes'][i]:,} | "
            f"{m['elements'][i]:,} | {_fmt(m['diff_L2'][i])} | "
            f"{_fmt(m['local_order_L2'][i], '.3f')} |"
        )
    lines += [
        "",
        f"Paper: global L² slope {m['slope_L2']}, global H¹-seminorm slope "
        f"{m['slope_H1']}.",
        "",
    ]
    return "\n".join(lines)


def _figure(rows, slopes):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = np.array([r["h"] for r in rows])
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    series = [
        ("diff_L2", "o-", "inter-level ‖T_f − P T_c‖ L² (K·m)"),
        ("diff_H1", "s-", "inter-level |T_f − P T_c| H¹ (K)"),
        ("err_L2", "o--", "‖T_h − T*‖ L² (K·m)"),
        ("err_H1", "s--", "|T_h − T*| H¹ (K)"),
        ("err_max", "^:", "max nodal |T_h − T*| (K)"),
    ]
    for key, style, label in series:
        e = np.array([np.nan if r[key] is None else r[key] for r in rows])
        s = slopes[key]
        ax.loglog(h, e, style, label=f"{label}, slope {_fmt(s, '.2f')}")
    for order, anchor in ((2, "err_L2"), (1, "err_H1")):
        e0 = rows[-1][anchor]
        ref = e0 * (h / h[-1]) ** order * 0.5
        ax.loglog(h, ref, "k-", lw=0.8, alpha=0.5)
        ax.annotate(f"slope {order}", (h[0], ref[0]), fontsize=8)
    ax.set_xlabel("h = longest edge (m)")
    ax.set_ylabel("difference / error")
    ax.set_title("Circular heat, scikit-fem convergence")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, plt


def write_reference(
    out_dir: str | Path,
    levels: int = 6,
    first_nrefs: int = 5,
    problem: HeatProblem = HeatProblem(),
    points_nd: np.ndarray | None = None,
    element: str = "P1",
) -> list[dict]:
    """Run :func:`convergence_study` and write ``convergence.csv``,
    ``convergence.md``, ``convergence.png``, (with ``points_nd``, (M, 2)
    nondimensional points x = X/R on the unit disk) ``heat_reference.npz`` with
    the finest T (K) and θ = T - T∞ at R·points, and ``manifest.json`` (SHA-256
    of every file, parameters).  Returns the rows."""
    out = Path(out_dir)
    rows, finest = convergence_study(
        levels, first_nrefs, problem, element, keep_finest=True
    )
    slopes = convergence_slopes(rows)
    params = {
        "problem": problem.to_dict(),
        "element": element,
        "levels": int(levels),
        "nrefs": [r["nrefs"] for r in rows],
        "mesh": "skfem.MeshTri.init_circle(nrefs) scaled by R",
        "boundary_handling": dict(BOUNDARY_HANDLING),
    }
    files = {}
    atomic_write_text(out / "convergence.csv", _csv_text(rows))
    atomic_write_text(
        out / "convergence.md", _markdown(rows, slopes, problem, element, params)
    )
    fig, plt = _figure(rows, slopes)
    save_figure(out / "convergence.png", fig, dpi=120)
    plt.close(fig)
    names = ["convergence.csv", "convergence.md", "convergence.png"]
    points_info = None
    if points_nd is not None:
        pts = np.asarray(points_nd, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise ValueError(f"points_nd must have shape (M, 2), got {pts.shape}")
        Pm, shift = _probe_matrix(finest, problem.R * pts.T)
        theta = Pm @ finest.theta
        save_npz(
            out / "heat_reference.npz",
            T=problem.T_inf + theta,
            theta=theta,
            points_nd=pts,
        )
        names.append("heat_reference.npz")
        points_info = {
            "n_points": int(pts.shape[0]),
            "points_sha256": points_sha256(pts),
            "max_clamp_m": shift,
            "nrefs": finest.nrefs,
        }
    for name in names:
        files[name] = {
            "sha256": sha256_file(out / name),
            "bytes": (out / name).stat().st_size,
        }
    manifest = {
        "format_version": FORMAT_VERSION,
        "generator": "deepxde_lnn.fem.write_reference",
        "parameters": params,
        "points": points_info,
        "slopes": slopes,
        "finest": {
            k: rows[-1][k]
            for k in ("nrefs", "h", "nodes", "err_L2", "err_H1", "err_max", "T_centre")
        },
        "versions": {
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "scikit-fem": getattr(skfem, "__version__", "unknown"),
        },
        "files": files,
    }
    write_json(out / "manifest.json", manifest)
    return rows


def load_reference(
    out_dir: str | Path,
    problem: HeatProblem = HeatProblem(),
    points_nd: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Load ``heat_reference.npz`` after checking it against ``manifest.json``.

    Raises :class:`InvalidReferenceError` (a ``ValueError``) when a file is
    missing, its SHA-256 differs from the manifest (corrupted), the manifest's
    problem constants differ from ``problem`` or, if given, the points differ
    (stale).  Returns ``T``, ``theta`` and ``points_nd`` arrays.
    """
    out = Path(out_dir)
    try:
        manifest = json.loads((out / "manifest.json").read_text())
        entry = manifest["files"]["heat_reference.npz"]
        stored = manifest["parameters"]["problem"]
        info = manifest["points"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise InvalidReferenceError(f"no valid FEM reference in {out}: {err}") from err
    path = out / "heat_reference.npz"
    if not path.exists():
        raise InvalidReferenceError(f"{path} is missing")
    digest = sha256_file(path)
    if digest != entry["sha256"]:
        raise InvalidReferenceError(
            f"{path} is corrupted: SHA-256 {digest} != manifest {entry['sha256']}"
        )
    if stored != problem.to_dict():
        raise InvalidReferenceError(
            f"{path} is stale: built for {stored}, requested {problem.to_dict()}"
        )
    if points_nd is not None and points_sha256(points_nd) != info["points_sha256"]:
        raise InvalidReferenceError(
            f"{path} is stale: its points differ from the requested points"
        )
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    if points_sha256(arrays["points_nd"]) != info["points_sha256"]:
        raise InvalidReferenceError(f"{path}: stored points do not match the manifest")
    return arrays
