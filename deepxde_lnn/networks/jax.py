"""The liquid residual networks on DeepXDE's ``jax`` backend (Flax ``linen``
modules): the same networks as :mod:`.pytorch`'s, with the signature of
``dde.nn.FNN`` on this backend and the LNN's options as keyword-only fields::

    net = deepxde_lnn.LNN([1] + [20] * 3 + [1], "tanh", "Glorot uniform")

Their layers follow the :class:`~.plan.Plan` (what follows each hidden
``Dense``); DeepXDE's initializer applies to every kernel (the blocks' too, zero
biases). Parameters are named as PyTorch's are, ``linears_i`` and ``blocks_k``
(``{"linear": {"kernel", "bias"}, "alpha"}``), in ``config.real`` (float64 once
``JAX_ENABLE_X64=1`` and ``dde.config.set_default_float("float64")``).

On this backend:

- a bad argument raises its ValueError at construction (the plan's, the
  initializer's, DeepXDE's regularizer's): the modules are dataclasses, checked
  in ``__post_init__``;
- a fixed gate (``train_alpha=False``) is a constant, not a variable: DeepXDE
  trains every variable it holds;
- DeepXDE applies ``regularization`` to every parameter (biases and gates too),
  as for its own ``FNN``;
- DeepXDE has no trainable activation (``"LAAF-n NAME"``): its
  NotImplementedError comes at the first ``init``; and no DeepONet, so there is
  no liquid DeepONet here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
from deepxde import config
from deepxde.nn import activations, regularizers
from deepxde.nn.jax.nn import NN
from flax import linen as nn

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

__all__ = ["LiquidBlock", "LNN", "MLP", "ReZero"]

#: what the other backends have and this one has not, and why
UNAVAILABLE = dict.fromkeys(
    ("LiquidDeepONet", "LiquidDeepONetCartesianProd"), "DeepXDE has no DeepONet on JAX"
)


def _dense(width: int, initializer: Initializer) -> nn.Dense:
    """A ``Dense`` of DeepXDE's: ``initializer``'s kernel, zero bias, in
    ``config.real``."""
    dtype = config.real(jax)
    return nn.Dense(
        width,
        kernel_init=check_initializer(initializer),
        bias_init=jax.nn.initializers.zeros,
        dtype=dtype,
        param_dtype=dtype,
    )


class LiquidBlock(nn.Module):
    """``h + alpha * sigma(A h + c)`` (without the residual path ``alpha *
    sigma(A h + c)``), as :class:`deepxde_lnn.networks.pytorch.LiquidBlock`.

    Args:
        width: the feature width ``w``.
        alpha_init: initial value of ``alpha``.
        activation: ``sigma``, a DeepXDE activation name or function.
        per_channel: one ``alpha`` per channel, or one scalar.
        residual: keep the identity path.
        train_alpha: train ``alpha`` (``False``: a constant, not a parameter).
        kernel_initializer: DeepXDE's initializer of ``A`` (``c`` starts at 0).
    """

    width: int
    alpha_init: float = 0.5
    activation: Activation = "tanh"
    _: dataclasses.KW_ONLY
    per_channel: bool = True
    residual: bool = True
    train_alpha: bool = True
    kernel_initializer: Initializer = "Glorot uniform"

    def __post_init__(self) -> None:
        check_block(
            self.width,
            self.alpha_init,
            self.activation,
            self.residual,
            self.train_alpha,
        )
        check_initializer(self.kernel_initializer)
        super().__post_init__()

    def setup(self) -> None:
        self._activation = activations.get(self.activation)
        self.linear = _dense(self.width, self.kernel_initializer)
        shape = (self.width,) if self.per_channel else ()
        dtype = config.real(jax)
        if self.train_alpha:
            init = nn.initializers.constant(self.alpha_init)
            self.alpha = self.param("alpha", init, shape, dtype)
        else:
            self.alpha = jax.numpy.full(shape, self.alpha_init, dtype)

    def __call__(self, h: jax.Array) -> jax.Array:
        branch = self.alpha * self._activation(self.linear(h))
        return h + branch if self.residual else branch


class _Network(NN):
    """The network of a :class:`~.plan.Plan` (:meth:`_plan`): hidden ``Dense``
    layers, each followed by its activation and/or block, then the output
    ``Dense``."""

    layer_sizes: Sequence[int]
    activation: Activation | Sequence[Activation]
    kernel_initializer: Initializer
    regularization: Regularization = None

    params: Any = None
    _input_transform: Callable | None = None
    _output_transform: Callable | None = None

    def __post_init__(self) -> None:
        # every argument checked here, at construction (flax clones a module
        # per init and apply: cheap checks, run again there)
        self._plan()
        check_initializer(self.kernel_initializer)
        regularizers.get(self.regularization)
        super().__post_init__()

    @nn.nowrap
    def _plan(self) -> Plan:
        """The checked plan of this network's fields."""
        raise NotImplementedError

    def setup(self) -> None:
        self.plan = plan = self._plan()
        self._activations = resolve_activations(self.activation, len(plan.sizes) - 1)
        self.linears = [_dense(n, self.kernel_initializer) for n in plan.sizes[1:]]
        self.blocks = [
            LiquidBlock(
                plan.sizes[j + 1],
                plan.alpha_init,
                plan.sigma(j, self._activations),
                per_channel=plan.per_channel,
                residual=plan.residual,
                train_alpha=plan.train_alpha,
                kernel_initializer=self.kernel_initializer,
            )
            for j in plan.block_layers
        ]

    def __call__(self, inputs: jax.Array, training: bool = False) -> jax.Array:
        x = inputs
        if self._input_transform is not None:
            x = self._input_transform(x)
        x = self.plan.forward(x, self.linears, self._activations, self.blocks)
        if self._output_transform is not None:
            x = self._output_transform(inputs, x)
        return x


class MLP(_Network):
    """``dde.nn.FNN`` of this backend, laid out as the liquid networks are."""

    @nn.nowrap
    def _plan(self) -> Plan:
        return mlp_plan(self.layer_sizes, self.activation)


class LNN(_Network):
    """The liquid residual network (:class:`deepxde_lnn.networks.pytorch.LNN`,
    whose arguments these are), ``dde.nn.FNN``'s signature on this backend."""

    _: dataclasses.KW_ONLY
    alpha_init: float = 0.5
    layout: str = "standard"
    block_activation: Activation = "same"
    residual: bool = True
    train_alpha: bool = True
    block_layers: Sequence[int] | None = None

    @nn.nowrap
    def _plan(self) -> Plan:
        return lnn_plan(
            self.layer_sizes,
            self.activation,
            alpha_init=self.alpha_init,
            layout=self.layout,
            block_activation=self.block_activation,
            residual=self.residual,
            train_alpha=self.train_alpha,
            block_layers=self.block_layers,
        )


class ReZero(_Network):
    """ReZero (:class:`deepxde_lnn.networks.pytorch.ReZero`): one scalar gate
    per block, from 0."""

    _: dataclasses.KW_ONLY
    alpha_init: float = 0.0
    block_activation: Activation = "same"

    @nn.nowrap
    def _plan(self) -> Plan:
        return rezero_plan(
            self.layer_sizes,
            self.activation,
            alpha_init=self.alpha_init,
            block_activation=self.block_activation,
        )
