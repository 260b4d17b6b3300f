"""Methods compared by the runner, by name: what each is called, its options and
what it allows, checked without torch (:mod:`.build` builds them).

* ``lnn``: :class:`~deepxde_lnn.LNN` in the case's layout;
* ``pinn``: the plain twin :class:`~deepxde_lnn.MLP` (same trunk, no blocks);
* ``pinn-matched``: a plain MLP of the same depth widened to the parameter count
  nearest the LNN's (ties to the smaller width);
* ``rezero``: :class:`~deepxde_lnn.ReZero`, the LNN's trunk (standard layout) with
  one scalar ``alpha`` per block, initialised to 0 (ReZero);
* ``rba``: the plain MLP with residual-based attention on the PDE term, on a
  fixed collocation pool (:mod:`deepxde_lnn.problems.rba`; the package's RA-PINN);
* ``ra-gated``: the authors' gated residual-attention network, plain loss
  (:mod:`deepxde_lnn.networks.gated`; their "RA-PINN", labelled as their variant);
* ``xpinn``: one plain MLP per subdomain with average-solution and
  residual-continuity interface terms (:mod:`deepxde_lnn.problems.xpinn`);
* ``xpinn-authors``: the authors' weakly coupled XPINN (tiny subnetworks, value
  and gradient matching at weights 1e-6 / 1e-8), labelled as their variant.

What a PINN researcher would pick instead of the liquid block (docs/methods.md):

* ``laaf``: the plain MLP with DeepXDE's layer-wise locally adaptive activation
  ``"LAAF-n tanh"`` (one trainable slope shared by the layers, as ``dde.nn.FNN``
  makes it from the string; ``per_layer=true``: one per hidden layer);
* ``pirate``: a PirateNet (:mod:`deepxde_lnn.networks.pirate`) of the case's width,
  ``max(1, L // 3)`` adaptive residual blocks for ``L`` hidden layers;
* ``fourier``: random Fourier features in front of the plain MLP
  (:mod:`deepxde_lnn.networks.fourier`).

All use PyTorch's default initialisation (the authors' code; docs/methods.md) and
the case's output transform and network settings (:class:`Trunk`). Every method
follows the case's sampling protocol, optimizer, learning rate and step count.

A method name may carry options for ablations, ``NAME:key=value:key=value``:
``lnn`` takes ``alpha_init``, ``layout``, ``width``, ``block_activation``,
``residual`` (``false``: blocks without the identity path, ``h <- alpha *
sigma(A h + c)``), ``train_alpha`` (``false``: the gates fixed at ``alpha_init``)
and ``blocks`` (the hidden layers with a block, 0-based, joined by ``+``: ``0+1``);
``rezero`` the same but ``layout``; ``pinn`` and ``rba`` take ``width`` (e.g.
``lnn:alpha_init=0``, ``pinn:width=98``); ``laaf`` takes ``n`` (the scale of
``LAAF-n``, default 10) and ``per_layer``; ``pirate`` takes ``blocks`` (a count,
>= 1), ``scale`` (the embedding's, default 1), ``alpha_init`` (default 0) and
``width``; ``fourier`` takes ``scale`` (default 1) and ``width``.

``_ALL`` below is the one table of methods: a new method is one entry in it, which
names its builder in :mod:`.build` (a new network class goes with its kin in
:mod:`deepxde_lnn.networks.pytorch`, declaring its stages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..checks import check_int, parse_int, parse_number
from ..networks.limits import (
    ALPHA_MAX,
    BLOCKS_MAX,
    LAAF_MAX,
    LAYOUTS,
    SCALE_MAX,
    activation_base,
)

__all__ = [
    "METHODS",
    "COMPARED",
    "ALTERNATIVES",
    "Method",
    "Trunk",
    "Option",
    "get",
    "parse",
    "canonical",
]


@dataclass(frozen=True)
class Trunk:
    """A case's network settings: the hidden widths of the MLP trunk every method
    builds on (DeepXDE's ``layer_sizes`` between the inputs and the fields), the
    LNN's ``lnn_layout`` (``standard`` or ``reduced``) and the XPINN subdomains'
    ``xpinn_cuts``, cut positions per input axis (None: the evaluation grid box's
    mid-planes; the domain is the grid's box restricted by its mask)."""

    hidden: tuple[int, ...] = (64, 64, 64, 64)
    lnn_layout: str = "standard"
    xpinn_cuts: tuple[tuple[float, ...], ...] | None = None

    def __post_init__(self):
        widths = self.hidden
        if isinstance(widths, str) or not isinstance(widths, Sequence) or not widths:
            raise ValueError(f"hidden must be a tuple of widths; got {widths!r}")
        for width in widths:
            check_int(width, f"hidden {widths!r}: a width", 1)
        if self.lnn_layout not in LAYOUTS:
            raise ValueError(
                f"lnn_layout must be one of {', '.join(LAYOUTS)}; "
                f"got {self.lnn_layout!r}"
            )

    def layer_sizes(
        self, inputs: int, outputs: int, width: int | None = None
    ) -> list[int]:
        """``[inputs, *hidden, outputs]``; ``width``: every hidden layer that wide."""
        hidden = self.hidden if width is None else (width,) * len(self.hidden)
        return [inputs, *hidden, outputs]


@dataclass(frozen=True)
class Option:
    """A method option: its parser (text to value, ValueError naming it) and the
    network's default (None: the case's setting)."""

    parse: Callable[[str], object]
    default: object = None


@dataclass(frozen=True)
class Method:
    """A method by name: its ``builder`` (the name of a
    :class:`~deepxde_lnn.problems.build.Builder` in :mod:`.build`, which builds its
    network and loss terms with torch), its options, whether seeds can train as one
    stacked model and whether its training loss is deterministic (needed by
    L-BFGS's line search)."""

    name: str
    builder: str
    options: Mapping[str, Option] = field(default_factory=dict)
    stackable: bool = False
    deterministic: bool = True

    def defaults(self) -> dict:
        """Every option's default value."""
        return {k: o.default for k, o in self.options.items()}


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
    if text != "same":
        activation_base(text, "block_activation")
    return text


def _flag(name: str) -> Callable[[str], bool]:
    """The parser of an on/off option: ``true`` or ``false``."""

    def parse(text: str) -> bool:
        if text not in ("true", "false"):
            raise ValueError(f"{name} must be true or false; got {text!r}")
        return text == "true"

    return parse


def _blocks(text: str) -> tuple[int, ...]:
    """Hidden-layer indices joined by ``+`` (``0+1``: blocks on the first two)."""
    parts = text.split("+")
    layers = tuple(parse_int(part, "blocks", 0, WIDTH_MAX) for part in parts)
    if len(set(layers)) != len(layers):
        raise ValueError(f"blocks: each hidden layer once; got {text!r}")
    return tuple(sorted(layers))


def _count(text: str) -> int:
    """A number of blocks, at least 1."""
    return parse_int(text, "blocks", 1, BLOCKS_MAX)


def _scale(text: str) -> float:
    """An embedding scale, the standard deviation of the random frequencies."""
    return parse_number(text, "scale", 0.0, SCALE_MAX, above=True)


def _laaf_n(text: str) -> float:
    return parse_number(text, "n", 1.0, LAAF_MAX)


_WIDTH = {"width": Option(_width)}
_ACTIVATION = {"block_activation": Option(_block_activation, "tanh")}

_ALL = (
    Method(
        "lnn",
        "LIQUID",
        {
            **_WIDTH,
            "alpha_init": Option(_alpha, 0.5),
            "layout": Option(_layout),
            **_ACTIVATION,
            "residual": Option(_flag("residual"), True),
            "train_alpha": Option(_flag("train_alpha"), True),
            "blocks": Option(_blocks),
        },
        stackable=True,
    ),
    Method("pinn", "PLAIN", _WIDTH, stackable=True),
    Method("pinn-matched", "MATCHED", stackable=True),
    Method(
        "rezero",
        "REZERO",
        {**_WIDTH, "alpha_init": Option(_alpha, 0.0), **_ACTIVATION},
        stackable=True,
    ),
    Method("rba", "RBA_PDE", _WIDTH),
    Method("ra-gated", "GATED", deterministic=False),  # dropout
    Method("xpinn", "XPINN"),
    Method("xpinn-authors", "XPINN_AUTHORS"),
    # stacked: each run's own slope(s) (laaf), random frequencies (pirate,
    # fourier; buffers stacked per run) and, for pirate, its trunk under vmap
    Method(
        "laaf",
        "ADAPTIVE",
        {
            **_WIDTH,
            "n": Option(_laaf_n, 10.0),
            "per_layer": Option(_flag("per_layer"), False),
        },
        stackable=True,
    ),
    Method(
        "pirate",
        "PIRATE",
        {
            **_WIDTH,
            "blocks": Option(_count),
            "scale": Option(_scale, 1.0),
            "alpha_init": Option(_alpha, 0.0),
        },
        stackable=True,
    ),
    Method(
        "fourier", "FOURIER", {**_WIDTH, "scale": Option(_scale, 1.0)}, stackable=True
    ),
)
_BY_NAME = {m.name: m for m in _ALL}
#: what ``compare`` trains when no methods are given: the LNN and its plain twin
COMPARED = ("lnn", "pinn")
#: what a PINN researcher would pick instead of the block, each judged against
#: both methods of :data:`COMPARED`
ALTERNATIVES = ("laaf", "pirate", "fourier")

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
            options[key] = m.options[key].parse(text)
        except ValueError as err:
            raise ValueError(f"method {method!r}: {err}") from None
    return m, options


def canonical(method: str) -> str:
    """One spelling of ``method``'s configuration: its name and its options'
    values with the network's defaults, sorted (``lnn``, ``lnn:alpha_init=0.5``
    and ``lnn:alpha_init=.5`` agree)."""
    m, options = parse(method)
    values = {k: v for k, v in m.defaults().items() if v is not None} | options
    return ":".join([m.name, *(f"{k}={v!r}" for k, v in sorted(values.items()))])
