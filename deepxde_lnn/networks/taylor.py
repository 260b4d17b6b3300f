"""Taylor-mode (jet) input derivatives of :class:`~deepxde_lnn.networks.pytorch.MLP` and its kin,
and of :class:`~deepxde_lnn.networks.pirate.PirateNet`.

Instead of nesting reverse-mode ``torch.autograd.grad`` calls (DeepXDE's
``dde.grad.hessian`` of a hessian for a 4th derivative), the input is moved along
a straight line ``x(t) = x0 + t v`` and a truncated Taylor polynomial in ``t`` is
pushed forward through the network, layer by layer::

    h(t) = h_0 + h_1 t + h_2 t^2 + ... + h_K t^K,   h_k = (1/k!) d^k h/dt^k |_{t=0}

**Representation:** normalised Taylor coefficients ``h_k`` (not the derivatives
``d^k h/dt^k``); the public functions convert at the end,
``D_v^k u = k! u_k``. The rules, coefficient-wise:

* ``Linear``: ``z_k = W h_k`` for ``k >= 1`` and ``z_0 = W h_0 + b``.
* the product of two series is the Cauchy product ``(ab)_k = sum_{i=0}^{k} a_i
  b_{k-i}`` (:func:`_product`; PirateNet's gates, inside the rules otherwise).
* sums and scalings by ``t``-independent factors (``alpha``) act on each
  coefficient; the input has ``x_0 = x``, ``x_1 = v`` and ``x_k = 0`` for ``k >= 2``
  (structural zeros are tracked as ``None`` and cost nothing).
* a pointwise function ``y = f(z)``: with ``d(t) = z(t) - z_0`` (no constant term),
  ``f(z_0 + d) = sum_m f^(m)(z_0)/m! d^m``; as ``d^m = O(t^m)`` (Faa di Bruno),
  ``y_0 = f(z_0)`` and ``y_k = sum_{m=1..k} g_m [d^m]_k`` with ``g_m = f^(m)(z_0)/m!``,
  where ``[d^m]_k`` are the Cauchy-product powers (see :func:`_compose`).
* random Fourier features ``[cos(F h), sin(F h)]``
  (:class:`~deepxde_lnn.networks.fourier.FourierFeatures`): ``F``'s linear rule,
  then cos's and sin's rules, their coefficients side by side.
* a residual block ``h + alpha * F(h)`` (the liquid block, ``F = sigma(A h + c)``
  with any supported ``sigma``; tanh in the paper) is ``F``'s own rules, a scale by
  ``alpha`` and an add.
* PirateNet's gates and blocks (:mod:`~deepxde_lnn.networks.pirate`): ``U``,
  ``V`` by the linear and activation rules, each gate ``z = V + f (U - V)`` by the
  product rule, ``h + alpha (r - h)`` coefficient-wise (the ``pirate`` step).

The rules are applied to the network's declared stages
(:meth:`~deepxde_lnn.networks.pytorch.MLP.stages`, the list ``forward`` runs), one rule per stage
type (``Linear``, :class:`~deepxde_lnn.networks.pytorch.LiquidBlock`, pointwise activations), so
any network built from those stages has jets with no code of its own. A network
that is not a list of stages has a rule of its own in ``_NET_RULES`` (PirateNet's:
its gates enter every block). A stage of
another type needs its rule in ``_STAGE_RULES``; without one, jets raise
:class:`MissingRule` naming that table, and a run's residuals fall back to nested
autograd with a warning (:func:`warn_missing_rule`).

Several directions share one propagation: the primal ``h_0`` (shape ``(N, w)``) and
the factors ``g_m`` are computed once, and the coefficients of ``D`` directions are
stacked along a leading dimension, ``(D, N, w)`` (the directions act as a batch).
Directions may stop at different orders: sorted by decreasing order, coefficient
``k`` only carries the first rows, those that need it (:class:`_Layout`). For a
linear combination of top-order derivatives (Laplacian, beam operator) only their
weighted sum is carried ("collapsed" Taylor mode). Everything is ordinary
differentiable torch code: parameter gradients of a loss built from jets come from
the usual ``backward``; dtype and device follow ``x`` and the parameters.

Supported activations (hidden layers and liquid blocks): tanh, sin, cos, sigmoid,
SiLU/swish, GELU (exact erf form), the identity, and DeepXDE's L-LAAF wrapper
around any of these; others can be added with :func:`register_activation`. An
output transform ``q = T(x, u)`` (row by row, as DeepXDE's) is followed to first
order by forward mode (``q_1 = T'(x, u)[v, u_1]``, a ``torch.func.jvp``); higher
orders through it raise :class:`TransformOrder` before any propagation (a run's
residuals that need them fall back to nested autograd, term by term, with a
warning: :func:`warn_nested`), and input transforms are not supported
(``ValueError``).
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from deepxde import backend as bkd
from deepxde import utils as dde_utils
from deepxde.nn import activations as dde_activations

from .fourier import FourierFeatures
from .pirate import PirateBlock, PirateNet
from .pytorch import MLP, LiquidBlock, tanh

__all__ = [
    "directional_derivatives",
    "taylor_coefficients",
    "laplacian",
    "pure_derivatives",
    "pure_derivative_combination",
    "register_activation",
    "MissingRule",
    "STRATEGIES",
    "TRANSFORM_ORDER",
    "TransformOrder",
    "supported",
    "unsupported",
    "warn_missing_rule",
    "warn_nested",
]

Tensor = torch.Tensor
#: ``factors(z0, K) -> [f(z0), f'(z0)/1!, ..., f^(K)(z0)/K!]`` (``None``: zero)
TaylorFactors = Callable[[Tensor, int], list]

#: how :func:`pure_derivatives` lays out directions of different orders
STRATEGIES = ("truncated", "stacked")


# --- Optional-tensor arithmetic (None = structural zero) -----------------------------


def _add(a: Tensor | None, b: Tensor | None) -> Tensor | None:
    if a is None:
        return b
    return a if b is None else a + b


def _addmul(acc: Tensor | None, a: Tensor | None, b: Tensor | None, value=1.0):
    """``acc + value * a * b`` with ``None`` as zero (one fused kernel)."""
    if a is None or b is None:
        return acc
    if acc is not None:
        return torch.addcmul(acc, a, b, value=value)
    return a * b if value == 1.0 else (a * b).mul_(value)


# --- activation rules ----------------------------------------------------------------


@lru_cache(maxsize=None)
def _ode_polynomials(q: tuple, order: int) -> tuple:
    """Coefficients of ``P_m`` with ``f^(m) = P_m(f)`` for ``f' = Q(f)``, divided by m!.

    ``P_0(y) = y`` and ``P_{m+1} = P_m'(y) Q(y)`` (chain rule). Polynomials are
    coefficient tuples, lowest degree first; exact rational arithmetic.
    """
    polys: list[tuple[Fraction, ...]] = [(Fraction(0), Fraction(1))]
    for _ in range(order):
        p = polys[-1]
        dp = [i * p[i] for i in range(1, len(p))]
        prod = [Fraction(0)] * (len(dp) + len(q) - 1)
        for i, a in enumerate(dp):
            for j, b in enumerate(q):
                prod[i + j] += a * b
        polys.append(tuple(prod))
    return tuple(
        tuple(float(c / math.factorial(m)) for c in p) for m, p in enumerate(polys)
    )


def _eval_polynomials(y: Tensor, polys: tuple) -> list:
    """Evaluate every polynomial of ``polys`` at ``y``, sharing the powers of ``y``."""
    powers: list = [None, y]  # y^0 unused
    for _ in range(2, max(len(p) for p in polys)):
        powers.append(powers[-1] * y)
    out = []
    for p in polys:
        acc = None
        for c, y_i in zip(p[1:], powers[1:]):
            if c != 0.0:
                acc = y_i * c if acc is None else torch.add(acc, y_i, alpha=c)
        if p[0] != 0.0:
            acc = torch.full_like(y, p[0]) if acc is None else acc + p[0]
        out.append(acc)
    return out


def _tanh_factors(z0: Tensor, order: int) -> list:
    # tanh' = 1 - tanh^2
    polys = _ode_polynomials((Fraction(1), Fraction(0), Fraction(-1)), order)
    return _eval_polynomials(tanh(z0), polys)


def _sigmoid_factors(z0: Tensor, order: int) -> list:
    # sigmoid' = sigmoid - sigmoid^2
    polys = _ode_polynomials((Fraction(0), Fraction(1), Fraction(-1)), order)
    return _eval_polynomials(torch.sigmoid(z0), polys)


def _sin_factors(z0: Tensor, order: int, shift: int = 0) -> list:
    # sin^(m)(z) = sin(z + m pi/2): the cycle sin, cos, -sin, -cos
    s, c = torch.sin(z0), torch.cos(z0)
    cycle = (s, c, -s, -c)
    return [cycle[(m + shift) % 4] / math.factorial(m) for m in range(order + 1)]


def _cos_factors(z0: Tensor, order: int) -> list:
    return _sin_factors(z0, order, shift=1)


def _times_x_factors(z0: Tensor, g: list) -> list:
    """Factors of ``z * s(z)`` from those of ``s``: Leibniz,
    ``(z s)^(m)/m! = z s^(m)/m! + s^(m-1)/(m-1)!``."""
    return [z0 * g[0]] + [torch.addcmul(g[m - 1], z0, g[m]) for m in range(1, len(g))]


def _silu_factors(z0: Tensor, order: int) -> list:
    return _times_x_factors(z0, _sigmoid_factors(z0, order))


def _gelu_factors(z0: Tensor, order: int) -> list:
    # gelu = z Phi(z); Phi^(m) = phi^(m-1) = (-1)^(m-1) He_{m-1}(z) phi(z), with the
    # probabilists' Hermite polynomials He_0 = 1, He_1 = z,
    # He_{n+1} = z He_n - n He_{n-1}
    phi = torch.exp(-0.5 * z0 * z0) / math.sqrt(2.0 * math.pi)
    cdf = 0.5 * (1.0 + torch.erf(z0 / math.sqrt(2.0)))
    he = [torch.ones_like(z0), z0]
    for n in range(1, order - 1):
        he.append(z0 * he[n] - n * he[n - 1])
    g = [cdf] + [
        phi * he[m - 1] * ((-1) ** (m - 1) / math.factorial(m))
        for m in range(1, order + 1)
    ]
    return _times_x_factors(z0, g)


def _identity_factors(z0: Tensor, order: int) -> list:
    return [z0, torch.ones_like(z0)][: order + 1] + [None] * (order - 1)


_RULES: dict = {}
_MODULE_RULES = {
    torch.nn.Tanh: _tanh_factors,
    torch.nn.Sigmoid: _sigmoid_factors,
    torch.nn.SiLU: _silu_factors,
    torch.nn.Identity: _identity_factors,
}


def register_activation(fn: Callable, factors: TaylorFactors) -> None:
    """Make the pointwise activation ``fn`` usable in jets.

    ``factors(z0, K)`` must return ``[f(z0), f'(z0)/1!, f''(z0)/2!, ...,
    f^(K)(z0)/K!]`` (tensors shaped like ``z0``, or ``None`` for a zero), for any
    ``K >= 0``. ``fn`` is matched by identity.
    """
    _RULES[fn] = factors


for _fn, _rule in [
    (torch.tanh, _tanh_factors),
    (tanh, _tanh_factors),
    (F.tanh, _tanh_factors),
    (torch.sin, _sin_factors),
    (torch.cos, _cos_factors),
    (torch.sigmoid, _sigmoid_factors),
    (F.sigmoid, _sigmoid_factors),
    (F.silu, _silu_factors),
    (F.gelu, _gelu_factors),
    (bkd.tanh, _tanh_factors),
    (bkd.sin, _sin_factors),
    (bkd.sigmoid, _sigmoid_factors),
    (bkd.silu, _silu_factors),
    (bkd.gelu, _gelu_factors),
    (dde_activations.linear, _identity_factors),
]:
    register_activation(_fn, _rule)


def _activation_name(fn) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _supported_names() -> str:
    names = {_activation_name(f) for f in _RULES} | {m.__name__ for m in _MODULE_RULES}
    return ", ".join(sorted(names))


def _activation_ops(fn) -> list:
    """Program steps for one activation: ``[("act", factors)]`` or, for L-LAAF
    ``act(n a z)``, a scale by ``n a`` first."""
    if isinstance(fn, dde_utils.LLAAF):
        return [("scale", fn.n * fn.a)] + _activation_ops(fn.activation)
    rule = _MODULE_RULES.get(type(fn))
    if isinstance(fn, torch.nn.GELU) and fn.approximate == "none":
        rule = _gelu_factors
    if rule is None:
        try:
            rule = _RULES.get(fn)
        except TypeError:  # unhashable callable
            rule = None
    if rule is None:
        raise MissingRule(
            f"activation {_activation_name(fn)!r} has no Taylor-mode rule "
            f"(supported: {_supported_names()}; add one with register_activation)",
            _activation_name(fn),
        )
    return [("act", rule)]


class MissingRule(ValueError):
    """What jets cannot follow for want of a rule: a stage type without one in
    :data:`_STAGE_RULES`, or an activation without one (:func:`register_activation`);
    the message names where to add it, ``key`` the type or activation."""

    def __init__(self, message: str, key):
        super().__init__(message)
        self.key = key


# --- the network as a program of jet operations --------------------------------------


def _program(net) -> list:
    """Translate ``net`` into ``[(kind, payload), ...]`` with kind in ``linear |
    act | scale | fourier | residual | pirate`` (its network type's rule,
    :data:`_NET_RULES`: an MLP's declared stages,
    :meth:`~deepxde_lnn.networks.pytorch.MLP.stages`); raise for what jets cannot
    follow."""
    rule = _net_rule(net)
    if rule is None:
        raise TypeError(
            "Taylor-mode derivatives support deepxde_lnn networks that declare their "
            f"stages (MLP, LNN, ...) and PirateNet, got {type(net).__name__}"
        )
    if net._input_transform is not None:
        raise ValueError(
            "the network has an input (feature) transform; Taylor-mode derivatives "
            "do not support input transforms"
        )
    return rule(net)


def _net_rule(net) -> Callable | None:
    """``net``'s rule in :data:`_NET_RULES`, where ``net`` keeps its type's
    ``forward`` and ``trunk`` (what the rule follows)."""
    own = (type(net).forward, getattr(type(net), "trunk", None))
    for base, rule in _NET_RULES.items():
        if isinstance(net, base) and own == (base.forward, base.trunk):
            return rule
    return None


def _ops(stages) -> list:
    out = []
    for stage in stages:
        out += _stage_ops(stage)
    return out


def _residual_ops(block) -> list:
    """``h + alpha * branch(h)`` (or ``alpha * branch(h)``): the gate, the
    branch's own program and whether the identity path is there."""
    return [("residual", (block.alpha, _ops(block.stages()), block.residual))]


#: jet rule per stage type: ``stage -> program steps`` (anything else is taken
#: for a pointwise activation, :func:`_activation_ops`)
_STAGE_RULES: dict = {
    torch.nn.Linear: lambda m: [("linear", m)],
    LiquidBlock: _residual_ops,
    FourierFeatures: lambda m: [("fourier", m.frequencies)],
}


def _pirate_ops(net: PirateNet) -> list:
    """A PirateNet (:mod:`~deepxde_lnn.networks.pirate`): its embedding's rule,
    one ``pirate`` step for the gates ``U``, ``V`` and the blocks (payload: the
    programs of ``sigma(W_u . + b_u)`` and ``sigma(W_v . + b_v)``, and per block
    ``alpha`` and its three dense layers' programs), its output ``Linear``."""

    def dense(layer: torch.nn.Module, activation) -> list:
        return [("linear", layer)] + _activation_ops(activation)

    blocks = []
    for block in net.blocks:
        if not isinstance(block, PirateBlock) or (
            type(block).forward is not PirateBlock.forward
        ):
            raise _missing_stage_rule(block)
        layers = [dense(layer, block.activation) for layer in block.dense]
        blocks.append((block.alpha, layers))
    gates = (dense(net.u, net.activation), dense(net.v, net.activation))
    return [
        *_stage_ops(net.embedding),
        ("pirate", (gates, blocks)),
        ("linear", net.output),
    ]


#: jet rule per network type (``net -> program``; ``forward`` and ``trunk`` must
#: be the type's own, :func:`_net_rule`)
_NET_RULES: dict = {
    MLP: lambda net: _ops(net.stages()),
    PirateNet: _pirate_ops,
}


def _stage_ops(stage) -> list:
    for cls, rule in _STAGE_RULES.items():
        if isinstance(stage, cls):
            if type(stage).forward is not cls.forward:
                raise _missing_stage_rule(stage)
            return rule(stage)
    if _is_block(stage):
        raise _missing_stage_rule(stage)
    return _activation_ops(stage)


def _is_block(stage) -> bool:
    """Whether ``stage`` is a stage type of its own rather than a pointwise
    activation: a module with parameters, buffers or stages (DeepXDE's L-LAAF, an
    activation with a trained slope, aside)."""
    if not isinstance(stage, torch.nn.Module) or isinstance(stage, dde_utils.LLAAF):
        return False
    return hasattr(stage, "stages") or any(
        True for _ in itertools.chain(stage.parameters(), stage.buffers())
    )


def _missing_stage_rule(stage) -> MissingRule:
    name = type(stage).__name__
    return MissingRule(
        f"stage {name} has no Taylor-mode rule (add one for its type to "
        "_STAGE_RULES in deepxde_lnn/networks/taylor.py; FourierFeatures's is the "
        "worked example)",
        type(stage),
    )


#: why a jet above order 1 cannot pass an output transform (errors, warnings and
#: run records say it in these words)
TRANSFORM_ORDER = "an output transform takes jets to order 1 only"


class TransformOrder(ValueError):
    """A jet of order above 1 asked of a network with an output transform
    (forward mode follows the transform to first order only); raised from the
    jet's declared layout, before any propagation."""


_WARNED: set = set()  # the keys a fallback to nested autograd was said for


def warn_nested(key, reason: str) -> None:
    """Warn, once per ``key``, that ``reason`` sends input derivatives to nested
    autograd instead of Taylor-mode jets (a run's record names the path)."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(f"{reason}: nested autograd instead of Taylor-mode jets")


def warn_missing_rule(net) -> None:
    """Warn, once per stage type or activation, where only a missing rule
    (:class:`MissingRule`) keeps jets from following ``net``: its input
    derivatives fall back to nested autograd (:func:`warn_nested`)."""
    try:
        _program(net)
    except MissingRule as err:
        warn_nested(err.key, str(err))
    except (TypeError, ValueError):
        pass


# --- jet rules -----------------------------------------------------------------------


class _Layout:
    """Which coefficients of a stack of ``D`` directions are carried.

    Direction ``d`` (rows sorted by decreasing order) needs coefficients
    ``1..K_d``; ``counts[k] = #{d : K_d >= k}``, so the directions alive at order
    ``k`` are the first ``counts[k]`` rows and slicing is a free prefix view. With
    ``weights`` (*collapsed*), each direction's top coefficient is not stored: only
    ``T = sum_d weights_d [u along v_d]_{K_d}`` is, as one ``(1, N, w)`` tensor.
    That works because the top coefficient enters every rule linearly and alone
    (``y_K = f'(z_0) z_K + terms in z_1..z_{K-1}``), so the sum can be propagated
    with the direction-wise remainders folded in.
    """

    def __init__(self, orders: Sequence[int], weights: Tensor | None = None):
        self.order = max(orders, default=0)
        self.counts = [sum(o >= k for o in orders) for k in range(self.order + 2)]
        self.weights = weights

    def stored(self, k: int) -> int:
        """Rows of coefficient ``k`` that are carried."""
        return self.counts[k + 1] if self.weights is not None else self.counts[k]

    def fold(self, rest: Tensor | None, k: int) -> Tensor | None:
        """Weighted sum over the directions whose top order is ``k``."""
        lo, hi = self.counts[k + 1], self.counts[k]
        if self.weights is None or rest is None or lo == hi:
            return None
        w, rest = self.weights[lo:hi], _rows(rest, hi)
        assert rest is not None  # hi > lo rows
        rest = rest if lo == 0 else rest[lo:]
        if hi - lo == 1:
            return rest * w.view(1, 1, 1)
        return torch.tensordot(w, rest, dims=1).unsqueeze(0)


class _Jet(NamedTuple):
    """Coefficients ``1..K`` (``(stored(k), N | 1, w)`` each; ``None``: zero) and
    the collapsed top ``T`` (``(1, N | 1, w)`` or ``None``)."""

    coeffs: list
    top: Tensor | None


def _rows(a: Tensor | None, n: int) -> Tensor | None:
    """The first ``n`` rows of ``a``; ``a`` itself when that is all of them (a
    slice's backward would fill a zero tensor and copy the gradient into it)."""
    if a is None or n == 0:
        return None
    return a if n >= a.shape[0] else a[:n]


def _map(jet: _Jet, fn) -> _Jet:
    return _Jet([None if c is None else fn(c) for c in jet.coeffs], _opt(fn, jet.top))


def _opt(fn, a: Tensor | None) -> Tensor | None:
    return None if a is None else fn(a)


def _linear(layer: torch.nn.Linear, h0: Tensor, jet: _Jet) -> tuple:
    # the bias acts on the constant coefficient only
    z0 = F.linear(h0, layer.weight, layer.bias)
    return z0, _map(jet, lambda h: F.linear(h, layer.weight))


def _powers(z: list, lay: _Layout) -> list:
    """``P[m][k] = [d^m]_k`` for ``d = sum_{k>=1} z_k t^k`` (Cauchy products):
    ``[d^1]_k = z_k``, ``[d^m]_k = sum_{j=1}^{k-m+1} z_j [d^(m-1)]_{k-j}`` (zero for
    ``k < m``), on the ``counts[k]`` rows alive at order ``k``; ``m >= 2`` only
    uses ``z_j`` with ``j < k``."""
    order = lay.order
    powers: list = [None, [None] + list(z)]  # None: zero
    for m in range(2, order + 1):
        prev, cur = powers[m - 1], [None] * (order + 1)
        for k in range(m, order + 1):
            n = lay.counts[k]
            for j in range(1, k - m + 2):
                cur[k] = _addmul(cur[k], _rows(z[j - 1], n), _rows(prev[k - j], n))
        powers.append(cur)
    return powers


def _compose(g: list, jet: _Jet, lay: _Layout) -> _Jet:
    """Generic pointwise ``y = f(z)`` from ``g_m = f^(m)(z_0)/m!`` (Faa di Bruno):
    ``y_k = sum_{m=1}^{k} g_m [d^m]_k``, where only ``g_1 z_k`` involves ``z_k``."""
    if lay.order == 0:
        return _Jet([], None)
    powers = _powers(jet.coeffs, lay)
    out, top = [], _addmul(None, g[1], jet.top)
    for k in range(1, lay.order + 1):
        rest = None
        for m in range(2, k + 1):
            rest = _addmul(rest, g[m], powers[m][k])
        lin = _addmul(None, g[1], jet.coeffs[k - 1])
        out.append(_add(lin, _rows(rest, lay.stored(k))))
        top = _add(top, lay.fold(rest, k))
    return _Jet(out, top)


def _compose_tanh(y0: Tensor, s0: Tensor, jet: _Jet, lay: _Layout) -> _Jet:
    """``y = tanh(z(t))`` by the ODE ``y' = (1 - y^2) z'``.

    Matching ``t^(k-1)`` with ``s = 1 - y^2`` (``s_0 = 1 - y_0^2``,
    ``s_k = -2 r_k`` for ``k >= 1``, ``r_k = (1/2) sum_{i=0}^{k} y_i y_{k-i}``):
    ``y_k = s_0 z_k - (2/k) sum_{j=1}^{k-1} j z_j r_{k-j}``, and by symmetry
    ``r_k = sum_{i < k/2} y_i y_{k-i} + [k even] y_{k/2}^2 / 2``. Fewer products
    than the generic Faa di Bruno form.
    """
    z = jet.coeffs
    y: list[Tensor | None] = [y0]
    r: list[Tensor | None] = [None]
    top = _addmul(None, s0, jet.top)
    for k in range(1, lay.order + 1):
        n = lay.counts[k]
        rest = None
        for j in range(1, k):
            zj, rkj = _rows(z[j - 1], n), _rows(r[k - j], n)
            rest = _addmul(rest, zj, rkj, value=-2.0 * j / k)
        y.append(_add(_addmul(None, s0, z[k - 1]), _rows(rest, lay.stored(k))))
        top = _add(top, lay.fold(rest, k))
        m = lay.counts[k + 1]  # rows that go on to higher orders
        rk = None
        for i in range((k + 1) // 2):
            rk = _addmul(rk, _rows(y[i], m) if i else y0, _rows(y[k - i], m))
        if k % 2 == 0:
            rk = _addmul(rk, _rows(y[k // 2], m), _rows(y[k // 2], m), value=0.5)
        r.append(rk)
    return _Jet(y[1:], top)


def _activate(factors: TaylorFactors, z0: Tensor, jet: _Jet, lay: _Layout) -> tuple:
    if factors is _tanh_factors:
        y0 = tanh(z0)
        return y0, _compose_tanh(y0, 1.0 - y0 * y0, jet, lay)
    g = factors(z0, lay.order)
    return g[0], _compose(g, jet, lay)


def _residual(
    alpha: Tensor, branch: list, residual: bool, h0: Tensor, jet: _Jet, lay: _Layout
) -> tuple:
    """``h + alpha * branch(h)`` (``alpha * branch(h)`` without the residual
    path), ``branch`` given as program steps; ``alpha`` (``t``-independent)
    scales every coefficient of the branch."""
    t0, t = _run(branch, h0, jet, lay)
    alpha = alpha.to(t0)  # a fixed gate is a buffer, wherever the template is
    if not residual:
        coeffs = [_addmul(None, tk, alpha) for tk in t.coeffs]
        return alpha * t0, _Jet(coeffs, _addmul(None, t.top, alpha))
    coeffs = [_addmul(h, tk, alpha) for h, tk in zip(jet.coeffs, t.coeffs)]
    return torch.addcmul(h0, alpha, t0), _Jet(coeffs, _addmul(jet.top, t.top, alpha))


def _cat(a: Tensor | None, b: Tensor | None) -> Tensor | None:
    """``[a, b]`` along the features (``None``: zero)."""
    if a is None:
        if b is None:
            return None
        a = torch.zeros_like(b)
    elif b is None:
        b = torch.zeros_like(a)
    return torch.cat(torch.broadcast_tensors(a, b), dim=-1)


def _fourier(frequencies: Tensor, h0: Tensor, jet: _Jet, lay: _Layout) -> tuple:
    """``[cos(F h), sin(F h)]``: the linear map ``F`` (no bias), then cos's and
    sin's rules on the same coefficients, side by side."""
    z0 = F.linear(h0, frequencies)
    z = _map(jet, lambda h: F.linear(h, frequencies))
    c0, c = _activate(_cos_factors, z0, z, lay)
    s0, s = _activate(_sin_factors, z0, z, lay)
    coeffs = [_cat(a, b) for a, b in zip(c.coeffs, s.coeffs)]
    return torch.cat([c0, s0], dim=-1), _Jet(coeffs, _cat(c.top, s.top))


def _jet_add(a: _Jet, b: _Jet) -> _Jet:
    """The sum of two series, coefficient by coefficient."""
    return _Jet([_add(x, y) for x, y in zip(a.coeffs, b.coeffs)], _add(a.top, b.top))


def _lerp(a: Tensor | None, b: Tensor | None, w: Tensor) -> Tensor | None:
    """``a + w (b - a) = (1 - w) a + w b`` with ``None`` as zero."""
    if b is None:
        return None if a is None else a * (1 - w)
    return _addmul(None, b, w) if a is None else torch.addcmul(a, w, b - a)


def _product(a0: Tensor, a: _Jet, b0: Tensor, b: _Jet, lay: _Layout) -> tuple:
    """The product of two series (Cauchy), ``(ab)_k = sum_{i=0}^{k} a_i
    b_{k-i}``: ``a_0 b_k + a_k b_0`` is linear in the top coefficients (so the
    collapsed top follows it), the rest ``sum_{i=1}^{k-1} a_i b_{k-i}`` is
    computed on the ``counts[k]`` rows alive at order ``k`` and folded into the
    top for the directions that stop at ``k``."""
    out, top = [], _addmul(_addmul(None, a0, b.top), b0, a.top)
    for k in range(1, lay.order + 1):
        n = lay.counts[k]
        rest = None
        for i in range(1, k):
            rest = _addmul(
                rest, _rows(a.coeffs[i - 1], n), _rows(b.coeffs[k - i - 1], n)
            )
        lin = _addmul(_addmul(None, a0, b.coeffs[k - 1]), b0, a.coeffs[k - 1])
        out.append(_add(lin, _rows(rest, lay.stored(k))))
        top = _add(top, lay.fold(rest, k))
    return a0 * b0, _Jet(out, top)


def _pirate(gates: tuple, blocks: list, h0: Tensor, jet: _Jet, lay: _Layout) -> tuple:
    """PirateNet's gates and blocks on the embedding ``phi = h``: ``U``, ``V``
    by their programs, then per block ``z <- V + f (U - V)`` (``= f U + (1 - f)
    V``, one product rule, :func:`_product`) for ``f`` the first and second
    dense layers' output on ``z`` (from ``z = h``), ``r`` the third's, and
    ``h <- h + alpha (r - h)``."""
    u0, u = _run(gates[0], h0, jet, lay)
    v0, v = _run(gates[1], h0, jet, lay)
    d0 = u0 - v0
    d = _jet_add(u, _map(v, torch.neg))
    for alpha, layers in blocks:
        z0, z = h0, jet
        for ops in layers[:2]:
            f0, f = _run(ops, z0, z, lay)
            p0, p = _product(f0, f, d0, d, lay)
            z0, z = v0 + p0, _jet_add(v, p)
        r0, r = _run(layers[2], z0, z, lay)
        coeffs = [_lerp(hk, rk, alpha) for hk, rk in zip(jet.coeffs, r.coeffs)]
        top = _lerp(jet.top, r.top, alpha)
        h0, jet = torch.addcmul(h0, alpha, r0 - h0), _Jet(coeffs, top)
    return h0, jet


def _run(ops: list, h0: Tensor, jet: _Jet, lay: _Layout) -> tuple:
    for kind, payload in ops:
        if kind == "linear":
            h0, jet = _linear(payload, h0, jet)
        elif kind == "act":
            h0, jet = _activate(payload, h0, jet, lay)
        elif kind == "scale":
            h0, jet = h0 * payload, _map(jet, lambda h, s=payload: h * s)
        elif kind == "fourier":
            h0, jet = _fourier(payload, h0, jet, lay)
        elif kind == "residual":
            alpha, branch, residual = payload
            h0, jet = _residual(alpha, branch, residual, h0, jet, lay)
        elif kind == "pirate":
            gates, blocks = payload
            h0, jet = _pirate(gates, blocks, h0, jet, lay)
        else:
            raise ValueError(f"jet step {kind!r} has no case in taylor._run")
    return h0, jet


# --- argument handling ---------------------------------------------------------------


def _check_x(net, x) -> Tensor:
    """Validate ``net`` (:func:`_program` raises) and ``x``."""
    _program(net)
    if isinstance(net, PirateNet):
        n_in, dtype = net.embedding.frequencies.shape[1], net.u.weight.dtype
    else:
        n_in, dtype = net.layer_sizes[0], net.linears[0].weight.dtype
    if not isinstance(x, Tensor) or x.ndim != 2 or x.shape[1] != n_in:
        shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"x must be a tensor of shape (N, {n_in}), got {shape}")
    if x.dtype != dtype:
        raise ValueError(f"x is {x.dtype} but the network parameters are {dtype}")
    return x


def _check_order(order) -> int:
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) or order < 0:
        raise ValueError(f"order must be a non-negative integer, got {order!r}")
    return int(order)


def _axis_directions(x: Tensor, axes: Sequence[int]) -> Tensor:
    """The unit vectors of ``axes`` as ``(D, 1, d)`` directions (rows of an
    identity picked one by one: no index tensor copied from the host)."""
    eye = torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
    rows = [eye[i] for i in axes]
    return (torch.stack(rows) if rows else eye[:0]).unsqueeze(1)


SMALL = 64  # constants of at most this many numbers are made once per device


def _constant(value, x: Tensor) -> Tensor:
    """``value`` (a tensor, or numbers: a tuple, list or array) as a tensor with
    ``x``'s dtype and device. A small constant is made once per value, dtype and
    device (a step replayed as a CUDA graph cannot copy from the host)."""
    if isinstance(value, Tensor):
        return value.to(dtype=x.dtype, device=x.device)
    if torch.compiler.is_compiling():  # a constant of the traced graph
        return torch.tensor(_numbers(value), dtype=x.dtype, device=x.device)
    a = np.asarray(value, dtype=np.float64)
    if a.size > SMALL:
        return torch.as_tensor(a, dtype=x.dtype, device=x.device)
    return _made_once(tuple(a.ravel().tolist()), a.shape, x.dtype, x.device)


def _numbers(value):
    """``value`` as nested lists of Python floats (what a traced graph takes
    for a constant)."""
    if isinstance(value, (tuple, list)):
        return [_numbers(v) for v in value]
    return value.tolist() if isinstance(value, np.ndarray) else float(value)


@lru_cache(maxsize=256)
def _made_once(values: tuple, shape: tuple, dtype, device) -> Tensor:
    return torch.tensor(values, dtype=dtype, device=device).reshape(shape)


def _directions(directions, x: Tensor) -> Tensor:
    """``(D, d)`` or ``(D, N, d)`` direction tensor on ``x``'s device/dtype, as
    ``(D, 1, d)`` or ``(D, N, d)``."""
    n, d = x.shape
    v = _constant(directions, x)
    if v.ndim == 2 and v.shape[1] == d:
        return v.unsqueeze(1)
    if v.ndim == 3 and v.shape[1:] == (n, d):
        return v
    raise ValueError(
        f"directions must have shape (D, {d}) or (D, {n}, {d}), got {tuple(v.shape)}"
    )


def _one_direction(direction, x: Tensor) -> Tensor:
    """An axis index, a ``(d,)`` vector or per-point ``(N, d)`` vectors as
    ``(1, 1, d)`` / ``(1, N, d)``."""
    d = x.shape[1]
    if isinstance(direction, numbers.Integral) and not isinstance(direction, bool):
        if not 0 <= int(direction) < d:
            raise ValueError(f"direction axis must be in [0, {d}), got {direction}")
        v = torch.eye(d, dtype=x.dtype, device=x.device)[direction]
    else:
        v = _constant(direction, x)
    if v.shape not in ((d,), tuple(x.shape)):
        raise ValueError(
            f"direction must be an axis, a ({d},) vector or (N, {d}) vectors, "
            f"got shape {tuple(v.shape)}"
        )
    return v.view(1, -1, d)


def _input_jet(v: Tensor, lay: _Layout) -> _Jet:
    """``x(t) = x + t v``: ``x_1 = v``, ``x_k = 0`` for ``k >= 2``."""
    if lay.order == 0:
        return _Jet([], None)
    return _Jet([_rows(v, lay.stored(1))] + [None] * (lay.order - 1), lay.fold(v, 1))


def _dense(u: Tensor, c: Tensor | None, rows: int) -> Tensor:
    shape = (rows,) + tuple(u.shape)
    return u.new_zeros(shape) if c is None else c.expand(shape)


def _transformed(fn, x: Tensor, u: Tensor, v: Tensor, jet: _Jet, lay: _Layout):
    """``q = fn(x, u)``, a network's output transform, and its first coefficients
    by forward mode: ``q_1 = d fn(x + t v, u + t u_1)/dt`` (one ``jvp`` over the
    stacked directions; the collapsed top along the weighted direction sum, as
    ``q_1`` is linear in ``(v, u_1)``). Orders above 1 are refused by
    :func:`_check_transform`."""
    if lay.order == 0:
        return fn(x, u), jet
    coeffs = [_tangent(fn, x, u, _rows(v, lay.stored(1)), jet.coeffs[0])]
    return fn(x, u), _Jet(coeffs, _tangent(fn, x, u, lay.fold(v, 1), jet.top))


def _check_transform(net, lay: _Layout) -> None:
    """Raise :class:`TransformOrder` where ``net`` has an output transform and
    ``lay`` goes beyond order 1 (:func:`_transformed`'s reach)."""
    if net._output_transform is not None and lay.order > 1:
        raise TransformOrder(
            f"the network has an output transform: {TRANSFORM_ORDER}, got order "
            f"{lay.order}"
        )


def _tangent(fn, x: Tensor, u: Tensor, v: Tensor | None, du: Tensor | None):
    """``d fn(x + t v_i, u + t du_i)/dt`` at ``t = 0`` for each row ``i`` of
    ``v`` (``(D, 1 | N, d)``) and ``du`` (``(D, N, n) | None``), as ``(D, N, m)``;
    ``fn`` acts row by row, so the ``D`` directions are one batch of ``D N``
    rows."""
    if v is None:
        return None
    n, D = x.shape[0], v.shape[0]
    du = u.new_zeros((D,) + tuple(u.shape)) if du is None else du

    def flat(a: Tensor) -> Tensor:
        # contiguous: with n = 1 the reshape is a view with a zero stride, which
        # forward mode's dual tensors refuse (a no-op where reshape copied)
        return a.expand(D, n, a.shape[-1]).reshape(D * n, a.shape[-1]).contiguous()

    dq = torch.func.jvp(fn, (flat(x), flat(u)), (flat(v), flat(du)))[1]
    return dq.view(D, n, -1)


# --- public API ----------------------------------------------------------------------


def _jets(net, x: Tensor, v: Tensor, orders: Sequence[int], weights=None) -> tuple:
    """One propagation along the directions ``v`` (``(D, 1 | N, d)``, sorted by
    decreasing ``orders``). Returns ``u``, the coefficients ``k = 1..K`` as
    ``(stored(k), N, n_out)`` tensors and, with ``weights``, the collapsed top
    ``sum_d weights_d [u along v_d]_{K_d}`` as ``(N, n_out)`` (else ``None``)."""
    lay = _Layout(orders, weights)
    _check_transform(net, lay)
    u, jet = _run(_program(net), x, _input_jet(v, lay), lay)
    if net._output_transform is not None:
        u, jet = _transformed(net._output_transform, x, u, v, jet, lay)
    coeffs = [_dense(u, c, lay.stored(k)) for k, c in enumerate(jet.coeffs, 1)]
    return u, coeffs, None if weights is None else _dense(u, jet.top, 1)[0]


def taylor_coefficients(
    net, x: Tensor, directions, order: int
) -> tuple[Tensor, Tensor]:
    """Normalised Taylor coefficients of ``u`` along several directions at once.

    For each direction ``v_i`` (rows of ``directions``, shape ``(D, d)``, or
    per-point ``(D, N, d)``), ``u(x + t v_i) = u(x) + sum_k c[k-1, i] t^k + ...``,
    i.e. ``c[k-1, i] = D_{v_i}^k u / k!``. Returns ``(u, c)`` with ``u`` of shape
    ``(N, n_out)`` and ``c`` of shape ``(order, D, N, n_out)``; one propagation with
    the primal shared by all directions.
    """
    x = _check_x(net, x)
    v = _directions(directions, x)
    u, c, _ = _jets(net, x, v, [_check_order(order)] * v.shape[0])
    return u, torch.stack(c) if c else u.new_zeros((0, v.shape[0]) + u.shape)


def directional_derivatives(net, x: Tensor, direction, order: int) -> list[Tensor]:
    """``[u, D_v u, D_v^2 u, ..., D_v^order u]``, each of shape ``(N, n_out)``.

    ``D_v^k u(x) = d^k/dt^k u(x + t v) |_{t=0}``; ``direction`` is an input axis
    ``i`` (``v = e_i``: the pure partial ``d^k u / dx_i^k``), a ``(d,)`` vector, or
    one vector per point ``(N, d)``. Differentiable w.r.t. the parameters and ``x``.
    """
    x = _check_x(net, x)
    order = _check_order(order)
    u, c, _ = _jets(net, x, _one_direction(direction, x), [order])
    return [u] + [math.factorial(k) * ck[0] for k, ck in enumerate(c, 1)]


def laplacian(net, x: Tensor) -> tuple[Tensor, Tensor]:
    """``(u, Δu)``, each ``(N, n_out)``, with ``Δu = sum_i d^2 u / dx_i^2``.

    One propagation: the ``d`` axis directions are stacked (first coefficients
    ``(d, N, w)``) and only the sum ``Δu = sum_i 2 [u(x + t e_i)]_2`` of the second
    ones is carried, as one ``(1, N, w)`` tensor (collapsed Taylor mode, see
    :func:`pure_derivative_combination`).
    """
    x = _check_x(net, x)
    d = x.shape[1]
    return pure_derivative_combination(net, x, [(1.0, i, 2) for i in range(d)])


def pure_derivatives(
    net, x: Tensor, requests: Sequence[tuple[int, int]], *, strategy: str = "truncated"
) -> tuple[Tensor, list[Tensor]]:
    """``u`` and the pure partials ``d^k u / dx_i^k`` for ``requests = [(i, k), ...]``.

    One propagation serves all requests, each axis a direction of the stack, taken
    to the highest order asked of it. ``strategy="truncated"``: coefficient ``k``
    only carries the axes that need it (beam ``[(0, 2), (1, 4)]``: x to order 2, y
    to order 4); ``"stacked"``: every axis to the highest order. Returns ``(u, [d^k
    u / dx_i^k, shape (N, n_out), per request])``.
    """
    x = _check_x(net, x)
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    top = {i: k for i, k in _axis_orders(requests, x.shape[1]).items() if k > 0}
    axes = sorted(top, key=lambda i: -top[i])
    orders = [top[i] for i in axes]
    if strategy == "stacked":
        orders = [max(orders, default=0)] * len(axes)
    u, c, _ = _jets(net, x, _axis_directions(x, axes), orders)
    row = {i: r for r, i in enumerate(axes)}
    return u, [math.factorial(k) * c[k - 1][row[i]] if k else u for i, k in requests]


def pure_derivative_combination(
    net, x: Tensor, terms: Sequence[tuple[float, int, int]]
) -> tuple[Tensor, Tensor]:
    """``(u, L u)`` for ``L u = sum_j a_j d^(k_j) u / dx_(i_j)^(k_j)``, each
    ``(N, n_out)``, from ``terms = [(a_j, i_j, k_j), ...]`` (numbers ``a_j``).

    E.g. the beam operator ``u_xx - u_yyyy`` is ``[(1, 0, 2), (-1, 1, 4)]``. Like
    :func:`pure_derivatives` with one propagation, but the top coefficient of each
    axis is never carried on its own: only ``T = sum_i w_i [u(x + t e_i)]_(K_i)``
    is (``K_i`` the highest order of axis ``i``, ``w_i`` its summed ``a_j K_i!``),
    one slice less per axis: ``T`` follows the same linear rule as a single top
    coefficient, with each axis's nonlinear remainder added with its weight.
    """
    x = _check_x(net, x)
    requests = [(i, k) for _, i, k in terms]
    top = {i: k for i, k in _axis_orders(requests, x.shape[1]).items() if k > 0}
    axes = sorted(top, key=lambda i: -top[i])
    weights = x.new_zeros(len(axes))
    row = {i: r for r, i in enumerate(axes)}
    for a, i, k in terms:
        if k and k == top[i]:
            weights[row[i]] += float(a) * math.factorial(k)
    u, c, lu = _jets(net, x, _axis_directions(x, axes), [top[i] for i in axes], weights)
    lu = u.new_zeros(u.shape) if lu is None else lu
    for a, i, k in terms:
        if k == 0:
            lu = lu + float(a) * u
        elif k < top[i]:
            lu = lu + (float(a) * math.factorial(k)) * c[k - 1][row[i]]
    return u, lu


def _axis_orders(requests, d: int) -> dict:
    """``{axis: highest order requested}`` after validation."""
    top: dict = {}
    for req in requests:
        if not isinstance(req, (tuple, list)) or len(req) != 2:
            raise ValueError(f"requests must be (axis, order) pairs, got {req!r}")
        i, k = req
        if (
            isinstance(i, bool)
            or not isinstance(i, numbers.Integral)
            or not 0 <= int(i) < d
        ):
            raise ValueError(f"axis must be an integer in [0, {d}), got {i!r}")
        top[int(i)] = max(top.get(int(i), 0), _check_order(k))
    return top


def supported(net) -> bool:
    """Whether jets can follow ``net`` (an ``MLP`` or subclass, or a
    ``PirateNet``, without an input transform, whose stages and activations all
    have a Taylor rule; an output transform limits them to first order,
    :class:`TransformOrder`)."""
    return unsupported(net) is None


def unsupported(net) -> str | None:
    """Why jets cannot follow ``net`` (the error :func:`supported` meets), or
    ``None`` where they can."""
    try:
        _program(net)
    except (TypeError, ValueError) as err:
        return str(err)
    return None
