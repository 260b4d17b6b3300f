"""A training step that reads no host memory (for CUDA graphs): what the losses
read from the host, gathered beforehand, and the losses reading it from device
tensors instead (:class:`Staging`, a part of
:class:`~deepxde_lnn.problems.data.ResampledPDE`)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from .conditions import CONDITIONS, host_functions
from .reductions import term_rows

if TYPE_CHECKING:
    from .terms import Term

__all__ = ["Staging"]


class Staging:
    """The staging part of a ``ResampledPDE``: it reads the data's ``terms``,
    ``slices``, ``train_x`` and ``_value_rows``."""

    if TYPE_CHECKING:  # the ResampledPDE's
        terms: list[Term]
        slices: list[slice]
        train_x: np.ndarray | None

        def _value_rows(self, X: np.ndarray) -> np.ndarray: ...

    _staged_points: torch.Tensor | None = None

    def host_arrays(self, Xs: Sequence[np.ndarray] | None = None) -> list:
        """What the training losses of the point sets ``Xs`` (default: this run's
        ``train_x``; K runs' sets in a stack) read from host memory, as CPU
        tensors: DeepXDE's inputs (the value terms' rows, run by run), the points
        ``(K, N, d)`` and each condition's point-only values on its rows."""
        if Xs is None:
            assert self.train_x is not None  # drawn by the first step
            Xs = [self.train_x]
        Xs = list(Xs)
        inputs = np.vstack([self._value_rows(X) for X in Xs])
        out = [torch.from_numpy(inputs), torch.from_numpy(np.stack(Xs))]
        for t, sl in zip(self.terms, self.slices):
            if isinstance(t.residual, CONDITIONS):
                rows = term_rows(Xs, sl)
                out += [f.host(rows) for f in host_functions(t.residual)]
        return out

    @contextlib.contextmanager
    def staged(self, tensors: Sequence[torch.Tensor]):
        """Within, the losses read the points and the conditions' values from
        ``tensors`` (laid out as :meth:`host_arrays`, e.g. on the GPU) instead of
        host memory; ``tensors[0]`` is what to pass DeepXDE as its inputs."""
        funcs = [
            f
            for t in self.terms
            if isinstance(t.residual, CONDITIONS)
            for f in host_functions(t.residual)
        ]
        if len(tensors) != 2 + len(funcs):
            raise ValueError(f"tensors: expected {2 + len(funcs)}, got {len(tensors)}")
        self._staged_points = tensors[1]
        for f, v in zip(funcs, tensors[2:]):
            f.staged = v
        try:
            yield
        finally:
            self._staged_points = None
            for f in funcs:
                f.staged = None

    def _points(self, Xs, slices, like: torch.Tensor) -> torch.Tensor:
        """Rows ``slices`` of each run's points (run by run), a new tensor with
        ``like``'s dtype and device, staged or from the host arrays ``Xs``."""
        P = self._staged_points
        if P is not None:
            parts = [P[k, sl] for k in range(len(Xs)) for sl in slices]
            return torch.cat(parts).to(like.dtype)
        rows = np.concatenate([X[sl] for X in Xs for sl in slices])
        return torch.as_tensor(rows, dtype=like.dtype, device=like.device)
