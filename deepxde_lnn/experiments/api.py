"""Experiments as Python functions: :func:`run`, :func:`compare`, :func:`sweep`,
:func:`ablate` and :func:`report` (``deepxde-lnn`` is a thin layer over them).

They take keyword arguments, check everything before anything trains (a
``ValueError`` naming the argument), write the same folders as the command line and
return small result objects::

    import deepxde_lnn

    res = deepxde_lnn.compare("laplace", seeds=[1, 2, 3], iterations=2000)
    res.verdicts                # lnn against pinn, per field, with a 95 % interval

The problem is a registered case name (``"laplace"``), the path of a case file of
your own (``"my_case.py"``, declaring ``CASE``; it is executed), a
:class:`~deepxde_lnn.pinn.case.Case`, or plain DeepXDE: ``data=`` (a function returning
a ``dde.data.Data`` with a solution) and ``nets=`` (``{name: function returning a
network}``), see :mod:`deepxde_lnn.pinn.custom`.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from ..analysis.figures import draw_missing, missing_figures
from ..analysis.sequential import Design, write_design
from ..analysis.sequential import until_decided as seq_decide
from ..analysis.stats import MARGIN, RatioCI, check_margin
from ..analysis.summaries import summarize, sweep_table
from ..analysis.table import BASELINE, SUBJECT
from ..checks import SEED_MAX, check_choice, check_int, check_positive, unique
from ..pinn.case import Case, load_file
from ..pinn.custom import PROFILE, DeepXDEProblem
from ..pinn.methods import COMPARED, canonical
from ..pinn.metrics import summary_field
from ..pinn.problem import Problem
from ..runs import atomic
from ..runs.folder import RunFolder, claim
from ..runs.names import lr_name, lr_text, run_folder, safe_name, seed_name
from ..runs.records import read_budget
from ..study import registry as cases
from ..study.report import Report, report
from ..training import runner
from ..training.config import TIME_CAP
from ..training.controller import Progress
from ..training.runner import (
    RunConfig,
    RunInterrupted,
    TrainingDiverged,
    batch_pays,
    step_seconds,
)
from .ablation import table, variants
from .jobs import check_backend, iter_jobs

__all__ = [
    "run",
    "compare",
    "sweep",
    "ablate",
    "report",
    "RunResult",
    "Verdict",
    "Comparison",
    "Sweep",
    "Ablation",
    "Report",
    "Settings",
    "problem_of",
]

BATCH = ("auto", "on", "off")
OPTIMIZERS = ("adam",)  # then ``lbfgs`` L-BFGS iterations, if any

# --- results ----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RunResult:
    """One run: its folder and, once finished, its ``metrics.json`` ``record``.
    ``status``: ``done`` (trained now), ``reused`` (finished before) or
    ``diverged`` (``message`` says where; its last good checkpoint is kept)."""

    method: str
    seed: int
    lr: float
    out: Path
    status: str
    record: dict | None = field(default=None, repr=False)
    message: str = ""

    @property
    def metrics(self) -> dict:
        """Per field: RMSE, MSE, MAE, relL2, MaxErr (empty unless finished)."""
        return {} if self.record is None else self.record["metrics"]

    def __repr__(self) -> str:
        errors = ", ".join(
            f"{f} relL2 {m['relL2']:.3e} RMSE {m['RMSE']:.3e}"
            for f, m in self.metrics.items()
        )
        return (
            f"RunResult({self.method} seed {self.seed} lr {lr_text(self.lr)}: "
            f"{self.status}{'; ' + errors if errors else ''}; {str(self.out)!r})"
        )


@dataclass(frozen=True)
class Verdict:
    """``method`` against ``baseline`` on ``field``: the geometric-mean ``metric``
    ratio over seeds with its 95 % interval (``ci``) and what it says."""

    method: str
    baseline: str
    field: str
    metric: str
    ci: RatioCI

    @property
    def verdict(self) -> str:
        """better, worse, equivalent within ×m, or undecided (:mod:`.stats`)."""
        return self.ci.verdict

    def __str__(self) -> str:
        verdict = self.ci.describe(self.method, self.baseline)
        return f"{self.field} {self.metric}: {verdict}"

    def __repr__(self) -> str:
        return f"Verdict({self})"


@dataclass(frozen=True, eq=False)
class Comparison:
    """Methods × seeds in ``out``: the ``runs`` of this call, the ``summary`` table
    (the rows of ``summary.csv``: per method, field and metric, mean, std, median,
    min, max over seeds) and the ``verdicts`` against ``baseline``."""

    out: Path
    case: str
    baseline: str
    runs: tuple[RunResult, ...]
    summary: tuple[dict, ...] = field(repr=False)
    verdicts: tuple[Verdict, ...]
    markdown: str = field(default="", repr=False)  # summary.md

    def __repr__(self) -> str:
        methods = list(dict.fromkeys(r["method"] for r in self.summary))
        lines = [
            f"Comparison({self.case!r}, {', '.join(methods)} over "
            f"{len(self.runs)} runs, baseline {self.baseline!r}, out={str(self.out)!r})"
        ]
        for r in self.summary:
            if r["metric"] in ("relL2", "RMSE"):
                lines.append(
                    f"  {r['method']:<12} {r['field']:<8} {r['metric']:<6} "
                    f"{r['mean']:.3e} ± {r['std']:.1e}  (n={r['n']})"
                )
        return "\n".join(lines + [f"  {v}" for v in self.verdicts])


@dataclass(frozen=True, eq=False)
class Sweep:
    """A learning-rate sweep in ``out``: one :class:`Comparison` per learning rate
    and the ``table`` of ``sweep.md``."""

    out: Path
    comparisons: Mapping[float, Comparison] = field(repr=False)
    table: str = field(repr=False)

    def __repr__(self) -> str:
        return f"Sweep(out={str(self.out)!r})\n{self.table.rstrip()}"


@dataclass(frozen=True, eq=False)
class Ablation:
    """An ablation in ``out``: one :class:`Comparison` per budget (``steps``,
    ``time``) and the ``table`` of ``ablation.md``."""

    out: Path
    comparisons: Mapping[str, Comparison] = field(repr=False)
    table: str = field(repr=False)

    def __repr__(self) -> str:
        return f"Ablation(out={str(self.out)!r})\n{self.table.rstrip()}"


# --- settings shared by every command -----------------------------------------------


@dataclass(frozen=True)
class Settings:
    """How the runs of one call train and execute (the command line's shared
    options). Run settings are checked per run by :meth:`RunConfig.resolved`."""

    profile: str = "quick"
    lr: float | None = None
    iterations: int | None = None
    dtype: str | None = None
    lbfgs: int | None = None
    optimizer: str = "adam"
    seconds: float | None = None
    checkpoint_every: int = 1000
    compile_jets: bool = False
    cuda_graph: bool = False
    overwrite: bool = False
    workers: int | None = None
    backend: str = "loky"
    address: str | None = None
    batch: str = "auto"
    progress: bool = True
    verbose: bool = True
    margin: float = MARGIN

    def __post_init__(self):
        check_margin(self.margin)
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(
                "optimizer: runs train with 'adam' (then lbfgs=N L-BFGS "
                f"iterations, if asked); got {self.optimizer!r}"
            )
        check_choice(self.batch, "batch", BATCH)
        check_backend(self.backend, self.address)  # a Dask scheduler must answer
        if self.workers is not None:
            check_int(self.workers, "workers", 1)


_SETTINGS = tuple(f.name for f in fields(Settings))


def _settings(problem: Problem, given: dict) -> Settings:
    """The :class:`Settings` among a call's arguments ``given`` (its locals); the
    default profile is the problem's (``quick`` for a case)."""
    kw = {k: given[k] for k in _SETTINGS if k in given}
    if kw.get("profile") is None:
        kw["profile"] = PROFILE if isinstance(problem, DeepXDEProblem) else "quick"
    return Settings(**kw)


_DOC = """
    Problem (one of):
        case: a registered case name, the path of a case file (``.py``, declaring
            ``CASE``; it is executed) or a ``Case``.
        data: (not for ablate) a function of no arguments returning a
            ``dde.data.Data`` with an exact solution (``solution=``); runs are
            scored on its test points ``data.test()``.
        nets: with ``data``, ``{name: function of no arguments returning a
            dde.nn.NN}``; the names are the methods.
        name: with ``data``, the problem's name in records and folders (default:
            the data function's name).

    Training (``None``: the profile's; a case's profiles are quick, paper and
    accurate, plain DeepXDE has one, ``custom``: 1000 steps, lr 1e-3, float32):
        profile, lr, iterations (Adam steps), dtype ("float32"/"float64"),
        lbfgs (L-BFGS iterations after Adam), optimizer ("adam", the only first
        phase), seconds (a wall-clock budget per run; ``iterations`` is then a
        cap), checkpoint_every (steps), compile_jets (the Taylor-mode
        derivatives through ``torch.compile``: a first compile of minutes on a
        CPU, cached afterwards, for shorter steps; not part of a run's identity,
        its record's "derivatives" says whether they were compiled),
        cuda_graph (each Adam step as one CUDA graph on a GPU, the same step
        eagerly elsewhere; not part of a run's identity, its record's "step"
        says how the steps ran).

    Execution:
        overwrite: replace finished runs of another configuration in ``out``.
        workers (not for one run): runs at a time (default: cores, at most the runs); backend
            "loky" (local processes), "dask" or "ray", at ``address``.
        batch: "auto", "on" or "off": train a method's seeds as one stacked model
            (registered methods only).
        progress: progress bars or lines; verbose: print a line per run.

    Verdicts (not for one run):
        margin: the equivalence margin m (default 2): 'equivalent within ×m' when
            the error ratio's whole 95 % interval lies in [1/m, m]
            (docs/verdicts.md).

    Raises ``ValueError`` naming the argument (nothing trained),
    ``RunInterrupted`` (SIGINT/SIGTERM; rerun to resume) and, for one run,
    ``TrainingDiverged``.
"""


def _api(func):
    """A public experiment: its docstring gets the shared arguments, and an
    unknown keyword is a ``ValueError`` naming it (Python's is a TypeError)."""
    params = inspect.signature(func).parameters

    @functools.wraps(func)
    def call(*args, **kwargs):
        unknown = [k for k in kwargs if k not in params]
        if unknown:
            raise ValueError(
                f"{unknown[0]}: unknown option of {func.__name__}(); options: "
                + ", ".join(p for p in params if p != "case")
            )
        return func(*args, **kwargs)

    call.__doc__ = func.__doc__.replace("    {shared}\n", _DOC)
    return call


# --- the problem of a call ----------------------------------------------------------


def problem_of(
    case: Case | str | os.PathLike | None = None,
    data: Callable | None = None,
    nets: Mapping[str, Callable] | None = None,
    name: str | None = None,
) -> Problem:
    """The problem of an experiment (see the module's docstring)."""
    if data is not None or nets is not None:
        if case is not None:
            raise ValueError("case: give a case, or data= and nets=, not both")
        if data is None or nets is None:
            raise ValueError("data, nets: plain DeepXDE needs both data= and nets=")
        return DeepXDEProblem(data, nets, name)
    if name is not None:
        raise ValueError("name: only with data= and nets= (a case has its own)")
    if isinstance(case, Case):
        return case
    if isinstance(case, (str, os.PathLike)):
        text = os.fspath(case)
        return load_file(text) if text.endswith(".py") else cases.get(text)
    raise ValueError(
        f"case must be a case name, a case file (.py) or a Case; got {case!r}"
    )


def _methods(methods, problem: Problem, default: Sequence[str]) -> list[str]:
    """The methods to run: ``methods`` (a sequence, or comma-separated text), or
    ``default`` (plain DeepXDE: every network)."""
    if methods is None:
        methods = problem.nets if isinstance(problem, DeepXDEProblem) else default
    if isinstance(methods, str):
        methods = methods.split(",")
    methods = [m.strip() if isinstance(m, str) else m for m in methods]
    methods = [m for m in methods if m != ""]
    if not methods:
        raise ValueError("methods: give at least one method")
    return _distinct(methods)


def _distinct(methods: list[str]) -> list[str]:
    """Each a folder name, none twice (also not spelled another way, e.g.
    ``lnn:alpha_init=0`` and ``lnn:alpha_init=0.0``)."""
    seen: dict[str, str] = {}
    for m in methods:
        key = _spelling(m)
        first = seen.get(key)
        if first is not None:
            same = "is given twice" if m == first else f"is the same as {first!r}"
            raise ValueError(f"methods: {m!r} {same}")
        seen[key] = m
    return [safe_name(m, "method") for m in methods]


def _spelling(method) -> str:
    """A registered method's one spelling (:func:`methods.canonical`); any other
    name (a plain DeepXDE network's, or an unknown one, refused later) as it is."""
    try:
        return canonical(method)
    except (ValueError, TypeError):
        return method


def _baseline(baseline: str | None, problem: Problem, methods: list[str]) -> str:
    """The method every other one is judged against: ``pinn`` for a case, the
    first network for plain DeepXDE, unless given (then one of ``methods``)."""
    if baseline is None:
        return methods[0] if isinstance(problem, DeepXDEProblem) else BASELINE
    check_choice(baseline, "baseline", methods)
    return baseline


def _seeds(seeds, profile, n: int | None = None) -> list[int]:
    """``seeds``, or the profile's seed and the next ``n - 1`` (default: the
    profile's ``n_seeds``)."""
    if seeds is None:
        return [profile.seed + i for i in range(n or profile.n_seeds)]
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: give at least one seed")
    return unique(seeds, "seeds")  # each checked with its run's configuration


# --- the public experiments -----------------------------------------------------------


@_api
def run(
    case: Case | str | os.PathLike | None = None,
    *,
    method: str | None = None,
    seed: int | None = None,
    out: str | os.PathLike | None = None,
    resume: bool = False,
    data: Callable | None = None,
    nets: Mapping[str, Callable] | None = None,
    name: str | None = None,
    profile: str | None = None,
    lr: float | None = None,
    iterations: int | None = None,
    dtype: str | None = None,
    lbfgs: int | None = None,
    optimizer: str = "adam",
    seconds: float | None = None,
    checkpoint_every: int = 1000,
    compile_jets: bool = False,
    cuda_graph: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    verbose: bool = True,
) -> RunResult:
    """Train one run (``method``, ``seed``) into ``out`` and return it.

    ``method`` defaults to ``lnn`` (plain DeepXDE: the first network), ``seed``
    to the profile's, ``out`` to ``runs/CASE/METHOD/seed-S``; ``resume=True``
    continues the checkpoint there. A finished run of the same configuration is
    returned as it is.
    {shared}
    """
    problem = problem_of(case, data, nets, name)
    s = _settings(problem, locals())
    method = method or _methods(None, problem, [SUBJECT])[0]
    cfg = _config(s, problem, method, seed).resolved(problem)  # before writing
    out = _out(out, run_folder("runs", cfg.case, cfg.method, seed_name(cfg.seed)))
    label = f"{cfg.case} {cfg.method} seed {cfg.seed}"
    rec = runner.run(
        cfg,
        out,
        resume=resume,
        overwrite=s.overwrite,
        progress=_progress(s, label),
        case=problem,
        on_done=functools.partial(draw_missing, case=problem),
    )
    _print_record(s, rec, out)
    return RunResult(cfg.method, cfg.seed, cfg.lr, out, "done", rec)


@_api
def compare(
    case: Case | str | os.PathLike | None = None,
    *,
    data: Callable | None = None,
    nets: Mapping[str, Callable] | None = None,
    name: str | None = None,
    methods: Sequence[str] | str | None = None,
    seeds: Sequence[int] | None = None,
    baseline: str | None = None,
    budget: str = "steps",
    until_decided: bool = False,
    max_seeds: int | None = None,
    out: str | os.PathLike | None = None,
    profile: str | None = None,
    lr: float | None = None,
    iterations: int | None = None,
    dtype: str | None = None,
    lbfgs: int | None = None,
    optimizer: str = "adam",
    seconds: float | None = None,
    checkpoint_every: int = 1000,
    compile_jets: bool = False,
    cuda_graph: bool = False,
    overwrite: bool = False,
    workers: int | None = None,
    backend: str = "loky",
    address: str | None = None,
    batch: str = "auto",
    progress: bool = True,
    verbose: bool = True,
    margin: float = MARGIN,
) -> Comparison:
    """Train ``methods`` × ``seeds`` into ``out/METHOD/seed-S`` and summarise them
    there (``summary.md``, ``summary.csv``, ``summary.png``); returns the
    :class:`Comparison` (runs, summary table, verdicts).

    Every method is judged against ``baseline`` (a case: ``pinn``; plain
    DeepXDE: the first network): the geometric-mean RMSE ratio over seeds with a
    95 % Student-t interval on log errors, paired by seed, and one of four
    verdicts: "better", "worse", "equivalent within ×m" (``margin``) or
    "undecided" (with the seeds that would likely decide it).

    Args:
        methods: default ``lnn``, ``pinn`` (plain DeepXDE: every network).
        seeds: default the profile's seed and the next ones (3; quick laplace 6;
            plain DeepXDE 0, 1, 2).
        budget: "steps" (every method the same steps) or "time" (the same
            seconds: ``seconds``, or the first method's measured time for the
            profile's steps, kept in ``out/budget.json``).
        until_decided: add batches of ``len(seeds)`` new seeds, stacked where
            possible, to the comparisons still undecided, until each decides or
            has ``max_seeds`` seeds (default 15); the error rate is spread over
            the planned looks (docs/verdicts.md).
        out: default ``runs/compare-CASE-PROFILE`` (``-time`` for a time budget).
    {shared}
    """
    problem = problem_of(case, data, nets, name)
    s = _settings(problem, locals())
    check_choice(budget, "budget", ("steps", "time"))
    methods = _methods(methods, problem, COMPARED)
    seeds = _seeds(seeds, problem.profile(s.profile))
    baseline = _baseline(baseline, problem, methods)
    default = f"runs/compare-{problem.name}-{s.profile}" + (
        "-time" if budget == "time" else ""
    )
    root = _out(out, default)
    if until_decided:
        return _until_decided(
            s, problem, methods, seeds, root, budget, baseline, max_seeds
        )
    if max_seeds is not None:
        raise ValueError(
            "max_seeds (--max-seeds): only with until_decided (--until-decided)"
        )
    return _compare(s, problem, methods, seeds, root, budget, baseline)


@_api
def sweep(
    case: Case | str | os.PathLike | None = None,
    *,
    lrs: Sequence[float],
    data: Callable | None = None,
    nets: Mapping[str, Callable] | None = None,
    name: str | None = None,
    methods: Sequence[str] | str | None = None,
    seeds: Sequence[int] | None = None,
    baseline: str | None = None,
    out: str | os.PathLike | None = None,
    profile: str | None = None,
    lr: float | None = None,
    iterations: int | None = None,
    dtype: str | None = None,
    lbfgs: int | None = None,
    optimizer: str = "adam",
    seconds: float | None = None,
    checkpoint_every: int = 1000,
    compile_jets: bool = False,
    cuda_graph: bool = False,
    overwrite: bool = False,
    workers: int | None = None,
    backend: str = "loky",
    address: str | None = None,
    batch: str = "auto",
    progress: bool = True,
    verbose: bool = True,
    margin: float = MARGIN,
) -> Sweep:
    """Learning-rate sweep: ``lrs`` × ``methods`` × ``seeds`` into
    ``out/lr-X/METHOD/seed-S``, one compare-style summary per learning rate, then
    ``sweep.md`` and ``sweep.png`` (error against learning rate per method).

    Args:
        lrs: the learning rates (``lr`` is ignored).
        methods: default ``lnn`` (plain DeepXDE: every network).
        seeds: default the profile's seed.
        out: default ``runs/sweep-CASE-PROFILE``.
    {shared}
    """
    problem = problem_of(case, data, nets, name)
    s = _settings(problem, locals())
    methods = _methods(methods, problem, [SUBJECT])
    prof = problem.profile(s.profile)
    seeds = _seeds(seeds, prof, 1)
    baseline = _baseline(baseline, problem, methods)
    lrs = [] if isinstance(lrs, str) or not isinstance(lrs, Iterable) else list(lrs)
    if not lrs:
        raise ValueError(f"lrs: give a list of learning rates; got {lrs!r}")
    for value in lrs:
        check_positive(value, "lrs")
    unique(lrs, "lrs")
    root = _out(out, f"runs/sweep-{problem.name}-{s.profile}")
    _check_configs(s, problem, methods, seeds)
    for path in (root, *(root / lr_name(lr) for lr in lrs)):
        claim(path)  # empty or ours: they get summaries
    jobs = []
    for lr in lrs:
        jobs += [
            (
                replace(_config(s, problem, m, seed), lr=lr).resolved(problem),
                run_folder(root, lr_name(lr), m, seed_name(seed)),
            )
            for m in methods
            for seed in seeds
        ]
    runs = _run_all(jobs, s, problem)
    comparisons = {
        lr: _summarized(
            root / lr_name(lr),
            problem,
            [r for r in runs if r.lr == lr],
            prof.seed,
            baseline,
            s.margin,
        )
        for lr in lrs
    }
    return Sweep(root, comparisons, sweep_table(root, s.margin, baseline))


@_api
def ablate(
    case: Case | str | os.PathLike,
    *,
    methods: Sequence[str] | str | None = None,
    seeds: Sequence[int] | None = None,
    budget: str = "both",
    out: str | os.PathLike | None = None,
    profile: str | None = None,
    lr: float | None = None,
    iterations: int | None = None,
    dtype: str | None = None,
    lbfgs: int | None = None,
    optimizer: str = "adam",
    seconds: float | None = None,
    checkpoint_every: int = 1000,
    compile_jets: bool = False,
    cuda_graph: bool = False,
    overwrite: bool = False,
    workers: int | None = None,
    backend: str = "loky",
    address: str | None = None,
    batch: str = "auto",
    progress: bool = True,
    verbose: bool = True,
    margin: float = MARGIN,
) -> Ablation:
    """LNN/MLP variants of a case, step-matched and time-matched: one
    :func:`compare` per budget into ``out/steps`` and ``out/time``, then the table
    ``ablation.md`` (every variant against ``pinn`` of the same budget).

    Args:
        methods: variants (default: lnn, alpha_init=0, the other layout, widths
            32/98, rezero, pinn, pinn:width=32, pinn-matched; see
            :mod:`deepxde_lnn.experiments.ablation`).
        seeds: default the profile's seed and the next ones.
        budget: "steps", "time" or "both" (default).
        out: default ``runs/ablate-CASE-PROFILE``.
    {shared}
    """
    problem = problem_of(case)
    s = _settings(problem, locals())
    check_choice(budget, "budget", ("steps", "time", "both"))
    seeds = _seeds(seeds, problem.profile(s.profile))
    root = _out(out, f"runs/ablate-{problem.name}-{s.profile}")
    methods = _methods(methods, problem, variants(problem))
    budgets = ["steps", "time"] if budget == "both" else [budget]
    _check_configs(s, problem, methods, seeds)
    claim(root)  # empty or ours: it gets steps/, time/ and ablation.md
    comparisons = {
        b: _compare(s, problem, methods, seeds, root / b, b) for b in budgets
    }
    text = table(root, problem, s.margin)
    atomic.atomic_write_text(root / "ablation.md", text + "\n")
    return Ablation(root, comparisons, text)


# --- orchestration (moved from the command line) ------------------------------------


def _config(s: Settings, case: Problem, method: str, seed: int | None) -> RunConfig:
    return RunConfig(
        case=case.name,
        method=method,
        seed=seed,
        lr=s.lr,
        iterations=s.iterations,
        profile=s.profile,
        dtype=s.dtype,
        checkpoint_every=s.checkpoint_every,
        seconds=s.seconds,
        lbfgs=s.lbfgs,
        compile_jets=s.compile_jets,
        cuda_graph=s.cuda_graph,
    )


def _say(s: Settings, text: str) -> None:
    if s.verbose:
        print(text, flush=True)


def _progress(s: Settings, label: str) -> Progress:
    return Progress.auto(label, enabled=s.progress)


def _print_record(s: Settings, rec: dict, out) -> None:
    lines = [
        f"{rec['case']} {rec['method']} seed {rec['seed']}: "
        f"{rec.get('steps', rec['iterations'])} steps in {rec['train_seconds']:.1f} s "
        f"({rec['seconds_per_iteration'] * 1e3:.1f} ms/step, {rec['parameters']} params)"
    ]
    for name, m in rec["metrics"].items():
        lines.append(
            f"  {name:8s} RMSE {m['RMSE']:.3e}  relL2 {m['relL2']:.3e}  "
            f"MaxErr {m['MaxErr']:.3e}"
        )
    _say(s, "\n".join([*lines, f"  -> {out}"]))


def _run_all(jobs, s: Settings, case: Problem) -> list[RunResult]:
    """Run (config, folder) jobs, ``workers`` at a time: finished ones (same
    configuration) are reused, unfinished ones (a checkpoint) resumed. Every
    folder is checked first, so a bad one stops the command before any training."""
    todo, results = [], []
    for cfg, out in jobs:
        folder = RunFolder(out)
        folder.prepare()  # ours and writable, before anything is read or trained
        record = None if s.overwrite else folder.finished(cfg.identity())
        if record is not None and not missing_figures(out, case):  # else redrawn
            _say(s, f"{cfg.method} seed {cfg.seed} lr {lr_text(cfg.lr)}: done, reused")
            results.append(
                RunResult(cfg.method, cfg.seed, cfg.lr, folder.path, "reused", record)
            )
            continue
        todo.append((cfg, out))
    outcomes = iter_jobs(
        todo,
        batch=_batching(s, case, todo),
        workers=s.workers,
        backend=s.backend,
        address=s.address,
        overwrite=s.overwrite,
        progress=(lambda label: _progress(s, label)) if s.progress else None,
        case=case,
    )
    stopped = []
    for o in outcomes:  # as they finish
        if o.status == "done":
            _print_record(s, o.record, o.out)
        else:
            _say(s, f"{o.config.method} seed {o.config.seed}: {o.status}: {o.message}")
            stopped += [o] if o.status == "interrupted" else []
        cfg = o.config
        results.append(
            RunResult(
                cfg.method, cfg.seed, cfg.lr, o.out, o.status, o.record, o.message
            )
        )
    if stopped:
        raise RunInterrupted(f"{len(stopped)} run(s) interrupted; rerun to resume")
    return results


def _batching(s: Settings, case: Problem, todo) -> bool:
    if s.batch != "auto" or not todo:
        return s.batch == "on"
    if not any(case.stackable(cfg.method) for cfg, _ in todo):
        return False
    return batch_pays(case, s.profile)


def _compare(
    s: Settings,
    case: Problem,
    methods: list[str],
    seeds: list[int],
    root: Path,
    budget: str,
    baseline: str = BASELINE,
) -> Comparison:
    """Train methods x seeds into ``root/METHOD/seed-S`` (same steps, or the same
    seconds with ``budget="time"``) and summarise them there."""
    prof = case.profile(s.profile)
    iterations, seconds = s.iterations, s.seconds
    _check_configs(s, case, methods, seeds)
    claim(root)  # empty or ours: it gets summaries and budget.json
    if budget == "time":
        steps = s.iterations or prof.iterations
        if seconds is None:
            seconds = _time_budget(s, case, methods[0], seeds[0], root)
        iterations = steps * TIME_CAP  # a cap: the budget decides
    jobs = [
        (
            replace(
                _config(s, case, m, seed), iterations=iterations, seconds=seconds
            ).resolved(case),
            run_folder(root, m, seed_name(seed)),
        )
        for m in methods
        for seed in seeds
    ]  # all validated before anything runs
    runs = _run_all(jobs, s, case)
    return _summarized(root, case, runs, prof.seed, baseline, s.margin)


MAX_SEEDS = 15  # until_decided's default max_seeds


def _until_decided(
    s: Settings, case, methods, seeds, root: Path, budget, baseline, max_seeds
) -> Comparison:
    """Batches of ``len(seeds)`` new seeds for the comparisons with ``baseline``
    still undecided (:func:`deepxde_lnn.experiments.sequential.until_decided`), then the
    summary over every seed run."""
    if max_seeds is not None:
        check_int(max_seeds, "max_seeds (--max-seeds)", len(seeds))
    if baseline not in methods:
        raise ValueError(f"methods: until_decided compares with {baseline}; include it")
    n = max(max_seeds or MAX_SEEDS, len(seeds))
    design = Design(len(seeds), len(seeds), n, margin=s.margin)
    extra = range(max(seeds) + 1, max(seeds) + 1 + n - len(seeds))
    all_seeds = unique([*seeds, *extra], "seeds")
    if all_seeds[-1] > SEED_MAX:
        raise ValueError(f"max_seeds: the seeds after {max(seeds)} pass 2**32 - 1")
    _check_configs(s, case, methods, all_seeds)  # before any training
    claim(root)
    write_design(root, design)
    runs: list[RunResult] = []

    def train(ms, new):
        done = _compare(s, case, list(ms), list(new), root, budget, baseline).runs
        runs.extend(r for r in done if r.method in ms and r.seed in new)
        out = {m: {} for m in ms}
        for r in done:
            if r.method in ms and r.seed in new:
                if r.record is None:
                    raise TrainingDiverged(f"{r.method} seed {r.seed} did not finish")
                metrics = r.record["metrics"]
                out[r.method][r.seed] = metrics[summary_field(list(metrics))]["RMSE"]
        return out

    def on_look(n, cis):
        said = "; ".join(f"{m}: {ci.verdict_text()}" for m, ci in cis.items())
        look = design.looks.index(n) + 1
        _say(s, f"look {look}/{len(design.looks)} at {n} seeds: {said}")

    seq_decide(train, methods, all_seeds, design, baseline=baseline, on_look=on_look)
    paper_seed = case.profile(s.profile).seed
    return _summarized(root, case, runs, paper_seed, baseline, s.margin)


def _check_configs(s: Settings, case: Problem, methods, seeds) -> None:
    """Every method and seed resolved (``ValueError`` naming it) before a folder
    is created."""
    for m in methods:
        for seed in seeds:
            _config(s, case, m, seed).resolved(case)


def _out(out, default: str) -> Path:
    """``out`` (a path, not an empty one) or ``default``."""
    if out is None:
        return Path(default)
    if not str(out).strip():
        raise ValueError("out must be a path, got an empty string")
    return Path(out)


def _summarized(
    root: Path, case, runs, paper_seed, baseline: str, margin: float = MARGIN
) -> Comparison:
    """Summarise the runs below ``root`` there; the :class:`Comparison`."""
    summary = summarize(
        root,
        paper_seed=paper_seed if case.paper_table else None,  # its own row
        paper_table=case.paper_table,
        baseline=baseline,
        margin=margin,
    )
    verdicts = (Verdict(m, baseline, f, "RMSE", ci) for m, f, ci in summary.verdicts)
    return Comparison(
        root,
        case.name,
        baseline,
        tuple(runs),
        tuple(summary.rows),
        tuple(verdicts),
        summary.markdown,
    )


def _time_budget(s: Settings, case, method: str, seed: int, root: Path) -> float:
    """Seconds per run for ``budget="time"``: ``method``'s measured s/step times
    the step count, measured once and kept in ``root/budget.json`` (so that a
    repeated command reuses its finished runs)."""
    path = root / "budget.json"
    if path.exists():
        seconds = read_budget(path)  # FolderError naming the file
        _say(s, f"time budget: {seconds:.2f} s per run (from {path})")
        return seconds
    cfg = _config(s, case, method, seed).resolved(case)
    per = step_seconds(cfg, case)
    seconds = per * cfg.iterations
    root.mkdir(parents=True, exist_ok=True)
    record = {"seconds": seconds, "method": method, "seconds_per_step": per}
    atomic.write_json(path, {**record, "steps": cfg.iterations})
    _say(
        s,
        f"time budget: {seconds:.2f} s per run ({method}: {per * 1e3:.2f} ms/step "
        f"measured now x {cfg.iterations} steps; saved in {path})",
    )
    return seconds
