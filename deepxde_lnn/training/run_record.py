"""A finished run's ``metrics.json`` record: its configuration, provenance, how
it was trained (read off the objects that trained it) and its errors on the
problem's evaluation grid(s)."""

from __future__ import annotations

import shlex
import sys
import warnings
from dataclasses import replace

import deepxde as dde
import numpy as np
import torch

from ..networks.matched import read_sizes
from ..problems.metrics import all_fields
from ..problems.problem import Problem
from ..runs.cost import timing_fields
from ..runs.provenance import device_info, versions
from .accurate import lbfgs_settings
from .nncg import NNCG_SETTINGS
from .phases import adam_text
from .stack import Run, Stack

__all__ = ["describe", "evaluate", "predict"]


def predict(net, x: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Evaluate ``net`` in eval mode without gradients, in chunks, as float64."""
    net.eval()
    dtype = dde.config.real(torch)
    dev = next(net.parameters()).device
    outs = []
    with torch.no_grad():
        for a in range(0, len(x), chunk):
            xb = torch.as_tensor(x[a : a + chunk], dtype=dtype, device=dev)
            outs.append(net(xb).double().cpu().numpy())
    return np.vstack(outs)


def evaluate(stack: Stack, r: Run) -> dict:
    """Run ``r``'s ``metrics.json`` record: configuration, provenance, metrics;
    the evaluation grid, exact and predicted values go to ``r.fields``."""
    problem, cfg, data = stack.problem, r.cfg, r.data
    ev = problem.evaluation(stack.profile, data)
    x, exact, pred = ev.x, ev.exact, predict(r.net, ev.x)
    r.fields = dict(x=x, exact=exact, pred=pred, mask=ev.mask, axes=ev.axes)
    seconds, loss = r.prior_seconds, r.prior_rows
    assert loss is not None  # a trained run's
    device = device_info()
    record = {
        **cfg.identity(),
        **device,
        "parameters": r.net.num_trainable_parameters(),
        "budget": "steps" if cfg.seconds is None else "time",
        "steps": int(loss[-1, 0]) if len(loss) else 0,
        "train_seconds": seconds,
        "seconds_per_step": seconds / max(len(loss), 1),
        **timing_fields(seconds, r.prior_cpu_seconds, device["threads"], stack.loads),
        "peak_gpu_memory_bytes": (
            torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
        ),
        "resumed": stack.resumed,
        "counts": data.counts,
        **_training(stack, r),
        "final_loss": dict(zip(["total", *data.names], map(float, loss[-1, 1:]))),
        "grid_points": int(len(x)),
        "fields": list(problem.fields),
        "metrics": all_fields(pred, exact, problem.fields),
        "versions": versions(),
        "command": shlex.join(sys.argv),
    }
    record.update(_extra_metrics(problem, stack, r, x, pred, exact))
    if stack.stacked:
        record["stacked_runs"] = len(stack.runs)
        record["stack_wall_seconds"] = stack.wall_seconds
        record["stack_cpu_seconds"] = stack.cpu_seconds
    if any(k > 1 for _, k in r.stack_sizes):  # which steps trained in which stack
        record["stack_sizes"] = r.stack_sizes
    return record


#: the record of a run whose method's seeds cannot train as one stacked model
UNSTACKED = "none: this method's seeds cannot train as one stacked model"


def _training(stack: Stack, r: Run) -> dict:
    """How the run was trained, read off the objects that trained it."""
    adam = stack.adam_text or adam_text(stack.model.opt, stack.profile.decay)
    out = {
        "initialization": str(
            getattr(r.net, "kernel_initializer", "the network's own (nets=)")
        ),
        "network": describe(r.net),
        "optimizer": adam + ", final iterate",
        "derivatives": stack.data.describe_derivatives(stack.net),
        "resampling": (
            "every term's point set redrawn every step (i.i.d. uniform)"
            if r.data.resample
            else "one fixed point set per term"
        ),
    }
    if not stack.stacked and not stack.problem.stackable(stack.cfg.method):
        out["stacking"] = UNSTACKED
    if stack.cfg.cuda_graph:
        out["step"] = stack.adam_step or "no Adam step in this session"
    if stack.cfg.lbfgs:
        out.update(_lbfgs(stack, adam))
    if stack.cfg.nncg:
        out.update(_nncg(stack, out["optimizer"]))
    return out


def _lbfgs(stack: Stack, adam: str) -> dict:
    """The L-BFGS phase as the record gives it (evaluation follows that phase)."""
    d = lbfgs_settings()
    out: dict = {
        "optimizer": (
            f"{adam} for {stack.cfg.iterations} steps, then "
            f"LBFGS(history_size={d['history_size']}, "
            f"line_search_fn={d['line_search_fn']}, "
            f"tolerance_grad={d['tolerance_grad']}) on the loss scaled by "
            f"1/L at the switch for at most {stack.cfg.lbfgs} iterations, "
            "final iterate"
        ),
        "lbfgs_stop": "converged" if stack.converged else "iteration cap",
    }
    if stack.lbfgs_iterations is not None:  # L-BFGS ran in this session
        out["lbfgs_loss_scale"] = stack.lbfgs_loss_scale
        out["lbfgs_iterations"] = stack.lbfgs_iterations
    return out


def _nncg(stack: Stack, before: str) -> dict:
    """The NNCG phase after ``before`` (the phases it follows, as the record
    gives them)."""
    settings = ", ".join(f"{k}={v}" for k, v in NNCG_SETTINGS.items())
    head = before.removesuffix(", final iterate")
    return {
        "optimizer": (
            f"{head}, then NNCG({settings}) until step {stack.cfg.total_steps} "
            f"({stack.cfg.nncg} iterations, more where L-BFGS stopped early), "
            "final iterate"
        )
    }


def describe(net) -> str:
    """``LNN([2, 64, 1], layout='standard', alpha_init=0.5, block_activation='tanh')``
    -style summary."""
    extra = net.extra_repr()
    sizes = read_sizes(net)
    shown = str(sizes) if sizes else _layers_text(net)
    args = ", ".join(a for a in (shown, extra) if a)
    return f"{type(net).__name__}({args})"


def _layers_text(net, most: int = 8) -> str:
    """A network of another shape (a class of the user's, DeepXDE's PFNN) in
    words: its linear layers in order, repeats counted, and its trainable
    parameters: ``linear 2→32, 32→32 ×2, 32→1 ×5; 2,533 parameters``."""
    shapes = [
        f"{m.in_features}→{m.out_features}"
        for m in net.modules()
        if isinstance(m, torch.nn.Linear)
    ]
    runs: list[list] = []
    for shape in shapes:
        if runs and runs[-1][0] == shape:
            runs[-1][1] += 1
        else:
            runs.append([shape, 1])
    parts = [f"{s} ×{n}" if n > 1 else s for s, n in runs]
    if len(parts) > most:
        parts = [*parts[: most - 1], f"… ({len(shapes)} in all)"]
    count = sum(p.numel() for p in net.parameters() if p.requires_grad)
    layers = f"linear {', '.join(parts)}; " if parts else ""
    return f"{layers}{count:,} parameters"


def _extra_metrics(problem: Problem, stack: Stack, r: Run, x, pred, exact) -> dict:
    """Case-specific metric sets; their warnings go to stderr and the record."""
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if problem.extra_metrics is not None:
            out["extra_metrics"] = problem.extra_metrics(x, pred, exact)
        for label, n in problem.extra_grids.items():  # e.g. the paper's other grids
            ev = problem.evaluation(replace(stack.profile, grid_n=n), r.data)
            out.setdefault("extra_grid_metrics", {})[label] = all_fields(
                predict(r.net, ev.x), ev.exact, problem.fields
            )
    if caught:
        out["warnings"] = [str(w.message) for w in caught]
        for w in caught:
            print(f"warning: {w.message}", file=sys.stderr)
    return out
