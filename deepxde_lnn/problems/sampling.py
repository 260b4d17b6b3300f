"""i.i.d. uniform point samplers for the paper protocol.

Every sampler is a small callable ``sampler(n, rng) -> (n, d)`` array drawn with a
``numpy.random.Generator`` (pseudo-random, never Hammersley/Sobol/LHS), in DeepXDE's
float dtype (``dde.config.real(np)``; NumPy 2 would otherwise hand float64 points to
a float32 network). Draws are made in float64 and then cast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from deepxde import config

__all__ = ["Box", "Edge", "Disk", "Circle"]


def _real(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=config.real(np))


@dataclass(frozen=True)
class Box:
    """Uniform in the half-open box ``[lo, hi)``."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        lo, hi = np.asarray(self.lo, float), np.asarray(self.hi, float)
        return _real(lo + (hi - lo) * rng.random((n, lo.size)))


@dataclass(frozen=True)
class Edge:
    """A box face: coordinate ``axis`` fixed exactly at ``value``, the others uniform
    on ``[lo, hi)`` (e.g. the bottom edge of the unit square is
    ``Edge((0, 0), (1, 1), axis=1, value=0)``)."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    axis: int
    value: float

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        lo, hi = np.asarray(self.lo, float), np.asarray(self.hi, float)
        x = lo + (hi - lo) * rng.random((n, lo.size))
        x[:, self.axis] = self.value
        return _real(x)


@dataclass(frozen=True)
class Disk:
    """Area-uniform in the disk: ``r = R sqrt(xi1)``, ``phi = 2 pi xi2``."""

    radius: float = 1.0
    center: tuple[float, float] = (0.0, 0.0)

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        xi = rng.random((n, 2))
        r, phi = self.radius * np.sqrt(xi[:, 0]), 2 * np.pi * xi[:, 1]
        return _real(np.column_stack([r * np.cos(phi), r * np.sin(phi)]) + self.center)


@dataclass(frozen=True)
class Circle:
    """Uniform in angle on the circle: ``phi = 2 pi xi``."""

    radius: float = 1.0
    center: tuple[float, float] = (0.0, 0.0)

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        phi = 2 * np.pi * rng.random(n)
        pts = self.radius * np.column_stack([np.cos(phi), np.sin(phi)])
        return _real(pts + self.center)
