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

import numpy as np

from ._backend import ensure_pytorch_backend

ensure_pytorch_backend()

import deepxde as dde  # noqa: E402
import torch  # noqa: E402

from . import atomic  # noqa: E402
from .accurate import LBFGSConverged, iterations_done, make_lbfgs  # noqa: E402
from .case import DTYPES, Profile  # noqa: E402
from .checks import (  # noqa: E402
    SEED_MAX,
    check_choice,
    check_int,
    check_positive,
    is_number,
)
from .checkpoint import (  # noqa: E402
    CheckpointError,
    check_fits,
    short_error,
    load_checkpoint,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from .controller import Controller, Progress, Signals, sync  # noqa: E402
from .data import ResampledPDE  # noqa: E402
from .folder import FolderError, RunFolder  # noqa: E402
from .metrics import all_fields  # noqa: E402
from .problem import Problem  # noqa: E402
from .provenance import device_info, versions  # noqa: E402

__all__ = ["RunConfig", "run", "RunInterrupted", "TrainingDiverged", "predict"]

TIME_CAP = 20  # with a time budget, at most this many times the profile's steps


class RunInterrupted(RuntimeError):
    """Training stopped by SIGINT/SIGTERM; a checkpoint was saved."""


class TrainingDiverged(RuntimeError):
    """A non-finite loss appeared; the last good checkpoint is kept."""


@dataclass(frozen=True)
class RunConfig:
    """One training job. ``None`` fields take the profile's value."""

    case: str
    method: str = "lnn"
    seed: int | None = None
    lr: float | None = None
    iterations: int | None = None
    profile: str = "quick"
    dtype: str | None = None  # None: the profile's (float32; accurate: float64)
    checkpoint_every: int = 1000
    seconds: float | None = None  # a wall-clock budget; iterations is then a cap
    lbfgs: int | None = None  # L-BFGS iterations after the Adam steps
    decay: tuple | None = None  # Adam's learning-rate schedule (DeepXDE's format)

    def resolved(self, case: Problem | None = None) -> RunConfig:
        """Validate every field (ValueError naming it) and fill profile defaults
        from ``case`` (default: the registered case named ``self.case``)."""
        if case is None:
            from . import cases

            case = cases.get(self.case)
        prof = case.profile(self.profile)  # ValueError naming the profile
        dtype = prof.dtype if self.dtype is None else self.dtype
        check_choice(dtype, "dtype", DTYPES)
        case.check_method(self.method)  # ValueError naming the method
        lbfgs = prof.lbfgs if self.lbfgs is None else self.lbfgs
        check_int(lbfgs, "lbfgs", 0)
        _check_lbfgs(lbfgs, self.method, self.seconds, case)
        seed = prof.seed if self.seed is None else self.seed
        lr = prof.lr if self.lr is None else self.lr
        iterations = self.iterations
        if iterations is None:
            iterations = prof.iterations * (TIME_CAP if self.seconds else 1)
        if self.seconds is not None:
            check_positive(self.seconds, "seconds")
        check_int(seed, "seed", 0, SEED_MAX)
        check_int(iterations, "iterations", 1)
        check_int(self.checkpoint_every, "checkpoint_every", 1)
        check_positive(lr, "lr")
        seconds = None if self.seconds is None else float(self.seconds)
        decay = _check_decay(prof.decay if self.decay is None else self.decay)
        return replace(
            self,
            seed=int(seed),
            lr=float(lr),
            iterations=int(iterations),
            dtype=dtype,
            seconds=seconds,
            lbfgs=int(lbfgs),
            decay=decay,
        )

    def identity(self) -> dict:
        """The fields that determine a run's result (not ``checkpoint_every``)."""
        out = asdict(self)
        del out["checkpoint_every"]
        if out["seconds"] is None:  # step budget: as records before time budgets
            del out["seconds"]
        if not out["lbfgs"]:  # Adam only: as records before the accurate profile
            del out["lbfgs"]
        if out["decay"] is None:  # constant lr: as records before schedules
            del out["decay"]
        else:  # as JSON reads it back
            out["decay"] = list(out["decay"])
        return out

    @property
    def total_steps(self) -> int:
        """Adam steps plus L-BFGS iterations (of a resolved configuration)."""
        return self.iterations + (self.lbfgs or 0)


def _check_decay(decay) -> tuple | None:
    """``decay`` as a tuple ``(name, *numbers)`` (DeepXDE's format), or None."""
    if decay is None:
        return None
    ok = isinstance(decay, (tuple, list)) and decay and isinstance(decay[0], str)
    if not ok or not all(is_number(v) for v in decay[1:]):
        raise ValueError(f"decay must be (name, numbers...) or None; got {decay!r}")
    return tuple(decay)


def _check_lbfgs(lbfgs: int, method: str, seconds, case: Problem) -> None:
    if not lbfgs:
        return
    if seconds is not None:
        raise ValueError(
            "seconds: a time budget cannot be combined with L-BFGS (lbfgs > 0); "
            "pass lbfgs=0 (--lbfgs 0) or no time budget"
        )
    if not case.deterministic(method):
        raise ValueError(
            f"method {method!r}: its training loss is random (dropout), which "
            "L-BFGS's line search cannot use; pass lbfgs=0 (--lbfgs 0)"
        )


@dataclass
class _Job:
    """Everything one training run holds in memory."""

    case: Problem
    cfg: RunConfig
    profile: Profile
    data: ResampledPDE
    net: torch.nn.Module
    model: dde.Model
    start: int = 0
    prior_rows: np.ndarray | None = None
    prior_seconds: float = 0.0
    loss: np.ndarray | None = None  # the whole run's loss table, once trained
    fields: dict | None = None  # evaluation grid, exact and predicted values
    torch_rng: dict | None = None  # a checkpoint's random states, set at step 1
    saved_opt: dict | None = None  # a checkpoint's phase, optimizer, scheduler
    phase: str = "adam"
    adam_text: str = ""  # the Adam phase's description, for the record
    converged: bool = False  # L-BFGS stopped before its iteration cap


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
    if case is None:
        from . import cases

        case = cases.get(config.case)
    cfg = config.resolved(case)
    if resume and overwrite:
        raise ValueError(
            "--overwrite and --resume contradict each other: --resume continues the "
            "checkpoint in --out, --overwrite discards it; pass one of them"
        )
    folder = RunFolder(out)
    folder.prepare()
    signals = Signals()
    with folder.locked(), folder.writing():
        finished, state = _resume(folder, cfg, resume, overwrite)
        if finished is not None:
            if figures:
                draw_missing_figures(folder, case)
            return finished
        job = _build(case, cfg, state, folder.checkpoint)
        with signals.deferred():
            ctl = _train(job, folder, signals, progress, callbacks)
            _stop_if_unfinished(job, ctl, folder)
            record = _evaluate(job, ctl)
            _write(folder, job, record, figures)
    if signals.received:
        raise RunInterrupted(
            f"interrupted after training finished; the results in {folder.path} "
            "are complete"
        )
    return record


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


def _build(
    case: Problem, cfg: RunConfig, state: dict | None, source: Path | None = None
) -> _Job:
    """Data, network and model; restored from ``state`` (read from ``source``) if
    given (the optimizer is made and restored per phase by :func:`_compile`)."""
    quiet_float(cfg.dtype)
    dde.config.set_random_seed(cfg.seed)
    profile = replace(
        case.profile(cfg.profile), iterations=cfg.iterations, decay=cfg.decay
    )
    data = case.build_data(cfg.method, profile, cfg.seed)
    net = case.build_net(cfg.method)
    model = dde.Model(data, net)
    job = _Job(case, cfg, profile, data, net, model)
    if state is not None:
        # a user's DeepXDE data names its terms once it has evaluated its losses
        check_fits(state, source, net, len(data.names) or None, cfg.total_steps)
        try:
            _restore(job, state)
            _compile(job, "adam")
            if job.saved_opt["phase"] != "adam":  # its optimizer state, checked now
                _compile(job, job.saved_opt["phase"])
        except (RuntimeError, ValueError, TypeError, KeyError, IndexError) as err:
            raise CheckpointError(
                f"checkpoint {source} does not fit this run ({short_error(err)}); "
                "delete it to "
                "restart the run from scratch"
            ) from None
    else:
        _compile(job, "adam")
    return job


def _restore(job: _Job, state: dict) -> None:
    """Network, random states, loss log and training clock from a checkpoint."""
    job.net.load_state_dict(state["net"])
    job.data.rng.bit_generator.state = set_rng_state(state["rng"])
    job.start, job.prior_seconds = int(state["step"]), float(state["seconds"])
    job.prior_rows = state["loss"].numpy()
    job.data.load_state_dict(state.get("data", {}))
    job.torch_rng = state["rng"]
    job.saved_opt = {k: state.get(k) for k in ("phase", "opt", "scheduler")}
    job.saved_opt["phase"] = job.saved_opt["phase"] or "adam"


def _phases(cfg: RunConfig) -> list[tuple[str, int]]:
    """``(optimizer, last step)`` of each training phase: Adam, then L-BFGS."""
    out = [("adam", cfg.iterations)]
    return out + [("lbfgs", cfg.total_steps)] if cfg.lbfgs else out


def _compile(job: _Job, phase: str) -> None:
    """Compile the model for ``phase`` (Adam with the profile's decay, or
    L-BFGS with a frozen weights hook), restoring a checkpoint's optimizer state
    saved in the same phase."""
    if phase == "adam":
        decay = job.profile.decay
        job.model.compile("adam", lr=job.cfg.lr, decay=decay, verbose=0)
        job.adam_text = _adam_text(job.model.opt, decay)
    else:
        job.model.compile(make_lbfgs(job.net.parameters()), verbose=0)
        job.data.update_weights = False
    saved = job.saved_opt
    if saved is not None and saved["phase"] == phase:
        job.model.opt.load_state_dict(saved["opt"])
        if job.model.lr_scheduler is not None and saved["scheduler"] is not None:
            job.model.lr_scheduler.load_state_dict(saved["scheduler"])
    job.phase = phase


def _loss_table(job: _Job, rows: np.ndarray) -> np.ndarray:
    if job.prior_rows is None or not job.prior_rows.size:
        return rows
    return np.vstack([job.prior_rows, rows]) if rows.size else job.prior_rows


def _train(job: _Job, folder: RunFolder, signals, progress, callbacks) -> Controller:
    """Train phase after phase (Adam, then L-BFGS if asked) from ``job.start``;
    returns the last phase's controller (earlier phases are folded into
    ``job.prior_rows``/``job.prior_seconds``)."""
    todo = [(p, end) for p, end in _phases(job.cfg) if end > job.start]
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    for k, (phase, end) in enumerate(todo):
        if phase != job.phase:
            _compile(job, phase)
        ctl = _train_phase(job, folder, signals, progress, callbacks, end)
        stopped = ctl.diverged_at is not None or ctl.interrupted or ctl.out_of_time
        if k == len(todo) - 1 or ctl.step < end or stopped:
            return ctl
        job.prior_rows = _loss_table(job, ctl.table())
        job.prior_seconds += ctl.elapsed()
        job.start = ctl.step
        job.torch_rng = None
    raise AssertionError("no phase left to train")  # run() returns finished runs


def _saver(job: _Job, folder: RunFolder):
    """``save(step, rows, seconds)`` for the controller: a checkpoint with
    everything a resumed run needs."""
    cfg = job.cfg

    def save(step, rows, seconds):
        sched = job.model.lr_scheduler
        payload = {
            "config": asdict(cfg),
            "step": step,
            "net": job.net.state_dict(),
            "phase": job.phase,
            "opt": job.model.opt.state_dict(),
            "scheduler": None if sched is None else sched.state_dict(),
            # the sampler's state *before* its latest draw: dde.Model.train draws
            # once before its first step, so a resumed run redraws that batch
            "rng": rng_state(job.data.rng_state_before_draw),
            "loss": torch.from_numpy(_loss_table(job, rows)),
            "seconds": job.prior_seconds + seconds,
            "data": job.data.state_dict(),  # e.g. RBA's multipliers
        }
        save_checkpoint(folder.checkpoint, payload)

    return save


def _train_phase(job, folder, signals, progress, callbacks, end) -> Controller:
    cfg = job.cfg
    ctl = Controller(
        job.data,
        job.start,
        end,
        cfg.checkpoint_every,
        _saver(job, folder),
        signals,
        progress,
        budget=None if cfg.seconds is None else cfg.seconds - job.prior_seconds,
        shown_total=cfg.total_steps,
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


def _stop_if_unfinished(job: _Job, ctl: Controller, folder: RunFolder) -> None:
    """Write the loss log of an unfinished run and raise why it stopped."""
    done = ctl.step >= job.cfg.total_steps or ctl.out_of_time or job.converged
    if ctl.diverged_at is None and done:
        return
    write_loss(folder.path / "loss.csv", _loss_table(job, ctl.table()), job.data.names)
    if ctl.diverged_at is not None:
        raise TrainingDiverged(
            f"non-finite loss at step {ctl.diverged_at}; stopped. The last good "
            f"checkpoint (if any) is kept in {folder.checkpoint}"
        )
    raise RunInterrupted(
        f"interrupted at step {ctl.step}; checkpoint saved in {folder.checkpoint}. "
        "Rerun the same command to continue it (`deepxde-lnn run` with --resume)."
    )


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


def _evaluate(job: _Job, ctl: Controller) -> dict:
    """The ``metrics.json`` record: configuration, provenance and metrics."""
    case, cfg, data = job.case, job.cfg, job.data
    ev = case.evaluation(job.profile, data)
    x, exact, pred = ev.x, ev.exact, predict(job.net, ev.x)
    job.fields = dict(x=x, exact=exact, pred=pred, mask=ev.mask, axes=ev.axes)
    seconds = job.prior_seconds + ctl.elapsed()
    job.loss = loss = _loss_table(job, ctl.table())
    record = {
        **cfg.identity(),
        **device_info(),
        "parameters": job.net.num_trainable_parameters(),
        "budget": "steps" if cfg.seconds is None else "time",
        "steps": int(loss[-1, 0]) if len(loss) else 0,
        "train_seconds": seconds,
        "seconds_per_iteration": seconds / max(len(loss), 1),
        "peak_gpu_memory_bytes": (
            torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
        ),
        "resumed": job.start > 0,
        "counts": data.counts,
        **_protocol(job),
        "final_loss": dict(zip(["total", *data.names], map(float, loss[-1, 1:]))),
        "grid_points": int(len(x)),
        "fields": list(case.fields),
        "metrics": all_fields(pred, exact, case.fields),
        "versions": versions(),
        "command": shlex.join(sys.argv),
    }
    record.update(_extra_metrics(case, job, x, pred, exact))
    return record


def _protocol(job: _Job) -> dict:
    """How the run was trained, read off the objects that trained it."""
    adam = job.adam_text or _adam_text(job.model.opt, job.profile.decay)
    out = {
        "initialization": str(getattr(job.net, "kernel_initializer", "unknown")),
        "network": _describe(job.net),
        "optimizer": adam + ", final iterate",
        "derivatives": job.data.describe_derivatives(job.net),
        "resampling": (
            "every term's point set redrawn every step (i.i.d. uniform)"
            if job.data.resample
            else "one fixed point set per term"
        ),
    }
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


def _extra_metrics(case: Problem, job: _Job, x, pred, exact) -> dict:
    """Case-specific metric sets; their warnings go to stderr and the record."""
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if case.extra_metrics is not None:
            out["extra_metrics"] = case.extra_metrics(x, pred, exact)
        for label, n in case.extra_grids.items():  # e.g. the paper's other grids
            ev = case.evaluation(replace(job.profile, grid_n=n), job.data)
            out.setdefault("extra_grid_metrics", {})[label] = all_fields(
                predict(job.net, ev.x), ev.exact, case.fields
            )
    if caught:
        out["warnings"] = [str(w.message) for w in caught]
        for w in caught:
            print(f"warning: {w.message}", file=sys.stderr)
    return out


def _write(folder: RunFolder, job: _Job, record: dict, figures: bool) -> None:
    """Artifacts first, ``metrics.json`` last (it marks the run finished), then
    the checkpoint goes and the figures are drawn from the folder."""
    f, case = job.fields, job.case
    write_loss(folder.path / "loss.csv", job.loss, job.data.names)
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
    torch.save(job.net.state_dict(), buf)
    atomic.atomic_write_bytes(folder.path / "model.pt", buf.getvalue())
    atomic.write_json(folder.metrics, record)
    folder.checkpoint.unlink(missing_ok=True)
    if figures:
        from .report import run_figures

        run_figures(folder.path)


def missing_figures(path: str | Path, case: Case) -> list[str]:
    """The figures of a run folder of ``case`` that are not there but can be
    drawn (its ``fields.npz`` and ``loss.csv`` are there)."""
    from .report import figure_names

    path = Path(path)
    if not ((path / "fields.npz").is_file() and (path / "loss.csv").is_file()):
        return []
    return [n for n in figure_names(len(case.inputs)) if not (path / n).exists()]


def draw_missing_figures(folder: RunFolder, case: Case) -> None:
    """Draw a finished run's figures if one is missing (a kill between
    ``metrics.json`` and the figures)."""
    if missing_figures(folder.path, case):
        from .report import run_figures

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
        from . import cases

        case = cases.get(config.case)
    cfg = config.resolved(case)
    job = _build(case, cfg, None)
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
