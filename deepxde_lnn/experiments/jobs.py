"""Many independent runs at once, spread by joblib (and Dask through it).

Each job is one :class:`~deepxde_lnn.training.runner.RunConfig` of one problem and
its folder; jobs share nothing but the file system, and results are merged from
folders afterwards. Each finished run's figures are drawn where it trained
(:func:`deepxde_lnn.analysis.figures.draw_missing`). The local default is joblib's
``loky`` process pool (one worker runs in this process). ``backend="dask"`` sends
the same jobs to a Dask cluster, the one whose scheduler is at ``address`` or else a
``LocalCluster`` (``pip install deepxde-lnn[cluster]``); ``backend="slurm"`` to one
whose workers dask-jobqueue submits as SLURM jobs (``pip install
deepxde-lnn[slurm]``; :data:`SLURM_OPTIONS`). Each local run gets
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
#: the shortest walltime taken: a worker must start and reach a checkpoint in it
MIN_WALLTIME = 60


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
    from joblib import Parallel, delayed

    lines = _lines if progress else None
    parent = os.getpid() if backend == "loky" else None  # local workers' parent
    quiet = quiet_deepxde(now=False)  # workers import DeepXDE without its banner
    engine = _engine(backend, address, slurm or {}, threads or 1)
    with quiet, engine, _stop_file_on_signal() as stop:
        try:
            for outcomes in Parallel(n_jobs=workers, return_as="generator")(
                delayed(_unit)(u, overwrite, threads, lines, problem, stop, parent, i)
                for i, u in enumerate(units)
            ):
                yield from outcomes
        except BrokenProcessPool as err:  # loky's TerminatedWorkerError
            raise WorkersLost(_lost(units, stop, err)) from None


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
    return (
        f"{text}. Rerun the same command to go on: finished runs are reused, the "
        "others resume from their checkpoints"
    )


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
    asked: dask-jobqueue installed, ``sbatch`` on the PATH, a walltime of at
    least :data:`MIN_WALLTIME` seconds, and a partition the cluster has."""
    if address is not None:
        raise ValueError("address: --backend slurm starts its own scheduler")
    _jobqueue()
    if shutil.which("sbatch") is None:
        raise ValueError(
            "backend: 'slurm' needs SLURM's sbatch on the PATH (none found)"
        )
    walltime = slurm.get("walltime") or SLURM_DEFAULTS["walltime"]
    if walltime_seconds(walltime) < MIN_WALLTIME:
        raise ValueError(
            f"walltime: {walltime!r} is under {MIN_WALLTIME} s, too short for a "
            "worker to start and reach a checkpoint"
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
    """dask-jobqueue's ``SLURMCluster`` kept at ``jobs`` jobs; each job books
    ``job_cores`` cores and runs ``job_cores // threads`` one-thread Dask
    workers, one run each, so runs x threads stay within its cores. A job of
    one worker that ends early (cancelled, its walltime over) is replaced
    (``adapt``), and Dask hands its runs to the new worker, which resumes them
    from their checkpoints."""
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
    cluster.adapt(minimum_jobs=s["jobs"], maximum_jobs=s["jobs"])
    return cluster


@contextlib.contextmanager
def _engine(backend: str, address: str | None, slurm: Mapping, threads: int):
    """joblib's backend for the duration of the jobs (Dask optional; for SLURM,
    :func:`_slurm_cluster`)."""
    from joblib import parallel_config

    if backend == "loky":
        with parallel_config(backend="loky"):
            yield
        return
    dd = _distributed()
    if backend == "slurm":
        cluster = _slurm_cluster(slurm, threads)
    else:
        cluster = (
            None if address else dd.LocalCluster(processes=True, threads_per_worker=1)
        )
    try:
        with dd.Client(address or cluster) as client, parallel_config(backend="dask"):
            if backend == "slurm":  # as long as the queue takes (joblib: 10 s)
                client.wait_for_workers(1)
            yield client
    finally:
        if cluster is not None:
            cluster.close()
