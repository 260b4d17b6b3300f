"""What a benchmark declares for the runner: protocol, evaluation grid, fields.

A case module (``cases/*.py``) reads like a DeepXDE example and ends with one
``CASE = Case(...)`` that states, as data, what the runner needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .data import Term
from .paper import paper_table

__all__ = ["Case", "Profile", "Grid", "PROFILES", "DTYPES"]

PROFILES = ("quick", "paper", "accurate")
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Profile:
    """Training protocol: iterations, Adam learning rate, seed and point counts.

    ``counts`` overrides the terms' point counts by name (missing names keep
    theirs); ``grid_n`` overrides the evaluation grid size; ``n_seeds`` is how many
    seeds ``compare`` runs by default (profile seed, seed + 1, ...);
    ``display_every`` is DeepXDE's loss-logging period. ``dtype`` is the default
    float type; ``resample`` redraws every point set each step (else one fixed
    pool); ``decay`` is DeepXDE's learning-rate decay for Adam (e.g.
    ``("inverse time", 1000, 0.5)``, ``None``: constant); ``lbfgs`` L-BFGS
    iterations follow the ``iterations`` Adam steps.
    """

    iterations: int
    lr: float
    seed: int
    counts: Mapping[str, int] = field(default_factory=dict)
    grid_n: int | None = None
    n_seeds: int = 3
    display_every: int = 1000
    dtype: str = "float32"
    resample: bool = True
    decay: tuple | None = None
    lbfgs: int = 0


@dataclass(frozen=True)
class Grid:
    """Tensor grid ``linspace(lo_i, hi_i, n)`` per axis (endpoints included),
    optionally restricted by ``mask(points) -> bool array``."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    n: int
    mask: Callable[[np.ndarray], np.ndarray] | None = None

    def axes(self, n: int | None = None) -> list[np.ndarray]:
        n = n or self.n
        return [np.linspace(a, b, n) for a, b in zip(self.lo, self.hi)]

    def points(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """float64 points (M, d) in C order of ``meshgrid(..., indexing="ij")`` and
        the boolean mask over the full tensor grid (all True without a mask)."""
        mesh = np.meshgrid(*self.axes(n), indexing="ij")
        full = np.column_stack([m.ravel() for m in mesh])
        keep = np.ones(len(full), bool) if self.mask is None else self.mask(full)
        return full[keep], keep


@dataclass(frozen=True)
class Case:
    """A benchmark: terms (with the paper's counts), exact solution, grid, nets."""

    name: str
    title: str
    inputs: tuple[str, ...]
    fields: tuple[str, ...]
    terms: Sequence[Term]
    exact: Callable[[np.ndarray], np.ndarray]
    grid: Grid
    paper: Profile
    quick: Profile
    hidden: tuple[int, ...] = (64, 64, 64, 64)
    lnn_layout: str = "standard"
    output_transform: Callable | None = None
    extra_metrics: Callable[[np.ndarray, np.ndarray, np.ndarray], dict] | None = None
    extra_grids: Mapping[str, int] = field(default_factory=dict)  # label -> n
    # XPINN subdomains: cut positions per input axis (default: the grid box's
    # mid-planes); the domain is the grid's box restricted by its mask
    xpinn_cuts: tuple[tuple[float, ...], ...] | None = None

    @property
    def paper_table(self) -> dict:
        """The paper's reported numbers for this case (``deepxde_lnn.paper``)."""
        return paper_table(self.name)

    @property
    def accurate(self) -> Profile:
        """float64, fixed pool, Adam with decay then L-BFGS
        (:mod:`deepxde_lnn.accurate`; the same setting for every case)."""
        from .accurate import profile_from

        return profile_from(self)

    def profile(self, name: str) -> Profile:
        if name not in PROFILES:
            raise ValueError(
                f"profile must be one of {', '.join(PROFILES)}; got {name!r}"
            )
        return getattr(self, name)

    def make_terms(self, profile: Profile) -> list[Term]:
        unknown = set(profile.counts) - {t.name for t in self.terms}
        if unknown:
            raise ValueError(f"{self.name}: counts for unknown terms {sorted(unknown)}")
        return [replace(t, n=profile.counts.get(t.name, t.n)) for t in self.terms]

    def decomposition(self, fractions: Sequence[float] | None = None):
        """The XPINN split: ``xpinn_cuts``, or one cut per axis at ``fractions``
        of the grid box (e.g. the authors' ``(0.38, 0.62)``)."""
        from .xpinn import Decomposition

        lo, hi = self.grid.lo, self.grid.hi
        if fractions is not None:
            cuts = tuple((a + f * (b - a),) for a, b, f in zip(lo, hi, fractions))
        elif self.xpinn_cuts is not None:
            cuts = self.xpinn_cuts
        else:
            cuts = tuple(((a + b) / 2,) for a, b in zip(lo, hi))
        return Decomposition(tuple(lo), tuple(hi), cuts, self.grid.mask)

    def layer_sizes(self, width: int | None = None) -> list[int]:
        hidden = self.hidden if width is None else (width,) * len(self.hidden)
        return [len(self.inputs), *hidden, len(self.fields)]
