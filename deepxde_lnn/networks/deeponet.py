"""Deep operator networks whose branch and/or trunk are liquid residual networks.

``LiquidDeepONet`` and ``LiquidDeepONetCartesianProd`` are DeepXDE's
``dde.nn.DeepONet`` and ``dde.nn.DeepONetCartesianProd`` (same arguments, same
forward pass, same multi-output strategies), with each branch or trunk built from
``layer_sizes`` as an :class:`~.nn.LNN` instead of an ``FNN`` where ``liquid``
names it. Swapping one for the other is the one-line change::

    net = dde.nn.DeepONetCartesianProd([m, 32, p], [1, 32, p], "tanh", "Glorot normal")
    net = deepxde_lnn.LiquidDeepONetCartesianProd(
        [m, 32, p], [1, 32, p], "tanh", "Glorot normal", liquid=("branch", "trunk")
    )

Trainable parameters, with ``P_FNN(n) = sum_i (n_{i-1} + 1) n_i`` over the layers
of ``n = [n_0, ..., n_L]`` and ``P_LNN(n) = P_FNN(n) + sum_{i=1}^{L-1} (n_i^2 + 2 n_i)``
(one block per hidden layer, either layout)::

    P = k (P_branch + P_trunk) + num_outputs

where ``P_branch`` is ``P_LNN`` of ``layer_sizes_branch`` if ``"branch"`` is in
``liquid`` and ``P_FNN`` otherwise (likewise the trunk), the ``num_outputs``
scalars are the output biases ``b``, and ``k = num_outputs`` for the
``"independent"`` strategy (one branch and one trunk per output), 1 otherwise.
A trainable activation (``"LAAF-n NAME"``) adds its own parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from deepxde.nn.pytorch.deeponet import DeepONet, DeepONetCartesianProd

from .nn import LNN, Activation, Initializer, Regularization

__all__ = ["LIQUID_PARTS", "LiquidDeepONet", "LiquidDeepONetCartesianProd"]

#: The parts of a DeepONet that can be liquid.
LIQUID_PARTS = ("branch", "trunk")


def _check_liquid(liquid) -> tuple[str, ...]:
    """``liquid`` as a tuple of parts: a part's name, or any collection of them
    (empty: DeepXDE's network); a ValueError naming ``liquid`` otherwise."""
    parts = (liquid,) if isinstance(liquid, str) else liquid
    if isinstance(parts, (bytes, dict)) or not isinstance(
        parts, (Sequence, set, frozenset)
    ):
        raise ValueError(
            f"liquid must be a collection of {LIQUID_PARTS}; got {liquid!r}"
        )
    unknown = [p for p in parts if p not in LIQUID_PARTS]
    if unknown:
        raise ValueError(
            f"liquid: unknown part(s) {unknown!r}; the parts are {LIQUID_PARTS}"
        )
    return tuple(p for p in LIQUID_PARTS if p in parts)


class _Liquid:
    """The branch and trunk builders of DeepXDE's DeepONets, liquid where asked
    (a mixin before ``DeepONet``/``DeepONetCartesianProd``)."""

    def __init__(
        self,
        layer_sizes_branch: Sequence[int | Callable],
        layer_sizes_trunk: Sequence[int],
        activation: Activation | Mapping[str, Activation],
        kernel_initializer: Initializer,
        num_outputs: int = 1,
        multi_output_strategy: str | None = None,
        regularization: Regularization = None,
        *,
        liquid: str | Sequence[str] = LIQUID_PARTS,
        alpha_init: float = 0.5,
        layout: str = "standard",
        block_activation: Activation = "same",
    ):
        # set before DeepXDE's constructor, which calls the builders below
        self.liquid = _check_liquid(liquid)
        if "branch" in self.liquid and callable(layer_sizes_branch[1]):
            raise ValueError(
                "liquid: the branch is a network of your own (layer_sizes_branch[1] "
                "is callable) and is used as it is; leave 'branch' out of liquid"
            )
        self.lnn_options = dict(
            alpha_init=alpha_init, layout=layout, block_activation=block_activation
        )
        super().__init__(
            layer_sizes_branch,
            layer_sizes_trunk,
            activation,
            kernel_initializer,
            num_outputs,
            multi_output_strategy,
            regularization,
        )

    def build_branch_net(self, layer_sizes_branch):
        if "branch" not in self.liquid:
            return super().build_branch_net(layer_sizes_branch)
        return LNN(
            layer_sizes_branch,
            self.activation_branch,
            self.kernel_initializer,
            **self.lnn_options,
        )

    def build_trunk_net(self, layer_sizes_trunk):
        if "trunk" not in self.liquid:
            return super().build_trunk_net(layer_sizes_trunk)
        return LNN(
            layer_sizes_trunk,
            self.activation_trunk,
            self.kernel_initializer,
            **self.lnn_options,
        )


# the arguments of both DeepONets (Google style, the end of their docstrings)
_ARGS = """
    Args:
        layer_sizes_branch: as DeepXDE's (a callable ``layer_sizes_branch[1]`` is a
            branch of your own, used as it is).
        layer_sizes_trunk: as DeepXDE's.
        activation: as DeepXDE's (one, or ``{"branch": ..., "trunk": ...}``).
        kernel_initializer: as DeepXDE's; it applies to the liquid parts' blocks
            too.
        num_outputs: as DeepXDE's.
        multi_output_strategy: as DeepXDE's.
        regularization: as DeepXDE's.
        liquid: the parts built as :class:`~.nn.LNN`: ``("branch", "trunk")``
            (default), ``"branch"``, ``"trunk"`` or ``()`` (DeepXDE's network).
        alpha_init: those LNNs' ``alpha_init`` (:class:`~.nn.LNN`).
        layout: those LNNs' ``layout``.
        block_activation: those LNNs' ``block_activation``.
"""


class LiquidDeepONet(_Liquid, DeepONet):
    __doc__ = (
        """``dde.nn.DeepONet`` with liquid residual networks as branch and/or trunk.

    ``G(v)(x) = sum_k branch(v)_k trunk(x)_k + b`` for paired rows ``(v, x)``
    (``dde.data.PDEOperator``, ``Triple``); output ``(N, num_outputs)``. Its
    trainable parameters number ``k (P_branch + P_trunk) + num_outputs``, with
    ``P_LNN`` for a liquid part and ``P_FNN`` otherwise
    (:mod:`deepxde_lnn.networks.deeponet`).
"""
        + _ARGS
    )


class LiquidDeepONetCartesianProd(_Liquid, DeepONetCartesianProd):
    __doc__ = (
        """``dde.nn.DeepONetCartesianProd`` with liquid residual networks as branch
    and/or trunk.

    Every function ``v`` (rows of the branch input) at every point ``x`` (rows of
    the trunk input): ``dde.data.PDEOperatorCartesianProd``,
    ``TripleCartesianProd``; output ``(N_functions, N_points)``, with a third axis
    of ``num_outputs`` when there are several. Its trainable parameters number as
    :class:`LiquidDeepONet`'s.
"""
        + _ARGS
    )
