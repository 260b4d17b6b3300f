"""The option keywords of the Python API as typed dictionaries, for static
analysis (IDEs, type checkers): :func:`deepxde_lnn.compare`'s
``**options: Unpack[ManyOptions]``. At run time the API's signatures and
docstrings are built from the options of :mod:`deepxde_lnn.config` themselves.

Generated from those options by ``python -m deepxde_lnn.api
deepxde_lnn/keywords.py`` (``make docs``); a test keeps it current."""

from __future__ import annotations

from typing import TypedDict

__all__ = ["RunOptions", "ManyOptions"]


class RunOptions(TypedDict, total=False):
    """The option keywords of :func:`deepxde_lnn.run`."""

    lr: float | None
    """Adam learning rate (default: the profile's)."""
    iterations: int | None
    """Adam steps (default: the profile's; a cap with a time budget)."""
    profile: str | None
    """the profile: a named set of training settings (a case's: quick, paper, accurate,
    strong, settled or settled-paper; PINNacle's problems: quick, accurate or pinnacle;
    default quick, every problem's)."""
    dtype: str | None
    """float32 or float64 (default: the profile's; accurate: float64)."""
    checkpoint_every: int
    """steps between checkpoints."""
    seconds: float | None
    """wall-clock training budget per run (then iterations is a cap, default 20x the
    profile's steps)."""
    first_optimizer: str | None
    """the first phase's optimizer: adam, or soap (SOAP, Adam in the eigenbasis of a
    Shampoo preconditioner: heavyball's, the soap extra; its seeds train one by one)
    (default: the profile's, adam)."""
    lbfgs: int | None
    """L-BFGS iterations after Adam, at most (default: the profile's; accurate: 3000,
    others 0)."""
    nncg: int | None
    """NNCG iterations (DeepXDE's Nystrom-Newton-CG) after L-BFGS, at most; an L-BFGS
    that stops early hands over its steps (default: the profile's, 0)."""
    decay: tuple | None
    """Adam's learning-rate schedule in DeepXDE's format, one of step, cosine, inverse
    time, exponential with its numbers: ('inverse time', 1000, 0.5) in Python, 'inverse
    time,1000,0.5' on the command line (default: the profile's)."""
    loss_weights: tuple | None
    """one weight per loss term, as DeepXDE's Model.compile takes them: [1, 10, 10] in
    Python, '1,10,10' on the command line (default: none)."""
    score: str
    """what a run is scored on: the final iterate, or (best) DeepXDE's best model, its
    predictions at the logged step of lowest training loss (train= only)."""
    compile_jets: bool | str
    """the Taylor-mode derivatives through torch.compile (fused kernels; CUDA graphs on
    a GPU): the same math, other rounding. 'auto' (default) compiles long runs, where
    the compile pays for itself within the run; on or off as you say otherwise
    (docs/running.md, Compiled jets)."""
    cuda_graph: bool
    """on a GPU, each Adam step (losses, backward, Adam) as one CUDA graph: one launch
    per step instead of hundreds; the same points and math, other rounding. Elsewhere
    the same step runs eagerly (docs/running.md, CUDA graphs)."""
    overwrite: bool
    """replace finished results of another configuration in the output folder."""
    progress: bool
    """a progress bar per run on a terminal, progress lines in a pipe or log file."""
    verbose: bool
    """a line per run."""
    threads: int | None
    """torch CPU threads per run (default 1: a PINN's small matrices run about as fast
    on one, and a loaded machine then slows each run, not all of them many times); runs
    at a time x threads at most the cores, and at most 1024 threads (even with
    force_threads)."""
    force_threads: bool
    """allow runs at a time x threads beyond the cores (threads still at most 1024)."""


class ManyOptions(TypedDict, total=False):
    """The option keywords of :func:`deepxde_lnn.compare`, :func:`~deepxde_lnn.sweep` and :func:`~deepxde_lnn.ablate`."""

    lr: float | None
    """Adam learning rate (default: the profile's)."""
    iterations: int | None
    """Adam steps (default: the profile's; a cap with a time budget)."""
    profile: str | None
    """the profile: a named set of training settings (a case's: quick, paper, accurate,
    strong, settled or settled-paper; PINNacle's problems: quick, accurate or pinnacle;
    default quick, every problem's)."""
    dtype: str | None
    """float32 or float64 (default: the profile's; accurate: float64)."""
    checkpoint_every: int
    """steps between checkpoints."""
    seconds: float | None
    """wall-clock training budget per run (then iterations is a cap, default 20x the
    profile's steps)."""
    first_optimizer: str | None
    """the first phase's optimizer: adam, or soap (SOAP, Adam in the eigenbasis of a
    Shampoo preconditioner: heavyball's, the soap extra; its seeds train one by one)
    (default: the profile's, adam)."""
    lbfgs: int | None
    """L-BFGS iterations after Adam, at most (default: the profile's; accurate: 3000,
    others 0)."""
    nncg: int | None
    """NNCG iterations (DeepXDE's Nystrom-Newton-CG) after L-BFGS, at most; an L-BFGS
    that stops early hands over its steps (default: the profile's, 0)."""
    decay: tuple | None
    """Adam's learning-rate schedule in DeepXDE's format, one of step, cosine, inverse
    time, exponential with its numbers: ('inverse time', 1000, 0.5) in Python, 'inverse
    time,1000,0.5' on the command line (default: the profile's)."""
    loss_weights: tuple | None
    """one weight per loss term, as DeepXDE's Model.compile takes them: [1, 10, 10] in
    Python, '1,10,10' on the command line (default: none)."""
    score: str
    """what a run is scored on: the final iterate, or (best) DeepXDE's best model, its
    predictions at the logged step of lowest training loss (train= only)."""
    compile_jets: bool | str
    """the Taylor-mode derivatives through torch.compile (fused kernels; CUDA graphs on
    a GPU): the same math, other rounding. 'auto' (default) compiles long runs, where
    the compile pays for itself within the run; on or off as you say otherwise
    (docs/running.md, Compiled jets)."""
    cuda_graph: bool
    """on a GPU, each Adam step (losses, backward, Adam) as one CUDA graph: one launch
    per step instead of hundreds; the same points and math, other rounding. Elsewhere
    the same step runs eagerly (docs/running.md, CUDA graphs)."""
    overwrite: bool
    """replace finished results of another configuration in the output folder."""
    workers: int | None
    """runs at a time (default: as many as cores, at most the runs)."""
    backend: str
    """joblib backend: local processes (loky, default), a Dask cluster (dask), or Dask
    workers in SLURM jobs (slurm, through dask-jobqueue)."""
    address: str | None
    """the Dask scheduler's address (tcp://HOST:PORT; default: a local cluster)."""
    jobs: int | None
    """SLURM jobs of Dask workers (backend slurm; default 1)."""
    job_cores: int | None
    """cores each SLURM job books (backend slurm; default 1); a job runs job_cores //
    threads runs at a time."""
    job_memory: str | None
    """memory each SLURM job books, e.g. 4GB (backend slurm; default 4GB)."""
    walltime: str | None
    """each SLURM job's time limit, MM, HH:MM:SS or D-HH:MM:SS (backend slurm; default
    01:00:00); at least a worker's start and one checkpoint interval of the slowest
    method, measured before anything is submitted; a run cut by it resumes from its
    checkpoint on rerun."""
    partition: str | None
    """the SLURM partition (queue) of the jobs (backend slurm; default: the
    cluster's)."""
    account: str | None
    """the SLURM account the jobs are charged to (backend slurm; default: yours)."""
    stack: str
    """train the seeds of a method as one stacked model (auto: on a GPU, and on a CPU
    for small point sets, where it was measured faster)."""
    progress: bool
    """a progress bar per run on a terminal, progress lines in a pipe or log file."""
    verbose: bool
    """a line per run."""
    threads: int | None
    """torch CPU threads per run (default 1: a PINN's small matrices run about as fast
    on one, and a loaded machine then slows each run, not all of them many times); runs
    at a time x threads at most the cores, and at most 1024 threads (even with
    force_threads)."""
    force_threads: bool
    """allow runs at a time x threads beyond the cores (threads still at most 1024)."""
    margin: float
    """equivalence margin m: 'equivalent within xm' when the error ratio's whole 95 %
    interval lies in [1/m, m] (default 2; docs/verdicts.md)."""
