"""The parameter-matched plain network: the :class:`~.pytorch.MLP` with a network's
depth (inputs, outputs and number of hidden layers) and equal hidden widths ``W``,
``W`` chosen so that its trainable parameters are nearest another network's::

    P_MLP(W) = (d_in + 1) W + (L - 1)(W + 1) W + (W + 1) d_out    (L >= 1 hidden)

It answers "is it the blocks, or only the extra parameters?": an :class:`~.pytorch.LNN`
of widths ``w`` has ``w^2 + 2w`` more parameters per hidden layer than its plain
twin (2.3-2.5 times as many at the paper's sizes).

    net = deepxde_lnn.LNN([2] + [64] * 4 + [1], "tanh", "Glorot normal")
    plain = deepxde_lnn.matched(net, "tanh", "Glorot normal")  # widths 98

Counts are taken from networks built on PyTorch's meta device (no memory, no
values, the random state left as it was), so they are the networks' own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from ..checks import check_int
from .limits import MAX_PARAMETERS, dense_parameters
from .plan import check_layer_sizes
from .pytorch import (
    LNN,
    MLP,
    TORCH_DEFAULT,
    Activation,
    Initializer,
    Regularization,
)

__all__ = [
    "count_built",
    "layer_sizes_of",
    "matched",
    "matched_sizes",
    "read_sizes",
    "trainable",
]


def trainable(net: torch.nn.Module) -> int:
    """Trainable parameters of ``net`` (the sum of their ``numel``), as DeepXDE's
    ``num_trainable_parameters`` counts them, for any ``torch.nn.Module``."""
    return sum(p.numel() for p in net.parameters() if p.requires_grad)


def count_built(build: Callable[[], torch.nn.Module]) -> int:
    """Trainable parameters of the network ``build()`` makes, built on the meta
    device: no memory, no values, no draw from the random state."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        return trainable(build())


def layer_sizes_of(net: torch.nn.Module) -> list[int]:
    """``[d_in, w_1, ..., w_L, d_out]`` of a fully connected network
    (:func:`read_sizes`); a ValueError naming ``net`` otherwise."""
    sizes = read_sizes(net)
    if sizes is None:
        raise ValueError(
            f"net: cannot read the layer sizes of a {type(net).__name__} (no "
            "layer_sizes, no linears); give its layer sizes and target=its count"
        )
    return sizes


def read_sizes(net: torch.nn.Module) -> list[int] | None:
    """``[d_in, w_1, ..., w_L, d_out]``: a network's ``layer_sizes``
    (:class:`~.pytorch.MLP`, :class:`~.pytorch.LNN`, ...) or read from its
    ``linears`` when they are ``torch.nn.Linear`` layers in a row (``dde.nn.FNN``);
    None for a network of another shape."""
    sizes = getattr(net, "layer_sizes", None)
    if sizes is not None:
        return list(sizes)
    layers = getattr(net, "linears", None)
    if not isinstance(layers, torch.nn.ModuleList) or not layers:
        return None
    linears = [m for m in layers if isinstance(m, torch.nn.Linear)]
    if len(linears) < len(layers):
        return None
    return [linears[0].in_features, *(m.out_features for m in linears)]


def matched_sizes(
    net: torch.nn.Module | Sequence[int],
    target: int | None = None,
    *,
    activation: Activation = "tanh",
    **lnn_options: Any,
) -> list[int]:
    """The layer sizes ``[d_in, W, ..., W, d_out]`` of the plain :class:`~.pytorch.MLP`
    with ``net``'s depth whose parameter count is nearest ``target`` (ties to the
    smaller ``W``).

    Args:
        net: a built network (``LNN``, ``ReZero``, ``MLP``, ``dde.nn.FNN``...):
            its trainable parameters are the target; or layer sizes
            ``[d_in, w_1, ..., w_L, d_out]``: the target is the count of
            ``LNN(layer_sizes, activation, ..., **lnn_options)``.
        target: the parameter count to match instead (at most
            :data:`~.limits.MAX_PARAMETERS`).
        activation: the MLP's (and that LNN's) activation; it only counts when
            trainable (``"LAAF-n NAME"``).
        **lnn_options: ``alpha_init``, ``layout``, ``block_activation`` of that
            LNN.

    Returns:
        The layer sizes; a network without hidden layers is its own match:
        ``[d_in, d_out]``.
    """
    if target is not None:  # more is a typo (and overflows the width search)
        target = check_int(target, "target", 1, MAX_PARAMETERS)
    if isinstance(net, torch.nn.Module):
        if lnn_options:
            raise ValueError(
                f"{', '.join(lnn_options)}: LNN options apply to layer sizes, not to "
                "a built network"
            )
        sizes = layer_sizes_of(net)
        target = trainable(net) if target is None else target
    else:
        sizes = check_layer_sizes(net)
        # the fully connected layers alone, counted before anything is built
        if target is None and dense_parameters(sizes) <= MAX_PARAMETERS:
            target = count_built(
                lambda: LNN(sizes, activation, TORCH_DEFAULT, **lnn_options)
            )
    if target is None or not 1 <= target <= MAX_PARAMETERS:
        got = "more" if target is None else f"{target:,}"
        raise ValueError(
            f"net: the network to match must have 1 to {MAX_PARAMETERS:,} "
            f"trainable parameters; that of layer sizes {sizes} has {got}"
        )
    depth = len(sizes) - 2
    if depth == 0:
        return list(sizes)

    def shape(width: int) -> list[int]:
        return [sizes[0], *[width] * depth, sizes[-1]]

    def count(width: int) -> int:
        dense = dense_parameters(shape(width))
        if dense > MAX_PARAMETERS:  # past any target, and too many to build
            return dense
        return count_built(lambda: MLP(shape(width), activation, TORCH_DEFAULT))

    hi = 1  # the count grows with the width: doubling, then bisection, for the
    while count(hi) < target:  # smallest width with at least the target's count
        hi *= 2
    lo = hi // 2 + 1 if hi > 1 else 1
    while lo < hi:
        mid = (lo + hi) // 2
        if count(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    near = range(max(lo - 1, 1), lo + 1)
    return shape(min(near, key=lambda w: (abs(count(w) - target), w)))


def matched(
    net: torch.nn.Module | Sequence[int],
    activation: Activation,
    kernel_initializer: Initializer,
    regularization: Regularization = None,
    *,
    target: int | None = None,
    **lnn_options: Any,
) -> MLP:
    """The plain :class:`~.pytorch.MLP` (``dde.nn.FNN``'s signature and forward pass)
    with ``net``'s depth and the parameter count nearest ``net``'s (or
    ``target``): :func:`matched_sizes`, built.

    Args:
        net: a built network or layer sizes, as :func:`matched_sizes` takes it.
        activation: the MLP's activation, as ``dde.nn.FNN``'s.
        kernel_initializer: the MLP's initializer (or ``"torch-default"``).
        regularization: as ``dde.nn.FNN``'s.
        target: the parameter count to match instead of ``net``'s.
        **lnn_options: with layer sizes, ``alpha_init``, ``layout`` and
            ``block_activation`` of the LNN whose count is matched.

    Returns:
        The parameter-matched plain network.
    """
    sizes = matched_sizes(net, target, activation=activation, **lnn_options)
    return MLP(sizes, activation, kernel_initializer, regularization)
