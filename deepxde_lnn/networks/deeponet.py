"""Deep operator networks whose branch and/or trunk are liquid residual networks:
what every backend's shares (the argument checks and the part builders,
:class:`LiquidParts`); each backend's module declares its two classes from it.

``LiquidDeepONet`` and ``LiquidDeepONetCartesianProd`` are DeepXDE's
``dde.nn.DeepONet`` and ``dde.nn.DeepONetCartesianProd`` (same arguments, same
forward pass, same multi-output strategies), with each branch or trunk built from
``layer_sizes`` as an :class:`~.pytorch.LNN` instead of an ``FNN`` where ``liquid``
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

import inspect
from collections.abc import Mapping, Sequence

from ..checks import check_choice, check_int
from .limits import check_parameters, dense_parameters
from .plan import (
    Activation,
    Initializer,
    Regularization,
    check_activation_identifier,
    check_initializer,
    check_layer_sizes,
)

__all__ = ["LIQUID_PARTS", "LiquidParts", "ARGS", "liquid_deeponet"]

#: The parts of a DeepONet that can be liquid.
LIQUID_PARTS = ("branch", "trunk")
#: DeepXDE's ways to give several outputs, with what each asks of the branch's and
#: the trunk's last widths ``b`` and ``t`` for ``n`` outputs (None: one output)
STRATEGIES = {
    None: (lambda b, t, n: b == t, "equal"),
    "independent": (lambda b, t, n: b == t, "equal"),
    "split_both": (
        lambda b, t, n: b == t and t % n == 0,
        "equal and a multiple of num_outputs",
    ),
    "split_branch": (lambda b, t, n: b == n * t, "branch = num_outputs x trunk"),
    "split_trunk": (lambda b, t, n: t == n * b, "trunk = num_outputs x branch"),
}


def _check_liquid(liquid: str | Sequence[str]) -> tuple[str, ...]:
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


def _own_branch(layer_sizes_branch: Sequence) -> bool:
    """Whether the branch is a network of the user's, ``(dim, f)`` (DeepXDE's
    test: its second entry is callable)."""
    return (
        isinstance(layer_sizes_branch, Sequence)
        and len(layer_sizes_branch) >= 2
        and callable(layer_sizes_branch[1])
    )


def _check_parts(
    branch: Sequence,
    trunk: Sequence[int],
    activation: Activation | Mapping[str, Activation],
    initializer: Initializer,
    n: int,
    strategy: str | None,
    liquid: tuple[str, ...],
    own_initializers: tuple[str, ...] = (),
) -> None:
    """DeepXDE's DeepONet arguments, each a ValueError naming it where it cannot
    build or run (DeepXDE itself raises an IndexError, a KeyError or an
    AssertionError, builds a network of no parameters for no output, or fails
    only at the first forward pass on widths that do not fit)."""
    own = _own_branch(branch)
    if own and "branch" in liquid:
        raise ValueError(
            "liquid: the branch is a network of your own (layer_sizes_branch[1] "
            "is callable) and is used as it is; leave 'branch' out of liquid"
        )
    parts = {"layer_sizes_trunk": check_layer_sizes(trunk, "layer_sizes_trunk")}
    if not own:
        parts["layer_sizes_branch"] = check_layer_sizes(branch, "layer_sizes_branch")
    for name, sizes in parts.items():  # DeepXDE's FNN too: before it is built
        check_parameters(dense_parameters(sizes), name)
    b = None if own else parts["layer_sizes_branch"][-1]
    t = parts["layer_sizes_trunk"][-1]
    if isinstance(activation, dict):
        if set(activation) != set(LIQUID_PARTS):
            raise ValueError(
                f"activation: a dict names the branch's and the trunk's, "
                f"{{'branch': ..., 'trunk': ...}}; got keys {list(activation)}"
            )
        for part, a in activation.items():
            check_activation_identifier(a, f"activation[{part!r}]")
    else:
        check_activation_identifier(activation)
    check_initializer(initializer, also=own_initializers)
    plain = [p for p in LIQUID_PARTS if p not in liquid and not (own and p == "branch")]
    if initializer in own_initializers and plain:
        raise ValueError(
            f"kernel_initializer: {initializer!r} applies to liquid parts only; "
            f"DeepXDE's FNN ({' and '.join(plain)}) needs a DeepXDE initializer"
        )
    n = check_int(n, "num_outputs", 1)
    if strategy is not None:
        check_choice(strategy, "multi_output_strategy", [s for s in STRATEGIES if s])
    if n == 1:  # DeepXDE refuses a strategy with one output itself
        strategy = None
    elif strategy is None:  # DeepXDE's default for several outputs
        strategy = "independent"
    fits, need = STRATEGIES[strategy]
    if b is not None and not fits(b, t, n):
        how = f"{strategy}, num_outputs={n}" if strategy else "one output"
        raise ValueError(
            f"layer_sizes_branch, layer_sizes_trunk: their last widths must be "
            f"{need} ({how}); got branch {b}, trunk {t}"
        )


class LiquidParts:
    """The branch and trunk builders of DeepXDE's DeepONets, liquid where asked:
    a mixin before a backend's ``DeepONet``/``DeepONetCartesianProd``, whose
    arguments it takes and checks, with ``liquid`` and the LNNs' options as
    keywords. A subclass names
    its backend's LNN as ``_lnn`` (and the initializers only it knows as
    ``_own_initializers``)."""

    _lnn: type
    _own_initializers: tuple[str, ...] = ()
    # set by the backend's DeepONet, which follows this mixin
    activation_branch: Activation
    activation_trunk: Activation
    kernel_initializer: Initializer

    def __init__(
        self,
        layer_sizes_branch: Sequence,
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
        _check_parts(
            layer_sizes_branch,
            layer_sizes_trunk,
            activation,
            kernel_initializer,
            num_outputs,
            multi_output_strategy,
            self.liquid,
            self._own_initializers,
        )
        self.lnn_options = dict(
            alpha_init=alpha_init, layout=layout, block_activation=block_activation
        )
        args: list = [
            layer_sizes_branch,
            layer_sizes_trunk,
            activation,
            kernel_initializer,
        ]
        args += [num_outputs, multi_output_strategy]
        if "regularization" in inspect.signature(super().__init__).parameters:
            args.append(regularization)
        elif regularization is not None:
            raise ValueError(
                "regularization: DeepXDE's DeepONet takes none on this backend"
            )
        super().__init__(*args)

    # super(): the backend's DeepONet, after this mixin (unknown to mypy)
    def build_branch_net(self, layer_sizes_branch: Sequence) -> object:
        if "branch" not in self.liquid:
            return super().build_branch_net(layer_sizes_branch)  # type: ignore[misc]
        return self._part(layer_sizes_branch, self.activation_branch)

    def build_trunk_net(self, layer_sizes_trunk: Sequence[int]) -> object:
        if "trunk" not in self.liquid:
            return super().build_trunk_net(layer_sizes_trunk)  # type: ignore[misc]
        return self._part(layer_sizes_trunk, self.activation_trunk)

    def _part(self, layer_sizes: Sequence, activation: Activation) -> object:
        """A liquid part: the backend's LNN, with the DeepONet's regularization
        where the backend's DeepONet has one."""
        regularization = getattr(self, "regularization", None)
        return self._lnn(
            layer_sizes,
            activation,
            self.kernel_initializer,
            regularization,
            **self.lnn_options,
        )


# the arguments of both DeepONets (Google style, the end of their docstrings)
ARGS = """
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
        liquid: the parts built as the backend's ``LNN``: ``("branch", "trunk")``
            (default), ``"branch"``, ``"trunk"`` or ``()`` (DeepXDE's network).
        alpha_init: those LNNs' ``alpha_init`` (the backend's ``LNN``).
        layout: those LNNs' ``layout``.
        block_activation: those LNNs' ``block_activation``.
"""


_PAIRED = """``dde.nn.DeepONet`` with liquid residual networks as branch and/or trunk.

    ``G(v)(x) = sum_k branch(v)_k trunk(x)_k + b`` for paired rows ``(v, x)``
    (``dde.data.PDEOperator``, ``Triple``); output ``(N, num_outputs)``. Its
    trainable parameters number ``k (P_branch + P_trunk) + num_outputs``, with
    ``P_LNN`` for a liquid part and ``P_FNN`` otherwise
    (:mod:`deepxde_lnn.networks.deeponet`).
"""
_CARTESIAN = """``dde.nn.DeepONetCartesianProd`` with liquid residual networks as branch
    and/or trunk.

    Every function ``v`` (rows of the branch input) at every point ``x`` (rows of
    the trunk input): ``dde.data.PDEOperatorCartesianProd``,
    ``TripleCartesianProd``; output ``(N_functions, N_points)``, with a third axis
    of ``num_outputs`` when there are several. Its trainable parameters number as
    ``LiquidDeepONet``'s.
"""


def liquid_deeponet(
    lnn: type, base: type, own_initializers: tuple[str, ...] = ()
) -> type:
    """A backend's liquid DeepONet: its DeepXDE class ``base``
    (``DeepONet`` or ``DeepONetCartesianProd``) with :class:`LiquidParts`
    building liquid parts as ``lnn``, declared in ``lnn``'s module."""
    name = f"Liquid{base.__name__}"
    doc = _CARTESIAN if base.__name__ == "DeepONetCartesianProd" else _PAIRED
    attributes = {
        "__doc__": doc + ARGS,
        "__module__": lnn.__module__,
        "__qualname__": name,
        "_lnn": lnn,
        "_own_initializers": own_initializers,
    }
    return type(name, (LiquidParts, base), attributes)
