"""PirateNets (Wang, Li, Chen and Perdikaris 2024, "PirateNets: Physics-informed
deep learning with residual adaptive networks"), written from the paper::

    phi = [cos(B x), sin(B x)]                 B ~ N(0, s^2), (w/2) x d, fixed
    U = sigma(W_u phi + b_u),  V = sigma(W_v phi + b_v)
    h = phi; for each of L blocks (its own parameters):
        f  = sigma(W_1 h + b_1);   z_1 = f . U + (1 - f) . V
        g  = sigma(W_2 z_1 + b_2); z_2 = g . U + (1 - g) . V
        r  = sigma(W_3 z_2 + b_3)
        h <- alpha r + (1 - alpha) h           alpha trainable, from 0
    out = W_out h + b_out

``sigma`` is the hidden activation (tanh), ``.`` the element-wise product; every
block starts as the identity (``alpha = 0``). Trainable parameters, width ``w``::

    P = 2 (w^2 + w) + L (3 w^2 + 3 w + 1) + (w + 1) d_out

Left out of the paper: the random weight factorisation of its dense layers and its
physics-informed initialisation of the last layer by least squares; the layers
keep PyTorch's default initialisation, as every method of the comparison does.
Not built from stages (the gates ``U``, ``V`` enter every block), so its
Taylor-mode jets are a rule of its own (:mod:`.taylor`, ``_NET_RULES``: the
embedding's rule, then a ``pirate`` step that carries the jets of ``U`` and ``V``
and takes each gate ``f U + (1 - f) V = V + f (U - V)`` by the product rule of
two series); its residuals take jets as an MLP's do. Its seeds stack as its whole
:meth:`PirateNet.trunk` under ``vmap``, each with its own random frequencies
(:mod:`.stacked`); their jets, as every network's, run under ``vmap`` over the
seeds (:meth:`~.stacked.StackedNet.per_run`).
"""

from __future__ import annotations

import torch
from deepxde import config
from deepxde.nn.pytorch.nn import NN

from ..checks import check_int, check_number
from .fourier import FourierFeatures
from .limits import ALPHA_MAX, BLOCKS_MAX, check_parameters
from .pytorch import Activation, Regularization, _get_activation, transformed

__all__ = ["PirateBlock", "PirateNet", "pirate_parameters"]


def pirate_parameters(n_out: int, width: int, blocks: int) -> int:
    """Trainable parameters of a :class:`PirateNet` (module docstring)."""
    return (
        2 * (width * width + width)
        + blocks * (3 * width * width + 3 * width + 1)
        + (width + 1) * n_out
    )


class PirateBlock(torch.nn.Module):
    """One adaptive residual block: three dense layers gated by ``U`` and ``V``,
    ``h <- alpha r + (1 - alpha) h`` (``3 w^2 + 3 w + 1`` parameters)."""

    def __init__(self, width: int, alpha_init: float, activation):
        super().__init__()
        dtype = config.real(torch)
        self.dense = torch.nn.ModuleList(
            torch.nn.Linear(width, width, dtype=dtype) for _ in range(3)
        )
        self.activation = activation
        self.alpha = torch.nn.Parameter(torch.tensor(float(alpha_init), dtype=dtype))

    def forward(self, h: torch.Tensor, u: torch.Tensor, v: torch.Tensor):
        z = h
        for dense in self.dense[:2]:
            f = self.activation(dense(z))
            z = f * u + (1 - f) * v
        r = self.activation(self.dense[2](z))
        return self.alpha * r + (1 - self.alpha) * h


class PirateNet(NN):
    """PirateNet, ``n_in -> n_out`` (module docstring), a ``dde.nn.NN``: input and
    output transforms work as in ``dde.nn.FNN``.

    Args:
        n_in: the input dimension ``d``.
        n_out: the output dimension.
        width: the hidden width ``w`` (even: ``phi`` has ``w / 2`` frequencies).
        blocks: the number of adaptive residual blocks ``L`` (>= 1).
        scale: the embedding scale ``s`` (> 0).
        alpha_init: every block's initial ``alpha`` (0: the paper's).
        activation: ``sigma``, a DeepXDE activation (``"tanh"``, the paper's).
        regularization: as in ``dde.nn.FNN``; handled by ``dde.Model``.
    """

    def __init__(
        self,
        n_in: int,
        n_out: int,
        width: int = 64,
        blocks: int = 1,
        *,
        scale: float = 1.0,
        alpha_init: float = 0.0,
        activation: Activation = "tanh",
        regularization: Regularization = None,
    ):
        super().__init__()
        n_out = check_int(n_out, "n_out", 1)
        width = check_int(width, "width", 2)
        if width % 2:
            raise ValueError(f"width must be even (w/2 frequencies); got {width}")
        blocks = check_int(blocks, "blocks", 1, BLOCKS_MAX)
        check_parameters(pirate_parameters(n_out, width, blocks), "width")
        alpha_init = check_number(alpha_init, "alpha_init", -ALPHA_MAX, ALPHA_MAX)
        self.regularizer = regularization
        self.activation = _get_activation(activation)
        self.embedding = FourierFeatures(n_in, width, scale, factor=1.0)
        dtype = config.real(torch)
        self.u = torch.nn.Linear(width, width, dtype=dtype)
        self.v = torch.nn.Linear(width, width, dtype=dtype)
        self.blocks = torch.nn.ModuleList(
            PirateBlock(width, alpha_init, self.activation) for _ in range(blocks)
        )
        self.output = torch.nn.Linear(width, n_out, dtype=dtype)
        self.alpha_init = alpha_init

    def trunk(self, x: torch.Tensor) -> torch.Tensor:
        """The network between its transforms."""
        phi = self.embedding(x)
        u, v = self.activation(self.u(phi)), self.activation(self.v(phi))
        h = phi
        for block in self.blocks:
            h = block(h, u, v)
        return self.output(h)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return transformed(self, inputs)

    def extra_repr(self) -> str:
        return (
            f"width={self.u.in_features}, blocks={len(self.blocks)}, "
            f"scale={self.embedding.scale}, alpha_init={self.alpha_init}"
        )
