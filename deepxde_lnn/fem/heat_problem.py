r"""The circular heat problem: physical constants, closed form, evaluation grid.

Steady conduction in the disk Ω = {|x| < R} with a Robin (convection) boundary::

    -k ΔT = Q                 in Ω,
    -k ∂T/∂n = h (T - T∞)     on Γ = {|x| = R}   (outward normal n),

with the closed form ``T*(r) = T∞ + QR/(2h) + Q(R² - r²)/(4k)``.  On the unit disk
x = X/R with θ = (T - T∞)/T_ref (T_ref = 1 K) it reads Δθ + Q_nd = 0,
-∂θ/∂n = h_nd θ, with Q_nd = QR²/(k T_ref) and h_nd = hR/k.

:data:`HEAT` is the one home of the paper's constants: the FEM solver, the heat
case and the tests all read them from it.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = [
    "HEAT",
    "HeatProblem",
    "InvalidReferenceError",
    "T_REF",
    "disk_grid",
    "exact_temperature",
    "points_sha256",
]

T_REF = 1.0  # K: temperature scale of the nondimensional θ


class InvalidReferenceError(ValueError):
    """A stored FEM reference is missing, corrupted, incomplete or stale."""


def _check_real(name: str, value: Any, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and value <= 0.0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


def _check_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int >= ``minimum`` (bools and floats are refused)."""
    bad = isinstance(value, bool) or not isinstance(value, numbers.Integral)
    if bad or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class HeatProblem:
    r"""Disk radius R (m), conductivity k (W/(m·K)), convection coefficient h
    (W/(m²·K)), uniform source Q (W/m³) and ambient temperature T∞ (K).

    The defaults are the paper's silicon plate (see ``docs/heat.md``).
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

    @property
    def q_nd(self) -> float:
        """Nondimensional source Q_nd = Q R² / (k T_ref)."""
        return self.Q * self.R**2 / (self.k * T_REF)

    @property
    def h_nd(self) -> float:
        """Biot number h_nd = h R / k."""
        return self.h * self.R / self.k

    def exact_theta(self, r: np.ndarray | float) -> np.ndarray:
        """θ*(r) = T*(r) - T∞ = QR/(2h) + Q(R² - r²)/(4k) (K) at radii r (m)."""
        r = np.asarray(r, dtype=np.float64)
        return self.Q * self.R / (2.0 * self.h) + self.Q * (self.R**2 - r**2) / (
            4.0 * self.k
        )

    def exact(self, r: np.ndarray | float) -> np.ndarray:
        """T*(r) = T∞ + QR/(2h) + Q(R² - r²)/(4k) (K) at radii r (m)."""
        return self.T_inf + self.exact_theta(r)

    def to_dict(self) -> dict[str, float]:
        """The five constants by name (as stored in the reference manifest)."""
        return asdict(self)


HEAT = HeatProblem()


def exact_temperature(r: np.ndarray, problem: HeatProblem = HEAT) -> np.ndarray:
    """Closed form T*(r) = T∞ + QR/(2h) + Q(R² - r²)/(4k) at radii ``r`` (m)."""
    return problem.exact(r)


def disk_grid(n: int = 401) -> np.ndarray:
    """The heat case's evaluation points on the unit disk, in its order.

    ``linspace(-1, 1, n)`` per axis, ``meshgrid(indexing="ij")`` flattened in C
    order (x slow, y fast), kept where x² + y² <= 1 + 1e-12 in float64 (the
    tolerance keeps the 4 on-circle points).  This is ``deepxde_lnn.problems.case.Grid``'s
    computation, repeated here so the FEM code needs neither DeepXDE nor torch.
    Returns (M, 2) float64 points; M = 125,629 for n = 401.
    """
    n = _check_int("n", n, 2)
    axes = [np.linspace(-1.0, 1.0, n)] * 2
    full = np.column_stack([m.ravel() for m in np.meshgrid(*axes, indexing="ij")])
    return full[np.sum(full**2, axis=1) <= 1 + 1e-12]


def points_sha256(points: np.ndarray) -> str:
    """SHA-256 of the shape and the (M, 2) float64 C-ordered bytes."""
    pts = np.ascontiguousarray(np.asarray(points, dtype=np.float64))
    digest = hashlib.sha256(str(pts.shape).encode())
    digest.update(pts.tobytes())
    return digest.hexdigest()
