"""Many independent runs at once, spread by joblib (and Dask through it).

Each job is one :class:`~deepxde_lnn.training.runner.RunConfig` of one problem and
its folder; jobs share nothing but the file system, and results are merged from
folders afterwards. Each finished run's figures are drawn where it trained
(:func:`deepxde_lnn.analysis.figures.draw_missing`). The local default is joblib's
``loky`` process pool (one worker runs in this process). ``backend="dask"`` sends
the same jobs to a Dask cluster, the one whose scheduler is at ``address`` or else a
``LocalCluster`` (``pip install deepxde-lnn[cluster]``); ``backend="slurm"`` to one
whose workers dask-jobqueue submits as SLURM jobs (``pip install
deepxde-lnn[slurm]``; :data:`SLURM_OPTIONS`, :class:`_JobKeeper`). Dask's runs are
its futures, one a unit (not joblib's Dask backend, which hangs when Dask gives a
task up). Each local run gets
``threads`` torch threads (default 1), here or in a worker, and runs at a time x
threads stay within the cores (:func:`check_threads`); a cluster's workers keep
their own. The
backends are :data:`deepxde_lnn.config.BACKENDS` (why not Ray: docs/running.md).
Finished runs are reused and interrupted ones resumed by the runner itself, so a
job can be repeated or moved freely.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from .._backend import quiet_deepxde
from ..analysis.figures import draw_missing
from ..checks import check_int
from ..config import (
    BACKENDS,
    RunConfig,
    check_backend_name,
    stackable_training,
    walltime_seconds,
)
from ..networks.compiled import usable_cache
from ..problems.problem import Problem
from ..runs.folder import RunFolder
from ..runs.names import run_label
from ..training.controller import Progress
from ..training.outcome import Outcome, RunInterrupted, TrainingDiverged, WorkersLost
from ..training.runner import run, run_stacked
from ..training.signals import handling
from ..training.timing import step_seconds

__all__ = [
    "Outcome",
    "WorkersLost",
    "run_jobs",
    "iter_jobs",
    "BACKENDS",
    "default_workers",
    "capped_workers",
    "check_backend",
    "check_threads",
    "check_walltime",
    "slurm_settings",
    "torch_threads",
    "SLURM_OPTIONS",
    "SLURM_DEFAULTS",
]

CONNECT_SECONDS = 5  # how long a cluster's scheduler may take to answer at start
#: the execution options of ``backend="slurm"`` (what each SLURM job books)
SLURM_OPTIONS = ("jobs", "job_cores", "job_memory", "walltime", "partition", "account")
#: their values unless given (partition and account: the cluster's own defaults)
SLURM_DEFAULTS: dict[str, Any] = {
    "jobs": 1,
    "job_cores": 1,
    "job_memory": "4GB",
    "walltime": "01:00:00",
}
#: what a SLURM job spends before its run's first step: the worker started (Python,
#: torch and DeepXDE imported: about 10 s on a loaded 2-core machine, more from a
#: shared file system) and the run built (:func:`check_walltime`)
START_SECONDS = 30
#: how often the command looks at its SLURM jobs (``squeue``) and its runs
KEEP_SECONDS = 5
#: how long a SLURM job waits in the queue before the command says so and why
PENDING_NOTICE = 120
#: SLURM's job states in which a job still holds, or will hold, its workers
LIVE = {
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "SUSPENDED",
    "RESIZING",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
}
#: how to go on after runs were cut short
RERUN = (
    "Rerun the same command to go on: finished runs are reused, the others resume "
    "from their checkpoints"
)


def default_workers(n_jobs: int, threads: int = 1) -> int:
    """As many workers as the cores hold at ``threads`` each, no more than jobs."""
    return max(1, min(n_jobs, (os.cpu_count() or 1) // threads))


def check_threads(execution) -> None:
    """ValueError naming ``threads`` where runs at a time x threads (at
    ``execution.workers``, or one run) exceed this machine's cores, unless
    ``force_threads``; a cluster's workers keep their own threads."""
    threads = execution.threads
    if execution.backend == "slurm":
        _check_job_threads(execution)
        return
    if threads is None or execution.force_threads or execution.address:
        return
    cores = os.cpu_count() or 1
    runs = execution.workers or 1
    if runs * threads > cores:
        at = f"{runs} runs at a time x {threads}" if runs > 1 else f"{threads}"
        raise ValueError(
            f"threads: {at} threads is more than this machine's {cores} cores; "
            "fewer, or force_threads (--force-threads) to allow it"
        )


def _check_job_threads(execution) -> None:
    """A SLURM job runs ``job_cores // threads`` runs at a time: ValueError
    naming ``threads`` where one run's threads exceed a job's cores."""
    cores = execution.job_cores or SLURM_DEFAULTS["job_cores"]
    threads = execution.threads or 1
    if threads > cores and not execution.force_threads:
        raise ValueError(
            f"threads: {threads} threads is more than a SLURM job's {cores} cores "
            "(job_cores, --job-cores); fewer, or more cores per job"
        )


def slurm_settings(execution) -> dict:
    """The SLURM options of ``execution`` (:data:`SLURM_OPTIONS`), unset ones
    ``None``."""
    return {name: getattr(execution, name) for name in SLURM_OPTIONS}


def check_walltime(execution, configs: list[RunConfig], problem: Problem) -> None:
    """The walltime rule of ``backend="slurm"``, in one place: a job's walltime
    holds a worker's start (:data:`START_SECONDS`) and one checkpoint interval of
    the slowest of ``configs`` (resolved, one a method): ``min(checkpoint_every,
    steps)`` steps at the seconds per step measured here, at ``execution``'s
    threads (:func:`~deepxde_lnn.training.timing.step_seconds`: 20 steps of the
    first phase, nothing written). A shorter walltime cuts every run before its
    first checkpoint, and a job that replaces it starts the run over: a
    ValueError naming ``walltime``, before any folder is made. A run trained by
    your function (``train=``) keeps no checkpoint: the start only is checked,
    and each run must end within one walltime."""
    if execution.backend != "slurm":
        return
    walltime = execution.walltime or SLURM_DEFAULTS["walltime"]
    worst, why = 0.0, ""
    if not problem.trains_itself:
        with torch_threads(execution.threads or 1):
            for cfg in configs:
                steps = min(cfg.checkpoint_every, cfg.total_steps)
                per = step_seconds(cfg, problem)
                if steps * per >= worst:
                    worst = steps * per
                    why = (
                        f" plus one checkpoint interval ({steps} steps of "
                        f"{cfg.method} at {per * 1e3:.3g} ms/step measured here: "
                        f"{worst:.3g} s); a longer walltime, or a smaller "
                        "checkpoint_every (--checkpoint-every)"
                    )
    seconds = walltime_seconds(walltime)
    if seconds < START_SECONDS + worst:
        raise ValueError(
            f"walltime: {walltime!r} ({seconds} s) is shorter than a worker's "
            f"start ({START_SECONDS} s){why or '; a longer walltime'}"
        )


@contextlib.contextmanager
def torch_threads(n: int):
    """Torch's CPU threads set to ``n`` meanwhile (in this process: put back
    after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def capped_workers(
    workers: int | None, n_units: int, backend: str = "loky", threads: int = 1
) -> int:
    """``workers`` (default: :func:`default_workers` at ``threads`` each) at most
    the units of work and, for local processes, the cores; a cap is said in one
    line on stderr."""
    if workers is None:
        return default_workers(n_units, threads)
    check_int(workers, "workers", 1)
    cores = os.cpu_count() or 1
    limit = max(1, min(n_units, cores) if backend == "loky" else n_units)
    if workers > limit and n_units:
        why = f"{n_units} to run" if limit == n_units else f"{cores} cores here"
        print(f"workers: {workers} capped at {limit} ({why})", file=sys.stderr)
    return min(workers, limit)


def _one(cfg, out, overwrite, threads, progress, problem) -> Outcome:
    """Run one job (in a worker process or here) and report its outcome."""
    _set_threads(threads)
    label = _label(cfg)
    try:
        rec = run(
            cfg,
            out,
            problem=problem,
            resume=not overwrite and RunFolder(out).has_checkpoint(),
            overwrite=overwrite,
            progress=progress(label) if progress else Progress("off", label),
            on_done=functools.partial(draw_missing, problem=problem),
        )
    except TrainingDiverged as err:
        return Outcome(cfg, Path(out), "diverged", message=str(err))
    except RunInterrupted as err:
        return Outcome(cfg, Path(out), "interrupted", message=str(err))
    return Outcome(cfg, Path(out), "done", rec)


def _set_threads(threads: int | None) -> None:
    if threads:
        torch.set_num_threads(threads)


def run_jobs(jobs: list[tuple[RunConfig, Path]], **kwargs) -> list[Outcome]:
    """:func:`iter_jobs` collected into a list (outcomes in job order)."""
    return list(iter_jobs(jobs, **kwargs))


def iter_jobs(
    jobs: list[tuple[RunConfig, Path]],
    *,
    stack: bool = False,
    workers: int | None = None,
    backend: str = "loky",
    address: str | None = None,
    slurm: Mapping | None = None,
    overwrite: bool = False,
    progress=None,
    threads: int | None = None,
    problem: Problem,
):
    """Run ``(config, folder)`` jobs of ``problem``, ``workers`` at a
    time with ``threads`` torch threads each (default 1), yielding each outcome
    (in job order) as soon as it is known.
    ``stack=True`` trains the jobs that differ only by seed as one stacked model
    (:func:`~deepxde_lnn.training.runner.run_stacked`).

    ``progress(label) -> Progress`` makes each job's progress reporter (workers
    report in lines). ``slurm`` holds the SLURM jobs' options
    (:func:`slurm_settings`) for ``backend="slurm"``. ``problem`` travels to worker processes pickled (a registered
    problem as its name).
    """
    check_backend_name(backend)
    jobs = [(cfg.resolved(problem), Path(out)) for cfg, out in jobs]  # all checked
    units = _units(jobs, stack, problem)
    if not units:  # all reused: no pool, no cluster, no SLURM job
        return
    threads = threads or 1
    workers = capped_workers(workers, len(units), backend, threads)
    if backend == "loky" and (workers == 1 or len(units) <= 1):
        yield from _serial(units, overwrite, progress, problem, threads)
        return
    usable_cache()  # workers started from here inherit a usable compile cache
    # a cluster's workers keep their own threads (Dask's: one per worker process)
    threads = threads if address is None else None
    args = (overwrite, threads, _lines if progress else None, problem)
    quiet = quiet_deepxde(now=False)  # workers import DeepXDE without its banner
    with quiet, _stop_file_on_signal() as stop:
        if backend == "loky":
            yield from _pooled(units, workers, args, stop)
            return
        with _cluster(backend, address, slurm or {}, threads or 1) as (client, keeper):
            yield from _futures(client, keeper, units, args, stop)


def _pooled(units, workers: int, args: tuple, stop: str):
    """The units on joblib's ``loky`` pool of ``workers`` processes, outcomes in
    unit order; a worker that dies breaks the pool: :class:`WorkersLost`."""
    from joblib import Parallel, delayed, parallel_config

    parent = os.getpid()  # the local workers' parent
    with parallel_config(backend="loky"):
        try:
            for outcomes in Parallel(n_jobs=workers, return_as="generator")(
                delayed(_unit)(u, *args, stop, parent, i) for i, u in enumerate(units)
            ):
                yield from outcomes
        except BrokenProcessPool as err:  # loky's TerminatedWorkerError
            raise WorkersLost(_lost(units, stop, err)) from None


def _futures(client, keeper, units, args: tuple, stop: str):
    """The units as Dask futures, one task each, outcomes yielded in unit order
    as soon as known. A worker that dies hands its task to another, which resumes
    it; Dask gives a task up once ``allowed-failures`` + 1 workers died running it
    (``KilledWorker``), and then, or when ``keeper`` finds a SLURM job that ended
    before its workers started, the command stops: :class:`WorkersLost`."""
    dd = _distributed()
    tag = uuid.uuid4().hex[:8]
    order = [
        client.submit(_unit, u, *args, stop, None, i, key=f"run-{i}-{tag}", pure=False)
        for i, u in enumerate(units)
    ]
    index = {f.key: i for i, f in enumerate(order)}
    pending = set(order)
    known: dict[str, list] = {}  # a finished unit's key: its results
    while order:
        if keeper is not None:
            keeper.check(lambda: _not_finished(units, index, order, set(known)))
        try:
            done = dd.wait(
                list(pending), timeout=KEEP_SECONDS, return_when="FIRST_COMPLETED"
            ).done
        except dd.TimeoutError:
            continue
        for future in done:
            pending.discard(future)
            try:
                known[future.key] = future.result()
            except dd.KilledWorker as err:
                left = _not_finished(units, index, order, {*known, future.key})
                raise WorkersLost(
                    _given_up(units[index[future.key]], err, left)
                ) from err
        while order and order[0].key in known:
            yield from known.pop(order.pop(0).key)


def _given_up(unit, err, left: str) -> str:
    """Dask's ``KilledWorker`` ``err`` for ``unit`` in words, with the runs
    ``left`` and how to go on."""
    died = err.allowed_failures + 1
    return (
        f"Dask gave {_labels(unit)} up after {died} worker"
        f"{'s' if died > 1 else ''} died running it (killed, or out of memory; "
        "Dask's distributed.scheduler.allowed-failures is "
        f"{err.allowed_failures}); not finished: {left}. {RERUN}"
    )


def _labels(unit) -> str:
    return ", ".join(_label(cfg) for cfg, _ in unit)


def _not_finished(units, index, order, skip: set) -> str:
    """The runs of the futures in ``order`` but those whose keys are in
    ``skip``."""
    left = [units[index[f.key]] for f in order if f.key not in skip]
    return ", ".join(_labels(u) for u in left) or "none"


def _lost(units, stop: str, err: Exception) -> str:
    """What a pool broken by a dead worker stopped: the runs cut short (started,
    per the marks :func:`_unit` leaves beside ``stop``, not ended), those not
    started, and how to go on."""
    state: dict[str, list] = {"cut": [], "not started": []}
    for i, unit in enumerate(units):
        if os.path.exists(_mark(stop, "started", i)):
            if not os.path.exists(_mark(stop, "ended", i)):
                state["cut"] += unit
        else:
            state["not started"] += unit
    codes = re.search(r"exit codes of the workers are \{([^}]*)\}", str(err))
    named = {k: ", ".join(_label(cfg) for cfg, _ in v) for k, v in state.items()}
    text = "a worker process died" + (f" ({codes[1]})" if codes else "")
    text += f" and its pool with it: cut short: {named['cut'] or 'none'}"
    if named["not started"]:
        text += f"; not started: {named['not started']}"
    return f"{text}. {RERUN}"


def _label(cfg) -> str:
    return run_label(cfg.case, cfg.method, cfg.seed, cfg.lr)


def _mark(stop: str, what: str, index: int) -> str:
    """The file a local worker leaves beside ``stop`` when unit ``index`` has
    ``what`` (started, ended)."""
    return os.path.join(os.path.dirname(stop), f"{what}-{index}")


def _leave_mark(stop, parent, what: str, index) -> None:
    if parent is not None and stop is not None and index is not None:
        with contextlib.suppress(OSError):
            open(_mark(stop, what, index), "a").close()


def _units(jobs, stack: bool, problem: Problem) -> list[list]:
    """Jobs grouped into units of work: one job each, or (``stack``) every group of
    jobs equal but for the seed, where the method's seeds of ``problem`` can be
    stacked."""
    if not stack:
        return [[job] for job in jobs]
    groups: dict = {}
    for cfg, out in jobs:
        key = tuple(v for k, v in sorted(asdict(cfg).items()) if k != "seed")
        prof = problem.profile(cfg.profile)
        alone = cfg.seconds is not None or not stackable_training(prof, cfg)
        if not problem.stackable(cfg.method) or alone:
            key = (*key, cfg.seed, out)
        groups.setdefault(key, []).append((cfg, out))
    return list(groups.values())


def _serial(units, overwrite, progress, problem, threads: int):
    """The units one after another in this process, at ``threads`` torch threads
    (put back after each). A signal (Ctrl-C, SIGTERM) stops the running unit at a
    checkpoint, and then the rest do not start."""
    stopped = False
    for unit in units:
        if stopped:
            yield from _not_started(unit)
            continue
        with torch_threads(threads):
            outcomes = _unit(unit, overwrite, None, progress, problem)
        stopped = any(o.status == "interrupted" for o in outcomes)
        yield from outcomes


def _not_started(unit) -> list[Outcome]:
    msg = "not started: the jobs were interrupted"
    return [Outcome(cfg, Path(out), "interrupted", message=msg) for cfg, out in unit]


def _unit(
    unit, overwrite, threads, progress, problem, stop=None, parent=None, index=None
) -> list[Outcome]:
    """Run one unit (a single job, or a stack of seeds as one stacked model) in a
    worker; none of it starts once the file ``stop`` exists, and a running unit
    stops at a checkpoint when it appears (see :func:`_stop_file_on_signal`).
    A local worker whose ``parent`` (the command's pid) is gone, e.g. killed,
    stops the same way and exits: nobody is left to read its outcome. A local
    worker marks when unit ``index`` started and ended (:func:`_lost` reads it)."""
    if _orphaned(parent):
        os._exit(130)
    if stop is not None and os.path.exists(stop):
        return _not_started(unit)
    _leave_mark(stop, parent, "started", index)
    with _interrupt_when(stop, parent):
        outcomes = _train_unit(unit, overwrite, threads, progress, problem)
    _leave_mark(stop, parent, "ended", index)
    if _orphaned(parent):
        os._exit(130)  # the folders are complete or checkpointed, locks released
    return outcomes


def _orphaned(parent: int | None) -> bool:
    """Whether this process is a worker whose parent, the process ``parent``,
    is gone."""
    if parent is None or os.getpid() == parent:
        return False
    return os.getppid() != parent


def _train_unit(unit, overwrite, threads, progress, problem) -> list[Outcome]:
    if len(unit) == 1:
        [(cfg, out)] = unit
        return [_one(cfg, out, overwrite, threads, progress, problem)]
    _set_threads(threads)
    cfgs, outs = zip(*unit)
    return run_stacked(
        list(cfgs),
        list(outs),
        problem=problem,
        overwrite=overwrite,
        progress=progress,
        on_done=functools.partial(draw_missing, problem=problem),
    )


@contextlib.contextmanager
def _stop_file_on_signal():
    """Yields a path that SIGINT/SIGTERM to this process create, while the pool
    runs. Workers are separate processes: without this a signal ends this process
    only and leaves them training; with it they stop at a checkpoint and report
    'interrupted' (this process then exits with that status). A second signal
    stops waiting (joblib then terminates the workers)."""
    with tempfile.TemporaryDirectory(prefix="deepxde-lnn-") as tmp:
        path = os.path.join(tmp, "stop")

        def handler(signum, frame):
            if os.path.exists(path):  # a second signal: stop waiting for them
                raise KeyboardInterrupt
            open(path, "a").close()

        with handling(handler):
            yield path


@contextlib.contextmanager
def _interrupt_when(stop: str | None, parent: int | None = None, every: float = 0.5):
    """While a worker trains: once the file ``stop`` exists or the process
    ``parent`` is gone (:func:`_orphaned`), send this process SIGINT every
    ``every`` seconds (the runner's signal handling saves a checkpoint and stops;
    SIGINT outside a run is ignored here). Local processes only: not in a worker
    thread (Dask threads), not where ``stop`` is another machine's path."""
    if stop is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    done = threading.Event()

    def poll():
        while not done.wait(every):
            if os.path.exists(stop) or _orphaned(parent):
                os.kill(os.getpid(), signal.SIGINT)

    watcher = threading.Thread(target=poll, daemon=True)
    with handling(lambda *_: None, (signal.SIGINT,)):
        watcher.start()
        try:
            yield
        finally:
            done.set()
            watcher.join()


def _lines(label):
    return Progress("lines", label)


def check_backend(
    backend: str, address: str | None, slurm: Mapping | None = None
) -> None:
    """ValueError naming the argument unless ``backend`` can run the jobs: its
    package is installed and, for Dask, the scheduler at ``address`` answers
    within ``CONNECT_SECONDS``; for SLURM, :func:`_check_slurm`. ``slurm``: the
    SLURM options given (:func:`slurm_settings`), refused for other backends.
    Meant to run before anything is created."""
    check_backend_name(backend)
    given = [name for name, value in (slurm or {}).items() if value is not None]
    if backend != "slurm" and given:
        raise ValueError(f"{given[0]}: only --backend slurm uses it")
    if backend == "loky":
        if address is not None:
            raise ValueError("address: only --backend dask uses an address")
        return
    if backend == "slurm":
        _check_slurm(address, slurm or {})
        return
    dd = _distributed()
    if address is not None:
        try:
            with dd.Client(address, timeout=CONNECT_SECONDS):
                pass
        except (OSError, TimeoutError, ValueError) as err:
            raise ValueError(
                f"address: no Dask scheduler answered at {address!r} within "
                f"{CONNECT_SECONDS} s ({err})"
            ) from None


def _check_slurm(address: str | None, slurm: Mapping) -> None:
    """ValueError naming the argument unless SLURM jobs can be submitted as
    asked: dask-jobqueue installed, ``sbatch`` on the PATH, and a partition the
    cluster has (the walltime: :func:`check_walltime`, once the runs are
    known)."""
    if address is not None:
        raise ValueError("address: --backend slurm starts its own scheduler")
    _jobqueue()
    if shutil.which("sbatch") is None:
        raise ValueError(
            "backend: 'slurm' needs SLURM's sbatch on the PATH (none found)"
        )
    partition = slurm.get("partition")
    if partition is not None:
        known = _partitions()
        if partition not in known:
            raise ValueError(
                f"partition: {partition!r} is not one of this cluster's partitions "
                f"({', '.join(known) or 'none listed by sinfo'})"
            )


def _partitions() -> list[str]:
    """The partitions ``sinfo`` lists, or a ValueError naming ``partition``."""
    try:
        done = subprocess.run(
            ["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ValueError(f"partition: sinfo could not list them ({err})") from None
    if done.returncode:
        why = done.stderr.strip().splitlines()[-1:] or [f"status {done.returncode}"]
        raise ValueError(f"partition: sinfo could not list them ({why[0]})")
    return list(dict.fromkeys(done.stdout.split()))


def _distributed():
    """``dask.distributed``, or a ValueError saying how to install it."""
    try:
        return importlib.import_module("dask.distributed")
    except ImportError:
        raise ValueError(
            "backend: 'dask' needs dask.distributed (pip install deepxde-lnn[cluster])"
        ) from None


def _jobqueue():
    """``dask_jobqueue``, or a ValueError saying how to install it."""
    try:
        return importlib.import_module("dask_jobqueue")
    except ImportError:
        raise ValueError(
            "backend: 'slurm' needs dask-jobqueue (pip install deepxde-lnn[slurm])"
        ) from None


def _slurm_cluster(slurm: Mapping, threads: int):
    """dask-jobqueue's ``SLURMCluster`` scaled to ``jobs`` jobs; each job books
    ``job_cores`` cores and runs ``job_cores // threads`` one-thread Dask
    workers, one run each, so runs x threads stay within its cores. Its jobs are
    kept by a :class:`_JobKeeper`."""
    s = {**SLURM_DEFAULTS, **{k: v for k, v in slurm.items() if v is not None}}
    runs = max(1, s["job_cores"] // threads)
    cluster = _jobqueue().SLURMCluster(
        cores=runs,
        processes=runs,
        job_cpu=s["job_cores"],
        memory=s["job_memory"],
        walltime=s["walltime"],
        queue=s.get("partition"),
        account=s.get("account"),
    )
    cluster.scale(jobs=s["jobs"])
    return cluster, _JobKeeper(cluster, s["jobs"])


class _JobKeeper:
    """Keeps a ``SLURMCluster`` at ``jobs`` jobs while the runs go on.

    dask-jobqueue does not notice a job that ends early (cancelled, its walltime
    over, its node lost): its adaptive mode replaces a job of one worker, but a
    job of several waits for ever. :meth:`check`, called every
    :data:`KEEP_SECONDS` by the command, asks SLURM (``squeue``) which of the
    cluster's jobs have ended: one whose workers reached the scheduler is
    dropped and a new job submitted in its place (Dask hands the runs it held to
    the new workers, which resume them from their checkpoints); one that ended
    before any of its workers did (a job script that fails, a job cancelled in
    the queue) stops the command, since its replacement would fail the same way."""

    def __init__(self, cluster, jobs: int):
        self.cluster, self.jobs = cluster, jobs
        self.started: set[str] = set()  # the jobs whose workers were seen
        self.queued: dict[str, float] = {}  # a pending job: since when (monotonic)
        self.said: set[tuple[str, str]] = set()  # the waits said: (job, reason)

    def check(self, not_finished) -> None:
        """Replace the jobs that ended; :class:`WorkersLost` naming the job and
        ``not_finished()`` (the runs left) if one ended before its workers
        started; one line on standard error for a job pending longer than
        :data:`PENDING_NOTICE` seconds, with SLURM's reason (once per reason)."""
        found = _job_states()
        if found is None:  # squeue did not answer: next time
            return
        states = {job: state for job, (state, _) in found.items()}
        failed, pending = self.cluster.sync(self._keep, states)
        if failed:
            job, state = failed
            raise WorkersLost(
                f"SLURM job {job} ended ({state}) before its workers reached the "
                f"scheduler (its log: slurm-{job}.out); not finished: "
                f"{not_finished()}. {RERUN}"
            )
        self._say_waits({job: found[job][1] for job in pending})

    def _say_waits(self, reasons: Mapping[str, str]) -> None:
        """Say which of the pending jobs (``reasons``: job -> SLURM's reason)
        have waited :data:`PENDING_NOTICE` seconds or more, once per reason: a
        job can wait for ever (a partition down, a limit it exceeds), and the
        command waits with it."""
        now = time.monotonic()
        self.queued = {job: self.queued.get(job, now) for job in reasons}
        for job, reason in reasons.items():
            waited = now - self.queued[job]
            if waited < PENDING_NOTICE or (job, reason) in self.said:
                continue
            self.said.add((job, reason))
            print(
                f"slurm: job {job} is still pending after {waited / 60:.0f} min "
                f"(SLURM's reason: {reason}); the runs wait for it (`squeue -j "
                f"{job}` says more; `scancel {job}` or Ctrl-C stops the command, "
                "and rerunning it goes on)",
                file=sys.stderr,
            )

    async def _keep(self, states: Mapping[str, str]):
        """On the cluster's event loop: the jobs that ended dropped and as many
        submitted; the first that never started (its id and state), if any, and
        the ids of the jobs pending."""
        cluster = self.cluster
        seen = {w.get("name") for w in cluster.scheduler_info["workers"].values()}
        ended, pending = [], []
        for name, job in list(cluster.workers.items()):
            job_id = getattr(job, "job_id", None)
            if job_id is None:  # not submitted yet
                continue
            spec = cluster.worker_spec.get(name, {})
            if {name, *(f"{name}{g}" for g in spec.get("group", ()))} & seen:
                self.started.add(job_id)
            state = states.get(job_id, "gone")
            if state == "PENDING":
                pending.append(job_id)
            if state in LIVE:
                continue
            if job_id not in self.started:
                return (job_id, state), pending
            ended.append(name)
        for name in ended:  # a new name: Dask's own bookkeeping of it stays inert
            cluster.worker_spec.pop(name, None)
            cluster.workers.pop(name, None)
        if ended or set(cluster.worker_spec) != set(cluster.workers):
            cluster.scale(jobs=self.jobs)
        return None, pending


def _job_states() -> dict[str, tuple[str, str]] | None:
    """This user's SLURM jobs that SLURM still knows, each id's state and
    reason (``squeue``: ``PENDING``, ``Resources``), or None where ``squeue``
    fails."""
    argv = ["squeue", "--noheader", "--states=all", f"--user={os.getuid()}"]
    try:
        done = subprocess.run(
            [*argv, "--format=%i %T %r"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode:
        return None
    found = {}
    for line in filter(str.strip, done.stdout.splitlines()):
        job, state, *reason = line.split(maxsplit=2)
        found[job] = (state, reason[0].strip() if reason else "")
    return found


@contextlib.contextmanager
def _cluster(backend: str, address: str | None, slurm: Mapping, threads: int):
    """A Dask client for the jobs' duration, of the cluster at ``address``, a
    ``LocalCluster`` or SLURM's (:func:`_slurm_cluster`), and the keeper of
    SLURM's jobs (else None)."""
    dd = _distributed()
    keeper = None
    if backend == "slurm":
        cluster, keeper = _slurm_cluster(slurm, threads)
    else:
        cluster = (
            None if address else dd.LocalCluster(processes=True, threads_per_worker=1)
        )
    try:
        with dd.Client(address or cluster) as client:
            yield client, keeper
    finally:
        if cluster is not None:
            cluster.close()
