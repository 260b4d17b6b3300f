"""Train one (problem, method, seed) run, or K seeds of it stacked, and write the
run folders.

One run = one :class:`RunConfig` in, one folder of plain files out::

    metrics.json   configuration, timings, versions, per-field metrics (written last:
                   its presence marks the run finished)
    loss.csv       step, total and every term's loss at every step
    fields.npz     evaluation grid, exact, prediction, |error|
    model.pt       final network state_dict
    checkpoint.pt  only while a run is unfinished (interrupted or diverged)

The runner draws no figures: ``on_done(folder)`` is called for every finished
run (e.g. :func:`deepxde_lnn.analysis.figures.draw_missing`, as the experiments
pass it). The paper protocol (``docs/protocol.md``): Adam with library defaults at
constant lr, one full batch per step, every point set redrawn each step, final
iterate reported. Timing covers the training loop only (checkpoint I/O excluded).

The parts: :mod:`.stack` (building and restoring a stack), :mod:`.phases` (training
it), :mod:`.run_record` (its record), :mod:`.artifacts` (its files) and
:mod:`.timing`; this module holds the one training path and the public names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from ..config import RunConfig, stackable_training
from ..networks.compiled import usable_cache
from ..problems.problem import Problem
from ..problems.scripted_problem import ScriptedProblem
from ..runs.checkpoint import CheckpointError
from ..runs.folder import FolderError, RunFolder
from ..runs.names import LOSS, run_label
from . import phases
from .artifacts import write_loss, write_run
from .controller import Controller, Progress, Signals
from .outcome import Outcome, RunInterrupted, TrainingDiverged
from .run_record import evaluate, predict
from .scripted_run import run_scripted
from .stack import (
    Stack,
    build,
    checkpoint_state,
    kept_float,
    nothing_to_resume,
    resume_state,
)
from .timing import stacking_pays, step_seconds

__all__ = [
    "run",
    "run_stacked",
    "Outcome",
    "RunInterrupted",
    "TrainingDiverged",
    "predict",
    "step_seconds",
    "stacking_pays",
]

OnDone = Callable[[Path], object]


def run(
    config: RunConfig,
    out: str | Path,
    *,
    problem: Problem,
    resume: bool = False,
    overwrite: bool = False,
    progress: Progress | None = None,
    callbacks=(),
    on_done: OnDone | None = None,
) -> dict:
    """Train one run of ``problem`` into the folder ``out`` and return its
    ``metrics.json`` record.

    A finished run of the same configuration in ``out`` is returned as it is;
    ``overwrite=True`` retrains, ``resume=True`` continues the checkpoint (not
    both). ``on_done(folder)`` follows a finished run (trained now or reused),
    under the same signal handling as its files. Raises ``ValueError`` (bad
    configuration or folder, nothing trained; a file that cannot be written, the
    last checkpoint kept), ``RunInterrupted`` (checkpoint saved, or results
    completed first) or ``TrainingDiverged`` (last good checkpoint kept).
    """
    if resume and overwrite:
        raise ValueError(
            "overwrite and resume (--overwrite, --resume) contradict each other: "
            "resume continues the checkpoint in out, overwrite discards it; pass "
            "one of them"
        )
    if problem.trains_itself:  # the user's function trains it
        if resume or callbacks:
            what = "resume" if resume else "callbacks"
            raise ValueError(f"{what}: not for a run that train= trains")
        assert isinstance(problem, ScriptedProblem)  # the one that trains itself
        outcome = run_scripted(
            config, out, problem=problem, overwrite=overwrite, on_done=on_done
        )
    else:
        (outcome,) = _run_many(
            [config],
            [out],
            resume,
            overwrite,
            lambda label: progress,
            problem,
            callbacks,
            on_done,
        )
    if outcome.status == "diverged":
        raise TrainingDiverged(outcome.message)
    if outcome.status == "interrupted":
        raise RunInterrupted(outcome.message)
    assert outcome.record is not None  # done
    return outcome.record


def run_stacked(
    configs: list[RunConfig],
    outs: list[str | Path],
    *,
    problem: Problem,
    overwrite: bool = False,
    progress=None,
    callbacks=(),
    on_done: OnDone | None = None,
) -> list[Outcome]:
    """Train the runs ``configs`` of ``problem`` (equal but for the seed) into
    ``outs`` as one stacked model; outcomes in order. Finished runs are reused;
    unfinished ones resume from their checkpoints, those at one step together,
    with the finished runs that left a checkpoint at that step riding along, so
    that a stack cut short resumes as the stack it was (:func:`_stacks`).
    ``progress(label) -> Progress``.

    Each run keeps its own initialisation, point draws and Adam state, so its
    folder is what :func:`run` writes (tested), with ``stacked_runs`` (K),
    ``stack_wall_seconds`` and ``stack_cpu_seconds`` added to ``metrics.json``;
    ``train_seconds`` and ``cpu_seconds`` are the stack's divided by K (the cost
    per run). Checkpoints are the
    single-run format, one per folder. A diverging run leaves the stack and keeps
    its last good checkpoint; the others go on. Each record's ``stack_sizes``
    says which steps trained in a stack of how many runs."""
    return _run_many(
        configs, outs, None, overwrite, progress, problem, callbacks, on_done
    )


def _run_many(
    configs, outs, resume, overwrite, progress, problem, callbacks, on_done
) -> list[Outcome]:
    """The one training path: K = 1 (``resume`` True/False: as asked) or K runs
    stacked (``resume=None``: continue whatever checkpoints there are)."""
    cfgs = [c.resolved(problem) for c in configs]
    if len(cfgs) > 1:
        _check_stackable(problem, cfgs)
    usable_cache()  # before a folder is made: PyTorch reads it on its first step
    folders = [RunFolder(o) for o in outs]
    for f in folders:
        if resume and not f.path.exists():  # refused before it is created
            raise nothing_to_resume(f)
        f.prepare()
    signals = Signals()
    with contextlib.ExitStack() as stack:
        stack.enter_context(kept_float())
        for f in folders:
            stack.enter_context(f.locked())
            stack.enter_context(f.writing())
        outcomes = _train_folders(
            problem,
            cfgs,
            folders,
            resume,
            overwrite,
            progress,
            signals,
            callbacks,
            on_done,
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


def _check_stackable(problem: Problem, cfgs: list[RunConfig]) -> None:
    ref = {k: v for k, v in asdict(cfgs[0]).items() if k != "seed"}
    for c in cfgs[1:]:
        if {k: v for k, v in asdict(c).items() if k != "seed"} != ref:
            raise ValueError("configs: a stack must differ only by seed")
    if len({c.seed for c in cfgs}) != len(cfgs):
        raise ValueError("configs: seeds in a stack must be distinct")
    if cfgs[0].seconds is not None:
        raise ValueError("seconds: a time budget needs one run per process")
    assert cfgs[0].profile is not None  # resolved
    if not stackable_training(problem.profile(cfgs[0].profile), cfgs[0]):
        raise ValueError(
            f"profile {cfgs[0].profile!r}: seeds train as a stack only with "
            "Adam on resampled points (no fixed pool or L-BFGS)"
        )
    if not problem.stackable(cfgs[0].method):
        raise ValueError(
            f"method: {cfgs[0].method!r} cannot train its seeds as one stack"
        )


def _train_folders(
    problem, cfgs, folders, resume, overwrite, progress, signals, callbacks, on_done
) -> list[Outcome]:
    """Reuse finished runs, then train the rest, those whose checkpoints stand at
    one step together (:func:`_stacks`)."""
    outcomes: dict[int, Outcome] = {}
    states: dict[int, dict | None] = {}
    for i, (cfg, f) in enumerate(zip(cfgs, folders)):
        want = f.has_checkpoint() if resume is None else resume
        done, state = resume_state(f, cfg, want, overwrite)
        if done is not None:
            if on_done is not None:
                on_done(f.path)
            outcomes[i] = Outcome(cfg, f.path, "done", done)
        states[i] = state
    for group, riding in _stacks(cfgs, folders, states, outcomes):
        stack = build(problem, [cfgs[i] for i in group], [folders[i] for i in group])
        phases.start(stack, [states[i] for i in group])
        label = _label(stack)
        with signals.deferred():
            shown = progress(label) if progress else None
            ctl = phases.train(stack, signals, shown, callbacks)
            results = _finish(stack, ctl, on_done, riding)
        outcomes.update((i, o) for i, o in zip(group, results) if o is not None)
    for i, f in enumerate(folders):  # a finished run's spare checkpoint (a stack's)
        if outcomes[i].status == "done" and states[i] is None:
            f.checkpoint.unlink(missing_ok=True)
    return [outcomes[i] for i in range(len(cfgs))]


def _stacks(cfgs, folders, states, finished) -> list[tuple[list[int], set[int]]]:
    """The stacks that train the unfinished runs: ``(runs, riding)``, the runs in
    the order given and the positions of those that ride along.

    The unfinished runs whose checkpoints stand at one step train together (all
    of them from their start, as a stack does). A stack cut short while it wrote
    its runs' results left every member's checkpoint (:func:`_finish` deletes
    them once all are written): a finished member holding a checkpoint at that
    step rides along, trained again but not written, so that the others resume
    in the stack that trained them and their steps are those of the run that was
    not cut (its shape, K, decides the rounding)."""
    todo = [i for i in states if i not in finished]
    by_step: dict[int, list[int]] = {}
    for i in todo:
        by_step.setdefault(_step(states[i]), []).append(i)
    out = []
    for step, group in by_step.items():
        riders = []
        if step and len(cfgs) > 1:
            for i in finished:
                state = _rider(folders[i], cfgs[i], step)
                if state is not None:
                    states[i] = state
                    riders.append(i)
        members = sorted(group + riders)
        out.append((members, {members.index(i) for i in riders}))
    return out


def _step(state: dict | None) -> int:
    return 0 if state is None else int(state["step"])


def _rider(folder: RunFolder, cfg: RunConfig, step: int) -> dict | None:
    """The checkpoint at ``step`` a finished run of a stack left, or None."""
    if not folder.has_checkpoint():
        return None
    try:
        state = checkpoint_state(folder, cfg)
    except (FolderError, CheckpointError):  # finished: its checkpoint is spare
        return None
    return state if _step(state) == step else None


def _label(stack: Stack) -> str:
    seeds = [r.cfg.seed for r in stack.runs]
    return run_label(stack.cfg.case, stack.cfg.method, seeds, stack.cfg.lr)


def _finish(
    stack: Stack,
    ctl: Controller,
    on_done: OnDone | None,
    riding: Collection[int] = frozenset(),
) -> list[Outcome | None]:
    """Each run's outcome (None for the runs ``riding`` along: finished before,
    never written again): its folder written if it finished, else its loss log
    and why it stopped (its last good checkpoint is kept). The checkpoints go
    once every finished run of the stack is written: a process killed in between
    leaves them all, and the stack resumes whole (:func:`_stacks`)."""
    converged = stack.converged and stack.phase == "lbfgs"  # the last phase it ran
    done = ctl.step >= stack.cfg.total_steps or ctl.out_of_time or converged
    if stack.stacked and stack.live:
        for i, state in zip(stack.live, stack.net.state_dicts()):
            stack.runs[i].net.load_state_dict(state)
    out: list[Outcome | None] = []
    for k, r in enumerate(stack.runs):
        path = r.folder.path
        table = r.prior_rows if r.prior_rows is not None else np.zeros((0, 0))
        if k in riding:
            out.append(None)
        elif r.diverged_at is not None:
            write_loss(path / LOSS, table, r.data.names)
            msg = (
                f"non-finite loss at step {r.diverged_at}; stopped. The last good "
                f"checkpoint (if any) is kept in {r.folder.checkpoint}"
            )
            out.append(Outcome(r.cfg, path, "diverged", message=msg))
        elif not done:
            write_loss(path / LOSS, table, r.data.names)
            msg = (
                f"interrupted at step {ctl.step}; checkpoint saved in "
                f"{r.folder.checkpoint}. Rerun the same command to continue it "
                "(`deepxde-lnn run` with --resume)."
            )
            out.append(Outcome(r.cfg, path, "interrupted", message=msg))
        else:
            record = evaluate(stack, r)
            write_run(r, stack.problem, record)
            if on_done is not None:
                on_done(path)
            out.append(Outcome(r.cfg, path, "done", record))
    if done:
        for r in stack.runs:
            if r.diverged_at is None:
                r.folder.checkpoint.unlink(missing_ok=True)
    return out
