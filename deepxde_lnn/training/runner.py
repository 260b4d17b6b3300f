"""Train one (case, method, seed) job and write its result folder.

One run = one :class:`RunConfig` in, one folder of plain files out::

    metrics.json   configuration, timings, versions, per-field metrics (written last:
                   its presence marks the run finished)
    loss.csv       step, total and every term's loss at every step
    fields.npz     evaluation grid, exact, prediction, |error|
    *.png          exact / prediction / |error| maps and the loss history
    model.pt       final network state_dict
    checkpoint.pt  only while a run is unfinished (interrupted or diverged)

The paper protocol (``docs/protocol.md``): Adam with library defaults at constant lr,
one full batch per step, every point set redrawn each step, final iterate reported.
Timing covers the training loop only (checkpoint I/O excluded).
"""

from __future__ import annotations

import contextlib
import io
import shlex
import sys
import time
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import deepxde as dde
import numpy as np
import torch

from ..config import RunConfig, stackable_protocol
from ..networks.stacked import StackedNet
from ..pinn.metrics import all_fields
from ..pinn.problem import Problem, Profile
from ..runs import atomic
from ..runs.checkpoint import (
    CheckpointError,
    check_fits,
    load_checkpoint,
    rng_state,
    save_checkpoint,
    set_rng_state,
    short_error,
)
from ..runs.folder import FolderError, RunFolder
from ..runs.provenance import device_info, versions
from .accurate import LBFGSConverged, iterations_done, make_lbfgs
from .controller import Controller, Progress, Signals, sync
from .ensemble import EnsembleData, select_adam_, split_adam_state, stack_adam_states
from .graphed import GraphedStep, plain_adam_state, plain_scheduler_state
from .outcome import Outcome

__all__ = [
    "run",
    "run_batched",
    "Outcome",
    "RunInterrupted",
    "TrainingDiverged",
    "predict",
]


class RunInterrupted(RuntimeError):
    """Training stopped by SIGINT/SIGTERM; a checkpoint was saved."""


class TrainingDiverged(RuntimeError):
    """A non-finite loss appeared; the last good checkpoint is kept."""


@dataclass
class _Run:
    """One of the runs a job trains, with what is its own: configuration, folder,
    data (its sampler), network (its values after training) and loss log."""

    cfg: RunConfig
    folder: RunFolder
    data: object  # a ResampledPDE, or a user's data (TrackedData)
    net: torch.nn.Module
    prior_rows: np.ndarray | None = None  # loss rows of earlier phases/sessions
    prior_seconds: float = 0.0
    diverged_at: int | None = None
    fields: dict | None = None  # evaluation grid, exact and predicted values


@dataclass
class _Job:
    """K runs equal but for the seed, trained by one ``dde.Model``: K = 1 trains
    the run's own data and net; K > 1 stacks them (:class:`EnsembleData`,
    :class:`StackedNet`: one Adam over the stacked parameters is K Adams)."""

    case: Problem
    cfg: RunConfig  # the runs' configuration (the first run's seed)
    profile: Profile
    runs: list[_Run]
    net: torch.nn.Module
    data: object
    model: dde.Model
    live: list[int]  # the runs still trained, in the stack's order
    start: int = 0
    resumed: bool = False
    torch_rng: dict | None = None  # a checkpoint's random states, set at step 1
    saved_opt: dict | None = None  # a checkpoint's phase, optimizers, scheduler
    phase: str = "adam"
    adam_text: str = ""  # the Adam phase's description, for the record
    converged: bool = False  # L-BFGS stopped before its iteration cap
    graphed: GraphedStep | None = None  # the Adam step, staged (cuda_graph)
    adam_step: str = ""  # how the Adam steps ran (GraphedStep.engine), if staged
    wall_seconds: float = 0.0  # this session's training time (all runs)

    @property
    def stacked(self) -> bool:
        return len(self.runs) > 1


def quiet_float(dtype: str) -> None:
    """``dde.config.set_default_float`` without its print."""
    with contextlib.redirect_stdout(io.StringIO()):
        dde.config.set_default_float(dtype)


def run(
    config: RunConfig,
    out: str | Path,
    *,
    resume: bool = False,
    overwrite: bool = False,
    progress: Progress | None = None,
    case: Problem | None = None,
    callbacks=(),
    figures: bool = True,
) -> dict:
    """Train one job into the folder ``out`` and return its ``metrics.json`` record.

    A finished run of the same configuration in ``out`` is returned as it is (its
    missing figures drawn); ``overwrite=True`` retrains, ``resume=True`` continues
    the checkpoint (not both). Raises ``ValueError`` (bad configuration or folder,
    nothing trained; a file that cannot be written, the last checkpoint kept),
    ``RunInterrupted`` (checkpoint saved, or results completed first) or
    ``TrainingDiverged`` (last good checkpoint kept).
    """
    if resume and overwrite:
        raise ValueError(
            "--overwrite and --resume contradict each other: --resume continues the "
            "checkpoint in --out, --overwrite discards it; pass one of them"
        )
    (outcome,) = _run_many(
        [config],
        [out],
        resume,
        overwrite,
        lambda label: progress,
        case,
        callbacks,
        figures,
    )
    if outcome.status == "diverged":
        raise TrainingDiverged(outcome.message)
    if outcome.status == "interrupted":
        raise RunInterrupted(outcome.message)
    return outcome.record


def run_batched(
    configs: list[RunConfig],
    outs: list[str | Path],
    *,
    overwrite: bool = False,
    progress=None,
    case: Problem | None = None,
    callbacks=(),
    figures: bool = True,
) -> list[Outcome]:
    """Train the runs ``configs`` (equal but for the seed) into ``outs`` as one
    stacked model; outcomes in order. Finished runs are reused; unfinished ones
    resume from their checkpoints when all stand at the same step (otherwise
    they run one by one). ``progress(label) -> Progress``.

    Each run keeps its own initialisation, point draws and Adam state, so its
    folder is what :func:`run` writes (tested), with ``batched_runs`` (K) and
    ``batch_wall_seconds`` added to ``metrics.json``; ``train_seconds`` is the
    batch's training time divided by K (the cost per run). Checkpoints are the
    single-run format, one per folder. A diverging run leaves the stack and keeps
    its last good checkpoint; the others go on."""
    return _run_many(configs, outs, None, overwrite, progress, case, callbacks, figures)


def _run_many(
    configs, outs, resume, overwrite, progress, case, callbacks, figures
) -> list[Outcome]:
    """The one training path: K = 1 (``resume`` True/False: as asked) or K runs
    stacked (``resume=None``: continue whatever checkpoints there are)."""
    if case is None:
        from .. import cases

        case = cases.get(configs[0].case)
    cfgs = [c.resolved(case) for c in configs]
    if len(cfgs) > 1:
        _check_stackable(case, cfgs)
    folders = [RunFolder(o) for o in outs]
    for f in folders:
        f.prepare()
    signals = Signals()
    with contextlib.ExitStack() as stack:
        for f in folders:
            stack.enter_context(f.locked())
            stack.enter_context(f.writing())
        outcomes = _train_folders(
            case,
            cfgs,
            folders,
            resume,
            overwrite,
            progress,
            signals,
            callbacks,
            figures,
        )
    if signals.received:
        done = "interrupted after training finished; the results in {} are complete"
        outcomes = [
            (
                replace(o, status="interrupted", message=done.format(o.out))
                if o.status == "done"
                else o
            )
            for o in outcomes
        ]
    return outcomes


def _check_stackable(case: Problem, cfgs: list[RunConfig]) -> None:
    ref = {k: v for k, v in asdict(cfgs[0]).items() if k != "seed"}
    for c in cfgs[1:]:
        if {k: v for k, v in asdict(c).items() if k != "seed"} != ref:
            raise ValueError("configs: a batch must differ only by seed")
    if len({c.seed for c in cfgs}) != len(cfgs):
        raise ValueError("configs: seeds in a batch must be distinct")
    if cfgs[0].seconds is not None:
        raise ValueError("seconds: a time budget needs one run per process")
    if not stackable_protocol(case.profile(cfgs[0].profile), cfgs[0]):
        raise ValueError(
            f"profile {cfgs[0].profile!r}: seeds train as a batch only with "
            "Adam on resampled points (no fixed pool or L-BFGS)"
        )
    if not case.stackable(cfgs[0].method):
        raise ValueError(
            f"method: {cfgs[0].method!r} cannot train its seeds as one stack"
        )


def batch_pays(case, profile_name: str) -> bool:
    """Whether stacking seeds is faster here: always on a GPU; on a CPU only for
    small point sets (measured: about 1.3-1.6x for 3-5 seeds at the quick
    profile's ~650 points per step, no gain at the paper's thousands)."""
    if torch.cuda.is_available():
        return True
    prof = case.profile(profile_name)
    return sum(t.n for t in case.make_terms(prof)) <= 2000


def _train_folders(
    case, cfgs, folders, resume, overwrite, progress, signals, callbacks, figures
) -> list[Outcome]:
    """Reuse finished runs, then train the rest (together where their
    checkpoints stand at one step, else one by one)."""
    outcomes: dict[int, Outcome] = {}
    todo, states = [], []
    for i, (cfg, f) in enumerate(zip(cfgs, folders)):
        want = f.checkpoint.exists() if resume is None else resume
        done, state = _resume(f, cfg, want, overwrite)
        if done is not None:
            if figures:
                draw_missing_figures(f, case)
            outcomes[i] = Outcome(cfg, f.path, "done", done)
        else:
            todo.append(i)
            states.append(state)
    steps = {0 if s is None else int(s["step"]) for s in states}
    groups = [todo] if len(steps) <= 1 else [[i] for i in todo]
    for group in filter(None, groups):  # checkpoints at different steps: one by one
        job = _build(
            case,
            [cfgs[i] for i in group],
            [folders[i] for i in group],
            [states[todo.index(i)] for i in group],
        )
        label = _label(job)
        with signals.deferred():
            ctl = _train(job, signals, progress(label) if progress else None, callbacks)
            results = _finish(job, ctl, figures)
        outcomes.update(zip(group, results))
    return [outcomes[i] for i in range(len(cfgs))]


def _label(job: _Job) -> str:
    from ..runs.names import lr_text

    seeds = ",".join(str(r.cfg.seed) for r in job.runs)
    word = "seed" if len(job.runs) == 1 else "seeds"
    return f"{job.cfg.case} {job.cfg.method} {word} {seeds} lr {lr_text(job.cfg.lr)}"


def _resume(folder: RunFolder, cfg: RunConfig, resume: bool, overwrite: bool):
    """``(finished record, None)`` to reuse, ``(None, checkpoint state)`` to
    continue, or ``(None, None)`` to start afresh (always with ``overwrite``)."""
    if overwrite:
        folder.clear()
        return None, None
    record = folder.finished(cfg.identity())
    if record is not None:
        folder.checkpoint.unlink(missing_ok=True)  # stale: the run did finish
        return record, None
    if not folder.checkpoint.exists():
        if resume:
            raise FolderError(f"--resume: no checkpoint in {folder.path}")
        return None, None
    if not resume:
        raise FolderError(
            f"out: {folder.path} holds an unfinished run's checkpoint; pass "
            "--resume to continue it or choose another folder"
        )
    state = load_checkpoint(folder.checkpoint)
    saved = state.get("config", {}) if isinstance(state, dict) else {}
    want = cfg.identity()
    differ = [k for k in want if _plain(saved.get(k)) != want[k]]
    if differ:
        detail = ", ".join(f"{k}: {saved.get(k)!r} vs {want[k]!r}" for k in differ)
        raise FolderError(
            f"--resume: {folder.checkpoint} was made with another configuration "
            f"({detail}; checkpoint vs asked)"
        )
    return None, state


def _plain(value):
    """A checkpoint's configuration value as a record holds it (tuples as lists)."""
    return list(value) if isinstance(value, tuple) else value


def _build(case: Problem, cfgs, folders, states) -> _Job:
    """Each run's data and network (seeded by its own seed, in this order), the
    model that trains them (stacked when K > 1), restored from the runs'
    checkpoint ``states`` if given (the optimizer per phase, by :func:`_compile`)."""
    cfg = cfgs[0]
    quiet_float(cfg.dtype)
    profile = replace(
        case.profile(cfg.profile), iterations=cfg.iterations, decay=cfg.decay
    )
    runs = []
    for c, folder in zip(cfgs, folders):
        dde.config.set_random_seed(c.seed)
        data = case.build_data(c.method, profile, c.seed, compile_jets=c.compile_jets)
        runs.append(_Run(c, folder, data, case.build_net(c.method)))
    if len(runs) == 1:
        net, data = runs[0].net, runs[0].data
    else:
        net = StackedNet([r.net for r in runs])
        data = EnsembleData([r.data for r in runs])
    live = list(range(len(runs)))
    job = _Job(case, cfg, profile, runs, net, data, dde.Model(data, net), live)
    if states[0] is None:
        _compile(job, "adam")
        return job
    for r, state in zip(runs, states):
        # a user's DeepXDE data names its terms once it has evaluated its losses
        n_terms = len(r.data.names) or None
        check_fits(state, r.folder.checkpoint, r.net, n_terms, cfg.total_steps)
    try:
        _restore(job, states)
        _compile(job, "adam")
        if job.saved_opt["phase"] != "adam":  # its optimizer state, checked now
            _compile(job, job.saved_opt["phase"])
    except (RuntimeError, ValueError, TypeError, KeyError, IndexError) as err:
        where = ", ".join(str(r.folder.checkpoint) for r in runs)
        raise CheckpointError(
            f"checkpoint {where} does not fit this run ({short_error(err)}); "
            "delete it to restart the run from scratch"
        ) from None
    return job


def _restore(job: _Job, states: list[dict]) -> None:
    """Networks, random states, loss logs and training clocks from checkpoints."""
    if job.stacked:
        nets = StackedNet.from_state_dicts(job.runs[0].net, [s["net"] for s in states])
        job.net.load_state_dict(nets.state_dict())
    else:
        job.net.load_state_dict(states[0]["net"])
    for r, state in zip(job.runs, states):
        r.data.rng.bit_generator.state = set_rng_state(state["rng"])
        r.prior_seconds = float(state["seconds"])
        r.prior_rows = state["loss"].numpy()
        r.data.load_state_dict(state.get("data", {}))
    first = states[0]
    job.start, job.resumed, job.torch_rng = int(first["step"]), True, first["rng"]
    job.saved_opt = {
        "phase": first.get("phase") or "adam",
        "opt": [s["opt"] for s in states],
        "scheduler": first.get("scheduler"),
    }


def _phases(cfg: RunConfig) -> list[tuple[str, int]]:
    """``(optimizer, last step)`` of each training phase: Adam, then L-BFGS."""
    out = [("adam", cfg.iterations)]
    return out + [("lbfgs", cfg.total_steps)] if cfg.lbfgs else out


def _compile(job: _Job, phase: str) -> None:
    """Compile the model for ``phase`` (Adam with the profile's decay, or
    L-BFGS with a frozen weights hook), restoring a checkpoint's optimizer state
    saved in the same phase (the runs' states stacked when K > 1)."""
    job.graphed = None
    if phase == "adam":
        decay = job.profile.decay
        job.model.compile("adam", lr=job.cfg.lr, decay=decay, verbose=0)
        job.adam_text = _adam_text(job.model.opt, decay)
    else:
        job.model.compile(make_lbfgs(job.net.parameters()), verbose=0)
        job.data.update_weights = False
    saved = job.saved_opt
    if saved is not None and saved["phase"] == phase:
        opts = saved["opt"]
        job.model.opt.load_state_dict(
            stack_adam_states(opts) if job.stacked else opts[0]
        )
        if job.model.lr_scheduler is not None and saved["scheduler"] is not None:
            job.model.lr_scheduler.load_state_dict(saved["scheduler"])
    if phase == "adam" and job.cfg.cuda_graph:
        job.graphed = GraphedStep(job.model).install()
    job.phase = phase


def _loss_table(run: _Run, rows: np.ndarray) -> np.ndarray:
    prior = run.prior_rows
    if prior is None or not prior.size:
        return rows
    return np.vstack([prior, rows]) if rows.size else prior


def _train(job: _Job, signals, progress, callbacks) -> Controller:
    """Train phase after phase (Adam, then L-BFGS if asked) from ``job.start``;
    returns the last phase's controller (every phase's rows and seconds are
    folded into the runs' ``prior_rows``/``prior_seconds``)."""
    todo = [(p, end) for p, end in _phases(job.cfg) if end > job.start]
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    for k, (phase, end) in enumerate(todo):
        if phase != job.phase:
            _compile(job, phase)
        ctl = _train_phase(job, signals, progress, callbacks, end)
        _fold(job, ctl)
        stopped = not ctl.live or ctl.interrupted or ctl.out_of_time
        if k == len(todo) - 1 or ctl.step < end or stopped:
            return ctl
        job.start, job.torch_rng = ctl.step, None
    raise AssertionError("no phase left to train")  # finished runs are reused


def _fold(job: _Job, ctl: Controller) -> None:
    """A finished phase's loss rows and seconds into its runs; the runs that
    diverged leave the job."""
    share = ctl.elapsed() / len(job.runs)
    for i in ctl.rows:
        r = job.runs[i]
        r.prior_rows = _loss_table(r, ctl.table(i))
        r.prior_seconds += share
        r.diverged_at = ctl.diverged.get(i)
    job.wall_seconds += ctl.elapsed()
    job.live = list(ctl.live)
    if job.graphed is not None:
        job.adam_step = job.graphed.engine


def _net_states(job: _Job) -> list[dict]:
    """The live runs' network state dicts, in stack order."""
    return job.net.state_dicts() if job.stacked else [job.net.state_dict()]


def _opt_states(job: _Job) -> list[dict]:
    state = job.model.opt.state_dict()
    if job.graphed is not None:
        state = plain_adam_state(state)
    return split_adam_state(state, len(job.live)) if job.stacked else [state]


def _saver(job: _Job):
    """``save(step, tables, seconds)`` for the controller: each live run's
    checkpoint, with everything a resumed run needs (the single-run format)."""

    def save(step, tables, seconds):
        sched = job.model.lr_scheduler
        nets, opts = _net_states(job), _opt_states(job)
        for pos, i in enumerate(job.live):
            r = job.runs[i]
            payload = {
                "config": asdict(r.cfg),
                "step": step,
                "net": nets[pos],
                "phase": job.phase,
                "opt": opts[pos],
                "scheduler": None if sched is None else plain_scheduler_state(sched),
                # the sampler's state *before* its latest draw: dde.Model.train
                # draws once before its first step, so a resumed run redraws it
                "rng": rng_state(r.data.rng_state_before_draw),
                "loss": torch.from_numpy(_loss_table(r, tables[i])),
                "seconds": r.prior_seconds + seconds / len(job.runs),
                "data": r.data.state_dict(),  # e.g. RBA's multipliers
            }
            save_checkpoint(r.folder.checkpoint, payload)

    return save


def _drop(job: _Job, positions: list[int]) -> None:
    """Take the runs at stack ``positions`` (diverged) out of the stacked model,
    its data and its Adam state; the others go on unchanged."""
    keep = [p for p in range(len(job.live)) if p not in positions]
    job.live = [job.live[p] for p in keep]
    job.net.select_(keep)
    job.data.select_(keep)
    select_adam_(job.model.opt, job.net, keep)


def _train_phase(job, signals, progress, callbacks, end) -> Controller:
    cfg = job.cfg
    prior = min(job.runs[i].prior_seconds for i in job.live)
    ctl = Controller(
        job.data,
        job.start,
        end,
        cfg.checkpoint_every,
        _saver(job),
        signals,
        progress,
        budget=None if cfg.seconds is None else cfg.seconds - prior,
        shown_total=cfg.total_steps,
        runs=job.live,
        drop=lambda positions: _drop(job, positions),
    )
    converged = LBFGSConverged() if job.phase == "lbfgs" else None
    # DeepXDE evaluates the losses in training mode before the first step and
    # every display_every steps (a forward that draws dropout masks): evaluate
    # only at the ends, and restore the torch RNG after that first evaluation, so
    # that a resumed run draws exactly what the uninterrupted one did
    steps = end - job.start
    job.model.train(
        iterations=steps,
        display_every=steps,
        callbacks=[_TorchRNG(job.torch_rng), *([converged] if converged else [])]
        + [ctl, *callbacks],
        verbose=0,
    )
    job.converged = bool(converged and converged.converged)
    return ctl


class _TorchRNG(dde.callbacks.Callback):
    """Sets torch's RNG state (if given) when training begins."""

    def __init__(self, state: dict | None):
        super().__init__()
        self.state = state

    def on_train_begin(self):
        if self.state is not None:
            set_rng_state(self.state)


def _finish(job: _Job, ctl: Controller, figures: bool) -> list[Outcome]:
    """Each run's outcome: its folder written if it finished, else its loss log
    and why it stopped (its last good checkpoint is kept)."""
    done = ctl.step >= job.cfg.total_steps or ctl.out_of_time or job.converged
    if job.stacked and job.live:
        for i, state in zip(job.live, job.net.state_dicts()):
            job.runs[i].net.load_state_dict(state)
    out = []
    for r in job.runs:
        path = r.folder.path
        table = r.prior_rows if r.prior_rows is not None else np.zeros((0, 0))
        if r.diverged_at is not None:
            write_loss(path / "loss.csv", table, r.data.names)
            msg = (
                f"non-finite loss at step {r.diverged_at}; stopped. The last good "
                f"checkpoint (if any) is kept in {r.folder.checkpoint}"
            )
            out.append(Outcome(r.cfg, path, "diverged", message=msg))
        elif not done:
            write_loss(path / "loss.csv", table, r.data.names)
            msg = (
                f"interrupted at step {ctl.step}; checkpoint saved in "
                f"{r.folder.checkpoint}. Rerun the same command to continue it "
                "(`deepxde-lnn run` with --resume)."
            )
            out.append(Outcome(r.cfg, path, "interrupted", message=msg))
        else:
            record = _evaluate(job, r)
            _write(r, job.case, record, figures)
            out.append(Outcome(r.cfg, path, "done", record))
    return out


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


def _evaluate(job: _Job, r: _Run) -> dict:
    """Run ``r``'s ``metrics.json`` record: configuration, provenance, metrics."""
    case, cfg, data = job.case, r.cfg, r.data
    ev = case.evaluation(job.profile, data)
    x, exact, pred = ev.x, ev.exact, predict(r.net, ev.x)
    r.fields = dict(x=x, exact=exact, pred=pred, mask=ev.mask, axes=ev.axes)
    seconds, loss = r.prior_seconds, r.prior_rows
    record = {
        **cfg.identity(),
        **device_info(),
        "parameters": r.net.num_trainable_parameters(),
        "budget": "steps" if cfg.seconds is None else "time",
        "steps": int(loss[-1, 0]) if len(loss) else 0,
        "train_seconds": seconds,
        "seconds_per_iteration": seconds / max(len(loss), 1),
        "peak_gpu_memory_bytes": (
            torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
        ),
        "resumed": job.resumed,
        "counts": data.counts,
        **_protocol(job, r),
        "final_loss": dict(zip(["total", *data.names], map(float, loss[-1, 1:]))),
        "grid_points": int(len(x)),
        "fields": list(case.fields),
        "metrics": all_fields(pred, exact, case.fields),
        "versions": versions(),
        "command": shlex.join(sys.argv),
    }
    record.update(_extra_metrics(case, job, r, x, pred, exact))
    if job.stacked:
        record["batched_runs"] = len(job.runs)
        record["batch_wall_seconds"] = job.wall_seconds
    return record


def _protocol(job: _Job, r: _Run) -> dict:
    """How the run was trained, read off the objects that trained it."""
    adam = job.adam_text or _adam_text(job.model.opt, job.profile.decay)
    out = {
        "initialization": str(getattr(r.net, "kernel_initializer", "unknown")),
        "network": _describe(r.net),
        "optimizer": adam + ", final iterate",
        "derivatives": job.data.describe_derivatives(job.net),
        "resampling": (
            "every term's point set redrawn every step (i.i.d. uniform)"
            if r.data.resample
            else "one fixed point set per term"
        ),
    }
    if job.cfg.cuda_graph:
        out["step"] = job.adam_step or "no Adam step in this session"
    if job.cfg.lbfgs:
        opt = job.model.opt  # the L-BFGS: evaluation follows a finished phase
        done = iterations_done(opt)
        d = opt.defaults
        out["optimizer"] = (
            f"{adam} for {job.cfg.iterations} steps, then "
            f"LBFGS(history_size={d['history_size']}, "
            f"line_search_fn={d['line_search_fn']}, "
            f"tolerance_grad={d['tolerance_grad']}) on the loss scaled by "
            f"1/L at the switch for at most {job.cfg.lbfgs} iterations, "
            "final iterate"
        )
        out["lbfgs_loss_scale"] = opt.param_groups[0].get("loss_scale")
        out["lbfgs_iterations"] = done
        out["lbfgs_stop"] = "converged" if job.converged else "iteration cap"
    return out


def _adam_text(opt, decay) -> str:
    d = opt.defaults
    lr = "constant lr" if decay is None else f"lr decay {tuple(decay)}"
    return (
        f"{type(opt).__name__}(betas={tuple(d['betas'])}, eps={d['eps']}, "
        f"weight_decay={d['weight_decay']}), {lr}"
    )


def _describe(net) -> str:
    """``LNN([2, 64, 1], layout='standard', alpha_init=0.5, block_activation='tanh')``
    -style summary."""
    extra = net.extra_repr()
    sizes = getattr(net, "layer_sizes", None)
    args = ", ".join(a for a in (str(sizes) if sizes else "", extra) if a)
    return f"{type(net).__name__}({args})"


def _extra_metrics(case: Problem, job: _Job, r: _Run, x, pred, exact) -> dict:
    """Case-specific metric sets; their warnings go to stderr and the record."""
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if case.extra_metrics is not None:
            out["extra_metrics"] = case.extra_metrics(x, pred, exact)
        for label, n in case.extra_grids.items():  # e.g. the paper's other grids
            ev = case.evaluation(replace(job.profile, grid_n=n), r.data)
            out.setdefault("extra_grid_metrics", {})[label] = all_fields(
                predict(r.net, ev.x), ev.exact, case.fields
            )
    if caught:
        out["warnings"] = [str(w.message) for w in caught]
        for w in caught:
            print(f"warning: {w.message}", file=sys.stderr)
    return out


def _write(r: _Run, case: Problem, record: dict, figures: bool) -> None:
    """Artifacts first, ``metrics.json`` last (it marks the run finished), then
    the checkpoint goes and the figures are drawn from the folder."""
    f, folder = r.fields, r.folder
    write_loss(folder.path / "loss.csv", r.prior_rows, r.data.names)
    atomic.save_npz(
        folder.path / "fields.npz",
        x=f["x"],
        exact=f["exact"],
        pred=f["pred"],
        abs_error=np.abs(f["pred"] - f["exact"]),
        mask=f["mask"],
        axes=np.array(f["axes"]),
        inputs=np.array(case.inputs),
        fields=np.array(case.fields),
    )
    buf = io.BytesIO()
    torch.save(r.net.state_dict(), buf)
    atomic.atomic_write_bytes(folder.path / "model.pt", buf.getvalue())
    atomic.write_json(folder.metrics, record)
    folder.checkpoint.unlink(missing_ok=True)
    if figures:
        from ..analysis.summaries import run_figures

        run_figures(folder.path)


def missing_figures(path: str | Path, case: Problem) -> list[str]:
    """The figures of a run folder of ``case`` that are not there but can be
    drawn (its ``fields.npz`` and ``loss.csv`` are there)."""
    from ..analysis.summaries import figure_names

    path = Path(path)
    if not ((path / "fields.npz").is_file() and (path / "loss.csv").is_file()):
        return []
    return [n for n in figure_names(len(case.inputs)) if not (path / n).exists()]


def draw_missing_figures(folder: RunFolder, case: Problem) -> None:
    """Draw a finished run's figures if one is missing (a kill between
    ``metrics.json`` and the figures)."""
    if missing_figures(folder.path, case):
        from ..analysis.summaries import run_figures

        run_figures(folder.path)


def write_loss(path: Path, table: np.ndarray, names) -> None:
    """``loss.csv``: step, total and one column per term."""
    buf = io.StringIO()
    header = ",".join(["step", "total", *names])
    if table.size:
        np.savetxt(buf, table, delimiter=",", header=header, comments="", fmt="%.10g")
    else:
        buf.write(header + "\n")
    atomic.atomic_write_text(path, buf.getvalue())


def step_seconds(
    config: RunConfig, case: Problem | None = None, steps: int = 20
) -> float:
    """Training seconds per step of ``config``, measured now over ``steps`` steps
    after a few warm-up steps (nothing is written)."""
    if case is None:
        from .. import cases

        case = cases.get(config.case)
    cfg = config.resolved(case)
    job = _build(case, [cfg], [None], [None])
    marks = []

    class Clock(dde.callbacks.Callback):
        def on_batch_begin(self):
            sync()
            marks.append(time.perf_counter())

    # step-begin marks: DeepXDE's evaluations before the first and after the
    # last step fall outside the timed interval
    job.model.train(
        iterations=steps + 5, display_every=steps + 5, callbacks=[Clock()], verbose=0
    )
    return (marks[-1] - marks[4]) / (len(marks) - 5)
