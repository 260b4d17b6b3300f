"""Training a stack phase after phase: Adam (with the profile's schedule), then
L-BFGS and NNCG if asked, each compiled into the stack's ``dde.Model`` and trained
from where its checkpoints stand, with a checkpoint every ``checkpoint_every`` steps
(the :class:`~.controller.Controller` inside ``dde.Model.train``)."""

from __future__ import annotations

import warnings
from dataclasses import asdict

import deepxde as dde
import numpy as np
import torch

from ..config import RunConfig, check_weights_fit
from ..runs.checkpoint import (
    PHASES,
    CheckpointError,
    rng_state,
    save_checkpoints,
    set_rng_state,
    short_error,
)
from ..runs.cost import load_average
from .accurate import LBFGSConverged, iterations_done, make_lbfgs
from .controller import Controller
from .graphed import GraphedStep, plain_adam_state, plain_scheduler_state
from .nncg import compile_nncg
from .soap import make_soap
from .stack import Run, Stack, check_checkpoints, restore, stacked_from
from .stacking import select_adam_, split_adam_state, stack_adam_states

__all__ = [
    "adam_text",
    "advance",
    "compile_phase",
    "configured",
    "loss_table",
    "multi_tensor",
    "phases",
    "start",
    "train",
]


def phases(cfg: RunConfig) -> list[tuple[str, int]]:
    """``(optimizer, last step)`` of each training phase: Adam, then L-BFGS, then
    NNCG (each finisher where it has iterations)."""
    assert cfg.iterations is not None  # resolved, and trained by the package
    out, end = [("adam", cfg.iterations)], cfg.iterations
    for name in PHASES[1:]:
        if getattr(cfg, name):
            end += getattr(cfg, name)
            out.append((name, end))
    return out


def start(stack: Stack, states: list) -> None:
    """Compile the stack's model for its first phase, restored from the runs'
    checkpoint ``states`` if given (the optimizer of the phase they stopped in);
    ``CheckpointError`` naming them if they do not fit."""
    if states[0] is None:
        compile_phase(stack, "adam")
        return
    check_checkpoints(stack, states)
    try:
        restore(stack, states)
        compile_phase(stack, "adam")
        assert stack.saved_opt is not None  # restored
        if stack.saved_opt["phase"] != "adam":  # its optimizer state, checked now
            compile_phase(stack, stack.saved_opt["phase"])
    except (RuntimeError, ValueError, TypeError, KeyError, IndexError) as err:
        where = ", ".join(str(r.folder.checkpoint) for r in stack.runs)
        raise CheckpointError(
            f"checkpoint {where} does not fit this run ({short_error(err)}); "
            "delete it to restart the run from scratch"
        ) from None


def compile_phase(stack: Stack, phase: str) -> None:
    """Compile the model for ``phase`` (Adam with the profile's decay, or a
    finisher, L-BFGS or NNCG, with frozen loss weights), restoring a checkpoint's
    optimizer state saved in the same phase (the runs' states stacked when K > 1)."""
    stack.graphed = None
    weights = loss_weights(stack)
    if phase == "adam":  # the first phase: Adam, or SOAP where asked
        decay = stack.profile.decay
        opt: torch.optim.Optimizer | str
        if stack.cfg.first_optimizer == "soap":
            assert stack.cfg.lr is not None  # resolved
            opt, lr = make_soap(stack.net.parameters(), stack.cfg.lr), None
        else:
            opt, lr = "adam", stack.cfg.lr
        stack.model.compile(opt, lr=lr, decay=decay, loss_weights=weights, verbose=0)
        multi_tensor(stack.model.opt)
        stack.adam_text = adam_text(stack.model.opt, decay)
    elif phase == "lbfgs":
        lbfgs = make_lbfgs(stack.net.parameters())
        stack.model.compile(lbfgs, loss_weights=weights, verbose=0)
        stack.data.update_weights = False
    else:
        compile_nncg(stack.model, weights)
        stack.data.update_weights = False
    saved = stack.saved_opt
    if saved is not None and saved["phase"] == phase:
        opts = [configured(stack.model.opt, s) for s in saved["opt"]]
        stack.model.opt.load_state_dict(
            stack_adam_states(opts) if stack.stacked else opts[0]
        )
        if stack.model.lr_scheduler is not None:
            advance(stack.model.lr_scheduler, stack.start)
    if phase == "adam" and stack.cfg.cuda_graph:
        stack.graphed = GraphedStep(stack.model).install()
    stack.phase = phase


def multi_tensor(opt: torch.optim.Optimizer) -> None:
    """A ``torch.optim.Adam`` steps all its tensors at once (``foreach``), on a
    CPU too, where torch defaults to one tensor after another: the same numbers
    bit for bit, in about half the time of the step's optimizer part."""
    if type(opt) is torch.optim.Adam:
        for group in opt.param_groups:
            if group.get("foreach") is None and not group.get("fused"):
                group["foreach"] = True


def configured(opt: torch.optim.Optimizer, saved: dict) -> dict:
    """The optimizer state ``saved`` (a checkpoint's) with the settings of
    ``opt``, compiled from the run's configuration: only the per-parameter
    state (Adam's moments, L-BFGS's history) and the group entries an
    optimizer declares as state (``GROUP_STATE``: ScaledLBFGS's loss scale)
    come from the checkpoint, never its lr, betas, eps or weight decay."""
    groups = opt.state_dict()["param_groups"]
    if len(saved["param_groups"]) != len(groups):
        raise ValueError("the optimizer has another number of parameter groups")
    kept = getattr(opt, "GROUP_STATE", ())
    return {
        **saved,  # an optimizer's own entries (heavyball's), as it saved them
        "state": saved["state"],
        "param_groups": [
            {**g, **{k: s[k] for k in kept if k in s}}
            for g, s in zip(groups, saved["param_groups"])
        ],
    }


def advance(scheduler, steps: int) -> None:
    """Step a freshly compiled learning-rate ``scheduler`` ``steps`` times, as
    the run did before its checkpoint: its learning rate is then the one the
    uninterrupted run has there, to the last bit (a chained schedule's product
    is replayed, not taken from the file; a few microseconds a step)."""
    with warnings.catch_warnings():  # "scheduler.step() before optimizer.step()"
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(steps):
            scheduler.step()


def loss_weights(stack: Stack) -> list | None:
    """The run's ``loss_weights`` as DeepXDE multiplies its stacked losses: one
    per term, or one column per term for K stacked runs (each run's terms
    weighted as if it trained alone)."""
    weights = stack.cfg.loss_weights
    if weights is None:
        return None
    check_weights_fit(weights, stack.runs[0].data.names)  # a user's data: named now
    return [[w] for w in weights] if stack.stacked else list(weights)


#: the first phase optimizer's settings a record names (those it has)
_SETTINGS = ("betas", "eps", "weight_decay", "shampoo_beta", "precondition_frequency")


def adam_text(opt, decay) -> str:
    """The first phase optimizer's settings and schedule (Adam's, SOAP's), for
    the record."""
    d = opt.defaults
    lr = "constant lr" if decay is None else f"lr decay {tuple(decay)}"
    settings = ", ".join(
        f"{k}={tuple(d[k]) if k == 'betas' else d[k]}" for k in _SETTINGS if k in d
    )
    return f"{type(opt).__name__}({settings}), {lr}"


def loss_table(run: Run, rows: np.ndarray) -> np.ndarray:
    """``run``'s loss rows of earlier phases and sessions, then ``rows``."""
    prior = run.prior_rows
    if prior is None or not prior.size:
        return rows
    return np.vstack([prior, rows]) if rows.size else prior


def train(stack: Stack, signals, progress, callbacks) -> Controller:
    """Train phase after phase from ``stack.start``; returns the last phase's
    controller (every phase's rows and seconds are folded into the runs'
    ``prior_rows``/``prior_seconds``/``prior_cpu_seconds``); ``stack.loads`` holds
    the load average as training starts and ends."""
    start = load_average()
    ctl = _train_phases(stack, signals, progress, callbacks)
    stack.loads = (start, load_average())
    return ctl


def _train_phases(stack: Stack, signals, progress, callbacks) -> Controller:
    """The phases left, from the one the stack stands in; an L-BFGS that converged
    before its cap hands the steps it left over to the next phase."""
    first = PHASES.index(stack.phase)
    todo = [
        (p, end)
        for p, end in phases(stack.cfg)
        if end > stack.start and PHASES.index(p) >= first
    ]
    for i in stack.live:
        stacked_from(stack.runs[i], stack.start, len(stack.live))
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    for k, (phase, end) in enumerate(todo):
        if phase != stack.phase:
            compile_phase(stack, phase)
        ctl = _train_phase(stack, signals, progress, callbacks, end)
        _fold(stack, ctl)
        stopped = not ctl.live or ctl.interrupted or ctl.out_of_time
        handed_over = stack.phase == "lbfgs" and stack.converged
        if k == len(todo) - 1 or (ctl.step < end and not handed_over) or stopped:
            return ctl
        stack.start, stack.torch_rng = ctl.step, None
    raise AssertionError("no phase left to train")  # finished runs are reused


def _fold(stack: Stack, ctl: Controller) -> None:
    """A finished phase's loss rows and seconds into its runs; the runs that
    diverged leave the stack."""
    share, cpu = ctl.elapsed() / len(stack.runs), ctl.cpu_elapsed() / len(stack.runs)
    for i in ctl.rows:
        r = stack.runs[i]
        r.prior_rows = loss_table(r, ctl.table(i))
        r.prior_seconds += share
        r.prior_cpu_seconds = _plus(r.prior_cpu_seconds, cpu)
        r.diverged_at = ctl.diverged.get(i)
    stack.wall_seconds += ctl.elapsed()
    stack.cpu_seconds += ctl.cpu_elapsed()
    stack.live = list(ctl.live)
    if stack.graphed is not None:
        stack.adam_step = stack.graphed.engine


def _net_states(stack: Stack) -> list[dict]:
    """The live runs' network state dicts, in stack order."""
    return stack.net.state_dicts() if stack.stacked else [stack.net.state_dict()]


def _opt_states(stack: Stack) -> list[dict]:
    state = stack.model.opt.state_dict()
    if stack.graphed is not None:
        state = plain_adam_state(state)
    return split_adam_state(state, len(stack.live)) if stack.stacked else [state]


def _saver(stack: Stack):
    """``save(step, tables, seconds, cpu_seconds)`` for the controller: each live
    run's checkpoint, with everything a resumed run needs (the single-run
    format)."""

    def save(step, tables, seconds, cpu_seconds):
        sched = stack.model.lr_scheduler
        nets, opts = _net_states(stack), _opt_states(stack)
        written = []  # a stack's checkpoints: one group, replaced together
        for pos, i in enumerate(stack.live):
            r = stack.runs[i]
            payload = {
                "config": asdict(r.cfg),
                "step": step,
                "net": nets[pos],
                "phase": stack.phase,
                "opt": opts[pos],
                "scheduler": None if sched is None else plain_scheduler_state(sched),
                # the sampler's state *before* its latest draw: dde.Model.train
                # draws once before its first step, so a resumed run redraws it
                "rng": rng_state(r.data.rng_state_before_draw),
                "loss": torch.from_numpy(loss_table(r, tables[i])),
                "seconds": r.prior_seconds + seconds / len(stack.runs),
                **_cpu_entry(_plus(r.prior_cpu_seconds, cpu_seconds / len(stack.runs))),
                "data": r.data.state_dict(),  # e.g. RBA's multipliers
                "stack_sizes": r.stack_sizes,
            }
            written.append((r.folder.checkpoint, payload))
        save_checkpoints(written)

    return save


def _plus(prior: float | None, seconds: float) -> float | None:
    """CPU seconds so far: unknown stays unknown (a session that kept none)."""
    return None if prior is None else prior + seconds


def _cpu_entry(cpu_seconds: float | None) -> dict:
    """A checkpoint's CPU time: none where it is unknown (as older checkpoints)."""
    return {} if cpu_seconds is None else {"cpu_seconds": cpu_seconds}


def _drop(stack: Stack, positions: list[int], step: int) -> None:
    """Take the runs at stack ``positions`` (diverged) out of the stacked model,
    its data and its Adam state after ``step``; the others go on unchanged, in
    a smaller stack."""
    keep = [p for p in range(len(stack.live)) if p not in positions]
    stack.live = [stack.live[p] for p in keep]
    for i in stack.live:
        stacked_from(stack.runs[i], step, len(stack.live))
    stack.net.select_(keep)
    stack.data.select_(keep)
    select_adam_(stack.model.opt, stack.net, keep)


def _train_phase(stack, signals, progress, callbacks, end) -> Controller:
    cfg = stack.cfg
    prior = min(stack.runs[i].prior_seconds for i in stack.live)
    ctl = Controller(
        stack.data,
        stack.start,
        end,
        cfg.checkpoint_every,
        _saver(stack),
        signals,
        progress,
        budget=None if cfg.seconds is None else cfg.seconds - prior,
        shown_total=cfg.total_steps,
        runs=stack.live,
        drop=lambda positions, step: _drop(stack, positions, step),
    )
    converged = LBFGSConverged() if stack.phase == "lbfgs" else None
    # DeepXDE evaluates the losses in training mode before the first step and
    # every display_every steps (a forward that draws dropout masks): evaluate
    # only at the ends, and restore the torch RNG after that first evaluation, so
    # that a resumed run draws exactly what the uninterrupted one did
    steps = end - stack.start
    stack.model.train(
        iterations=steps,
        display_every=steps,
        callbacks=[_TorchRNG(stack.torch_rng), *([converged] if converged else [])]
        + [ctl, *callbacks],
        verbose=0,
    )
    if converged is not None:
        stack.converged = converged.converged
        stack.lbfgs_iterations = iterations_done(stack.model.opt)
        stack.lbfgs_loss_scale = stack.model.opt.param_groups[0].get("loss_scale")
    return ctl


class _TorchRNG(dde.callbacks.Callback):
    """Sets torch's RNG state (if given) when training begins."""

    def __init__(self, state: dict | None):
        super().__init__()
        self.state = state

    def on_train_begin(self):
        if self.state is not None:
            set_rng_state(self.state)
