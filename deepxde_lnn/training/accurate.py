"""L-BFGS after Adam, as the ``accurate`` profile trains (its settings:
:mod:`deepxde_lnn.study.shipped`; ``docs/protocol.md``).

``torch.optim.LBFGS`` with DeepXDE's L-BFGS settings (history 100, strong-Wolfe
line search, gradient tolerance 1e-8) on the loss scaled to 1 at the switch
(:class:`ScaledLBFGS`), stopping when it converges (the gradient tolerance is met
or a step no longer moves the parameters: :class:`LBFGSConverged`).

L-BFGS runs one iteration per training step, so each iteration is logged,
checkpointed and resumable exactly like an Adam step (DeepXDE's own L-BFGS loop
runs up to 1000 iterations per call, too coarse for checkpoints).
"""

from __future__ import annotations

import math

import deepxde as dde
import torch

__all__ = [
    "lbfgs_settings",
    "make_lbfgs",
    "ScaledLBFGS",
    "unit_scale",
    "iterations_done",
    "LBFGSConverged",
]


def unit_scale(loss: float) -> float:
    """``1 / loss``, the factor that makes ``loss`` 1 (1 for a zero or non-finite
    loss, which has nothing to scale by)."""
    return 1.0 / loss if math.isfinite(loss) and loss > 0 else 1.0


class ScaledLBFGS(torch.optim.LBFGS):
    """``torch.optim.LBFGS`` minimising ``c * L`` with ``c = 1 / L(w0)`` fixed at
    its first loss evaluation.

    torch drops a curvature pair ``(s, y)`` unless ``y.s > 1e-10``, an absolute
    threshold: once a PINN's loss is ~1e-7 its pairs are ~1e-11, the memory stops
    updating and L-BFGS crawls (docs/protocol.md). Scaling the loss scales ``y.s``
    by ``c`` and leaves the minimiser, the search directions and the Wolfe line
    search unchanged, but for the length of the very first step (the gradient
    tolerance then applies to ``c * grad L``).
    ``c`` is kept in the parameter group, so ``state_dict`` saves and restores it.
    """

    GROUP_STATE = ("loss_scale",)  # a group entry that is state, not a setting

    def __init__(self, params, **kwargs):
        super().__init__(params, **kwargs)
        self.param_groups[0]["loss_scale"] = None

    # as torch's LBFGS.step (its closure is required)
    def step(self, closure):  # type: ignore[override]  # noqa: D102 (the scaled loss)
        group = self.param_groups[0]

        def scaled():
            loss = closure()  # backward has run: scale the gradient too
            if group["loss_scale"] is None:
                group["loss_scale"] = unit_scale(float(loss.detach()))
            c = group["loss_scale"]
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(c)
            return loss * c

        return super().step(scaled)


def lbfgs_settings() -> dict:
    """DeepXDE's L-BFGS settings (``dde.optimizers.config.LBFGS_options``) as
    ``torch.optim.LBFGS`` takes them, one iteration per ``step()`` call; its
    evaluation budget is one gradient plus ``maxls`` line-search evaluations
    (torch caps the line search by what is left of ``max_eval``)."""
    o = dde.optimizers.config.LBFGS_options
    return {
        "lr": 1,
        "max_iter": 1,
        "max_eval": 1 + max(o["maxls"], 1),
        "tolerance_grad": o["gtol"],
        "tolerance_change": o["ftol"],
        "history_size": o["maxcor"],
        "line_search_fn": "strong_wolfe" if o["maxls"] > 0 else None,
    }


def make_lbfgs(params) -> ScaledLBFGS:
    """:func:`lbfgs_settings`' L-BFGS on the scaled loss."""
    return ScaledLBFGS(params, **lbfgs_settings())


def iterations_done(opt: torch.optim.LBFGS) -> int:
    """L-BFGS iterations performed so far (its ``n_iter`` state)."""
    state = opt.state.get(opt.param_groups[0]["params"][0], {})
    return int(state.get("n_iter", 0))


class LBFGSConverged(dde.callbacks.Callback):
    """Stops training when an L-BFGS step did not iterate (gradient below the
    tolerance) or its line search returned a zero step (the parameters did not
    move); sets ``converged``."""

    def __init__(self):
        super().__init__()
        self.converged = False
        self._before = 0

    def on_batch_begin(self):
        self._before = iterations_done(self.model.opt)

    def on_batch_end(self):
        opt = self.model.opt
        state = opt.state.get(opt.param_groups[0]["params"][0], {})
        stuck = float(state.get("t", 1.0)) == 0.0
        if iterations_done(opt) == self._before or stuck:
            self.converged = True
            self.model.stop_training = True
