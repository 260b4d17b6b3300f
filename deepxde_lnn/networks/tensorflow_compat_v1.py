"""The liquid residual networks on DeepXDE's ``tensorflow.compat.v1`` backend
(its default: TensorFlow graphs built by ``dde.Model.compile``): the same networks
as :mod:`.pytorch`'s, with the signature of ``dde.nn.FNN`` on this backend::

    net = deepxde_lnn.LNN([1] + [20] * 3 + [1], "tanh", "Glorot uniform")

They are that ``FNN`` with the plan's blocks (:class:`~.plan.Plan`): a hidden
stage is ``FNN``'s (a ``Dense`` layer and its activation, with its batch or layer
normalization where asked) followed by its block; in the reduced layout it is the
``Dense`` layer and the block alone (no normalization then). DeepXDE's
initializer, regularization and kernel constraint apply to every kernel, the
blocks' included (not to the gates ``alpha``); ``use_bias`` to the network's
layers (a block keeps its ``c``); dropout follows each hidden stage.

DeepXDE's ``DeepONet`` on this backend builds its parts inline (stacked branches,
trainability per layer), so there is no liquid DeepONet here: use the
``tensorflow`` or ``pytorch`` backend for one.

The kernels, biases and gates are TensorFlow 1 reference variables
(:class:`Dense`), so DeepXDE's L-BFGS (``model.compile("L-BFGS")``) trains them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from deepxde import config
from deepxde.backend import tf
from deepxde.nn import activations, initializers, regularizers
from deepxde.nn.tensorflow_compat_v1.fnn import FNN
from deepxde.utils import timing

from ..checks import check_bool, check_number
from .plan import (
    ACTIVATION,
    BLOCK,
    Activation,
    Initializer,
    Plan,
    Regularization,
    check_block,
    check_initializer,
    lnn_plan,
    mlp_plan,
    rezero_plan,
)

__all__ = ["LiquidBlock", "LNN", "MLP", "ReZero"]

_INLINE = (
    "DeepXDE's DeepONets here build their parts inline (stacked branches, "
    "trainability per layer); the tensorflow and pytorch backends have it"
)
#: what the other backends have and this one has not, and why
UNAVAILABLE = {"LiquidDeepONet": _INLINE, "LiquidDeepONetCartesianProd": _INLINE}

#: FNN's hidden stages with normalization: (batch_normalization,
#: layer_normalization) -> the name of FNN's method that builds one
_NORMALIZED = {
    ("before", None): "_dense_batchnorm_v1",
    ("after", None): "_dense_batchnorm_v2",
    (None, "before"): "_dense_layernorm_v1",
    (None, "after"): "_dense_layernorm_v2",
}


class Dense:
    """``tf.keras.layers.Dense`` as ``FNN`` calls it, its ``kernel`` and ``bias``
    TensorFlow 1 reference variables: called on a tensor, it makes them in the
    current graph (``kernel_initializer`` and ``kernel_constraint`` on
    ``kernel``, ``bias`` from 0), with its regularization in ``losses``.

    DeepXDE's L-BFGS here is SciPy's L-BFGS-B, which evaluates the loss at the
    weights it tries by feeding them for the trainable variables, then assigns
    the weights it ends at. A fed value reaches every read of a reference
    variable, but no read of a resource variable (Keras 3's): with Keras layers
    SciPy would move weights the loss does not see and write them back untried.
    """

    def __init__(
        self,
        units: int,
        activation: Callable | None = None,
        use_bias: bool = True,
        *,
        kernel_initializer: Callable,
        kernel_regularizer: Callable | None = None,
        kernel_constraint: Callable | None = None,
    ):
        self.units, self.activation, self.use_bias = units, activation, use_bias
        self.kernel_initializer = kernel_initializer
        self.kernel_regularizer = kernel_regularizer
        self.kernel_constraint = kernel_constraint
        self.kernel: Any = None  # TensorFlow variables, made at the first call
        self.bias: Any = None
        self.losses: list = []

    def __call__(self, x):
        dtype = config.real(tf)
        with tf.variable_scope(None, default_name="dense"):
            shape = (int(x.shape[-1]), self.units)
            self.kernel = tf.Variable(
                self.kernel_initializer(shape, dtype=dtype),
                name="kernel",
                constraint=self._constraint(),
                use_resource=False,
            )
            y = tf.matmul(x, self.kernel)
            if self.use_bias:
                self.bias = tf.Variable(
                    tf.zeros(self.units, dtype), name="bias", use_resource=False
                )
                y = tf.nn.bias_add(y, self.bias)
        if self.kernel_regularizer is not None:
            self.losses = [self.kernel_regularizer(self.kernel.value())]
        return y if self.activation is None else self.activation(y)

    def _constraint(self):
        """``kernel_constraint`` as TensorFlow 1's optimizers apply it (to the
        variable; Keras's take its value)."""
        keras = self.kernel_constraint
        return None if keras is None else lambda kernel: keras(kernel.value())


class LiquidBlock:
    """``h + alpha * sigma(A h + c)`` (without the residual path ``alpha *
    sigma(A h + c)``), as :class:`deepxde_lnn.networks.pytorch.LiquidBlock`:
    called on a tensor, it makes its variables in the current graph.

    Args:
        width: the feature width ``w``.
        alpha_init: initial value of ``alpha``.
        activation: ``sigma``, a DeepXDE activation name or function.
        per_channel: one ``alpha`` per channel, or one scalar.
        residual: keep the identity path.
        train_alpha: train ``alpha`` (``False``: a fixed, non-trainable variable).
        kernel_initializer: DeepXDE's initializer of ``A`` (``c`` starts at 0).
        regularization: DeepXDE's regularization of ``A``.
        kernel_constraint: a Keras constraint on ``A``.
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
        regularization: Regularization = None,
        kernel_constraint=None,
    ):
        self.width, self.alpha_init, self.residual, self.train_alpha = check_block(
            width, alpha_init, activation, residual, train_alpha
        )
        self.per_channel = per_channel
        self.activation = activations.get(activation)
        self.linear = Dense(
            width,
            kernel_initializer=initializers.get(kernel_initializer),
            kernel_regularizer=regularizers.get(regularization),
            kernel_constraint=kernel_constraint,
        )
        self.alpha = None

    def __call__(self, h):
        if self.alpha is None:
            shape = (self.width,) if self.per_channel else ()
            self.alpha = tf.Variable(
                np.full(shape, self.alpha_init),
                dtype=config.real(tf),
                trainable=self.train_alpha,
                name="alpha",
                use_resource=False,  # as Dense's variables
            )
        branch = self.alpha * self.activation(self.linear(h))
        return h + branch if self.residual else branch


class _Network(FNN):
    """``FNN`` of this backend with the blocks of a :class:`~.plan.Plan`; the
    layers it made are ``linears`` and ``blocks`` once built."""

    def __init__(
        self,
        plan: Plan,
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        dropout_rate: float = 0,
        batch_normalization: str | None = None,
        layer_normalization: str | None = None,
        kernel_constraint=None,
        use_bias: bool = True,
    ):
        normalization = (batch_normalization, layer_normalization)
        if normalization != (None, None) and normalization not in _NORMALIZED:
            raise ValueError(
                "batch_normalization, layer_normalization: one of them, 'before' or "
                f"'after'; got {batch_normalization!r}, {layer_normalization!r}"
            )
        if normalization != (None, None) and (
            plan.layout == "reduced" or isinstance(activation, (list, tuple))
        ):
            raise ValueError(
                "batch_normalization, layer_normalization: not with the reduced "
                "layout or one activation per layer (FNN's normalized stages take one)"
            )
        check_initializer(kernel_initializer)
        super().__init__(
            list(plan.sizes),
            activation,
            kernel_initializer,
            regularization,
            check_number(dropout_rate, "dropout_rate", 0, 1),
            batch_normalization,
            layer_normalization,
            kernel_constraint,
            check_bool(use_bias, "use_bias"),
        )
        self.plan = plan
        self.regularization = regularization
        self.linears: list = []
        self.blocks: list = []

    def _hidden_activations(self) -> list:
        n = self.plan.hidden
        act = self.activation
        return list(act[:n]) if isinstance(act, list) else [act] * n

    @timing
    def build(self):
        print("Building liquid residual network...")
        self.linears, self.blocks = [], []
        sizes = self.plan.sizes
        self.x = tf.placeholder(config.real(tf), [None, sizes[0]])
        y = self.x
        if self._input_transform is not None:
            y = self._input_transform(y)
        for j in range(self.plan.hidden):
            y = self._hidden(y, j)
            if self.dropout_rate > 0:
                y = tf.layers.dropout(y, rate=self.dropout_rate, training=self.training)
        self.y = self._dense(y, sizes[-1], use_bias=self.use_bias)
        if self._output_transform is not None:
            self.y = self._output_transform(self.x, self.y)
        self.y_ = tf.placeholder(config.real(tf), [None, sizes[-1]])
        self.built = True

    def _hidden(self, y, j: int):
        """Hidden stage ``j``: FNN's stage (or its ``Dense`` layer alone in the
        reduced layout), then the block where the plan has one."""
        width, stages = self.plan.sizes[j + 1], self.plan.stages(j)
        normalized = _NORMALIZED.get(
            (self.batch_normalization, self.layer_normalization)
        )
        if ACTIVATION not in stages:
            y = self._dense(y, width, use_bias=self.use_bias)
        elif normalized is not None:
            y = getattr(self, normalized)(y, width)
        else:
            act = self._hidden_activations()[j]
            y = self._dense(y, width, activation=act, use_bias=self.use_bias)
        return self._block(y, j) if BLOCK in stages else y

    def _block(self, y, j: int):
        block = LiquidBlock(
            self.plan.sizes[j + 1],
            self.plan.alpha_init,
            self.plan.sigma(j, self._hidden_activations()),
            per_channel=self.plan.per_channel,
            residual=self.plan.residual,
            train_alpha=self.plan.train_alpha,
            kernel_initializer=self.kernel_initializer,
            regularization=self.regularization,
            kernel_constraint=self.kernel_constraint,
        )
        self.blocks.append(block)
        out = block(y)
        if self.regularizer:
            self.regularization_loss += tf.math.add_n(block.linear.losses)
        return out

    def _dense(self, inputs, units, activation=None, use_bias=True):
        """FNN's ``Dense`` layer (:class:`Dense`), kept in ``linears``."""
        dense = Dense(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=self.kernel_initializer,
            kernel_regularizer=self.regularizer,
            kernel_constraint=self.kernel_constraint,
        )
        self.linears.append(dense)
        out = dense(inputs)
        if self.regularizer:
            self.regularization_loss += tf.math.add_n(dense.losses)
        return out


class MLP(_Network):
    """``dde.nn.FNN`` of this backend, laid out as the liquid networks are."""

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        dropout_rate: float = 0,
        batch_normalization: str | None = None,
        layer_normalization: str | None = None,
        kernel_constraint=None,
        use_bias: bool = True,
    ):
        super().__init__(
            mlp_plan(layer_sizes, activation),
            activation,
            kernel_initializer,
            regularization,
            dropout_rate,
            batch_normalization,
            layer_normalization,
            kernel_constraint,
            use_bias,
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
        batch_normalization: str | None = None,
        layer_normalization: str | None = None,
        kernel_constraint=None,
        use_bias: bool = True,
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
            plan,
            activation,
            kernel_initializer,
            regularization,
            dropout_rate,
            batch_normalization,
            layer_normalization,
            kernel_constraint,
            use_bias,
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
