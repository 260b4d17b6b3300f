"""Residuals through Taylor-mode jets (:mod:`deepxde_lnn.networks.taylor`) where
the network supports them, compiled on request (:mod:`deepxde_lnn.networks.compiled`):
:class:`JetResiduals`, a part of :class:`~deepxde_lnn.problems.data.ResampledPDE`."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...networks import compiled, taylor

if TYPE_CHECKING:
    from .terms import Term

__all__ = ["JetResiduals", "DERIVATIVES"]

DERIVATIVES = ("taylor", "autograd")


class JetResiduals:
    """The jet part of a ``ResampledPDE``: it reads the data's ``terms``,
    ``names``, ``slices``, ``derivatives``, ``compile_jets``, ``test_x`` and
    ``_points``."""

    if TYPE_CHECKING:  # the ResampledPDE's
        terms: list[Term]
        names: list[str]
        slices: list[slice]
        derivatives: str
        compile_jets: bool
        _compiled: dict
        _jet_ok: dict[int, bool]
        _jet_nested: dict[int, dict]
        test_x: np.ndarray

        def _points(self, Xs, slices, like: torch.Tensor) -> torch.Tensor: ...

    def _jet_residuals(self, Xs, inputs, net, stacked=None) -> dict:
        """Residuals of the terms computed with jets, by term index. Terms sharing
        one jet function (e.g. the same operator on two edges) are evaluated in
        one pass over their stacked rows (jets act row by row), run by run; a
        jet the network cannot take (:meth:`_nested_reason`) is left out, its
        terms to nested autograd."""
        one = net if stacked is None else stacked.template
        if not self._jet_groups() or not self.uses_jets(one):
            return {}
        out: dict[int, torch.Tensor] = {}
        K = len(Xs)
        if self.compile_jets and torch.is_grad_enabled():
            compiled.begin_step(inputs.device)
        for jet, idx in self._jet_groups().items():
            x = self._points(Xs, [self.slices[i] for i in idx], inputs)
            if self._nested_reason(jet, idx, one, x) is not None:
                continue
            if stacked is None:
                r = self._jet_function(jet)(x, net)
            else:
                r = self._jet_function(_per_run(jet))(x, stacked)
            parts = torch.split(
                r.reshape(K, -1, *r.shape[1:]), [self.terms[i].n for i in idx], 1
            )
            out.update((i, p.reshape(-1, *p.shape[2:])) for i, p in zip(idx, parts))
        return out

    def _jet_groups(self) -> dict:
        """``{jet: [term indices]}`` of the derivative terms with a jet."""
        groups: dict = {}
        for i, t in enumerate(self.terms):
            if t.jet is not None and t.kind != "value":
                groups.setdefault(t.jet, []).append(i)
        return groups

    def _nested_reason(self, jet, idx: list, net, x: torch.Tensor) -> str | None:
        """Why ``jet`` (the jet of terms ``idx``) cannot run on ``net`` (a single
        network jets follow), so that those terms take nested autograd; ``None``
        where it can.

        Only an output transform limits a jet here, to order 1
        (:class:`~deepxde_lnn.networks.taylor.TransformOrder`). A jet function
        declares its orders only in its calls to the jets, which check them
        before any propagation; so it is tried once per network, eagerly on one
        row of its points ``x``, and the answer kept. A warning says it once
        per jet (:func:`~deepxde_lnn.networks.taylor.warn_nested`).
        """
        if getattr(net, "_output_transform", None) is None:
            return None
        known = self._jet_nested.setdefault(id(net), {})
        if jet not in known:
            known[jet] = None
            try:
                jet(x[:1], net)
            except taylor.TransformOrder:
                known[jet] = taylor.TRANSFORM_ORDER
                names = ", ".join(self.terms[i].name for i in idx)
                what = f"term{'s' if len(idx) > 1 else ''} {names}"
                taylor.warn_nested(
                    (taylor.TransformOrder, jet), f"{what}: {taylor.TRANSFORM_ORDER}"
                )
        return known[jet]

    def _jet_function(self, jet):
        """``jet`` itself, or its compiled version (one per jet function) while
        gradients are recorded (training; an evaluation is not worth a compile).
        Stacked runs compile ``_per_run(jet)``: the jet vmapped over the runs."""
        if not (self.compile_jets and torch.is_grad_enabled()):
            return jet
        if jet not in self._compiled:
            self._compiled[jet] = compiled.compiled(jet)
        return self._compiled[jet]

    def uses_jets(self, net) -> bool:
        """Whether the jet residuals are used with ``net``; where a missing rule
        alone keeps jets from it, a warning says which
        (:func:`~deepxde_lnn.networks.taylor.warn_missing_rule`)."""
        if self.derivatives != "taylor":
            return False
        key = id(net)
        if key not in self._jet_ok:
            self._jet_ok[key] = taylor.supported(net)
            if not self._jet_ok[key] and any(t.jet is not None for t in self.terms):
                taylor.warn_missing_rule(net)
        return self._jet_ok[key]

    def describe_derivatives(self, net) -> str:
        """How input derivatives are taken, for run metadata: the terms on jets,
        those on nested autograd (terms that take derivatives and have no jet),
        those whose jet the network cannot take, with why, and, where no jet
        runs, why."""
        jets = [t.name for t in self.terms if t.jet is not None and t.kind != "value"]
        rest = [t.name for t in self.terms if t.jet is None and t.kind != "value"]
        if not (jets and self.uses_jets(net)):
            return "nested autograd (DeepXDE)" + self._why_no_jets(net, jets)
        p = next(net.parameters())  # the probe's dtype and device
        on: list[str] = []
        nested: dict[str, list[str]] = {}  # term names by reason
        for jet, idx in self._jet_groups().items():
            row = self.test_x[self.slices[idx[0]]][:1]
            x = torch.as_tensor(row, dtype=p.dtype, device=p.device)
            why = self._nested_reason(jet, idx, net, x)
            names = [self.terms[i].name for i in idx]
            if why is None:
                on += names
            else:
                nested.setdefault(why, []).extend(names)
        parts = []
        if on:
            how = "Taylor-mode jets"
            if self.compile_jets and not any(
                f.fallback for f in self._compiled.values()
            ):
                how += " compiled with torch.compile"
            parts.append(f"{how} ({', '.join(sorted(on, key=self.names.index))})")
        if rest:
            parts.append(f"nested autograd ({', '.join(rest)})")
        parts += [
            f"nested autograd ({', '.join(n)}): {why}" for why, n in nested.items()
        ]
        return "; ".join(parts)

    def _why_no_jets(self, net, jets: list) -> str:
        if not jets:
            return ""
        if self.derivatives != "taylor":
            return f"; derivatives={self.derivatives!r}"
        return f"; no jets: {taylor.unsupported(net)}"


@functools.cache
def _per_run(jet):
    """``jet`` for a :class:`~deepxde_lnn.networks.stacked.StackedNet`: each run's
    jet on its row block (``StackedNet.per_run``), one function per ``jet`` (so
    one compiled function per jet for stacked runs too)."""

    def per_run(x: torch.Tensor, stacked):
        return stacked.per_run(jet, x)

    return per_run
