"""The authors' gated residual-attention network ("ra-gated"), a baseline.

An architecture with a plain (unweighted) loss, from the authors' code::

    z = tanh(In xi)                                 In: Linear(d -> w)
    for each of `blocks` blocks (independent parameters):
        f = tanh(F2(Dropout_p(tanh(F1 z))))         F1, F2: Linear(w -> w)
        g = sigmoid(tau * G2(tanh(G1 z)) + beta)    G1: Linear(w -> b)
        z = z + rho * g * f                         G2: Linear(b -> w)
    out = Out(z)                                    Out: Linear(w -> m)

``beta`` in R^w is trainable, initialised to -1.8: at initialisation g ~ 0.14, so the
branch enters scaled by ~ rho * 0.14 ~ 0.017 (a nearly closed residual branch).
Dropout is active in training mode only (DeepXDE's ``Model`` switches the net with
``train()`` / ``eval()``). PyTorch's default initialisation everywhere.
"""

from __future__ import annotations

import torch
from deepxde import config
from deepxde.nn.pytorch.nn import NN

from ..checks import check_int, check_number
from .pytorch import Regularization

__all__ = ["GatedBlock", "GatedResidualAttention"]


class GatedBlock(torch.nn.Module):
    """``z + rho * g * f`` with ``f = tanh(F2(Dropout_p(tanh(F1 z))))`` and
    ``g = sigmoid(tau * G2(tanh(G1 z)) + beta)``.

    ``2 (w^2 + w) + (w b + b) + (b w + w) + w`` parameters (9,480 at w=64, b=8).
    """

    def __init__(
        self,
        width: int,
        bottleneck: int = 8,
        rho: float = 0.12,
        tau: float = 0.55,
        gate_bias: float = -1.8,
        dropout: float = 0.18,
    ):
        super().__init__()
        width = check_int(width, "width", 1)
        bottleneck = check_int(bottleneck, "bottleneck", 1)
        self.rho = check_number(rho, "rho")
        self.tau = check_number(tau, "tau")
        gate_bias = check_number(gate_bias, "gate_bias")
        dropout = check_number(dropout, "dropout")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        dtype = config.real(torch)
        self.f1 = torch.nn.Linear(width, width, dtype=dtype)
        self.f2 = torch.nn.Linear(width, width, dtype=dtype)
        self.dropout = torch.nn.Dropout(dropout)
        self.g1 = torch.nn.Linear(width, bottleneck, dtype=dtype)
        self.g2 = torch.nn.Linear(bottleneck, width, dtype=dtype)
        self.beta = torch.nn.Parameter(torch.full((width,), gate_bias, dtype=dtype))

    def gate(self, z: torch.Tensor) -> torch.Tensor:
        """``g = sigmoid(tau * G2(tanh(G1 z)) + beta)`` (tau scales G2's bias too)."""
        return torch.sigmoid(self.tau * self.g2(torch.tanh(self.g1(z))) + self.beta)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        f = torch.tanh(self.f2(self.dropout(torch.tanh(self.f1(z)))))
        return z + self.rho * self.gate(z) * f

    def extra_repr(self) -> str:
        return f"rho={self.rho}, tau={self.tau}"


class GatedResidualAttention(NN):
    """Gated residual-attention network, ``n_in -> n_out``.

    ``z = tanh(In x)``, then ``blocks`` :class:`GatedBlock` s (``z = z + rho g * f``),
    then a linear output. 38,177 parameters for ``(2, 1)`` with the defaults, 38,632
    for ``(2, 8)``. Input and output transforms work as in ``dde.nn.FNN``.

    Args:
        n_in: the input dimension.
        n_out: the output dimension.
        width: hidden width ``w``.
        blocks: number of gated blocks.
        bottleneck: width ``b`` of the gate's bottleneck.
        rho: residual scale.
        tau: attention temperature, multiplies ``G2``'s output (bias included).
        gate_bias: initial value of every channel of the trainable ``beta``.
        dropout: dropout probability inside ``f`` (training mode only), in [0, 1).
        regularization: as in ``dde.nn.FNN``; handled by ``dde.Model``.
    """

    def __init__(
        self,
        n_in: int,
        n_out: int,
        width: int = 64,
        blocks: int = 4,
        bottleneck: int = 8,
        *,
        rho: float = 0.12,
        tau: float = 0.55,
        gate_bias: float = -1.8,
        dropout: float = 0.18,
        regularization: Regularization = None,
    ):
        super().__init__()
        n_in, n_out = check_int(n_in, "n_in", 1), check_int(n_out, "n_out", 1)
        width = check_int(width, "width", 1)
        n_blocks = check_int(blocks, "blocks", 1)
        self.regularizer = regularization
        dtype = config.real(torch)
        self.input = torch.nn.Linear(n_in, width, dtype=dtype)
        self.blocks = torch.nn.ModuleList(
            GatedBlock(width, bottleneck, rho, tau, gate_bias, dropout)
            for _ in range(n_blocks)
        )
        self.output = torch.nn.Linear(width, n_out, dtype=dtype)
        self.gate_bias = float(gate_bias)
        self.dropout = float(dropout)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs
        if self._input_transform is not None:
            x = self._input_transform(x)
        z = torch.tanh(self.input(x))
        for block in self.blocks:
            z = block(z)
        x = self.output(z)
        if self._output_transform is not None:
            x = self._output_transform(inputs, x)
        return x

    def extra_repr(self) -> str:
        first = self.blocks[0]  # torch types its attributes Tensor | Module
        return (
            f"n_in={self.input.in_features}, n_out={self.output.out_features}, "
            f"width={self.input.out_features}, blocks={len(self.blocks)}, "
            f"bottleneck={first.g1.out_features}, rho={first.rho}, tau={first.tau}, "  # type: ignore[union-attr]
            f"gate_bias={self.gate_bias}, dropout={self.dropout}"
        )
