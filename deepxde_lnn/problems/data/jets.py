"""Residuals through Taylor-mode jets (:mod:`deepxde_lnn.networks.taylor`) where
the network supports them, compiled on request (:mod:`deepxde_lnn.networks.compiled`):
:class:`JetResiduals`, a part of :class:`~deepxde_lnn.problems.data.ResampledPDE`."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import torch

from ...networks import compiled, taylor

if TYPE_CHECKING:
    from .terms import Term

__all__ = ["JetResiduals", "DERIVATIVES"]

DERIVATIVES = ("taylor", "autograd")


class JetResiduals:
    """The jet part of a ``ResampledPDE``: it reads the data's ``terms``,
    ``slices``, ``derivatives``, ``compile_jets`` and ``_points``."""

    if TYPE_CHECKING:  # the ResampledPDE's
        terms: list[Term]
        slices: list[slice]
        derivatives: str
        compile_jets: bool
        _compiled: dict
        _jet_ok: dict[int, bool]

        def _points(self, Xs, slices, like: torch.Tensor) -> torch.Tensor: ...

    def _jet_residuals(self, Xs, inputs, net, stacked=None) -> dict:
        """Residuals of the terms computed with jets, by term index. Terms sharing
        one jet function (e.g. the same operator on two edges) are evaluated in
        one pass over their stacked rows (jets act row by row), run by run."""
        if not any(t.jet is not None and t.kind != "value" for t in self.terms):
            return {}
        if not self.uses_jets(net if stacked is None else stacked.template):
            return {}
        groups: dict = {}
        for i, t in enumerate(self.terms):
            if t.jet is not None and t.kind != "value":
                groups.setdefault(t.jet, []).append(i)
        out: dict[int, torch.Tensor] = {}
        K = len(Xs)
        if self.compile_jets and torch.is_grad_enabled():
            compiled.begin_step(inputs.device)
        for jet, idx in groups.items():
            x = self._points(Xs, [self.slices[i] for i in idx], inputs)
            if stacked is None:
                r = self._jet_function(jet)(x, net)
            else:
                r = self._jet_function(_per_run(jet))(x, stacked)
            parts = torch.split(
                r.reshape(K, -1, *r.shape[1:]), [self.terms[i].n for i in idx], 1
            )
            out.update((i, p.reshape(-1, *p.shape[2:])) for i, p in zip(idx, parts))
        return out

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
        those on nested autograd (terms that take derivatives and have no jet)
        and, where no jet runs, why."""
        jets = [t.name for t in self.terms if t.jet is not None and t.kind != "value"]
        rest = [t.name for t in self.terms if t.jet is None and t.kind != "value"]
        if jets and self.uses_jets(net):
            how = "Taylor-mode jets"
            if self.compile_jets and not any(
                f.fallback for f in self._compiled.values()
            ):
                how += " compiled with torch.compile"
            how = f"{how} ({', '.join(jets)})"
            return how + (f"; nested autograd ({', '.join(rest)})" if rest else "")
        return "nested autograd (DeepXDE)" + self._why_no_jets(net, jets)

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
