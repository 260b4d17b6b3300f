"""The one home of every option: what shapes a run, how a call executes its runs,
how its verdicts are judged. Checked without torch or DeepXDE.

Each option is one field of a frozen dataclass, declared once with its check, its
help text and (for the command line) its text parser: :class:`Training` (what a
run is: steps, lr, schedule, float type, budget, L-BFGS; and how it computes),
:class:`Execution` (reuse, workers, stacking, output) and :class:`Verdicts` (the
equivalence margin). The Python API's keywords, the command line's flags
(:func:`deepxde_lnn.flags.add_options`), the case scripts' flags (those the
scripts honour, ``script=True``), a record's identity (:meth:`RunConfig.identity`,
which decides reuse and which runs a table pools) and the type check of a record
read back (:func:`record_problem`) are all derived from these fields, so a new
option is its field, the line that uses it and its test.

One run is a :class:`RunConfig`: its problem's name (``case``), a method, a seed
and the training options; :meth:`RunConfig.resolved` fills the profile's defaults
and checks what depends on the problem.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace

from ..checks import (
    SEED_MAX,
    check_int,
    check_margin,
    parse_number,
)
from ..runs.folder import record_decay
from ..runs.names import DTYPES, FINGERPRINT, is_fingerprint
from ..runs.records import current_names
from .values import (
    _DECAYS,
    _KEEP,
    BACKENDS,
    MAX_THREADS,
    WITHDRAWN,
    _bool,
    _check_decay,
    _check_weights,
    _choice,
    _compile_setting,
    _compile_text,
    _int_at_least,
    _memory,
    _name,
    _parse_int,
    _parse_positive,
    _parse_weights,
    _parsed,
    _positive,
    _walltime,
    check_backend_name,
    option,
    walltime_seconds,
)

__all__ = [
    "MAX_SEEDS",
    "MAX_THREADS",
    "Training",
    "Execution",
    "Verdicts",
    "RunConfig",
    "OPTION_CLASSES",
    "Options",
    "DTYPES",
    "BACKENDS",
    "WITHDRAWN",
    "MARGIN",
    "TIME_CAP",
    "option_fields",
    "option_types",
    "split_options",
    "record_problem",
    "stackable_training",
    "check_weights_fit",
    "check_decay_fits",
    "check_backend_name",
    "walltime_seconds",
]

STACK = ("auto", "on", "off")
SCORES = ("final", "best")
#: the first phase's optimizers: PyTorch's Adam, or SOAP (the ``soap`` extra)
OPTIMIZERS = ("adam", "soap")
MARGIN = 2.0  # the default equivalence margin: ratios within [1/2, 2]
TIME_CAP = 20  # with a time budget, at most this many times the profile's steps
# --- the options ----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Training:
    """What shapes a run (``None``: the profile's value) and how it computes."""

    lr: float | None = option(
        None,
        "Adam learning rate (default: the profile's)",
        check=_positive,
        parse=_parsed(_parse_positive, "lr"),
        from_profile=True,
        script=True,
    )
    iterations: int | None = option(
        None,
        "Adam steps (default: the profile's; a cap with a time budget)",
        check=_int_at_least(1),
        parse=_parsed(_parse_int(1), "iterations"),
        script=True,
    )
    profile: str | None = option(
        None,
        "the profile: a named set of training settings (a case's: quick, paper, "
        "accurate, strong, settled or settled-paper; PINNacle's problems: quick, "
        "accurate or pinnacle; default quick, every problem's)",
        check=_name,
        parse=str,
        script=True,
    )
    dtype: str | None = option(
        None,
        "float32 or float64 (default: the profile's; accurate: float64)",
        check=_choice(DTYPES),
        parse=_parsed(lambda t, n: _choice(DTYPES)(t, n), "dtype"),
        from_profile=True,
        script=True,
    )
    checkpoint_every: int = option(
        1000,
        "steps between checkpoints",
        check=_int_at_least(1),
        parse=_parsed(_parse_int(1), "checkpoint-every"),
        identity=False,
    )
    seconds: float | None = option(
        None,
        "wall-clock training budget per run (then iterations is a cap, default "
        f"{TIME_CAP}x the profile's steps)",
        check=_positive,
        parse=_parsed(_parse_positive, "seconds"),
        omit=None,
    )
    first_optimizer: str | None = option(
        None,
        "the first phase's optimizer: adam, or soap (SOAP, Adam in the "
        "eigenbasis of a Shampoo preconditioner: heavyball's, the soap extra; "
        "its seeds train one by one) (default: the profile's, adam)",
        check=_choice(OPTIMIZERS),
        parse=_parsed(lambda t, n: _choice(OPTIMIZERS)(t, n), "first_optimizer"),
        choices=OPTIMIZERS,
        omit="adam",
        from_profile=True,
        script=True,
    )
    lbfgs: int | None = option(
        None,
        "L-BFGS iterations after Adam, at most (default: the profile's; accurate: "
        "3000, others 0)",
        check=_int_at_least(0),
        parse=_parsed(_parse_int(0), "lbfgs"),
        omit=0,
        from_profile=True,
        script=True,
    )
    nncg: int | None = option(
        None,
        "NNCG iterations (DeepXDE's Nystrom-Newton-CG) after L-BFGS, at most; an "
        "L-BFGS that stops early hands over its steps (default: the profile's, 0)",
        check=_int_at_least(0),
        parse=_parsed(_parse_int(0), "nncg"),
        omit=0,
        from_profile=True,
        script=True,
    )
    decay: tuple | None = option(
        None,
        "Adam's learning-rate schedule in DeepXDE's format, one of "
        f"{', '.join(_DECAYS)} with its numbers: ('inverse time', 1000, 0.5) in "
        "Python, 'inverse time,1000,0.5' on the command line "
        "(default: the profile's)",
        check=_check_decay,
        parse=_parsed(_check_decay, "decay"),
        omit=None,
        from_profile=True,
        script=True,
    )
    loss_weights: tuple | None = option(
        None,
        "one weight per loss term, as DeepXDE's Model.compile takes them: "
        "[1, 10, 10] in Python, '1,10,10' on the command line (default: none)",
        check=_check_weights,
        parse=_parsed(_parse_weights, "loss_weights"),
        omit=None,
        script=True,
    )
    score: str = option(
        "final",
        "what a run is scored on: the final iterate, or (best) DeepXDE's best "
        "model, its predictions at the logged step of lowest training loss "
        "(train= only)",
        check=_choice(SCORES),
        parse=str,
        choices=SCORES,
        omit="final",
        script=True,
    )
    compile_jets: bool | str = option(
        "auto",
        "the Taylor-mode derivatives through torch.compile (fused kernels; CUDA "
        "graphs on a GPU): the same math, other rounding. 'auto' (default) compiles "
        "long runs, where the compile pays for itself within the run; on or off "
        "as you say otherwise (docs/running.md, Compiled jets)",
        check=_compile_setting,
        parse=_compile_text,
        identity=False,
        script=True,
    )
    cuda_graph: bool = option(
        False,
        "on a GPU, each Adam step (losses, backward, Adam) as one CUDA graph: one "
        "launch per step instead of hundreds; the same points and math, other "
        "rounding. Elsewhere the same step runs eagerly (docs/running.md, CUDA "
        "graphs)",
        check=_bool,
        identity=False,
        script=True,
    )

    def __post_init__(self):
        _check_fields(self)


@dataclass(frozen=True, kw_only=True)
class Execution:
    """How a call executes its runs (none of it changes a run's result)."""

    overwrite: bool = option(
        False,
        "replace finished results of another configuration in the output folder",
        check=_bool,
    )
    workers: int | None = option(
        None,
        "runs at a time (default: as many as cores, at most the runs)",
        check=_int_at_least(1),
        parse=_parsed(_parse_int(1), "workers"),
    )
    backend: str = option(
        "loky",
        "joblib backend: local processes (loky, default), a Dask cluster (dask), "
        "or Dask workers in SLURM jobs (slurm, through dask-jobqueue)",
        check=check_backend_name,
        parse=_parsed(check_backend_name, "backend"),
        choices=BACKENDS,
    )
    address: str | None = option(
        None,
        "the Dask scheduler's address (tcp://HOST:PORT; default: a local cluster)",
        check=_name,
        parse=str,
    )
    jobs: int | None = option(
        None,
        "SLURM jobs of Dask workers (backend slurm; default 1)",
        check=_int_at_least(1),
        parse=_parsed(_parse_int(1), "jobs"),
    )
    job_cores: int | None = option(
        None,
        "cores each SLURM job books (backend slurm; default 1); a job runs "
        "job_cores // threads runs at a time",
        check=_int_at_least(1, MAX_THREADS),
        parse=_parsed(_parse_int(1, MAX_THREADS), "job-cores"),
    )
    job_memory: str | None = option(
        None,
        "memory each SLURM job books, e.g. 4GB (backend slurm; default 4GB)",
        check=_memory,
        parse=_parsed(_memory, "job-memory"),
    )
    walltime: str | None = option(
        None,
        "each SLURM job's time limit, MM, HH:MM:SS or D-HH:MM:SS (backend slurm; "
        "default 01:00:00); at least a worker's start and one checkpoint interval "
        "of the slowest method, measured before anything is submitted; a run cut "
        "by it resumes from its checkpoint on rerun",
        check=_walltime,
        parse=_parsed(_walltime, "walltime"),
    )
    partition: str | None = option(
        None,
        "the SLURM partition (queue) of the jobs (backend slurm; default: the "
        "cluster's)",
        check=_name,
        parse=str,
    )
    account: str | None = option(
        None,
        "the SLURM account the jobs are charged to (backend slurm; default: yours)",
        check=_name,
        parse=str,
    )
    stack: str = option(
        "auto",
        "train the seeds of a method as one stacked model (auto: on a GPU, and on a "
        "CPU for small point sets, where it was measured faster)",
        check=_choice(STACK),
        parse=str,
        choices=STACK,
    )
    progress: bool = option(
        True,
        "a progress bar per run on a terminal, progress lines in a pipe or log file",
        check=_bool,
    )
    verbose: bool = option(True, "a line per run", check=_bool, cli=False)
    threads: int | None = option(
        None,
        "torch CPU threads per run (default 1: a PINN's small matrices run about "
        "as fast on one, and a loaded machine then slows each run, not all of them "
        "many times); runs at a time x threads at most the cores, and at most "
        f"{MAX_THREADS} threads (even with force_threads)",
        check=_int_at_least(1, MAX_THREADS),
        parse=_parsed(_parse_int(1, MAX_THREADS), "threads"),
    )
    force_threads: bool = option(
        False,
        "allow runs at a time x threads beyond the cores (threads still at most "
        f"{MAX_THREADS})",
        check=_bool,
    )

    def __post_init__(self):
        _check_fields(self)


#: ``until_decided``'s default ``max_seeds``: seeds per method at most
MAX_SEEDS = 15


@dataclass(frozen=True, kw_only=True)
class Verdicts:
    """How comparisons are judged."""

    margin: float = option(
        MARGIN,
        "equivalence margin m: 'equivalent within xm' when the error ratio's whole "
        "95 % interval lies in [1/m, m] (default 2; docs/verdicts.md)",
        check=lambda value, name: check_margin(value),
        parse=_parsed(lambda t, n: parse_number(t, n, 1, None, above=True), "margin"),
    )

    def __post_init__(self):
        _check_fields(self)


OPTION_CLASSES = (Training, Execution, Verdicts)


@dataclass(frozen=True)
class Options:
    """The options of one call: its runs' training, their execution, the
    verdicts' margin."""

    training: Training = dataclasses.field(default_factory=Training)
    execution: Execution = dataclasses.field(default_factory=Execution)
    verdicts: Verdicts = dataclasses.field(default_factory=Verdicts)

    @classmethod
    def of(cls, given: Mapping, where: str, allowed: Iterable[str]) -> Options:
        """The options among the keywords ``given``; a name that is not an
        option of this call (not in ``allowed``) is a ValueError naming it and
        the call ``where``."""
        allowed = list(allowed)
        unknown = [k for k in given if k not in allowed]
        if unknown:
            raise ValueError(
                f"{unknown[0]}: unknown option of {where}; options: "
                + ", ".join(allowed)
            )
        return cls(*split_options(given).values())

    def with_training(self, **changes) -> Options:
        """These options with the training options ``changes`` replaced."""
        return replace(self, training=replace(self.training, **changes))


def _check_fields(obj) -> None:
    """Each given (not ``None``) option checked by its field's rule, in order; the
    first bad one is a ValueError naming it."""
    for f in fields(obj):
        value, check = getattr(obj, f.name), f.metadata.get("check")
        if value is not None and check is not None:
            object.__setattr__(obj, f.name, check(value, f.name))


def option_fields(*classes) -> dict[str, dataclasses.Field]:
    """The option fields of ``classes`` (default: all), by name, in order."""
    out: dict[str, dataclasses.Field] = {}
    for cls in classes or OPTION_CLASSES:
        out.update({f.name: f for f in fields(cls) if "help" in f.metadata})
    return out


def option_types(*classes) -> dict[str, object]:
    """The types of the option fields of ``classes`` (default: all), by name, in
    order: their annotations, evaluated (e.g. ``float | None``)."""
    out: dict[str, object] = {}
    for cls in classes or OPTION_CLASSES:
        hints = typing.get_type_hints(cls)
        out.update({name: hints[name] for name in option_fields(cls)})
    return out


def split_options(given: Mapping, classes: Iterable = OPTION_CLASSES) -> dict:
    """``{class: instance}`` from keyword options ``given`` (every key must be a
    field of one of ``classes``; the caller names the unknown ones)."""
    out = {}
    for cls in classes:
        names = {f.name for f in fields(cls)}
        out[cls] = cls(**{k: v for k, v in given.items() if k in names})
    return out


# --- one run --------------------------------------------------------------------------


#: the attribute by which a resolved :class:`RunConfig` remembers its problem
_RESOLVED_FOR = "_resolved_for"


@dataclass(frozen=True)
class RunConfig(Training):
    """One run's configuration: its problem's name (``case``, a name kept from
    when every problem was a case), a method, a seed and its :class:`Training`.

    ``problem`` says what the problem is when its name does not: ``None``
    for a registered case (the study's, by name), else its fingerprint
    (:data:`~deepxde_lnn.runs.names.FINGERPRINT`; a case file's bytes, a problem
    given in Python its definition), set from the problem by the API
    (:func:`deepxde_lnn.experiments.orchestration.config`), never an option."""

    case: str
    method: str = "lnn"
    seed: int | None = None
    problem: str | None = None

    @classmethod
    def of(
        cls,
        training: Training,
        case: str,
        method: str,
        seed=None,
        problem: str | None = None,
    ) -> RunConfig:
        """The run of ``method`` and ``seed`` on ``case`` (whose fingerprint is
        ``problem``) trained as ``training``."""
        values = {f.name: getattr(training, f.name) for f in fields(Training)}
        return cls(case, method, seed, problem, **values)

    def resolved(self, problem) -> RunConfig:
        """Every field checked (ValueError naming it) and the profile's defaults
        filled from ``problem`` (a :class:`~deepxde_lnn.problems.problem.Problem`).

        Resolved once: the result remembers ``problem`` (not pickled, not compared),
        and resolving it again for the same problem object returns it unchanged.
        """
        if self.__dict__.get(_RESOLVED_FOR) is problem:
            return self
        name = self.profile or problem.default_profile
        prof = problem.profile(name)  # ValueError naming the profile
        values = {
            f.name: getattr(prof, f.name)
            for f in fields(Training)
            if f.metadata.get("from_profile") and getattr(self, f.name) is None
        }
        seed = prof.seed if self.seed is None else self.seed
        check_int(seed, "seed", 0, SEED_MAX)
        iterations = self.iterations
        if iterations is None and prof.iterations is not None:  # None: not ours
            iterations = prof.iterations * (TIME_CAP if self.seconds else 1)
        out = replace(
            self, profile=name, seed=int(seed), iterations=iterations, **values
        )
        problem.check_method(out.method)  # ValueError naming the method
        if out.problem is not None and not is_fingerprint(out.problem):
            raise ValueError(f"problem must match {FINGERPRINT.pattern}")
        _check_finisher("lbfgs", out.lbfgs, out.method, out.seconds, problem)
        _check_finisher("nncg", out.nncg, out.method, out.seconds, problem)
        _check_optimizer(out.first_optimizer)
        if out.score not in problem.scores:
            raise ValueError(
                f"score: {out.score!r} is not offered for this problem (it scores "
                f"{' or '.join(map(repr, problem.scores))}); pass score='final'"
            )
        if out.loss_weights is not None:
            check_weights_fit(out.loss_weights, problem.loss_names(out.method, prof))
        check_decay_fits(out.decay, out.lr)
        object.__setattr__(out, _RESOLVED_FOR, problem)
        return out

    def __getstate__(self) -> dict:
        """The fields only: which problem object resolved it stays in this process."""
        return {k: v for k, v in self.__dict__.items() if k != _RESOLVED_FOR}

    def identity(self) -> dict:
        """What makes two runs the same run (records and checkpoints are matched
        on it): the problem's name, what it is where its name does not say it, the
        method, seed and the options that shape the result, without those at
        their ``omit`` value (as records before they existed)."""
        return _identity({f.name: getattr(self, f.name) for f in fields(self)})

    @staticmethod
    def identity_of(record: Mapping) -> dict:
        """The :meth:`identity` of the run that wrote ``record`` (a
        ``metrics.json``, which holds its identity at the top level, or a
        checkpoint's configuration) by this version's names
        (:func:`~deepxde_lnn.runs.records.current_names`); a record written before
        ``decay`` names its schedule in its optimizer's text. Two runs are the
        same run when these are equal, whatever else their records hold.
        ``ValueError`` naming the option whose value does not check
        (:func:`record_problem`)."""
        values = {**current_names(record), "decay": record_decay(record)}
        why = record_problem(values)
        if why:
            raise ValueError(why)
        return _identity(values)

    @property
    def total_steps(self) -> int:
        """Adam steps plus L-BFGS and NNCG iterations (of a resolved
        configuration)."""
        assert self.iterations is not None  # resolved, and trained by the package
        return self.iterations + (self.lbfgs or 0) + (self.nncg or 0)


def _identity(values: Mapping) -> dict:
    """The identity of the run whose fields (or record) are ``values``."""
    out = {k: values.get(k) for k in ("case", "method", "seed")}
    if values.get("problem") is not None:  # a problem that is not the registered one
        out["problem"] = values["problem"]
    for f in fields(Training):
        value, meta = values.get(f.name), f.metadata
        omitted = meta["omit"] is not _KEEP and value in (None, meta["omit"])
        if meta["identity"] and not omitted:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def record_problem(record: Mapping) -> str | None:
    """What is wrong with the training options that a run record (or a
    checkpoint's configuration) holds, each value checked by its field's own
    rule, or None. ``None`` passes: the option at its default (or, for the steps
    and lr of a training function's run, not the package's). A record holds an
    option's value as the check gives it (a list where it gives a tuple), never
    the command line's text of it."""
    for name, f in option_fields(Training).items():
        value = record.get(name)
        if value is None:
            continue
        try:
            checked = f.metadata["check"](value, name)
        except (ValueError, TypeError) as err:
            text = str(err)
            return text if len(text) <= 200 else text[:199] + "…"
        if isinstance(checked, tuple) and not isinstance(value, (list, tuple)):
            return f"{name} must be a list, not {type(value).__name__}"
    return None


#: the finishers' names as messages give them
_FINISHERS = {"lbfgs": "L-BFGS", "nncg": "NNCG"}


def _check_finisher(
    name: str, steps: int | None, method: str, seconds, problem
) -> None:
    """ValueError naming what cannot go with the finisher ``name`` (``lbfgs``,
    ``nncg``) where it runs ``steps`` iterations."""
    if not steps:
        return
    what, off = _FINISHERS[name], f"pass {name}=0 (--{name} 0)"
    if seconds is not None:
        raise ValueError(
            f"seconds: a time budget cannot be combined with {what} ({name} > 0); "
            f"{off} or no time budget"
        )
    if not problem.deterministic(method):
        raise ValueError(
            f"method {method!r}: its training loss is random (dropout), which "
            f"{what}'s line search cannot use; {off}"
        )


#: the package SOAP comes from, and how to install it
SOAP_PACKAGE = ("heavyball", "pip install 'deepxde-lnn[soap]'")


def _check_optimizer(optimizer: str | None) -> None:
    """ValueError naming the option where SOAP is asked for and its package is
    not installed (before any folder is made)."""
    if optimizer == "soap" and importlib.util.find_spec(SOAP_PACKAGE[0]) is None:
        raise ValueError(
            f"first_optimizer: 'soap' needs the package {SOAP_PACKAGE[0]}: {SOAP_PACKAGE[1]}"
        )


def check_decay_fits(decay, lr) -> None:
    """ValueError naming ``decay`` where a schedule's floor (cosine's
    ``eta_min``) lies above the learning rate ``lr``: no schedule may raise it."""
    if decay and decay[0] == "cosine" and lr is not None and decay[2] > lr:
        raise ValueError(
            f"decay: the floor eta_min of 'cosine' ({decay[2]:g}) is above the "
            f"learning rate ({lr:g}); a schedule only lowers it"
        )


def check_weights_fit(weights, names) -> None:
    """ValueError naming ``loss_weights`` unless there is one weight per loss
    term ``names`` (``None``: not known yet, nothing to check)."""
    if names and len(weights) != len(names):
        raise ValueError(
            f"loss_weights: {len(weights)} weights for {len(names)} loss terms "
            f"({', '.join(names)})"
        )


def stackable_training(profile, cfg) -> bool:
    """Whether the training (the profile, as ``cfg`` changes it) allows stacking
    seeds: the stacked Adam (with the profile's learning-rate schedule, one for
    all runs) redraws points every step; L-BFGS's and NNCG's line searches would
    couple the seeds, and SOAP's preconditioner, taken over a stacked tensor,
    would mix them."""
    first = cfg.first_optimizer or profile.first_optimizer
    finisher = cfg.lbfgs or cfg.nncg
    return profile.resample and not finisher and first == "adam"
