"""i.i.d. uniform point samplers for the paper protocol.

Every sampler is a small callable ``sampler(n, rng) -> (n, d)`` array drawn with a
``numpy.random.Generator`` (pseudo-random, never Hammersley/Sobol/LHS), in DeepXDE's
float dtype (``dde.config.real(np)``; NumPy 2 would otherwise hand float64 points to
a float32 network). Draws are made in float64 and then cast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from deepxde import config

__all__ = [
    "Box",
    "Edge",
    "box_boundary",
    "Disk",
    "Circle",
    "Inside",
    "Ball",
    "Sphere",
    "WithTime",
    "Union",
    "Points",
]


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


@dataclass(frozen=True)
class Inside:
    """Uniform in the part of the box ``[lo, hi)`` where ``inside(points)`` holds
    (a vectorised predicate, e.g. a DeepXDE geometry's ``inside``): draws from the
    box, keeps what is inside, until there are ``n``. ``MIN_SHARE``: the least
    share of the box the region may fill (ValueError beyond, naming it)."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    inside: Callable[[np.ndarray], np.ndarray]  # (m, d) -> (m,) bool
    MIN_SHARE = 1e-3

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        box = Box(self.lo, self.hi)
        kept, have, drawn = [], 0, 0
        while have < n:
            m = max(2 * (n - have), 64)
            x = np.asarray(box(m, rng), dtype=np.float64)
            x = x[np.asarray(self.inside(x), bool)]
            drawn += m
            kept.append(x)
            have += len(x)
            if have < self.MIN_SHARE * drawn:
                raise ValueError(
                    f"Inside: {have} of {drawn} points fell inside; the region "
                    f"fills less than {self.MIN_SHARE:g} of its box {self.lo}-{self.hi}"
                )
        return _real(np.concatenate(kept)[:n])


@dataclass(frozen=True)
class Ball:
    """Uniform in the ``dim``-ball: a Gaussian direction, radius ``R xi^(1/dim)``."""

    dim: int
    radius: float = 1.0

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        g = rng.standard_normal((n, self.dim))
        r = self.radius * rng.random((n, 1)) ** (1 / self.dim)
        return _real(r * g / np.linalg.norm(g, axis=1, keepdims=True))


@dataclass(frozen=True)
class Sphere:
    """Uniform on the ``dim``-ball's surface: a normalised Gaussian direction."""

    dim: int
    radius: float = 1.0

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        g = rng.standard_normal((n, self.dim))
        return _real(self.radius * g / np.linalg.norm(g, axis=1, keepdims=True))


@dataclass(frozen=True)
class WithTime:
    """The points of ``space`` with a last column, time, uniform on ``[t0, t1)``
    (``t0 == t1``: that instant, e.g. an initial condition)."""

    # a sampler of the spatial points
    space: Callable[[int, np.random.Generator], np.ndarray]
    t0: float
    t1: float

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        x = np.asarray(self.space(n, rng), dtype=np.float64)
        t = self.t0 + (self.t1 - self.t0) * rng.random((n, 1))
        return _real(np.column_stack([x, t]))


@dataclass(frozen=True)
class Union:
    """Points of several samplers, each drawn with probability proportional to
    its ``weights`` entry (e.g. the lengths of a boundary's pieces): the counts
    are one multinomial draw, so every piece is covered in proportion."""

    parts: tuple
    weights: tuple[float, ...]

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        w = np.asarray(self.weights, dtype=np.float64)
        counts = rng.multinomial(n, w / w.sum())
        pts = [
            np.asarray(part(k, rng), dtype=np.float64)
            for part, k in zip(self.parts, counts)
            if k
        ]
        return _real(np.concatenate(pts))


@dataclass(frozen=True)
class Points:
    """``n`` of the given points, drawn with replacement (all of them, in order,
    where ``n`` is their number): observations, or an anchor point repeated."""

    points: tuple[tuple[float, ...], ...]

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        pts = np.asarray(self.points, dtype=np.float64)
        if n == len(pts):
            return _real(pts)
        return _real(pts[rng.integers(0, len(pts), n)])


def box_boundary(lo, hi, axes=None) -> Union:
    """Uniform on the faces of the box ``[lo, hi)`` perpendicular to ``axes``
    (default: every axis; e.g. ``axes=(0, 1)`` of an ``(x, y, t)`` box: the side
    walls over time), each face drawn in proportion to its measure."""
    lo, hi = tuple(map(float, lo)), tuple(map(float, hi))
    axes = range(len(lo)) if axes is None else axes
    faces, measures = [], []
    for axis in axes:
        size = float(
            np.prod([b - a for i, (a, b) in enumerate(zip(lo, hi)) if i != axis])
        )
        for value in (lo[axis], hi[axis]):
            faces.append(Edge(lo, hi, axis, value))
            measures.append(size)
    return Union(tuple(faces), tuple(measures))
