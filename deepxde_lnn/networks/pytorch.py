"""Liquid residual networks as drop-in replacements for ``deepxde.nn.FNN``.

Liquid residual block (paper eq. for the LNN-PINN hidden update)::

    L(h) = h + alpha * tanh(A h + c),      alpha in R^w trainable, init 0.5

(``tanh`` is the paper's, whose networks use tanh; by default ``sigma`` is the
network's own hidden activation, so a tanh network has the paper's block and a sin
network sin blocks; ``block_activation`` sets another.)

``LNN`` inserts one block after every hidden ``Linear -> activation`` stage
(``layout="standard"``) or uses the blocks *instead of* the hidden activations
(``layout="reduced"``, the paper's heat network). ``MLP`` is the same trunk with no
blocks: the paper's "PINN", so that a comparison differs only by the blocks.
``ReZero`` is the standard layout with one scalar ``alpha`` per block, from 0.

Each network declares its forward pass once, as the list of stages that
:meth:`MLP.stages` returns (``Linear`` layers, pointwise activations and blocks,
applied in order); ``forward`` runs that list, and the stacked form
(:mod:`deepxde_lnn.training.stacking`) and the Taylor-mode form (:mod:`deepxde_lnn.networks.taylor`)
are derived from it. A new architecture is a subclass that builds its modules and
says which stages follow each hidden ``Linear`` (:meth:`MLP._layer_stages`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import torch
from deepxde import backend as bkd
from deepxde import config
from deepxde import utils as dde_utils
from deepxde.nn import activations
from deepxde.nn.pytorch.deeponet import DeepONet, DeepONetCartesianProd
from deepxde.nn.pytorch.nn import NN

from .deeponet import liquid_deeponet
from .limits import TORCH_DEFAULT
from .plan import (
    ACTIVATION,
    Plan,
    check_activation_identifier,
    check_block,
    check_initializer,
    lnn_plan,
    mlp_plan,
    rezero_plan,
)

__all__ = [
    "Activation",
    "Initializer",
    "Regularization",
    "LiquidBlock",
    "LNN",
    "MLP",
    "ReZero",
    "LiquidDeepONet",
    "LiquidDeepONetCartesianProd",
    "TORCH_DEFAULT",
    "tanh",
]


#: A DeepXDE activation: its name (``"tanh"``, ``"LAAF-10 sin"``) or a function.
Activation = str | Callable[[torch.Tensor], torch.Tensor]
#: A DeepXDE initializer's name (``"Glorot normal"``) or function, or
#: :data:`TORCH_DEFAULT`.
Initializer = str | Callable[[torch.Tensor], object]
#: DeepXDE's regularization, e.g. ``["l2", 1e-5]`` (``dde.Model`` applies it).
Regularization = Sequence | None


class LiquidBlock(torch.nn.Module):
    """Width-preserving liquid residual block ``h + alpha * sigma(A h + c)``
    (without its residual path, ``alpha * sigma(A h + c)``).

    ``A, c`` form one ``Linear(width, width)`` with bias; ``alpha`` is a trainable
    gate: one per channel (the paper's; ``w^2 + 2w`` parameters) or one scalar for
    the whole block (ReZero's; ``w^2 + w + 1``), plus the parameters of a trainable
    activation such as ``"LAAF-10 tanh"``.

    Args:
        width: the feature width ``w`` (input and output).
        alpha_init: initial value of ``alpha`` (finite).
        activation: ``sigma``, a DeepXDE activation name or callable (default the
            paper's ``tanh``).
        per_channel: one ``alpha`` per channel (``True``, the paper's) or one
            scalar (``False``, ReZero's).
        residual: keep the identity path ``h +`` (``False``: the block is
            ``alpha * sigma(A h + c)``, an ablation).
        train_alpha: train ``alpha`` (``False``: a buffer fixed at ``alpha_init``,
            not a parameter; an ablation).
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
    ):
        super().__init__()
        width, alpha_init, self.residual, train_alpha = check_block(
            width, alpha_init, activation, residual, train_alpha
        )
        self.activation = _get_activation(activation)
        self.activation_name = _activation_name(activation)
        dtype = config.real(torch)
        self.linear = torch.nn.Linear(width, width, dtype=dtype)
        shape = (width,) if per_channel else ()
        alpha = torch.full(shape, alpha_init, dtype=dtype)
        if train_alpha:
            self.alpha = torch.nn.Parameter(alpha)
        else:  # a buffer: DeepXDE switches every parameter's requires_grad back on
            self.register_buffer("alpha", alpha)

    def stages(self) -> list:
        """The branch ``sigma(A h + c)`` as stages (see :meth:`MLP.stages`)."""
        return [self.linear, self.activation]

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        branch = _apply_stages(self.stages(), h)
        if not self.residual:
            return self.alpha * branch
        # one fused operation (and one autograd node) for h + alpha * branch
        return torch.addcmul(h, self.alpha, branch)

    def extra_repr(self) -> str:
        out = f"width={self.linear.in_features}"
        if self.alpha.ndim == 0:
            out += ", per_channel=False"
        if not self.residual:
            out += ", residual=False"
        if not isinstance(self.alpha, torch.nn.Parameter):
            out += ", train_alpha=False"
        if self.activation_name != "tanh":
            out += f", activation={self.activation_name!r}"
        return out


def transformed(net: NN, inputs: torch.Tensor) -> torch.Tensor:
    """``net.trunk(inputs)`` between DeepXDE's input transform ``x -> T(x)`` and
    output transform ``(x, y) -> T(x, y)``: the one forward of a network with a
    ``trunk``."""
    x = inputs
    if net._input_transform is not None:
        x = net._input_transform(x)
    x = net.trunk(x)
    if net._output_transform is not None:
        x = net._output_transform(inputs, x)
    return x


def _apply_stages(stages: Sequence, x: torch.Tensor) -> torch.Tensor:
    """``x`` through every stage of ``stages`` in order."""
    for stage in stages:
        x = stage(x)
    return x


class MLP(NN):
    """Fully connected network, ``FNN``'s signature, selectable initialisation.

    Unlike ``dde.nn.FNN`` it can keep PyTorch's default initialisation
    (``kernel_initializer="torch-default"``, non-zero biases); with any DeepXDE
    initializer name it matches ``FNN`` (initialised weights, zero biases).

    Args:
        layer_sizes: ``[d_in, w_1, ..., w_L, d_out]``.
        activation: DeepXDE activation name or callable, or a list of
            ``len(layer_sizes) - 1`` of them (the last one is unused: linear output,
            as in ``FNN``).
        kernel_initializer: DeepXDE initializer name/callable or ``"torch-default"``.
        regularization: as in ``FNN`` (e.g. ``["l2", 1e-5]``); handled by
            ``dde.Model``.
    """

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
    ):
        super().__init__()
        if not hasattr(self, "plan"):  # a subclass may have made its own
            self.plan = mlp_plan(layer_sizes, activation)
        self.layer_sizes = list(self.plan.sizes)
        self.activation = _get_activations(activation, len(self.layer_sizes) - 1)
        # a trainable activation ("LAAF-n NAME") registered once, so that its
        # parameter is trained (``dde.nn.FNN`` registers its one function alike)
        self.trainable_activations = torch.nn.ModuleList(
            _trainable(self.activation[: self.plan.hidden])
        )
        self.regularizer = regularization
        self.kernel_initializer = kernel_initializer  # recorded in run metadata
        init = _get_initializer(kernel_initializer)
        dtype = config.real(torch)
        self.linears = torch.nn.ModuleList(
            torch.nn.Linear(n_in, n_out, dtype=dtype)
            for n_in, n_out in zip(self.layer_sizes[:-1], self.layer_sizes[1:])
        )
        self._blocks_init(init)

    def _blocks_init(self, init: Callable | None) -> None:
        _initialize(self.modules(), init)

    def stages(self) -> list:
        """The network between its transforms, as the stages ``forward`` applies
        in order: each hidden ``Linear`` followed by :meth:`_layer_stages`, then
        the output ``Linear``. The one definition of the forward pass: the
        stacked and Taylor-mode forms are derived from it."""
        out = []
        for j, linear in enumerate(self.linears[:-1]):
            out += [linear, *self._layer_stages(j)]
        return out + [self.linears[-1]]

    def _layer_stages(self, j: int) -> list:
        """Stages after hidden ``Linear`` ``j``, as the plan says
        (:meth:`~.plan.Plan.stages`): its activation and/or its block."""
        blocks: Sequence = getattr(self, "blocks", ())  # an MLP has none
        return [
            self.activation[j]
            if kind == ACTIVATION
            else blocks[self.plan.block_index(j)]
            for kind in self.plan.stages(j)
        ]

    def extra_repr(self) -> str:
        """The hidden activation where it is not tanh (``activation='LAAF-10
        tanh'``) and whether a trainable one has a slope per layer."""
        names = {_activation_name(a) for a in self.activation[: self.plan.hidden]}
        out = "" if names <= {"tanh"} else f"activation={', '.join(sorted(names))!r}"
        if len(self.trainable_activations) > 1:
            out += ", one slope per layer"
        return out

    def trunk(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`stages` applied to ``x`` (``forward`` without the transforms)."""
        return _apply_stages(self.stages(), x)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return transformed(self, inputs)


class LNN(MLP):
    """Liquid residual network (LNN-PINN), a drop-in for ``dde.nn.FNN``.

    ``layout="standard"`` (paper's main layout)::

        z_i = act(W_{i-1} h_{i-1} + b_{i-1});  h_i = L_i(z_i),  i = 1..L
        out = W_L h_L + b_L

    ``layout="reduced"`` (paper's heat network; equal hidden widths required)::

        h_i = L_i(W_{i-1} h_{i-1} + b_{i-1}),  i = 1..L;   out = W_L h_L + b_L

    where ``L_i(h) = h + alpha_i * sigma(A_i h + c_i)`` (:class:`LiquidBlock`),
    ``sigma = tanh`` in the paper (whose networks are tanh networks). By default
    ``sigma`` is the stage's own hidden activation (``block_activation="same"``);
    with ``"reduced"`` the blocks' ``sigma`` is then the only nonlinearity.

    Args:
        layer_sizes: ``[d_in, w_1, ..., w_L, d_out]``, as :class:`MLP`.
        activation: as :class:`MLP` (``dde.nn.FNN``).
        kernel_initializer: as :class:`MLP`; it applies to every ``Linear``,
            those inside the blocks included.
        regularization: as :class:`MLP` (see the note below).
        alpha_init: initial value of every ``alpha`` channel (finite).
        layout: ``"standard"`` or ``"reduced"``.
        block_activation: ``sigma`` of the blocks: ``"same"`` (default) for the
            hidden ``activation`` of each stage (``activation[i]`` when a list is
            given; the paper's tanh for a tanh network), or a DeepXDE activation
            name or callable (e.g. ``"tanh"``, the paper's block in any network).
        residual: the blocks' identity path (``False``: ``h <- alpha * sigma(A h +
            c)``; an ablation).
        train_alpha: train the gates (``False``: fixed at ``alpha_init``).
        block_layers: the hidden layers (0-based) that carry a block; default
            all. In the reduced layout a layer without a block applies its hidden
            activation instead.

    Note:
        DeepXDE's ``"l2"`` regularization becomes Adam weight decay and so also
        decays ``alpha``; the paper uses none.
    """

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        *,
        alpha_init: float = 0.5,
        layout: str = "standard",
        block_activation: Activation = "same",
        residual: bool = True,
        train_alpha: bool = True,
        block_layers: Sequence[int] | None = None,
    ):
        self.plan = lnn_plan(
            layer_sizes,
            activation,
            alpha_init=alpha_init,
            layout=layout,
            block_activation=block_activation,
            residual=residual,
            train_alpha=train_alpha,
            block_layers=block_layers,
        )
        self.alpha_init = self.plan.alpha_init
        self.layout = layout
        self.block_activation = block_activation
        self.residual = self.plan.residual
        self.train_alpha = self.plan.train_alpha
        self.block_layers = self.plan.block_layers
        sizes = list(self.plan.sizes)
        super().__init__(sizes, activation, kernel_initializer, regularization)

    def _blocks_init(self, init: Callable | None) -> None:
        self.blocks = _blocks(self.plan, self.activation)
        _initialize(self.modules(), init)

    def extra_repr(self) -> str:
        """Layout, ``alpha_init`` and the blocks' ``sigma`` as resolved (one name,
        or one per block where they differ), e.g. ``block_activation='tanh'``."""
        # torch types a block's attributes Tensor | Module: these are str
        names: list[str] = [b.activation_name for b in self.blocks]  # type: ignore[misc]
        if not names:  # no hidden layer, no block
            names = [_activation_name(self.block_activation)]
        shown = names[0] if len(set(names)) == 1 else names
        out = (
            f"layout={self.layout!r}, alpha_init={self.alpha_init}, "
            f"block_activation={shown!r}"
        )
        if not self.residual:
            out += ", residual=False"
        if not self.train_alpha:
            out += ", train_alpha=False"
        if self.block_layers != tuple(range(len(self.layer_sizes) - 2)):
            out += f", block_layers={list(self.block_layers)}"
        return out


class ReZero(MLP):
    """ReZero residual network (Bachlechner et al. 2020, "ReZero is all you
    need") in the LNN's trunk, standard layout::

        z_i = act(W_{i-1} h_{i-1} + b_{i-1});  h_i = z_i + alpha_i sigma(A_i z_i + c_i)
        out = W_L h_L + b_L

    with ONE scalar ``alpha_i`` per block (:class:`LiquidBlock` with
    ``per_channel=False``), initialised to 0: at the start the network is the plain
    :class:`MLP` of the same trunk. ``MLP``'s parameters plus ``w_i^2 + w_i + 1``
    per block.

    Args:
        layer_sizes: ``[d_in, w_1, ..., w_L, d_out]``, as :class:`MLP`.
        activation: as :class:`MLP`.
        kernel_initializer: as :class:`MLP`, for every ``Linear``.
        regularization: as :class:`MLP`.
        alpha_init: initial value of every ``alpha_i`` (finite; 0 is ReZero's).
        block_activation: ``sigma`` of the blocks, as :class:`LNN`'s.
    """

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: Activation | Sequence[Activation],
        kernel_initializer: Initializer,
        regularization: Regularization = None,
        *,
        alpha_init: float = 0.0,
        block_activation: Activation = "same",
    ):
        self.plan = rezero_plan(
            layer_sizes,
            activation,
            alpha_init=alpha_init,
            block_activation=block_activation,
        )
        self.alpha_init = self.plan.alpha_init
        self.block_activation = block_activation
        super().__init__(layer_sizes, activation, kernel_initializer, regularization)

    def _blocks_init(self, init: Callable | None) -> None:
        self.blocks = _blocks(self.plan, self.activation)
        _initialize(self.modules(), init)

    def extra_repr(self) -> str:
        return (
            f"alpha_init={self.alpha_init}, block_activation={self.block_activation!r}"
        )


# TORCH_DEFAULT initializes the liquid parts as PyTorch does
LiquidDeepONet = liquid_deeponet(LNN, DeepONet, (TORCH_DEFAULT,))
LiquidDeepONetCartesianProd = liquid_deeponet(
    LNN, DeepONetCartesianProd, (TORCH_DEFAULT,)
)


def _blocks(plan: Plan, hidden_activations: list) -> torch.nn.ModuleList:
    """The plan's blocks, each with its ``sigma`` (:meth:`~.plan.Plan.sigma`)."""
    return torch.nn.ModuleList(
        LiquidBlock(
            plan.sizes[j + 1],
            plan.alpha_init,
            plan.sigma(j, hidden_activations),
            per_channel=plan.per_channel,
            residual=plan.residual,
            train_alpha=plan.train_alpha,
        )
        for j in plan.block_layers
    )


# --- argument checks ---------------------------------------------------------------


def _get_activations(activation: Activation | Sequence[Activation], n: int) -> list:
    """``n`` resolved activations (their count checked by the plan): one function
    (one trainable ``LAAF``) for all layers, as ``dde.nn.FNN``, or one each."""
    if isinstance(activation, (list, tuple)):
        return [_get_activation(a) for a in activation]
    return [_get_activation(activation)] * n


def _trainable(functions: Sequence) -> list:
    """The distinct modules with parameters among ``functions`` (one ``LLAAF``
    shared by every layer counts once)."""
    out: list = []
    for fn in functions:
        module = isinstance(fn, torch.nn.Module) and any(True for _ in fn.parameters())
        if module and all(fn is not seen for seen in out):
            out.append(fn)
    return out


def tanh(x: torch.Tensor) -> torch.Tensor:
    """The hidden activation ``tanh``: ``torch.tanh``, the function every network
    here built with ``"tanh"`` (or ``torch.tanh``, DeepXDE's ``tanh``) applies, in
    its forward and in its jets (the one name the Taylor-mode rules look up).

    ``benchmarks/activations.py`` compares it with ``2 sigmoid(2x) - 1``: which is
    faster depends on the CPU's math library (on one machine of this project
    ``torch.tanh`` took three times as long, on the next one a quarter), so the
    networks use PyTorch's own, as DeepXDE's ``FNN`` and the authors' code do."""
    return torch.tanh(x)


def _get_activation(identifier: object, name: str = "activation") -> Callable:
    """DeepXDE's activation for ``identifier`` (checked, a ValueError naming
    ``name``), PyTorch's ``tanh`` as :func:`tanh`."""
    check_activation_identifier(identifier, name)
    fn = activations.get(identifier)
    return tanh if fn in (torch.tanh, torch.nn.functional.tanh, bkd.tanh) else fn


def _activation_name(identifier: object) -> str:
    """A name for ``extra_repr``: the string itself, or the callable's name
    (``"tanh"`` whatever its case, ``"linear"`` for ``None``, ``"LAAF-n f"`` for
    DeepXDE's L-LAAF wrapper)."""
    if identifier is None:
        return "linear"
    if isinstance(identifier, dde_utils.LLAAF):
        return f"LAAF-{identifier.n:g} {_activation_name(identifier.activation)}"
    name = identifier if isinstance(identifier, str) else None
    name = name or getattr(identifier, "__name__", None) or type(identifier).__name__
    return "tanh" if name.lower() == "tanh" else name


def _get_initializer(identifier: Initializer) -> Callable | None:
    """DeepXDE's initializer, or None for :data:`TORCH_DEFAULT`."""
    return check_initializer(identifier, also=(TORCH_DEFAULT,))


def _initialize(modules: Iterable[torch.nn.Module], init: Callable | None) -> None:
    """DeepXDE convention: ``init`` on every Linear weight, zero biases.

    ``init is None`` ("torch-default") leaves PyTorch's initialisation untouched.
    """
    if init is None:
        return
    for m in modules:
        if isinstance(m, torch.nn.Linear):
            init(m.weight)
            torch.nn.init.zeros_(m.bias)
