"""What the runner needs of a problem, so that a ``Case`` and a user's own
DeepXDE problem (:mod:`deepxde_lnn.problems.deepxde_problem`) train through the same code.

A problem names its inputs and output fields, gives its training profiles (a
:class:`Profile` each; :data:`DEFAULT` where it declares none), builds a method's
training data and network, and says where a trained network is evaluated against
the exact solution (an :class:`Evaluation`, e.g. on a :class:`Grid`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..runs.names import DEFAULT_PROFILE, DTYPES

if TYPE_CHECKING:  # annotations only
    from deepxde.data import Data
    from torch.nn import Module

__all__ = [
    "Problem",
    "Profile",
    "Evaluation",
    "Grid",
    "DTYPES",
    "DEFAULT",
    "DEFAULT_PROFILE",
    "MAX_POINTS",
]

#: the most points a problem may ask for at once: an evaluation grid (its full
#: tensor grid, before a mask) and one training step's point sets (all terms);
#: more is a typo (``Grid(..., 10**10)``), refused before anything is allocated
MAX_POINTS = 10**7


@dataclass(frozen=True)
class Profile:
    """A profile: a named set of training settings (iterations, Adam learning
    rate, seed and point counts, ...).

    ``counts`` overrides the terms' point counts by name (missing names keep
    theirs); ``grid_n`` overrides the evaluation grid size; ``n_seeds`` is how many
    seeds ``compare`` runs by default (profile seed, seed + 1, ...);
    ``display_every`` is DeepXDE's loss-logging period. ``dtype`` is the default
    float type; ``resample`` redraws every point set each step (else one fixed
    pool); ``decay`` is DeepXDE's learning-rate decay for Adam (e.g.
    ``("inverse time", 1000, 0.5)``, ``None``: constant); ``first_optimizer``
    is the first phase's (``adam`` or ``soap``); ``lbfgs`` L-BFGS iterations follow its
    ``iterations`` steps, then ``nncg`` NNCG iterations. ``iterations`` and
    ``lr`` None: not the package's (a problem that trains itself).
    """

    iterations: int | None
    lr: float | None
    seed: int
    counts: Mapping[str, int] = field(default_factory=dict)
    grid_n: int | None = None
    n_seeds: int = 3
    display_every: int = 1000
    dtype: str = "float32"
    resample: bool = True
    decay: tuple | None = None
    lbfgs: int = 0
    first_optimizer: str = "adam"
    nncg: int = 0

    @property
    def total_steps(self) -> int:
        """Steps of every phase: Adam's ``iterations``, then ``lbfgs`` and
        ``nncg`` (0 for a problem that trains itself)."""
        return (self.iterations or 0) + self.lbfgs + self.nncg

    @property
    def seeds(self) -> list[int]:
        """The seeds ``compare`` runs by default: ``seed``, ``seed + 1``, ..."""
        return [self.seed + i for i in range(self.n_seeds)]


#: the training of :data:`DEFAULT_PROFILE`, the one profile of a problem that
#: declares none: 1000 Adam steps at lr 1e-3 on one fixed point set, seeds 0, 1, 2
#: (with ``train=``, the user's function trains)
DEFAULT = Profile(iterations=1000, lr=1e-3, seed=0, n_seeds=3, resample=False)


@dataclass(frozen=True)
class Grid:
    """Tensor grid ``linspace(lo_i, hi_i, n)`` per axis (endpoints included),
    optionally restricted by ``mask(points) -> bool array``."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    n: int
    mask: Callable[[np.ndarray], np.ndarray] | None = None

    def size(self, n: int | None = None) -> int:
        """Points of the full tensor grid (``n`` per axis, default ``self.n``)."""
        return (n or self.n) ** len(self.lo)

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
class Evaluation:
    """Points ``x`` (M, d) where a run is scored, the exact values ``exact``
    (M, k) there, and for plots the tensor grid they come from: ``axes`` (one
    array per input; empty for scattered points) and ``mask`` over that grid
    (shape ``[len(a) for a in axes]``; for scattered points all True, shape (M,))."""

    x: np.ndarray
    exact: np.ndarray
    mask: np.ndarray
    axes: Sequence[np.ndarray] = ()


class Problem(Protocol):
    """The interface :func:`deepxde_lnn.training.runner.run` trains and evaluates."""

    # what the runner reads of a problem: read-only (properties), so that a
    # problem may hold a narrower type (a fingerprint always set, no extra metrics)

    @property
    def name(self) -> str:
        """Safe as a folder name: letters, digits, '_' and '-'."""

    @property
    def fingerprint(self) -> str | None:
        """What the problem is where its name does not say it
        (``RunConfig.problem``): None for a registered case, else a fingerprint
        (:mod:`.fingerprints`)."""

    @property
    def default_profile(self) -> str:
        """The profile a run takes when none is asked for."""

    @property
    def trains_itself(self) -> bool:
        """Its own function trains it (``train=``): no training option, resume,
        stack or time budget of the package's applies (``training.scripted_run``
        runs it)."""

    @property
    def inputs(self) -> tuple[str, ...]: ...

    @property
    def fields(self) -> tuple[str, ...]: ...

    @property
    def extra_metrics(
        self,
    ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], dict] | None: ...

    @property
    def extra_grids(self) -> Mapping[str, int]:
        """Label -> grid size, scored as well."""

    @property
    def scores(self) -> tuple[str, ...]:
        """What a run can be scored on (``config.SCORES``)."""

    def profile(self, name: str) -> Profile:
        """The training profile ``name`` (ValueError naming the choices)."""

    def check_method(self, method: str) -> None:
        """ValueError naming ``method`` unless it builds for this problem."""

    def loss_names(self, method: str, profile: Profile) -> list[str] | None:
        """The names of ``method``'s loss terms in the loss's order (``None``:
        not known before its data evaluates them)."""

    def deterministic(self, method: str) -> bool:
        """Whether ``method``'s training loss is deterministic (L-BFGS needs it)."""

    def stackable(self, method: str) -> bool:
        """Whether seeds of ``method`` can train as one stacked model."""

    def build_data(
        self, method: str, profile: Profile, seed: int, compile_jets: bool = False
    ) -> Data:
        """``method``'s training data (a DeepXDE ``Data`` with the attributes of
        :class:`~deepxde_lnn.problems.data.ResampledPDE` that the runner reads);
        ``compile_jets``: its Taylor-mode residuals through ``torch.compile``
        (where it has any; its ``describe_derivatives`` says what it did)."""

    def build_net(self, method: str) -> Module:
        """``method``'s network, initialised from torch's current random state."""

    def evaluation(self, profile: Profile, data: Data) -> Evaluation:
        """Where a run trained under ``profile`` on ``data`` is scored."""
