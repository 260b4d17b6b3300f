"""K seeds of one configuration trained as one stacked model, written as K ordinary
run folders (:mod:`deepxde_lnn.ensemble` does the stacking).

Each run keeps its own initialisation, point draws and Adam state, so its folder is
what :func:`deepxde_lnn.runner.run` would write (tested), with two additions in
``metrics.json``: ``batched_runs`` (K) and ``batch_wall_seconds``; ``train_seconds``
is the batch's training time divided by K (the cost per run). Checkpoints are the
single-run format, one per folder, so a batch resumes from them (all at the same
step) and a single run could too. A diverging run is dropped from the batch and
keeps its last good checkpoint; the others go on.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from ._backend import ensure_pytorch_backend

ensure_pytorch_backend()

import torch  # noqa: E402

from . import ensemble, runner  # noqa: E402
from .checkpoint import (  # noqa: E402
    CheckpointError,
    check_fits,
    short_error,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from .controller import Signals, sync  # noqa: E402
from .folder import RunFolder  # noqa: E402
from .jobs import Outcome, stackable_protocol  # noqa: E402
from .runner import RunConfig  # noqa: E402

__all__ = ["run_batched", "batch_pays"]

CHUNK = 100  # steps between checks for signals (and loss flushes)


def batch_pays(case, profile_name: str) -> bool:
    """Whether stacking seeds is faster here: always on a GPU; on a CPU only for
    small point sets (measured: about 1.3-1.6x for 3-5 seeds at the quick
    profile's ~650 points per step, no gain at the paper's thousands)."""
    if torch.cuda.is_available():
        return True
    prof = case.profile(profile_name)
    return sum(t.n for t in case.make_terms(prof)) <= 2000


@dataclass
class _Batch:
    cfgs: list
    folders: list
    stacked: "ensemble.StackedNet"
    data: "ensemble.EnsembleData"
    opt: torch.optim.Optimizer
    start: int
    prior_rows: list
    prior_seconds: list
    datas: list  # each run's ResampledPDE (kept when a run leaves the stack)
    schedule: object = None  # the learning-rate schedule (one for all runs)


def run_batched(
    configs: list[RunConfig],
    outs: list[str | Path],
    *,
    overwrite: bool = False,
    progress=None,
    case=None,
    figures: bool = True,
) -> list[Outcome]:
    """Train the runs ``configs`` (equal but for the seed) into ``outs`` as one
    stacked model; outcomes in order. Finished runs are reused; unfinished ones
    resume from their checkpoints when all stand at the same step (otherwise
    they run one by one)."""
    if case is None:
        from . import cases

        case = cases.get(configs[0].case)
    cfgs = [c.resolved(case) for c in configs]
    _check_same_but_seed(cfgs)
    if cfgs[0].seconds is not None:
        raise ValueError("seconds: a time budget needs one run per process")
    if not stackable_protocol(case.profile(cfgs[0].profile), cfgs[0]):
        raise ValueError(
            f"profile {cfgs[0].profile!r}: seeds train as a batch only with "
            "Adam on resampled points (no fixed pool or L-BFGS)"
        )
    folders = [RunFolder(o) for o in outs]
    for f in folders:
        f.prepare()
    with contextlib.ExitStack() as stack:
        for f in folders:
            stack.enter_context(f.locked())
            stack.enter_context(f.writing())
        return _run_locked(case, cfgs, folders, overwrite, progress, figures)


def _check_same_but_seed(cfgs) -> None:
    ref = {k: v for k, v in asdict(cfgs[0]).items() if k != "seed"}
    for c in cfgs[1:]:
        if {k: v for k, v in asdict(c).items() if k != "seed"} != ref:
            raise ValueError("configs: a batch must differ only by seed")
    if len({c.seed for c in cfgs}) != len(cfgs):
        raise ValueError("configs: seeds in a batch must be distinct")


def _run_locked(case, cfgs, folders, overwrite, progress, figures) -> list[Outcome]:
    outcomes: dict[int, Outcome] = {}
    todo, states = [], []
    for i, (cfg, f) in enumerate(zip(cfgs, folders)):
        done, state = runner._resume(f, cfg, f.checkpoint.exists(), overwrite)
        if done is not None:
            if figures:
                runner.draw_missing_figures(f, case)
            outcomes[i] = Outcome(cfg, f.path, "done", done)
        else:
            todo.append(i)
            states.append(state)
    steps = {0 if s is None else int(s["step"]) for s in states}
    if len(steps) > 1:  # checkpoints at different steps cannot be stacked
        for i in todo:
            outcomes[i] = _single(case, cfgs[i], folders[i], progress, figures)
    elif todo:
        batch = _build(
            case, [cfgs[i] for i in todo], [folders[i] for i in todo], states
        )
        for pos, o in enumerate(_train_and_write(case, batch, progress, figures)):
            outcomes[todo[pos]] = o
    return [outcomes[i] for i in range(len(cfgs))]


def _single(case, cfg, folder, progress, figures) -> Outcome:
    from .jobs import _one

    return _one(cfg, folder.path, False, None, progress, case)


def _build(case, cfgs, folders, states) -> _Batch:
    cfg = cfgs[0]
    runner.quiet_float(cfg.dtype)
    profile = replace(
        case.profile(cfg.profile), iterations=cfg.iterations, decay=cfg.decay
    )
    seeds = [c.seed for c in cfgs]
    stacked, data, opt = ensemble.build_ensemble(
        case, cfg.method, seeds, profile, cfg.lr
    )
    k = len(cfgs)
    batch = _Batch(
        cfgs, folders, stacked, data, opt, 0, [None] * k, [0.0] * k, list(data.runs)
    )
    batch.schedule = ensemble.make_schedule(opt, profile.decay)
    if states[0] is not None:
        single = stacked.nets()[0]
        for state, f in zip(states, folders):
            check_fits(state, f.checkpoint, single, len(data.names), cfg.iterations)
        try:
            _restore(batch, states)
        except (RuntimeError, ValueError, TypeError, KeyError, IndexError) as err:
            raise CheckpointError(
                f"checkpoints in {', '.join(str(f.path) for f in folders)} do not "
                f"fit this run ({short_error(err)}); delete them to restart"
            ) from None
    return batch


def _restore(batch: _Batch, states: list[dict]) -> None:
    """The stacked network, Adam state, random states and logs from checkpoints."""
    stacked, data, opt = batch.stacked, batch.data, batch.opt
    net = ensemble.StackedNet.from_state_dicts(
        stacked.nets()[0], [s["net"] for s in states]
    )
    stacked.load_state_dict(net.state_dict())
    opt.load_state_dict(ensemble.stack_adam_states([s["opt"] for s in states]))
    data.set_rng_states([set_rng_state(s["rng"]) for s in states])
    if batch.schedule is not None and states[0].get("scheduler") is not None:
        batch.schedule.load_state_dict(states[0]["scheduler"])
    batch.start = int(states[0]["step"])
    batch.prior_rows = [s["loss"].numpy() for s in states]
    batch.prior_seconds = [float(s["seconds"]) for s in states]


def _table(batch: _Batch, pos: int, log, run: int) -> np.ndarray:
    rows = log.table(run) if run in log.rows else np.zeros((0, 0))
    prior = batch.prior_rows[pos]
    if prior is None or not prior.size:
        return rows
    return np.vstack([prior, rows]) if rows.size else prior


def _checkpoint(batch: _Batch, log, step: int, seconds: float) -> None:
    """One single-run checkpoint per live run of the batch."""
    nets = batch.stacked.state_dicts()
    opts = ensemble.split_adam_state(batch.opt.state_dict(), batch.stacked.num_runs)
    rngs = batch.data.rng_states()
    sched = None if batch.schedule is None else batch.schedule.state_dict()
    for k, run in enumerate(batch.stacked.run_ids):
        cfg, folder = batch.cfgs[run], batch.folders[run]
        payload = {
            "config": asdict(cfg),
            "step": step,
            "net": nets[k],
            "phase": "adam",
            "opt": opts[k],
            "scheduler": sched,
            "rng": rng_state(rngs[k]),
            "loss": torch.from_numpy(_table(batch, run, log, run)),
            "seconds": batch.prior_seconds[run] + seconds,
        }
        save_checkpoint(folder.checkpoint, payload)


def _train(batch: _Batch, signals: Signals, bar) -> tuple:
    """Chunks of ``CHUNK`` steps; checkpoints every ``checkpoint_every``; stops
    with checkpoints when a signal arrived. Returns (log, seconds, last step)."""
    cfg = batch.cfgs[0]
    merged = ensemble.TrainLog(
        list(batch.data.names), {r: [] for r in range(len(batch.cfgs))}
    )
    step, seconds = batch.start, 0.0
    while step < cfg.iterations and batch.stacked.num_runs:
        n = min(CHUNK - step % CHUNK, cfg.iterations - step)
        if step > batch.start:  # as a resumed single run: redraw the latest batch
            batch.data.set_rng_states(batch.data.rng_states())
        sync()
        t0 = time.perf_counter()
        log = ensemble.train(
            batch.stacked,
            batch.data,
            batch.opt,
            n,
            start=step,
            flush_every=n,
            schedule=batch.schedule,
        )
        sync()
        seconds += time.perf_counter() - t0
        step += n
        for run, rows in log.rows.items():
            merged.rows[run] += rows
        merged.diverged_at.update(log.diverged_at)
        if bar is not None:
            last = [r[-1][-1, 1:].sum() for r in log.rows.values() if r and len(r[-1])]
            bar.update(step, float(np.mean(last)) if last else float("nan"), seconds)
        if signals.received or (
            step % cfg.checkpoint_every == 0 and step < cfg.iterations
        ):
            _checkpoint(batch, merged, step, seconds)
        if signals.received:
            break
    return merged, seconds, step


class _Clock:
    """What ``runner._evaluate`` reads of a controller."""

    def __init__(self, seconds: float, table: np.ndarray):
        self.seconds, self.rows = seconds, table

    def elapsed(self) -> float:
        return self.seconds

    def table(self) -> np.ndarray:
        return self.rows


@dataclass
class _OptHolder:
    opt: torch.optim.Optimizer


def _train_and_write(case, batch: _Batch, progress, figures) -> list[Outcome]:
    cfg, k0 = batch.cfgs[0], len(batch.cfgs)
    label = f"{cfg.case} {cfg.method} seeds {','.join(str(c.seed) for c in batch.cfgs)}"
    bar = progress(label).bar(batch.start, cfg.iterations) if progress else None
    signals = Signals()
    with signals.deferred():
        log, seconds, step = _train(batch, signals, bar)
        if bar is not None:
            bar.close()
        nets = dict(zip(batch.stacked.run_ids, batch.stacked.nets()))
        out = []
        for run in range(k0):
            out.append(
                _finish(case, batch, run, nets.get(run), log, seconds, step, figures)
            )
    if signals.received and all(o.status == "done" for o in out):
        out = [
            replace(o, status="interrupted", message="results complete") for o in out
        ]
    return out


def _finish(case, batch, run, net, log, seconds, step, figures) -> Outcome:
    """Write one run's folder (or its loss log if it did not finish)."""
    cfg, folder = batch.cfgs[run], batch.folders[run]
    table = _table(batch, run, log, run)
    if run in log.diverged_at or step < cfg.iterations:
        runner.write_loss(folder.path / "loss.csv", table, batch.data.names)
        if run in log.diverged_at:
            msg = f"non-finite loss at step {log.diverged_at[run]}; last good checkpoint kept"
            return Outcome(cfg, folder.path, "diverged", message=msg)
        return Outcome(
            cfg, folder.path, "interrupted", message=f"checkpoint at step {step}"
        )
    profile = replace(
        case.profile(cfg.profile), iterations=cfg.iterations, decay=cfg.decay
    )
    opt = _OptHolder(torch.optim.Adam(net.parameters(), lr=cfg.lr))  # its settings
    job = runner._Job(case, cfg, profile, batch.datas[run], net, opt)
    job.start, job.prior_rows = batch.start, batch.prior_rows[run]
    job.prior_seconds = batch.prior_seconds[run]
    new_rows = log.table(run)
    record = runner._evaluate(job, _Clock(seconds / len(batch.cfgs), new_rows))
    record["batched_runs"] = len(batch.cfgs)
    record["batch_wall_seconds"] = seconds
    runner._write(folder, job, record, figures)
    return Outcome(cfg, folder.path, "done", record)
