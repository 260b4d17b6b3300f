"""Random Fourier features in front of a plain network ("fourier"), the field's
usual answer to multiscale and high-frequency solutions (Tancik et al. 2020,
"Fourier features let networks learn high frequency functions in low dimensional
domains"; Wang, Wang and Perdikaris 2021 for PINNs)::

    phi(x) = [cos(F x), sin(F x)],   F = c B,  B_ij ~ N(0, s^2) drawn once, fixed

``B`` has ``m`` rows (``2 m`` features), ``s`` is the embedding scale and ``c`` a
constant: ``2 pi`` in Tancik et al.'s form (:class:`FourierMLP`), 1 in the
PirateNets paper's (:mod:`.pirate`). ``F`` is a buffer, not a parameter: it is
saved and restored with the network and never trained.

:class:`FourierMLP` declares the embedding as its first stage, so its forward is
one list of stages as for :class:`~.pytorch.MLP`; the Taylor-mode jets follow it
(:mod:`.taylor` has a rule for :class:`FourierFeatures`). Seeds stack: each seed
draws its own ``B``, and the stacked form (:mod:`.stacked`) stacks buffers per run
as it stacks parameters, so run k of a stack uses seed k's ``F``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from deepxde import config

from ..checks import check_int, check_number
from .limits import SCALE_MAX, TORCH_DEFAULT
from .plan import mlp_plan
from .pytorch import MLP, Activation, Initializer, Regularization

__all__ = ["FourierFeatures", "FourierMLP"]


class FourierFeatures(torch.nn.Module):
    """``x -> [cos(F x), sin(F x)]`` with ``F = factor * B``, ``B ~ N(0,
    scale^2)`` of shape ``(features // 2, n_in)``, drawn from torch's current
    random state and fixed (the buffer ``frequencies`` holds ``F``).

    Args:
        n_in: the input dimension ``d``.
        features: the embedding's width ``2 m`` (even, at least 2).
        scale: ``s``, the standard deviation of ``B`` (> 0).
        factor: ``c`` (``2 pi``: Tancik et al.'s form; 1: the PirateNets paper's).
    """

    frequencies: torch.Tensor  # a buffer

    def __init__(
        self, n_in: int, features: int, scale: float = 1.0, factor: float = 2 * math.pi
    ):
        super().__init__()
        n_in = check_int(n_in, "n_in", 1)
        features = check_int(features, "features", 2)
        if features % 2:
            raise ValueError(f"features must be even (cos and sin); got {features}")
        self.scale = check_number(scale, "scale", 0.0, SCALE_MAX, above=True)
        self.factor = check_number(factor, "factor", 0.0, above=True)
        dtype = config.real(torch)
        b = torch.randn(features // 2, n_in, dtype=dtype) * self.scale
        self.register_buffer("frequencies", self.factor * b)

    @property
    def features(self) -> int:
        return 2 * self.frequencies.shape[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = torch.nn.functional.linear(x, self.frequencies)
        return torch.cat([torch.cos(z), torch.sin(z)], dim=-1)

    def extra_repr(self) -> str:
        n_in = self.frequencies.shape[1]
        return f"n_in={n_in}, features={self.features}, scale={self.scale}"


class FourierMLP(MLP):
    """A plain :class:`~.pytorch.MLP` on random Fourier features::

        out = MLP([2 m, w_1, ..., w_L, d_out])(phi(x)),   phi: FourierFeatures

    with ``2 m = w_1`` rounded down to even (at least 2) and ``c = 2 pi``.
    ``layer_sizes`` reads ``[d, 2 m, w_1, ..., w_L, d_out]``. Trainable parameters
    are the MLP's on ``2 m`` inputs, ``(2 m + 1) w_1 + sum_{i>=2} (w_{i-1} + 1) w_i
    + (w_L + 1) d_out``; ``B`` is not trained.

    Args:
        layer_sizes: ``[d, w_1, ..., w_L, d_out]``, the plain network's.
        activation, kernel_initializer, regularization: as :class:`~.pytorch.MLP`.
        scale: the embedding scale ``s`` (> 0).
    """

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer = TORCH_DEFAULT,
        regularization: Regularization = None,
        *,
        scale: float = 1.0,
    ):
        sizes = mlp_plan(layer_sizes, activation).sizes
        if len(sizes) < 3:
            raise ValueError(f"layer_sizes needs a hidden layer; got {list(sizes)}")
        features = max(2, sizes[1] - sizes[1] % 2)
        self.plan = mlp_plan([features, *sizes[1:]], activation)
        super().__init__(
            self.plan.sizes, activation, kernel_initializer, regularization
        )
        self.embedding = FourierFeatures(sizes[0], features, scale)
        self.layer_sizes = [sizes[0], *self.plan.sizes]

    def stages(self) -> list:
        """The embedding, then the MLP's stages (:meth:`~.pytorch.MLP.stages`)."""
        return [self.embedding, *super().stages()]

    def extra_repr(self) -> str:
        return f"scale={self.embedding.scale}"
