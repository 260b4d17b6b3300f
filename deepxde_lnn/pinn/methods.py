"""Methods compared by the runner: which network and which loss a method trains.

* ``lnn``: :class:`~deepxde_lnn.LNN` in the case's layout;
* ``pinn``: the plain twin :class:`~deepxde_lnn.MLP` (same trunk, no blocks);
* ``pinn-matched``: a plain MLP of the same depth widened to the parameter count
  nearest the LNN's (ties to the smaller width);
* ``rezero``: :class:`~deepxde_lnn.ReZero`, the LNN's trunk (standard layout) with
  one scalar ``alpha`` per block, initialised to 0 (ReZero);
* ``rba``: the plain MLP with residual-based attention on the PDE term, on a
  fixed collocation pool (:mod:`deepxde_lnn.pinn.rba`; the package's RA-PINN);
* ``ra-gated``: the authors' gated residual-attention network, plain loss
  (:mod:`deepxde_lnn.networks.gated`; their "RA-PINN", labelled as their variant);
* ``xpinn``: one plain MLP per subdomain with average-solution and
  residual-continuity interface terms (:mod:`deepxde_lnn.pinn.xpinn`);
* ``xpinn-authors``: the authors' weakly coupled XPINN (tiny subnetworks, value
  and gradient matching at weights 1e-6 / 1e-8), labelled as their variant.

All use PyTorch's default initialisation (the authors' code; docs/methods.md) and
the case's output transform. Every method follows the case's sampling protocol,
optimizer, learning rate and step count.

A method name may carry options for ablations, ``NAME:key=value:key=value``:
``lnn`` takes ``alpha_init``, ``layout``, ``width`` and ``block_activation``;
``rezero`` the same but ``layout``; ``pinn`` and ``rba`` take ``width`` (e.g.
``lnn:alpha_init=0``, ``pinn:width=98``).

A new network is one class (:mod:`deepxde_lnn.networks.nn`: it declares its stages) and one
entry in ``_ALL``; parameter counts are taken from the network built on the meta
device.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..checks import parse_int, parse_number
from ..networks.limits import ALPHA_MAX, LAYOUTS

if TYPE_CHECKING:  # a Case builds its methods through this module
    from .case import Case, Profile
    from .data import ResampledPDE, Term

__all__ = [
    "METHODS",
    "COMPARED",
    "Method",
    "get",
    "parse",
    "canonical",
    "check",
    "build_net",
    "build_data",
    "parameter_count",
]

ACTIVATION = "tanh"
AUTHORS_SPLIT = (0.38, 0.62)  # the authors' XPINN cut, as fractions of the box
AUTHORS_HIDDEN = (16, 16)


def _count(build: Callable[[], object]) -> int:
    """Trainable parameters of the network ``build()`` makes, built on the meta
    device: no memory, no values, no draw from the random state."""
    import torch

    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        return build().num_trainable_parameters()


def matched_width(case: Case) -> int:
    """Width in ``1..4 max(hidden)`` whose plain MLP has the parameter count
    nearest the LNN's (ties to the smaller width); bisection, as the count grows
    with the width."""
    target = parameter_count("lnn", case)

    def count(width: int) -> int:
        return _count(lambda: _mlp(case, width=width))

    lo, hi = 1, 4 * max(case.hidden)
    while lo < hi:  # the smallest width with at least the target's count
        mid = (lo + hi) // 2
        if count(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return min(range(max(lo - 1, 1), lo + 1), key=lambda w: (abs(count(w) - target), w))


def _transformed(net, case: Case):
    if case.output_transform is not None:
        net.apply_output_transform(case.output_transform)
    return net


def _mlp(case: Case, sizes=None, width: int | None = None):
    sizes = sizes or case.layer_sizes(width)
    from ..networks.nn import MLP, TORCH_DEFAULT

    return _transformed(MLP(sizes, ACTIVATION, TORCH_DEFAULT), case)


def _lnn(
    case: Case,
    width: int | None = None,
    alpha_init: float = 0.5,
    layout: str | None = None,
    block_activation: str = "tanh",
):
    from ..networks.nn import LNN, TORCH_DEFAULT

    net = LNN(
        case.layer_sizes(width),
        ACTIVATION,
        TORCH_DEFAULT,
        alpha_init=alpha_init,
        layout=layout or case.lnn_layout,
        block_activation=block_activation,
    )
    return _transformed(net, case)


def _rezero(
    case: Case,
    width: int | None = None,
    alpha_init: float = 0.0,
    block_activation: str = "tanh",
):
    sizes = case.layer_sizes(width)
    from ..networks.nn import TORCH_DEFAULT, ReZero

    net = ReZero(
        sizes,
        ACTIVATION,
        TORCH_DEFAULT,
        alpha_init=alpha_init,
        block_activation=block_activation,
    )
    return _transformed(net, case)


def _gated(case: Case):
    from ..networks.gated import GatedResidualAttention

    return _transformed(
        GatedResidualAttention(len(case.inputs), len(case.fields)), case
    )


def _xnet(case: Case, fractions=None, sizes=None):
    from .xpinn import XNet

    dec = case.decomposition(fractions)
    return XNet([_mlp(case, sizes) for _ in range(dec.n_cells)], dec)


def _authors_xnet(case: Case):
    sizes = [len(case.inputs), *AUTHORS_HIDDEN, len(case.fields)]
    return _xnet(case, AUTHORS_SPLIT, sizes)


def _same(case: Case, terms: list[Term]) -> list[Term]:
    return terms


def _rba_terms(case: Case, terms: list[Term]) -> list[Term]:
    return [replace(t, fixed=True) if t.kind == "pde" else t for t in terms]


def _rba_weights(case: Case, terms: list[Term]):
    from .rba import RBA

    return RBA([t.name for t in terms if t.kind == "pde"])


def _xpinn_terms(case: Case, terms: list[Term]) -> list[Term]:
    from .xpinn import xpinn_terms

    return xpinn_terms(terms, case.decomposition())


def _authors_terms(case: Case, terms: list[Term]) -> list[Term]:
    from .xpinn import authors_terms

    return authors_terms(terms, case.decomposition(AUTHORS_SPLIT))


def _subdomain_means(fractions=None):
    def weights(case: Case, terms: list[Term]):
        from .xpinn import SubdomainMeans

        return SubdomainMeans(case.decomposition(fractions))

    return weights


@dataclass(frozen=True)
class Method:
    """A method: its network, how it changes the case's loss terms, an optional
    per-row weights hook, whether seeds can train as one stacked model and whether
    its training loss is deterministic (needed by L-BFGS's line search)."""

    name: str
    net: Callable[..., object]  # (case, **options) -> network
    terms: Callable[[Case, list[Term]], list[Term]] = _same
    weights: Callable[[Case, list[Term]], object] | None = None
    stackable: bool = False
    options: Mapping[str, Callable[[str], object]] = field(default_factory=dict)
    deterministic: bool = True


WIDTH_MAX = 4096  # hidden width cap of the ``width`` option


def _width(text: str) -> int:
    return parse_int(text, "width", 1, WIDTH_MAX)


def _alpha(text: str) -> float:
    return parse_number(text, "alpha_init", -ALPHA_MAX, ALPHA_MAX)


def _layout(text: str) -> str:
    if text not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {text!r}")
    return text


def _block_activation(text: str) -> str:
    from ..networks.nn import check_activation

    return text if text == "same" else check_activation(text, "block_activation")


_LNN_OPTIONS = {
    "width": _width,
    "alpha_init": _alpha,
    "layout": _layout,
    "block_activation": _block_activation,
}
_WIDTH = {"width": _width}


_ALL = (
    Method("lnn", _lnn, stackable=True, options=_LNN_OPTIONS),
    Method("pinn", _mlp, stackable=True, options=_WIDTH),
    Method(
        "pinn-matched",
        lambda c: _mlp(c, c.layer_sizes(matched_width(c))),
        stackable=True,
    ),
    Method(
        "rezero",
        _rezero,
        stackable=True,
        options={k: v for k, v in _LNN_OPTIONS.items() if k != "layout"},
    ),
    Method("rba", _mlp, _rba_terms, _rba_weights, options=_WIDTH),
    Method("ra-gated", _gated, deterministic=False),  # dropout
    Method("xpinn", _xnet, _xpinn_terms, _subdomain_means()),
    Method(
        "xpinn-authors", _authors_xnet, _authors_terms, _subdomain_means(AUTHORS_SPLIT)
    ),
)
_BY_NAME = {m.name: m for m in _ALL}
#: what ``compare`` trains when no methods are given: the LNN and its plain twin
COMPARED = ("lnn", "pinn")

METHODS = tuple(_BY_NAME)


def get(method: str) -> Method:
    """The method named by ``method`` (its options are checked, not returned)."""
    return parse(method)[0]


def parse(method: str) -> tuple[Method, dict]:
    """``(method, options)`` of ``NAME[:key=value...]``; ValueError naming the
    method for an unknown name, option or value."""
    if not isinstance(method, str):
        raise ValueError(f"method must be a string; got {method!r}")
    name, *items = method.split(":")
    if name not in _BY_NAME:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    m, options = _BY_NAME[name], {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or key not in m.options or key in options:
            allowed = ", ".join(m.options) or "none"
            raise ValueError(
                f"method {method!r}: bad option {item!r} (options of {name}: {allowed})"
            )
        try:
            options[key] = m.options[key](text)
        except ValueError as err:
            raise ValueError(f"method {method!r}: {err}") from None
    return m, options


def canonical(method: str) -> str:
    """One spelling of ``method``'s configuration: its name and its options'
    values with the network's defaults, sorted (``lnn``, ``lnn:alpha_init=0.5``
    and ``lnn:alpha_init=.5`` agree)."""
    m, options = parse(method)
    params = inspect.signature(m.net).parameters
    defaults = {k: params[k].default for k in m.options if k in params}
    values = {k: v for k, v in defaults.items() if v is not None} | options
    return ":".join([m.name, *(f"{k}={v!r}" for k, v in sorted(values.items()))])


def check(method: str, case: Case) -> None:
    """ValueError naming ``method`` unless its network builds for ``case`` (the
    process's random state is left as it was)."""
    import torch

    with torch.random.fork_rng(devices=[]):
        try:
            build_net(method, case)
        except ValueError as err:
            msg = str(err)
            raise ValueError(msg if method in msg else f"method {method!r}: {msg}")


def build_net(method: str, case: Case):
    """``method``'s network for ``case`` (initialised from torch's current RNG)."""
    m, options = parse(method)
    return m.net(case, **options)


def build_data(
    method: str,
    case: Case,
    profile: Profile,
    seed: int | None,
    derivatives: str = "taylor",
    compile_jets: bool = False,
) -> ResampledPDE:
    """``method``'s training data for ``case`` under ``profile``: the case's terms
    (with the profile's counts) as the method changes them, and its weights hook
    (``derivatives``, ``compile_jets``: as :class:`~.data.ResampledPDE` takes them)."""
    from .data import ResampledPDE

    m = get(method)
    terms = m.terms(case, case.make_terms(profile))
    weights = m.weights(case, terms) if m.weights else None
    return ResampledPDE(
        terms,
        seed=seed,
        resample=profile.resample,
        derivatives=derivatives,
        weights=weights,
        compile_jets=compile_jets,
    )


def parameter_count(method: str, case: Case) -> int:
    """Trainable parameters of ``method``'s network on ``case`` (counted on a
    network built for the purpose, the random state left as it was)."""
    return _count(lambda: build_net(method, case))
