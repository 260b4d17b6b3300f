"""What the runner needs of a problem, so that a benchmark ``Case`` and a user's
own DeepXDE problem (:mod:`deepxde_lnn.custom`) train through the same code.

A problem names its inputs and output fields, gives its training profiles, builds
a method's training data and network, and says where a trained network is
evaluated against the exact solution (an :class:`Evaluation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:  # annotations only
    from deepxde.data import Data
    from torch.nn import Module

    from .case import Profile

__all__ = ["Problem", "Evaluation"]


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
    """The interface :func:`deepxde_lnn.runner.run` trains and evaluates."""

    name: str  # safe as a folder name: letters, digits, '_' and '-'
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

    def build_data(self, method: str, profile: Profile, seed: int) -> Data:
        """``method``'s training data (a DeepXDE ``Data`` with the attributes of
        :class:`~deepxde_lnn.data.ResampledPDE` that the runner reads)."""

    def build_net(self, method: str) -> Module:
        """``method``'s network, initialised from torch's current random state."""

    def evaluation(self, profile: Profile, data: Data) -> Evaluation:
        """Where a run trained under ``profile`` on ``data`` is scored."""
