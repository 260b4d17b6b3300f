"""A loss term: where its points come from, how many, and its residual."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch
from deepxde import icbc

from .conditions import CONDITIONS, check_supported, uncached

__all__ = ["Term", "KINDS", "Residual", "checked_terms"]

KINDS = ("pde", "operator", "value", "net")
Residual = Callable[[torch.Tensor, torch.Tensor], "torch.Tensor | list[torch.Tensor]"]


@dataclass(frozen=True)
class Term:
    """One loss term: its name, sampler ``(n, rng) -> (n, d)``, fixed count ``n``,
    a residual ``(x, y) -> tensor | list of (N, 1) tensors`` or a ``dde.icbc``
    condition, its kind and its weight ``w >= 0`` in the loss. ``fixed=True``
    draws the term's points once (a fixed pool) even when the data resamples.

    ``jet(x, net) -> residual`` optionally computes the same residual with
    Taylor-mode derivatives (:mod:`deepxde_lnn.networks.taylor`); it is used
    instead of ``residual`` when the network supports jets (tests check both
    agree).
    """

    name: str
    sampler: Callable[[int, np.random.Generator], np.ndarray]
    n: int
    residual: Residual | icbc.BC | icbc.IC
    kind: str = "operator"
    weight: float = 1.0
    jet: Callable[[torch.Tensor, torch.nn.Module], Residual] | None = None
    fixed: bool = False

    def __post_init__(self):
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"Term.name must be a non-empty string, got {self.name!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)):
            raise ValueError(
                f"Term {self.name!r}: n must be an integer, got {self.n!r}"
            )
        if self.n <= 0:
            raise ValueError(f"Term {self.name!r}: n must be positive, got {self.n}")
        if self.kind not in KINDS:
            raise ValueError(f"Term {self.name!r}: kind must be one of {KINDS}")
        _check_weight(self.name, self.weight)
        if not callable(self.sampler):
            raise ValueError(f"Term {self.name!r}: sampler must be callable")
        if self.jet is not None and not callable(self.jet):
            raise ValueError(f"Term {self.name!r}: jet must be callable or None")
        if not isinstance(self.fixed, bool):
            raise ValueError(f"Term {self.name!r}: fixed must be True or False")
        if self.kind == "net" and isinstance(self.residual, CONDITIONS):
            raise ValueError(f"Term {self.name!r}: kind 'net' needs a callable")
        if type(self.residual).__module__.startswith("deepxde.icbc"):
            check_supported(self.name, self.residual)
        if not (callable(self.residual) or isinstance(self.residual, CONDITIONS)):
            raise ValueError(f"Term {self.name!r}: residual must be callable or a BC")
        if isinstance(self.residual, (icbc.DirichletBC, icbc.IC)):
            # no derivative needed: use the shared forward pass
            object.__setattr__(self, "kind", "value")
        if isinstance(self.residual, CONDITIONS):
            object.__setattr__(self, "residual", uncached(self.name, self.residual))


def _check_weight(name: str, weight) -> None:
    ok = isinstance(weight, (int, float, np.number)) and not isinstance(weight, bool)
    if not ok or not np.isfinite(weight) or weight < 0:
        raise ValueError(
            f"Term {name!r}: weight must be a finite number >= 0, got {weight!r}"
        )


def checked_terms(terms) -> tuple[list[Term], list[str]]:
    """``terms`` as a non-empty list of uniquely named ``Term``s, and their names."""
    if isinstance(terms, Term) or not isinstance(terms, Iterable):
        raise ValueError(f"terms must be a sequence of Term, got {terms!r}")
    terms = list(terms)
    if not terms:
        raise ValueError("terms must contain at least one Term")
    bad = [i for i, t in enumerate(terms) if not isinstance(t, Term)]
    if bad:
        raise ValueError(f"terms[{bad[0]}] is not a Term: {terms[bad[0]]!r}")
    names = [t.name for t in terms]
    if len(set(names)) != len(names):
        raise ValueError(f"terms: names must be unique, got {names}")
    return terms, names
