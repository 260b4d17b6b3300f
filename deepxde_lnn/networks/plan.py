"""What the liquid networks of every DeepXDE backend share, written once: the
argument checks, the layer plan and the parameter count.

A network of ``layer_sizes = [d_in, w_1, ..., w_L, d_out]`` is ``L`` hidden stages
and an output ``Linear``. Hidden stage ``j`` (0-based) is ``Linear_j`` followed by
what :meth:`Plan.stages` says::

    ("activation",)            the plain stage (``dde.nn.FNN``'s; a layer without a block)
    ("activation", "block")    the LNN's standard layout: act(W h + b), then L_j
    ("block",)                 the reduced layout: L_j(W h + b), sigma the only nonlinearity

where ``L_j(h) = h + alpha_j * sigma_j(A_j h + c_j)`` (``alpha_j * sigma_j(...)``
without the residual path). Trainable parameters (:meth:`Plan.parameter_count`)::

    P = sum_i (n_{i-1} + 1) n_i  +  sum_{j in blocks} (w_j^2 + w_j + a_j)

with ``a_j = w_j`` for per-channel gates (the LNN's), 1 for one scalar gate
(ReZero's) and 0 for fixed gates, plus the parameters of a trainable activation
(``"LAAF-n NAME"``). Each backend's module (:mod:`.pytorch`,
:mod:`.tensorflow_compat_v1`, :mod:`.tensorflow`, :mod:`.jax`, :mod:`.paddle`)
builds its layers from a :class:`Plan` and nothing else decides what they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
from deepxde.nn import activations, initializers

from ..checks import check_bool, check_int, check_number
from .limits import (
    ALPHA_MAX,
    LAYOUTS,
    activation_base,
    check_parameters,
    dense_parameters,
)

__all__ = [
    "Activation",
    "Initializer",
    "Regularization",
    "ACTIVATION",
    "BLOCK",
    "Plan",
    "mlp_plan",
    "lnn_plan",
    "rezero_plan",
    "check_block",
    "check_layer_sizes",
    "check_block_layers",
    "check_alpha",
    "check_activation",
    "check_activation_identifier",
    "check_initializer",
    "activation_list",
    "resolve_activations",
    "is_same",
]

#: A DeepXDE activation: its name (``"tanh"``, ``"LAAF-10 sin"``) or a function
#: of the backend's tensors.
Activation = str | Callable
#: A DeepXDE initializer's name (``"Glorot normal"``) or function.
Initializer = str | Callable
#: DeepXDE's regularization, e.g. ``["l2", 1e-5]``.
Regularization = Sequence | None

#: The two kinds of stage after a hidden ``Linear``.
ACTIVATION, BLOCK = "activation", "block"


@dataclasses.dataclass(frozen=True)
class Plan:
    """A fully connected network with liquid blocks on some hidden layers.

    Attributes:
        sizes: ``[d_in, w_1, ..., w_L, d_out]``.
        activations: the hidden activations' identifiers, one per hidden layer
            (as given: names or callables; each backend resolves them).
        block_layers: the hidden layers (0-based, sorted) that carry a block.
        block_activation: the blocks' ``sigma``: ``"same"`` (each its layer's
            activation, the very function: one trainable ``LAAF`` shared) or an
            identifier (each block makes its own), see :meth:`sigma`.
        layout: ``"standard"`` or ``"reduced"``.
        alpha_init: every gate's initial value.
        per_channel: one gate per channel (the LNN's) or one scalar (ReZero's).
        residual: the blocks' identity path.
        train_alpha: the gates are trained (else fixed).
    """

    sizes: tuple[int, ...]
    activations: tuple
    block_layers: tuple[int, ...] = ()
    block_activation: object = "same"
    layout: str = "standard"
    alpha_init: float = 0.5
    per_channel: bool = True
    residual: bool = True
    train_alpha: bool = True

    def __post_init__(self):
        check_parameters(self.parameter_count(), "layer_sizes")  # nothing built yet

    @property
    def hidden(self) -> int:
        """The number of hidden layers ``L``."""
        return len(self.sizes) - 2

    def stages(self, j: int) -> tuple[str, ...]:
        """What follows hidden ``Linear`` ``j``: :data:`ACTIVATION` and/or
        :data:`BLOCK`, in order."""
        if j not in self.block_layers:
            return (ACTIVATION,)
        return (BLOCK,) if self.layout == "reduced" else (ACTIVATION, BLOCK)

    def block_index(self, j: int) -> int:
        """The position of hidden layer ``j``'s block among the blocks."""
        return self.block_layers.index(j)

    def sigma(self, j: int, hidden: Sequence):
        """The ``sigma`` of hidden layer ``j``'s block, given the layers' resolved
        activations ``hidden``: ``hidden[j]`` itself for ``"same"``, else the
        identifier (for the block to resolve)."""
        return hidden[j] if is_same(self.block_activation) else self.block_activation

    def gate_shape(self, width: int) -> tuple[int, ...]:
        """The shape of a block's ``alpha``: ``(width,)`` or ``()``."""
        return (width,) if self.per_channel else ()

    def forward(
        self, x, linears: Sequence, hidden: Sequence, blocks: Sequence, after=None
    ):
        """``x`` through the network between its transforms, for any backend's
        layers (callables): each hidden ``linears[j]``, then its stages
        (``hidden[j]``, the activation; ``blocks[k]``, its block), then
        ``after(j, x)`` where given (dropout); the output ``linears[-1]``."""
        for j, linear in enumerate(linears[:-1]):
            x = linear(x)
            for kind in self.stages(j):
                step = hidden[j] if kind == ACTIVATION else blocks[self.block_index(j)]
                x = step(x)
            if after is not None:
                x = after(j, x)
        return linears[-1](x)

    def parameter_count(self) -> int:
        """Trainable parameters, trainable activations left out (module
        docstring)."""
        linears = dense_parameters(self.sizes)
        widths = [self.sizes[j + 1] for j in self.block_layers]
        return linears + sum(w * w + w + self._gates(w) for w in widths)

    def _gates(self, width: int) -> int:
        """Trainable gate parameters of a block of ``width``."""
        if not self.train_alpha:
            return 0
        return width if self.per_channel else 1


def mlp_plan(layer_sizes, activation) -> Plan:
    """The plain network (``dde.nn.FNN``'s layers), checked."""
    sizes = check_layer_sizes(layer_sizes)
    return Plan(tuple(sizes), tuple(activation_list(activation, len(sizes) - 1)[:-1]))


def lnn_plan(
    layer_sizes,
    activation,
    *,
    alpha_init: float = 0.5,
    layout: str = "standard",
    block_activation="same",
    residual: bool = True,
    train_alpha: bool = True,
    block_layers: Sequence[int] | None = None,
) -> Plan:
    """The liquid residual network's plan: every argument checked (a ValueError
    naming it), the blocks' ``sigma`` resolved from ``block_activation``."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    alpha_init = check_alpha(alpha_init)
    if not is_same(block_activation):
        check_activation_identifier(block_activation, "block_activation")
    residual = check_bool(residual, "residual")
    train_alpha = check_bool(train_alpha, "train_alpha")
    sizes = check_layer_sizes(layer_sizes)
    blocks = check_block_layers(block_layers, len(sizes) - 2)
    if layout == "reduced" and len(set(sizes[1:-1])) > 1:
        raise ValueError(
            "layer_sizes: the 'reduced' layout needs equal hidden widths, got "
            f"{list(sizes[1:-1])}"
        )
    acts = tuple(activation_list(activation, len(sizes) - 1))
    return Plan(
        tuple(sizes),
        acts[:-1],
        blocks,
        block_activation,
        layout,
        alpha_init,
        residual=residual,
        train_alpha=train_alpha,
    )


def rezero_plan(
    layer_sizes, activation, *, alpha_init: float = 0.0, block_activation="same"
) -> Plan:
    """ReZero's plan: a block with one scalar gate on every hidden layer, the
    standard layout."""
    alpha_init = check_alpha(alpha_init)
    if not is_same(block_activation):
        check_activation_identifier(block_activation, "block_activation")
    plan = mlp_plan(layer_sizes, activation)
    return dataclasses.replace(
        plan,
        block_layers=tuple(range(plan.hidden)),
        block_activation=block_activation,
        alpha_init=alpha_init,
        per_channel=False,
    )


# --- argument checks ---------------------------------------------------------------


def check_block(width, alpha_init, activation, residual, train_alpha) -> tuple:
    """A liquid block's arguments, checked alike on every backend (a ValueError
    naming the first bad one): ``(width, alpha_init, residual, train_alpha)``."""
    width = check_int(width, "width", 1)
    check_parameters(width * width + width, "width")  # A and c: nothing built yet
    alpha_init = check_alpha(alpha_init)
    residual = check_bool(residual, "residual")
    train_alpha = check_bool(train_alpha, "train_alpha")
    check_activation_identifier(activation)
    return width, alpha_init, residual, train_alpha


def check_layer_sizes(layer_sizes, name: str = "layer_sizes") -> list[int]:
    """``layer_sizes`` as a list of integers >= 1, input and output at least; a
    ValueError naming ``name`` otherwise."""
    if isinstance(layer_sizes, np.ndarray) and layer_sizes.ndim == 1:
        layer_sizes = layer_sizes.tolist()  # as FNN accepts it
    if isinstance(layer_sizes, (str, bytes)) or not isinstance(layer_sizes, Sequence):
        raise ValueError(f"{name} must be a list of integers, got {layer_sizes!r}")
    if len(layer_sizes) < 2:
        raise ValueError(
            f"{name} needs at least input and output sizes, got {layer_sizes!r}"
        )
    return [check_int(n, f"{name}[{i}]", 1) for i, n in enumerate(layer_sizes)]


def check_block_layers(block_layers, hidden: int) -> tuple[int, ...]:
    """``block_layers`` as sorted distinct hidden-layer indices in ``[0, hidden)``
    (None: all); a ValueError naming it otherwise."""
    if block_layers is None:
        return tuple(range(hidden))
    if isinstance(block_layers, (str, bytes)) or not isinstance(block_layers, Sequence):
        raise ValueError(
            f"block_layers must be a list of hidden-layer indices, got {block_layers!r}"
        )
    out = [check_int(j, "block_layers", 0, hidden - 1) for j in block_layers]
    if len(set(out)) != len(out):
        raise ValueError(f"block_layers: each layer once, got {list(block_layers)}")
    return tuple(sorted(out))


def check_alpha(alpha_init) -> float:
    """``alpha_init``, a finite number of magnitude at most ``ALPHA_MAX``."""
    return check_number(alpha_init, "alpha_init", -ALPHA_MAX, ALPHA_MAX)


def is_same(identifier) -> bool:
    """Whether ``block_activation`` is ``"same"`` (each layer's own)."""
    return isinstance(identifier, str) and identifier == "same"


def activation_list(activation, n: int) -> list:
    """``n`` activation identifiers (one per layer, the output's last), each
    known to DeepXDE: ``activation`` repeated, or its list of ``n``."""
    if isinstance(activation, (list, tuple)):
        if len(activation) != n:
            raise ValueError(
                f"activation: a list needs {n} entries (one per layer), "
                f"got {len(activation)}"
            )
        for a in activation:
            check_activation_identifier(a)
        return list(activation)
    check_activation_identifier(activation)
    return [activation] * n


def check_activation(text: str, name: str = "activation") -> str:
    """``text`` if it names a DeepXDE activation exactly: ``NAME`` or
    ``LAAF-n NAME`` (:func:`~.limits.activation_base`), else a ValueError naming
    ``name`` (DeepXDE itself ignores trailing words)."""
    base = activation_base(text, name)
    try:
        activations.get(base)
    except KeyError:
        raise ValueError(f"{name} {text!r} is not known to DeepXDE") from None
    return text


def check_activation_identifier(identifier, name: str = "activation") -> None:
    """A name (:func:`check_activation`) or a callable DeepXDE takes; a
    ValueError naming ``name`` otherwise. A name is looked up by its base only: a
    trainable ``"LAAF-n NAME"`` makes its variable when the network is built."""
    if isinstance(identifier, str):
        check_activation(identifier, name)
        return
    try:
        activations.get(identifier)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise ValueError(
            f"{name} {identifier!r} is not known to DeepXDE ({err})"
        ) from None


def resolve_activations(activation, n: int) -> list:
    """DeepXDE's functions for ``n`` layers (checked by the plan): one function
    for all (one trainable ``LAAF`` shared, as ``dde.nn.FNN``), or one each."""
    if isinstance(activation, (list, tuple)):
        return [activations.get(a) for a in activation]
    return [activations.get(activation)] * n


def check_initializer(identifier, also: Sequence[str] = ()):
    """DeepXDE's initializer for ``identifier`` (None for one of ``also``, the
    backend's own choices); a ValueError naming ``kernel_initializer``
    otherwise."""
    if isinstance(identifier, str) and identifier in also:
        return None
    try:
        return initializers.get(identifier)
    except (KeyError, TypeError, ValueError) as err:
        extra = f" and is not {' or '.join(map(repr, also))}" if also else ""
        raise ValueError(
            f"kernel_initializer {identifier!r} is not known to DeepXDE{extra} ({err})"
        ) from None
