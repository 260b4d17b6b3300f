"""The liquid residual networks on DeepXDE's ``paddle`` backend (PaddlePaddle
layers): the same networks as :mod:`.pytorch`'s, with the signature of
``dde.nn.FNN`` on this backend (``dropout_rate`` included)::

    net = deepxde_lnn.LNN([1] + [20] * 3 + [1], "tanh", "Glorot uniform")

Their layers follow the :class:`~.plan.Plan` (what follows each hidden
``Linear``); DeepXDE's initializer applies to every weight (the blocks' too, zero
biases). Regularization is, as with ``dde.nn.FNN`` here, the optimizer's weight
decay (``net.regularizer``, which ``dde.Model`` hands to it): it decays every
parameter, the gates ``alpha`` included.

Only ``LiquidDeepONetCartesianProd`` is declared: DeepXDE's paddle ``DeepONet``
builds its branch and trunk inside its constructor, without the
``build_branch_net``/``build_trunk_net`` hooks through which
:class:`~.deeponet.LiquidParts` makes them liquid, so there is no paired
``LiquidDeepONet`` on this backend.
"""

from __future__ import annotations

from collections.abc import Sequence

import paddle
from deepxde.nn import activations, regularizers
from deepxde.nn.paddle.deeponet import DeepONetCartesianProd
from deepxde.nn.paddle.nn import NN

from ..checks import check_number
from .deeponet import liquid_deeponet
from .plan import (
    Activation,
    Initializer,
    Plan,
    Regularization,
    check_block,
    check_initializer,
    lnn_plan,
    mlp_plan,
    resolve_activations,
    rezero_plan,
)

__all__ = [
    "LiquidBlock",
    "LNN",
    "MLP",
    "ReZero",
    "LiquidDeepONetCartesianProd",
]


def _linear(n_in: int, n_out: int, init) -> paddle.nn.Linear:
    """``Linear(n_in, n_out)`` in paddle's default dtype, weight ``(n_in, n_out)``
    from DeepXDE's initializer ``init``, zero bias (as ``dde.nn.FNN``)."""
    linear = paddle.nn.Linear(n_in, n_out)
    init(linear.weight)
    paddle.nn.initializer.Constant(0.0)(linear.bias)
    return linear


class LiquidBlock(paddle.nn.Layer):
    """``h + alpha * sigma(A h + c)`` (without the residual path ``alpha *
    sigma(A h + c)``), as :class:`deepxde_lnn.networks.pytorch.LiquidBlock`.

    Args:
        width: the feature width ``w``.
        alpha_init: initial value of ``alpha``.
        activation: ``sigma``, a DeepXDE activation name or function.
        per_channel: one ``alpha`` per channel, or one scalar (shape ``[]``).
        residual: keep the identity path.
        train_alpha: train ``alpha`` (``False``: a buffer fixed at
            ``alpha_init``, not a parameter).
        kernel_initializer: DeepXDE's initializer of ``A`` (``c`` starts at 0).
    """

    def __init__(
        self,
        width: int,
        alpha_init: float = 0.5,
        activation: Activation = "tanh",
        *,
        per_channel: bool = True,
        residual: bool = True,
        train_alpha: bool = True,
        kernel_initializer: Initializer = "Glorot uniform",
    ):
        super().__init__()
        width, alpha_init, self.residual, train_alpha = check_block(
            width, alpha_init, activation, residual, train_alpha
        )
        self.activation = activations.get(activation)
        self.linear = _linear(width, width, check_initializer(kernel_initializer))
        shape = [width] if per_channel else []
        if train_alpha:
            self.alpha = self.create_parameter(
                shape,
                dtype=paddle.get_default_dtype(),
                default_initializer=paddle.nn.initializer.Constant(alpha_init),
            )
        else:  # a buffer: saved with the network, never given to the optimizer
            alpha = paddle.full(shape, alpha_init, dtype=paddle.get_default_dtype())
            self.register_buffer("alpha", alpha)

    def forward(self, h):
        branch = self.alpha * self.activation(self.linear(h))
        return h + branch if self.residual else branch


class _Network(NN):
    """The network of a :class:`~.plan.Plan`: hidden ``Linear`` layers, each
    followed by its activation and/or block, then the output ``Linear``."""

    def __init__(
        self,
        plan: Plan,
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        dropout_rate: float = 0,
    ):
        super().__init__()
        self.plan = plan
        self.regularizer = regularizers.get(regularization)
        self.dropout_rate = check_number(dropout_rate, "dropout_rate", 0, 1)
        init = check_initializer(kernel_initializer)
        self.activation = resolve_activations(activation, len(plan.sizes) - 1)
        self.linears = paddle.nn.LayerList(
            _linear(a, b, init) for a, b in zip(plan.sizes, plan.sizes[1:])
        )
        self.blocks = paddle.nn.LayerList(
            LiquidBlock(
                plan.sizes[j + 1],
                plan.alpha_init,
                plan.sigma(j, self.activation),
                per_channel=plan.per_channel,
                residual=plan.residual,
                train_alpha=plan.train_alpha,
                kernel_initializer=kernel_initializer,
            )
            for j in plan.block_layers
        )
        self.dropouts = paddle.nn.LayerList(
            paddle.nn.Dropout(p=self.dropout_rate)
            for _ in range(plan.hidden)
            if self.dropout_rate > 0
        )

    def forward(self, inputs):
        x = inputs
        if self._input_transform is not None:
            x = self._input_transform(x)

        def dropout(j, h):
            return self.dropouts[j](h) if len(self.dropouts) > 0 else h

        x = self.plan.forward(x, self.linears, self.activation, self.blocks, dropout)
        if self._output_transform is not None:
            x = self._output_transform(inputs, x)
        return x


class MLP(_Network):
    """``dde.nn.FNN`` of this backend, laid out as the liquid networks are."""

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        dropout_rate: float = 0,
    ):
        plan = mlp_plan(layer_sizes, activation)
        super().__init__(
            plan, activation, kernel_initializer, regularization, dropout_rate
        )


class LNN(_Network):
    """The liquid residual network (:class:`deepxde_lnn.networks.pytorch.LNN`,
    whose arguments these are), ``dde.nn.FNN``'s signature on this backend."""

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        dropout_rate: float = 0,
        *,
        alpha_init: float = 0.5,
        layout: str = "standard",
        block_activation: Activation = "same",
        residual: bool = True,
        train_alpha: bool = True,
        block_layers: Sequence[int] | None = None,
    ):
        plan = lnn_plan(
            layer_sizes,
            activation,
            alpha_init=alpha_init,
            layout=layout,
            block_activation=block_activation,
            residual=residual,
            train_alpha=train_alpha,
            block_layers=block_layers,
        )
        super().__init__(
            plan, activation, kernel_initializer, regularization, dropout_rate
        )


class ReZero(_Network):
    """ReZero (:class:`deepxde_lnn.networks.pytorch.ReZero`): one scalar gate
    per block, from 0."""

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        dropout_rate: float = 0,
        *,
        alpha_init: float = 0.0,
        block_activation: Activation = "same",
    ):
        plan = rezero_plan(
            layer_sizes,
            activation,
            alpha_init=alpha_init,
            block_activation=block_activation,
        )
        super().__init__(
            plan, activation, kernel_initializer, regularization, dropout_rate
        )


LiquidDeepONetCartesianProd = liquid_deeponet(LNN, DeepONetCartesianProd)
#: what the other backends have and this one has not, and why
UNAVAILABLE = {
    "LiquidDeepONet": "DeepXDE's DeepONet here builds its branch and trunk inside "
    "its constructor (no build_branch_net hook); LiquidDeepONetCartesianProd is here",
}
