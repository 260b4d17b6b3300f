"""XPINN (Jagtap & Karniadakis, CiCP 2020): one subnetwork per subdomain.

The domain's bounding box is cut by axis-aligned planes (``Decomposition``); each
point belongs to one cell by half-open membership ``[c_j, c_{j+1})`` per axis
(closed at the outer boundary), cell index ``k = sum_i b_i prod_{j<i} n_j``
(``k = 2 j + i`` for a 2 x 2 split). The loss is ``sum_q J_q`` with::

    J_q = W_u MSE_q(conditions) + W_F MSE_q(PDE residual)
        + sum_{interfaces of q} [ W_I MSE(u_q - {{u}}) + W_IF MSE(F_q - F_q+) ]

``{{u}} = (u_q + u_q+) / 2`` and ``F`` the PDE residual of each side's network, on
fresh points of every interface segment. Summed over both sides of an interface
these are ``W_I MSE(u_a - u_b) / 2`` and ``2 W_IF MSE(F_a - F_b)``. Points are drawn
as in the single-network protocol (same samplers and totals) and routed to their
subdomain, so ``MSE_q`` is the mean over the points that fell in ``q``
(:class:`SubdomainMeans`). ``authors_terms`` builds the authors' weakly coupled
variant (value and gradient matching at tiny weights, no average or residual
continuity).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from deepxde.nn.pytorch.nn import NN

from .data import RowWeights, Term
from .sampling import Edge

__all__ = [
    "Decomposition",
    "Interface",
    "XNet",
    "SubdomainMeans",
    "xpinn_terms",
    "authors_terms",
    "WEIGHTS",
]

#: default weights: conditions, PDE residual, interface average, interface residual
WEIGHTS = {"u": 20.0, "F": 1.0, "I": 20.0, "IF": 1.0}


@dataclass(frozen=True)
class Interface:
    """The face ``x[axis] = value`` between cells ``a`` (below) and ``b`` (above),
    spanning ``[lo, hi]`` on the other axes."""

    a: int
    b: int
    axis: int
    value: float
    lo: tuple[float, ...]
    hi: tuple[float, ...]


@dataclass(frozen=True)
class Decomposition:
    """The box ``[lo, hi]`` cut at ``cuts[i]`` along axis ``i``; ``mask(points)``
    (optional) says which points lie in the domain (e.g. a disk)."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    cuts: tuple[tuple[float, ...], ...]
    mask: Callable[[np.ndarray], np.ndarray] | None = None

    def __post_init__(self):
        if len(self.cuts) != len(self.lo) or len(self.hi) != len(self.lo):
            raise ValueError("cuts: one tuple of cut positions per axis")
        for i, c in enumerate(self.cuts):
            if list(c) != sorted(c) or any(not self.lo[i] < v < self.hi[i] for v in c):
                raise ValueError(
                    f"cuts[{i}] must be increasing and inside "
                    f"({self.lo[i]}, {self.hi[i]}); got {c}"
                )

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(c) + 1 for c in self.cuts)

    @property
    def n_cells(self) -> int:
        return math.prod(self.shape)

    def _strides(self) -> list[int]:
        return [math.prod(self.shape[:i]) for i in range(len(self.shape))]

    def route(self, x: np.ndarray) -> np.ndarray:
        """Cell index of every row of ``x`` (numpy)."""
        k = np.zeros(len(x), dtype=np.int64)
        for i, (c, s) in enumerate(zip(self.cuts, self._strides())):
            k += s * np.searchsorted(np.asarray(c), x[:, i], side="right")
        return k

    def route_torch(self, x: torch.Tensor) -> torch.Tensor:
        """Cell index of every row of ``x`` (torch, on ``x``'s device)."""
        k = torch.zeros(len(x), dtype=torch.int64, device=x.device)
        for i, (c, s) in enumerate(zip(self.cuts, self._strides())):
            edges = torch.as_tensor(c, dtype=x.dtype, device=x.device)
            k += s * torch.bucketize(x[:, i].detach().contiguous(), edges, right=True)
        return k

    def interfaces(self) -> list[Interface]:
        """Every face between two neighbouring cells."""
        edges = [(lo, *c, hi) for lo, c, hi in zip(self.lo, self.cuts, self.hi)]
        strides, out = self._strides(), []
        for axis, cuts in enumerate(self.cuts):
            others = [range(n) if i != axis else [0] for i, n in enumerate(self.shape)]
            for j, value in enumerate(cuts):
                for bins in itertools.product(*others):
                    b = list(bins)
                    b[axis] = j
                    a = sum(s * v for s, v in zip(strides, b))
                    lo = tuple(edges[i][b[i]] for i in range(len(b)))
                    hi = tuple(edges[i][b[i] + 1] for i in range(len(b)))
                    out.append(Interface(a, a + strides[axis], axis, value, lo, hi))
        return out

    def sampler(self, face: Interface) -> "FaceSampler":
        return FaceSampler(face, self.mask)


@dataclass(frozen=True)
class FaceSampler:
    """Uniform points on an interface face, kept inside the domain mask."""

    face: Interface
    mask: Callable[[np.ndarray], np.ndarray] | None = None

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        edge = Edge(self.face.lo, self.face.hi, self.face.axis, self.face.value)
        if self.mask is None:
            return edge(n, rng)
        parts, have = [], 0
        for _ in range(1000):
            x = edge(2 * n, rng)
            x = x[self.mask(x)]
            parts.append(x)
            have += len(x)
            if have >= n:
                return np.vstack(parts)[:n]
        raise ValueError(f"interface {self.face} lies (almost) outside the domain")


class XNet(NN):
    """One subnetwork per cell; ``net(x)`` routes each row to its cell's network
    and ``net.sub(q, x)`` evaluates network ``q`` on all rows."""

    def __init__(
        self, subnets: Sequence[torch.nn.Module], decomposition: Decomposition
    ):
        super().__init__()
        if len(subnets) != decomposition.n_cells:
            raise ValueError(
                f"subnets: {decomposition.n_cells} needed (one per cell), "
                f"got {len(subnets)}"
            )
        self.subnets = torch.nn.ModuleList(subnets)
        self.decomposition = decomposition

    def sub(self, q: int, x: torch.Tensor) -> torch.Tensor:
        return self.subnets[q](x)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if len(inputs) == 0:
            return self.subnets[0](inputs)
        k = self.decomposition.route_torch(inputs)
        outs, rows = [], []
        for q, net in enumerate(self.subnets):
            idx = torch.nonzero(k == q).squeeze(1)
            if idx.numel():
                outs.append(net(inputs[idx]))
                rows.append(idx)
        return torch.cat(outs)[torch.argsort(torch.cat(rows))]

    def extra_repr(self) -> str:
        return f"cells={self.decomposition.shape}"


class SubdomainMeans(RowWeights):
    """Row multipliers ``N / N_q`` that turn a term's mean over all rows into the
    sum over subdomains of the mean over each subdomain's rows (``kind="net"``
    interface terms are left alone)."""

    def __init__(self, decomposition: Decomposition):
        self.decomposition = decomposition

    def __call__(self, index: int, term: Term, rows: np.ndarray, r, training: bool):
        if term.kind == "net":
            return None
        k = self.decomposition.route(np.asarray(rows, np.float64))
        counts = np.bincount(k, minlength=self.decomposition.n_cells)
        omega = len(k) / counts[k]
        return torch.as_tensor(omega[:, None], dtype=_dtype(r), device=_device(r))


def _dtype(r):
    return (r[0] if isinstance(r, (list, tuple)) else r).dtype


def _device(r):
    return (r[0] if isinstance(r, (list, tuple)) else r).device


def _difference(ra, rb, scale: float):
    if isinstance(ra, (list, tuple)):
        return [scale * (a - b) for a, b in zip(ra, rb)]
    return scale * (ra - rb)


def xpinn_terms(
    terms: Sequence[Term],
    decomposition: Decomposition,
    n_interface: int = 250,
    weights: dict | None = None,
) -> list[Term]:
    """The case's terms weighted ``W_F`` (kind ``pde``) or ``W_u`` (the others),
    plus an average-solution and a residual-continuity term per interface."""
    w = {**WEIGHTS, **(weights or {})}
    out = [
        replace(t, weight=t.weight * (w["F"] if t.kind == "pde" else w["u"]))
        for t in terms
    ]
    pdes = [t for t in terms if t.kind == "pde"]
    for face in decomposition.interfaces():
        tag, sampler = f"{face.a}|{face.b}", decomposition.sampler(face)
        out.append(
            Term(
                f"avg {tag}",
                sampler,
                n_interface,
                _jump(face, 1 / math.sqrt(2)),
                "net",
                w["I"],
            )
        )
        for t in pdes:
            out.append(
                Term(
                    f"{t.name} jump {tag}",
                    sampler,
                    n_interface,
                    _residual_jump(face, t.residual, math.sqrt(2)),
                    "net",
                    w["IF"],
                )
            )
    return out


def _jump(face: Interface, scale: float):
    def residual(x, net):
        return scale * (net.sub(face.a, x) - net.sub(face.b, x))

    return residual


def _residual_jump(face: Interface, pde, scale: float):
    def residual(x, net):
        return _difference(
            pde(x, net.sub(face.a, x)), pde(x, net.sub(face.b, x)), scale
        )

    return residual


def _gradient_jump(face: Interface):
    def residual(x, net):
        ua, ub = net.sub(face.a, x), net.sub(face.b, x)
        cols = []
        for j in range(ua.shape[1]):
            ga = torch.autograd.grad(ua[:, j].sum(), x, create_graph=True)[0]
            gb = torch.autograd.grad(ub[:, j].sum(), x, create_graph=True)[0]
            cols.append(ga - gb)
        return torch.cat(cols, dim=1)

    return residual


def authors_terms(
    terms: Sequence[Term], decomposition: Decomposition, n_interface: int = 24
) -> list[Term]:
    """The authors' weakly coupled variant: the case's terms unweighted, plus
    ``1e-6 MSE(u_a - u_b) + 1e-8 sum_i MSE(d_i u_a - d_i u_b)`` per interface."""
    out = list(terms)
    for face in decomposition.interfaces():
        tag, sampler = f"{face.a}|{face.b}", decomposition.sampler(face)
        out.append(
            Term(f"u {tag}", sampler, n_interface, _jump(face, 1.0), "net", 1e-6)
        )
        out.append(
            Term(f"grad {tag}", sampler, n_interface, _gradient_jump(face), "net", 1e-8)
        )
    return out
