"""What the runner needs of a problem, so that a benchmark ``Case`` and a user's
own DeepXDE problem (:mod:`deepxde_lnn.pinn.custom`) train through the same code.

A problem names its inputs and output fields, gives its training profiles (a
:class:`Profile` each), builds a method's training data and network, and says where
a trained network is evaluated against the exact solution (an :class:`Evaluation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:  # annotations only
    from deepxde.data import Data
    from torch.nn import Module

__all__ = ["Problem", "Profile", "Evaluation", "DTYPES", "PROFILES", "CUSTOM_PROFILE"]

DTYPES = ("float32", "float64")
PROFILES = ("quick", "paper", "accurate")  # a case's profiles
CUSTOM_PROFILE = "custom"  # the one profile of a plain DeepXDE problem


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

    @property
    def seeds(self) -> list[int]:
        """The seeds ``compare`` runs by default: ``seed``, ``seed + 1``, ..."""
        return [self.seed + i for i in range(self.n_seeds)]


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

    name: str  # safe as a folder name: letters, digits, '_' and '-'
    default_profile: str  # the profile a run takes when none is asked for
    inputs: tuple[str, ...]
    fields: tuple[str, ...]
    extra_metrics: Callable[[np.ndarray, np.ndarray, np.ndarray], dict] | None
    extra_grids: Mapping[str, int]  # label -> grid size, scored as well

    def profile(self, name: str) -> Profile:
        """The training profile ``name`` (ValueError naming the choices)."""

    def check_method(self, method: str) -> None:
        """ValueError naming ``method`` unless it builds for this problem."""

    def deterministic(self, method: str) -> bool:
        """Whether ``method``'s training loss is deterministic (L-BFGS needs it)."""

    def stackable(self, method: str) -> bool:
        """Whether seeds of ``method`` can train as one stacked model."""

    def build_data(
        self, method: str, profile: Profile, seed: int, compile_jets: bool = False
    ) -> Data:
        """``method``'s training data (a DeepXDE ``Data`` with the attributes of
        :class:`~deepxde_lnn.pinn.data.ResampledPDE` that the runner reads);
        ``compile_jets``: its Taylor-mode residuals through ``torch.compile``
        (where it has any; its ``describe_derivatives`` says what it did)."""

    def build_net(self, method: str) -> Module:
        """``method``'s network, initialised from torch's current random state."""

    def evaluation(self, profile: Profile, data: Data) -> Evaluation:
        """Where a run trained under ``profile`` on ``data`` is scored."""
