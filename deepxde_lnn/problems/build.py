"""What a method (:mod:`.methods`) builds for a case: its network and its
training data (the case's terms as the method changes them, and its weights hook).

A case here is what these builders read of it: ``inputs``, ``fields``, ``grid``,
``trunk`` (:class:`~.methods.Trunk`), ``output_transform`` and
``make_terms(profile)`` (a :class:`~deepxde_lnn.problems.case.Case`). Parameter
counts are taken from the network built on the meta device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch
from deepxde import grad

from ..networks.fourier import FourierMLP
from ..networks.gated import GatedResidualAttention
from ..networks.limits import MAX_PARAMETERS
from ..networks.matched import count_built, matched_sizes
from ..networks.pirate import PirateNet
from ..networks.plan import check_activation
from ..networks.pytorch import LNN, MLP, TORCH_DEFAULT, ReZero
from .data import ResampledPDE, RowWeights, Term
from .data.jets import DERIVATIVES
from .methods import parse
from .problem import Profile
from .rba import RBA
from .xpinn import Decomposition, SubdomainMeans, XNet, authors_terms, xpinn_terms

__all__ = [
    "Builder",
    "builder",
    "build_net",
    "build_data",
    "check",
    "check_size",
    "check_terms",
    "decomposition",
    "matched_width",
    "parameter_count",
    "pirate_blocks",
]

ACTIVATION = "tanh"
AUTHORS_SPLIT = (0.38, 0.62)  # the authors' XPINN cut, as fractions of the box
AUTHORS_HIDDEN = (16, 16)
CHECK_POINTS = 2  # points per term on which check_terms tries each residual


def decomposition(case, fractions: Sequence[float] | None = None) -> Decomposition:
    """The XPINN split of ``case``: its ``trunk.xpinn_cuts``, or one cut per axis
    at ``fractions`` of the grid box (e.g. the authors' ``(0.38, 0.62)``), by
    default at its mid-planes."""
    lo, hi = case.grid.lo, case.grid.hi
    if fractions is not None:
        cuts = tuple((a + f * (b - a),) for a, b, f in zip(lo, hi, fractions))
    elif case.trunk.xpinn_cuts is not None:
        cuts = case.trunk.xpinn_cuts
    else:
        cuts = tuple(((a + b) / 2,) for a, b in zip(lo, hi))
    return Decomposition(tuple(lo), tuple(hi), cuts, case.grid.mask)


def _sizes(case, width: int | None = None) -> list[int]:
    return case.trunk.layer_sizes(len(case.inputs), len(case.fields), width)


def matched_width(case) -> int:
    """Hidden width of the plain MLP of the case's depth whose parameter count is
    nearest the LNN's (ties to the smaller width): :func:`~deepxde_lnn.networks.
    matched.matched_sizes`."""
    return matched_sizes(_sizes(case), parameter_count("lnn", case))[1]


def _transformed(net, case):
    if case.output_transform is not None:
        net.apply_output_transform(case.output_transform)
    return net


def _mlp(case, sizes=None, width: int | None = None):
    sizes = sizes or _sizes(case, width)
    return _transformed(MLP(sizes, ACTIVATION, TORCH_DEFAULT), case)


def _block_activation(text: str) -> str:
    return text if text == "same" else check_activation(text, "block_activation")


def _lnn(
    case, width, alpha_init, layout, block_activation, residual, train_alpha, blocks
):
    net = LNN(
        _sizes(case, width),
        ACTIVATION,
        TORCH_DEFAULT,
        alpha_init=alpha_init,
        layout=layout or case.trunk.lnn_layout,
        block_activation=_block_activation(block_activation),
        residual=residual,
        train_alpha=train_alpha,
        block_layers=blocks,
    )
    return _transformed(net, case)


def _rezero(case, width, alpha_init, block_activation):
    net = ReZero(
        _sizes(case, width),
        ACTIVATION,
        TORCH_DEFAULT,
        alpha_init=alpha_init,
        block_activation=_block_activation(block_activation),
    )
    return _transformed(net, case)


def _laaf(case, width, n, per_layer):
    """The plain MLP with ``"LAAF-n tanh"``: one slope for every layer (as
    ``dde.nn.FNN`` makes it from one string) or, ``per_layer``, one each."""
    name = f"LAAF-{n:g} {ACTIVATION}"
    sizes = _sizes(case, width)
    activation = [name] * (len(sizes) - 1) if per_layer else name
    return _transformed(MLP(sizes, activation, TORCH_DEFAULT), case)


def _fourier(case, width, scale):
    net = FourierMLP(_sizes(case, width), ACTIVATION, TORCH_DEFAULT, scale=scale)
    return _transformed(net, case)


def pirate_blocks(case) -> int:
    """The PirateNet's blocks for ``case``: one per three hidden layers of the
    case's trunk (each block has three dense layers), at least one."""
    return max(1, len(case.trunk.hidden) // 3)


def _pirate(case, width, blocks, scale, alpha_init):
    hidden = case.trunk.hidden
    if width is None and len(set(hidden)) > 1:
        raise ValueError(f"pirate needs equal hidden widths; got {hidden} (give width)")
    net = PirateNet(
        len(case.inputs),
        len(case.fields),
        width or hidden[0],
        blocks or pirate_blocks(case),
        scale=scale,
        alpha_init=alpha_init,
        activation=ACTIVATION,
    )
    return _transformed(net, case)


def _gated(case):
    net = GatedResidualAttention(len(case.inputs), len(case.fields))
    return _transformed(net, case)


def _xnet(case, fractions=None, sizes=None):
    dec = decomposition(case, fractions)
    return XNet([_mlp(case, sizes) for _ in range(dec.n_cells)], dec)


def _authors_xnet(case):
    sizes = [len(case.inputs), *AUTHORS_HIDDEN, len(case.fields)]
    return _xnet(case, AUTHORS_SPLIT, sizes)


def _same(case, terms: list[Term]) -> list[Term]:
    return terms


def _rba_terms(case, terms: list[Term]) -> list[Term]:
    return [replace(t, fixed=True) if t.kind == "pde" else t for t in terms]


def _rba_weights(case, terms: list[Term]) -> RBA:
    return RBA([t.name for t in terms if t.kind == "pde"])


def _xpinn_terms(case, terms: list[Term]) -> list[Term]:
    return xpinn_terms(terms, decomposition(case))


def _authors_terms(case, terms: list[Term]) -> list[Term]:
    return authors_terms(terms, decomposition(case, AUTHORS_SPLIT))


def _subdomain_means(fractions=None):
    def weights(case, terms: list[Term]) -> SubdomainMeans:
        return SubdomainMeans(decomposition(case, fractions))

    return weights


@dataclass(frozen=True)
class Builder:
    """What a method builds: its network ``net(case, **options)``, how it changes
    the case's loss terms and an optional per-row weights hook."""

    net: Callable[..., object]
    terms: Callable[[object, list[Term]], list[Term]] = _same
    weights: Callable[[object, list[Term]], RowWeights] | None = None


# The builders the methods name (:class:`~.methods.Method`'s ``builder``).
LIQUID = Builder(_lnn)
PLAIN = Builder(_mlp)
MATCHED = Builder(lambda c: _mlp(c, width=matched_width(c)))
REZERO = Builder(_rezero)
RBA_PDE = Builder(_mlp, _rba_terms, _rba_weights)
GATED = Builder(_gated)
XPINN = Builder(_xnet, _xpinn_terms, _subdomain_means())
XPINN_AUTHORS = Builder(_authors_xnet, _authors_terms, _subdomain_means(AUTHORS_SPLIT))
ADAPTIVE = Builder(_laaf)
PIRATE = Builder(_pirate)
FOURIER = Builder(_fourier)


def builder(method: str) -> Builder:
    """The :class:`Builder` that ``method`` (``NAME[:options]``) names."""
    m = parse(method)[0]
    found = globals().get(m.builder)
    if not isinstance(found, Builder):
        raise ValueError(f"method {m.name!r}: build has no Builder {m.builder!r}")
    return found


def check(method: str, case) -> None:
    """ValueError naming ``method`` unless its network builds for ``case``, within
    :func:`check_size` (the process's random state is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        try:
            check_size(method, case)
            build_net(method, case)
        except ValueError as err:
            msg = str(err)
            raise ValueError(msg if method in msg else f"method {method!r}: {msg}")


def check_size(method: str, case) -> None:
    """ValueError naming ``method`` if its network on ``case`` has more than
    :data:`~deepxde_lnn.networks.limits.MAX_PARAMETERS` trainable parameters
    (counted on the meta device: nothing is allocated)."""
    count = parameter_count(method, case)
    if count > MAX_PARAMETERS:
        raise ValueError(
            f"method {method!r}: its network has {count:,} trainable parameters "
            f"(trunk.hidden={case.trunk.hidden}), more than {MAX_PARAMETERS:,}"
        )


def check_terms(case) -> None:
    """ValueError naming the term unless every loss term of ``case`` evaluates on
    ``CHECK_POINTS`` points of its sampler: its residual (and its jet, where it has
    one) with a small network of the case's inputs, fields and output transform.
    Run once before anything trains, so that a residual that raises is one error,
    not a traceback after a run folder was made (random states left as they were).
    """
    with torch.random.fork_rng(devices=[]):
        net = _mlp(case, [len(case.inputs), 8, len(case.fields)])
        for term in case.terms:
            for how in DERIVATIVES if term.jet is not None else ("autograd",):
                try:
                    data = ResampledPDE(
                        [replace(term, n=CHECK_POINTS)], 0, False, derivatives=how
                    )
                    values = torch.as_tensor(data.train_next_batch()[0])
                except Exception as err:
                    raise ValueError(_failed(term, "sampler", err)) from err
                try:
                    values.requires_grad_()
                    data.block_losses([data.train_x], values, net(values), net)
                except Exception as err:
                    what = "jet" if how == "taylor" else "residual"
                    raise ValueError(_failed(term, what, err)) from err
                finally:
                    grad.clear()  # DeepXDE's cached derivatives of these tensors


def _failed(term: Term, what: str, err: Exception) -> str:
    """What went wrong when ``term``'s ``what`` was tried (an error of the
    package's that names the term says it already)."""
    if isinstance(err, ValueError) and f"Term {term.name!r}" in str(err):
        return str(err)
    return f"term {term.name!r}: its {what} raised {type(err).__name__}: {err}"


def build_net(method: str, case):
    """``method``'s network for ``case`` (initialised from torch's current RNG)."""
    m, options = parse(method)
    return builder(m.name).net(case, **{**m.defaults(), **options})


def build_data(
    method: str,
    case,
    profile: Profile,
    seed: int | None,
    derivatives: str = "taylor",
    compile_jets: bool = False,
) -> ResampledPDE:
    """``method``'s training data for ``case`` under ``profile``: the case's terms
    (with the profile's counts) as the method changes them, and its weights hook
    (``derivatives``, ``compile_jets``: as :class:`~.data.ResampledPDE` takes them)."""
    b = builder(method)
    terms = b.terms(case, case.make_terms(profile))
    weights = b.weights(case, terms) if b.weights else None
    return ResampledPDE(
        terms,
        seed=seed,
        resample=profile.resample,
        derivatives=derivatives,
        weights=weights,
        compile_jets=compile_jets,
    )


def loss_names(method: str, case, profile: Profile) -> list[str]:
    """The names of ``method``'s loss terms on ``case``, in the loss's order."""
    b = builder(method)
    return [t.name for t in b.terms(case, case.make_terms(profile))]


def parameter_count(method: str, case) -> int:
    """Trainable parameters of ``method``'s network on ``case`` (counted on a
    network built for the purpose, the random state left as it was)."""
    return count_built(lambda: build_net(method, case))
