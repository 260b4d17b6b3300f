r"""Weak form, assembly and the multigrid-preconditioned CG solver.

Because T∞ is a constant, θ = T - T∞ solves the same problem with T∞ = 0, so the
discrete problem is posed for θ (this avoids the cancellation of A·T∞ against
the boundary load at ~800 K) and ``T = T∞ + θ``.  Weak form, for all v::

    ∫_Ω k ∇θ·∇v dx + ∫_Γ h θ v ds = ∫_Ω Q v dx
    (⇔ ∫ k∇T·∇v + ∫_Γ hTv = ∫ Qv + ∫_Γ hT∞v with T = T∞ + θ).

The matrix is SPD thanks to the Robin term.  P1 is solved by conjugate gradients
preconditioned with a geometric multigrid V-cycle over the mesh hierarchy
(weighted Jacobi smoothing, rediscretised coarse operators), started from the
prolonged coarser solution (nested iteration); scipy only.  P2 (optional) uses a
sparse direct solve on one level.  Assembly runs over element chunks to bound
memory on the 4 M-element meshes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterator

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from skfem import (
    Basis,
    BilinearForm,
    Dofs,
    ElementTriP1,
    ElementTriP2,
    FacetBasis,
    LinearForm,
    MeshTri,
    asm,
)
from skfem.helpers import dot, grad

from .heat_problem import HEAT, HeatProblem, _check_int
from .mesh import disk_meshes, longest_edge, nested_prolongation

__all__ = ["ELEMENTS", "HeatSolution", "heat_system", "solve_heat"]

ELEMENTS = {"P1": ElementTriP1, "P2": ElementTriP2}
CHUNK_ELEMENTS = 1 << 18  # elements per quadrature chunk (~0.2 GB of basis data)


def _check_element(element: str) -> str:
    if element not in ELEMENTS:
        raise ValueError(f"element must be one of {sorted(ELEMENTS)}, got {element!r}")
    return element


# ----------------------------------------------------------------------------
# weak forms and assembly


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


def _chunk_bases(mesh: MeshTri, elem, dofmap: Dofs, intorder: int) -> Iterator[Basis]:
    """Cell bases over consecutive element chunks (bounded memory on 4 M
    elements; the affine mapping is computed once and cached by the mesh)."""
    for start in range(0, mesh.nelements, CHUNK_ELEMENTS):
        stop = min(start + CHUNK_ELEMENTS, mesh.nelements)
        yield Basis(
            mesh,
            elem,
            intorder=intorder,
            elements=np.arange(start, stop, dtype=np.int64),
            dofs=dofmap,
            disable_doflocs=True,
        )


def heat_system(
    mesh: MeshTri, problem: HeatProblem = HEAT, element: str = "P1"
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
# multigrid-preconditioned CG


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
    assert lev.P is not None  # every level but the coarsest
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


# ----------------------------------------------------------------------------
# solutions


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


class _NestedMultigrid:
    """The P1 hierarchy built so far: each new level is solved by MG-PCG started
    from the prolonged coarser θ (nested iteration), the coarsest by LU."""

    def __init__(self, rtol: float) -> None:
        self.rtol = rtol
        self.levels: list[_Level] = []
        self.lu: Callable[[np.ndarray], np.ndarray] | None = None
        self.mesh: MeshTri | None = None
        self.theta: np.ndarray | None = None

    def solve(self, mesh: MeshTri, A, b) -> tuple[np.ndarray, int, float]:
        P = nested_prolongation(self.mesh, mesh) if self.mesh is not None else None
        self.levels.append(_Level(A, 1.0 / A.diagonal(), P))
        if P is None:
            self.lu = spla.factorized(A.tocsc())
            theta, iters, res = self.lu(b), 0, 0.0
        else:
            x0 = P @ self.theta
            theta, iters, res = _mg_pcg(self.levels, self.lu, b, x0, self.rtol)
        self.mesh, self.theta = mesh, theta
        return theta, iters, res


def _solve_direct(A, b) -> tuple[np.ndarray, int, float]:
    theta = spla.spsolve(A.tocsc(), b)
    return theta, 0, float(np.linalg.norm(b - A @ theta) / np.linalg.norm(b))


def _iter_solutions(
    nrefs_max: int, problem: HeatProblem, element: str, first_nrefs: int, rtol: float
) -> Iterator[HeatSolution]:
    """Solve on init_circle(n) for n = 0..nrefs_max; yield those with n >= first.

    P1: nested iteration, every level by multigrid-preconditioned CG started
    from the prolonged coarser solution.  P2: one sparse direct solve per
    yielded level (SuperLU: practical up to nrefs ~7, 4·4^7 DOFs).
    """
    multigrid = _NestedMultigrid(rtol)
    t0 = time.perf_counter()
    for n, mesh in enumerate(disk_meshes(nrefs_max, problem.R)):
        t_mesh = time.perf_counter() - t0
        if element == "P1" or n >= first_nrefs:
            t1 = time.perf_counter()
            A, b, _ = heat_system(mesh, problem, element)
            t2 = time.perf_counter()
            if element == "P1":
                theta, iters, res = multigrid.solve(mesh, A, b)
            else:
                theta, iters, res = _solve_direct(A, b)
            del A, b
            timings = {"mesh": t_mesh, "assemble": t2 - t1}
            timings["solve"] = time.perf_counter() - t2
            if n >= first_nrefs:
                yield _solution(problem, element, n, mesh, theta, iters, res, timings)
        t0 = time.perf_counter()


def _solution(problem, element, n, mesh, theta, iters, res, timings) -> HeatSolution:
    return HeatSolution(
        problem=problem,
        element=element,
        nrefs=n,
        mesh=mesh,
        theta=theta,
        h=longest_edge(mesh),
        nodes=int(mesh.nvertices),
        elements=int(mesh.nelements),
        ndofs=int(theta.size),
        iterations=int(iters),
        residual=res,
        timings=timings,
    )


def solve_heat(
    nrefs: int,
    problem: HeatProblem = HEAT,
    element: str = "P1",
    rtol: float = 1e-9,
) -> HeatSolution:
    """Solve the Robin heat problem on ``init_circle(nrefs)`` scaled by R.

    Weak form ∫k∇θ·∇v + ∫_Γ hθv = ∫Qv with θ = T - T∞; ``rtol`` is the
    relative residual of the P1 multigrid CG.
    """
    nrefs = _check_int("nrefs", nrefs, 0)
    _check_element(element)
    *_, sol = _iter_solutions(nrefs, problem, element, nrefs, rtol)
    return sol
