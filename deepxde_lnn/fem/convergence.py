r"""Mesh-convergence study: inter-level differences, errors against T*, slopes.

Level i solves on ``init_circle(first_nrefs + i - 1)``.  The inter-level
difference is D_i = ‖T_i - P T_{i-1}‖ (L² in K·m, H¹-seminorm in K), with w =
T_i - P T_{i-1} integrated exactly on the fine mesh; P is the nested P1
prolongation (the coarse solution at the radial clamp of the fine boundary
midpoints onto the coarse polygon), for P2 the clamped coarse probes at the fine
DOFs.  Orders: local log(D_{i-1}/D_i)/log(h_{i-1}/h_i) and least-squares slopes
of log D against log h.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .heat_problem import HEAT, HeatProblem, _check_int
from .mesh import nested_prolongation
from .norms import error_norms, probe_matrix
from .solver import HeatSolution, _check_element, _iter_solutions

__all__ = ["ConvergenceStudy", "convergence_slopes", "convergence_study"]

SLOPE_KEYS = ("diff_L2", "diff_H1", "err_L2", "err_H1", "err_max")


@dataclass(frozen=True)
class ConvergenceStudy:
    """What :func:`convergence_study` returns.

    ``rows``: one dict per level (see :func:`convergence_study`); ``slopes``:
    :func:`convergence_slopes` of the rows; ``finest``: the finest solution
    (kept for sampling the reference field).
    """

    rows: tuple[dict[str, Any], ...]
    slopes: dict[str, float | None]
    finest: HeatSolution = field(repr=False, compare=False)


def _transfer(coarse: HeatSolution, fine: HeatSolution) -> np.ndarray:
    """Coarse θ at the fine DOFs (nested for P1, clamped probes for P2)."""
    if fine.element == "P1":
        return nested_prolongation(coarse.mesh, fine.mesh) @ coarse.theta
    Pm, _ = probe_matrix(coarse, fine.doflocs)
    return Pm @ coarse.theta


def _local_order(e: Sequence, h: Sequence, i: int) -> float | None:
    if i < 1 or e[i] is None or e[i - 1] is None or e[i] <= 0 or e[i - 1] <= 0:
        return None
    return math.log(e[i - 1] / e[i]) / math.log(h[i - 1] / h[i])


def _row(sol: HeatSolution, prev: HeatSolution | None) -> dict[str, Any]:
    """Row of one level without its orders (they need the previous rows)."""
    pb = sol.problem
    w = sol.theta - _transfer(prev, sol) if prev is not None else None
    norms = error_norms(sol, w)
    x = sol.doflocs
    exact = pb.exact_theta(np.hypot(x[0], x[1]))
    i0 = sol.dofmap.nodal_dofs[0, np.argmin(np.hypot(*sol.mesh.p))]
    return {
        "nrefs": sol.nrefs,
        "element": sol.element,
        "h": sol.h,
        "nodes": sol.nodes,
        "elements": sol.elements,
        "dofs": sol.ndofs,
        **norms,
        "err_max": float(np.max(np.abs(sol.theta - exact))),
        "T_centre": float(pb.T_inf + sol.theta[i0]),
        "err_centre": float(sol.theta[i0] - pb.exact_theta(0.0)),
        "iterations": sol.iterations,
        "residual": sol.residual,
    }


def convergence_study(
    levels: int = 6,
    first_nrefs: int = 5,
    problem: HeatProblem = HEAT,
    element: str = "P1",
    rtol: float = 1e-9,
) -> ConvergenceStudy:
    r"""Solve on ``init_circle(n)`` for n = first_nrefs … first_nrefs + levels - 1.

    Row ``i`` (``level`` i+1): nrefs, element, h, nodes, elements, dofs; the
    inter-level differences ``diff_L2``/``diff_H1`` = ‖T_i - P T_{i-1}‖ (None on
    the first level) and the errors against T* ``err_L2``/``err_H1``/``err_max``
    (max over the DOFs), each with its local order ``order_<key>`` =
    log(e_{i-1}/e_i)/log(h_{i-1}/h_i); ``T_centre``, ``err_centre``; solver
    ``iterations``, ``residual`` and timings ``time_*`` (s).
    """
    levels = _check_int("levels", levels, 1)
    first_nrefs = _check_int("first_nrefs", first_nrefs, 0)
    _check_element(element)
    last = first_nrefs + levels - 1
    rows: list[dict[str, Any]] = []
    prev = None
    for sol in _iter_solutions(last, problem, element, first_nrefs, rtol):
        t0 = time.perf_counter()
        row = {"level": len(rows) + 1, **_row(sol, prev)}
        rows.append(row)
        hs = [r["h"] for r in rows]
        for key in ("diff_L2", "diff_H1", "err_L2", "err_H1"):
            e = [r[key] for r in rows]
            row[f"order_{key}"] = _local_order(e, hs, len(rows) - 1)
        row.update({f"time_{k}": v for k, v in sol.timings.items()})
        row["time_measure"] = time.perf_counter() - t0
        prev = sol
    assert prev is not None  # levels >= 1
    return ConvergenceStudy(tuple(rows), convergence_slopes(rows), prev)


def _slope(h: Sequence[float], e: Sequence) -> float | None:
    pairs = [(a, b) for a, b in zip(h, e) if b is not None and b > 0]
    if len(pairs) < 2:
        return None
    hh, ee = np.array(pairs).T
    return float(np.polyfit(np.log(hh), np.log(ee), 1)[0])


def convergence_slopes(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Least-squares slopes of log(quantity) against log(h) (h = fine h for the
    differences): ``diff_L2``, ``diff_H1`` (the paper's observed orders) and
    ``err_L2``, ``err_H1``, ``err_max`` (against the closed form)."""
    h = [r["h"] for r in rows]
    return {key: _slope(h, [r[key] for r in rows]) for key in SLOPE_KEYS}
