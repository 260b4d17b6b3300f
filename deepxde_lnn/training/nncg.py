"""NNCG after L-BFGS, where a run asks for it (``nncg > 0``): the last phase of
Rathore et al.'s recipe (ICML 2024), Adam, then L-BFGS, then NNCG.

NNCG (Nyström–Newton-CG) takes damped Newton steps: it solves
``(H + mu I) d = g`` by conjugate gradients on Hessian-vector products, the CG
preconditioned by a rank-``rank`` Nyström approximation of ``H`` that is rebuilt
every ``update_freq`` steps, and moves ``w <- w - t d`` with ``t`` from an Armijo
line search. Where L-BFGS stalls, its curvature is what the quasi-Newton memory
lacks. The implementation is DeepXDE's own (``deepxde.optimizers.pytorch.NNCG``):
one NNCG iteration per training step, like every phase here.

:class:`ResumableNNCG` keeps what DeepXDE's NNCG holds as attributes (the Nyström
factors, its iteration count, the last direction that warm-starts CG) in its
``state_dict`` as well, so a run's checkpoint holds it and a resumed run continues
exactly; the preconditioner's random sketch draws from torch's generator, which the
checkpoint restores.

Settings (:data:`NNCG_SETTINGS`): DeepXDE's defaults (``set_NNCG_options``) but CG
stops after 100 iterations, not 1000: each CG iteration is a Hessian-vector product
(a few gradients' cost), and a thousand of them make one step of a CPU run cost
minutes.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import deepxde as dde
import torch
from deepxde.optimizers.pytorch.nncg import NNCG

__all__ = ["NNCG_SETTINGS", "ResumableNNCG", "compile_nncg", "nncg_options"]

#: NNCG's arguments beside the parameters (DeepXDE's defaults but ``cg_max_iters``)
NNCG_SETTINGS = {
    "lr": 1.0,
    "rank": 50,
    "mu": 0.1,
    "update_freq": 20,
    "chunk_size": 1,
    "cg_tol": 1e-16,
    "cg_max_iters": 100,
    "line_search_fn": "armijo",
}
#: the names ``dde.optimizers.set_NNCG_options`` gives the settings
_DDE_NAMES = {
    "lr": "lr",
    "rank": "rank",
    "mu": "mu",
    "update_freq": "updatefreq",
    "chunk_size": "chunksz",
    "cg_tol": "cgtol",
    "cg_max_iters": "cgmaxiter",
    "line_search_fn": "lsfun",
}
#: NNCG's attributes that are state, kept in the first parameter's state entry
_KEPT = ("U", "S", "rho", "old_dir")


class ResumableNNCG(NNCG):
    """DeepXDE's NNCG with its preconditioner and counters in ``state_dict``."""

    def step(self, closure):  # noqa: D102  (DeepXDE's, state kept in self.state)
        state = self.state[self._params[0]]
        if "n_iters" in state:
            self.n_iters = int(state["n_iters"])
            for name in _KEPT:  # copies: CG updates its warm start in place
                setattr(self, name, state[name].clone())
        # DeepXDE's NNCG prints "d is not a descent direction" (Armijo then
        # keeps the step short) and reads its line search's losses with float()
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Converting a tensor with requires_grad")
            loss = super().step(closure)
        # DeepXDE keeps the step length under the group's index, which
        # state_dict would confuse with the first parameter's: kept with ours
        moved = self.state.pop(0, None)
        if moved is not None:
            state["t"] = float(moved["t"])
        state["n_iters"] = torch.tensor(self.n_iters)
        for name in _KEPT:
            state[name] = getattr(self, name).clone()
        return loss


def nncg_options() -> dict:
    """:data:`NNCG_SETTINGS` as ``dde.optimizers.set_NNCG_options`` takes them."""
    return {_DDE_NAMES[k]: v for k, v in NNCG_SETTINGS.items()}


def compile_nncg(model: dde.Model, loss_weights) -> ResumableNNCG:
    """Compile ``model`` for NNCG. DeepXDE gives NNCG its own training step (a
    closure that leaves the gradient to the optimizer) by the optimizer's name and
    builds it from its global options: those are set for the call and put back,
    and the optimizer it built is replaced by a :class:`ResumableNNCG` of the same
    settings."""
    options = dde.optimizers.config.NNCG_options
    before = dict(options)
    dde.optimizers.set_NNCG_options(**nncg_options())
    try:
        model.compile("NNCG", loss_weights=loss_weights, verbose=0)
    finally:
        options.clear()
        options.update(before)
    model.opt = ResumableNNCG(model.opt.param_groups[0]["params"], **NNCG_SETTINGS)
    return model.opt
