"""Experiments as Python functions: :func:`run`, :func:`compare`, :func:`sweep`
and :func:`ablate` (``deepxde-lnn`` is a thin layer over them).

They take keyword arguments, check everything before anything trains (a
``ValueError`` naming the argument), write the same folders as the command line and
return small result objects (:mod:`.experiments.results`)::

    import deepxde_lnn

    res = deepxde_lnn.compare("laplace", seeds=[1, 2, 3], iterations=2000)
    res.verdicts                # lnn against pinn, per field, with a 95 % interval

The problem is a registered case name (``"laplace"``), the path of a case file of
your own (``"my_case.py"``, declaring ``CASE``; it is executed), a
:class:`~deepxde_lnn.problems.case.Case`, or plain DeepXDE: ``data=`` (a function returning
a ``dde.data.Data`` with a solution) and ``nets=`` (``{name: function returning a
network}``), see :mod:`deepxde_lnn.problems.deepxde_problem`. The options (training, execution,
verdicts) are those of :mod:`deepxde_lnn.config`, given as keywords; each
call's signature and docstring list them with their types, defaults and help
texts, built from those options at import (:func:`_api`).
:func:`sweep` and :func:`ablate` are loops over the comparison of :func:`compare`.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
from deepxde.data import Data
from deepxde.model import Model
from deepxde.nn import NN

from .analysis.figures import draw_missing
from .analysis.sweep import sweep_table
from .analysis.table import SUBJECT
from .checks import check_bool, check_choice, check_positive, unique
from .config import (
    Execution,
    Options,
    RunConfig,
    Training,
    Verdicts,
    option_fields,
    option_types,
)
from .experiments.ablation import TABLE as ABLATION_TABLE
from .experiments.ablation import figure as ablation_figure
from .experiments.ablation import table, variants
from .experiments.jobs import (
    check_backend,
    check_threads,
    slurm_settings,
    torch_threads,
)
from .experiments.orchestration import (
    check_configs,
    compare_runs,
    config,
    decide_runs,
    print_record,
    profile_name,
    profile_of,
    progress_of,
)
from .experiments.results import Ablation, Comparison, RunResult, Sweep
from .experiments.selection import baseline_of, methods_of, out_of, seeds_of
from .keywords import ManyOptions, RunOptions
from .problems.case import Case, load_file
from .problems.deepxde_problem import DeepXDEProblem
from .problems.methods import COMPARED
from .problems.problem import Problem
from .problems.scripted_problem import ScriptedProblem
from .runs import atomic
from .runs.folder import RunFolder, claim, writing
from .runs.names import BOTH, BUDGETS, lr_name, run_folder, run_label, seed_name
from .study import registry
from .training import runner

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # PEP 692 before Python 3.11
    from typing_extensions import Unpack

__all__ = ["run", "compare", "sweep", "ablate", "problem_of"]

# the options of each call, by name (deepxde_lnn.config's)
RUN_OPTIONS = (
    *option_fields(Training),
    *("overwrite", "progress", "verbose", "threads", "force_threads"),
)
MANY_OPTIONS = tuple(option_fields(Training, Execution, Verdicts))

# The arguments that say what the problem is, as the calls' docstrings describe
# them (each call documents those it takes): ``case``, or ``data`` and ``nets``,
# or ``train`` and ``nets``.
PROBLEM_ARGS = {
    "case": "a registered case name, the path of a case file (``.py``, declaring "
    "``CASE``; it is executed) or a ``Case``.",
    "data": "instead of ``case``, with ``nets``: a function of no arguments "
    "returning a ``dde.data.Data`` with an exact solution (``solution=``); runs are "
    "scored on its test points ``data.test()``.",
    "nets": "``{name: function of no arguments returning a dde.nn.NN}``, with "
    "``data`` or ``train``; the names are the methods.",
    "name": "with ``data`` or ``train``, the problem's name in records and "
    "folders (default: the function's name; for one named ``train``, ``data`` "
    "and the like, the name of the file that defines it).",
    "train": "instead of ``case``, with ``nets``: your training as a function "
    "``train(net) -> dde.Model`` that builds the data and the model, compiles and trains it as your script does and "
    "returns the model. The training options are the function's (only ``score`` "
    "applies).",
    "reference": "with ``train``, what runs are scored against where the model's "
    "test data has no solution: ``(X, Y)`` or ``Y = f(X)``.",
    "true_values": "with ``train``, the true values of the model's external "
    "trainable variables (a list in DeepXDE's order, or ``{name: value}``): each "
    "is scored and judged like a field; where the test data has no solution and "
    "no ``reference`` is given (observations only), the runs are judged on these "
    "unknowns alone.",
    "fields": "with ``train``, the names of the network's outputs in records, "
    "tables and figures (default ``u``, or ``u1, u2, ...``).",
    "inputs": "with ``train``, the names of the network's inputs in records, "
    "tables and figures (default ``x``, or ``x1, x2, ...``).",
}

# what runs are scored against: (X, Y) arrays, or a function Y = f(X)
Reference = tuple[np.ndarray, np.ndarray] | Callable[[np.ndarray], np.ndarray]
_F = TypeVar("_F", bound=Callable)


def _api(options: Sequence[str]) -> Callable[[_F], _F]:
    """A public experiment whose ``**options`` are the option keywords ``options``
    (:data:`RUN_OPTIONS` or :data:`MANY_OPTIONS`), made visible where its readers
    look: its signature (``inspect.signature``, ``help()``, Sphinx) gets one
    keyword-only parameter per option, with the field's type and default, and its
    docstring's ``Args:`` section one entry per parameter, in order: the
    function's own, else :data:`PROBLEM_ARGS`'s, else the field's help text.
    Static analysis sees ``**options: Unpack[...]`` (:mod:`deepxde_lnn.keywords`).
    """

    def wrap(func: _F) -> _F:
        sig = _signature(func, options)
        func.__signature__ = sig  # type: ignore[attr-defined]  # a function's own
        func.__annotations__ = {
            **{p.name: p.annotation for p in sig.parameters.values()},
            "return": sig.return_annotation,
        }
        func.__doc__ = _docstring(func.__doc__ or "", sig)
        return func

    return wrap


def _signature(func: Callable, options: Sequence[str]) -> inspect.Signature:
    """``func``'s signature, its annotations evaluated, with its ``**options``
    replaced by one keyword-only parameter per option of ``options``."""
    own = inspect.signature(func, eval_str=True)
    declared, types = option_fields(), option_types()
    params = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    params += [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=declared[name].default,
            annotation=types[name],
        )
        for name in options
    ]
    return own.replace(parameters=params)


def _docstring(doc: str, sig: inspect.Signature) -> str:
    """``doc`` (Google style) with its ``Args:`` section made of one entry per
    parameter of ``sig``; a parameter documented nowhere, or an entry of no
    parameter, is a TypeError (at import)."""
    lines = inspect.cleandoc(doc).splitlines()
    own: dict[str, list[str]] = {}
    if "Args:" in lines:
        start = lines.index("Args:")
        end = start + 1
        while end < len(lines) and (not lines[end] or lines[end][0] == " "):
            entry = re.match(r"    (\w+):", lines[end])
            if entry:
                own[entry[1]] = []
            if lines[end]:
                own[list(own)[-1]].append(lines[end])
            end += 1
        del lines[start:end]
    else:
        heads = [i for i, line in enumerate(lines) if line in ("Returns:", "Raises:")]
        start = heads[0] if heads else len(lines)
    options = option_fields()
    entries = []
    for name in sig.parameters:
        if name in own:
            entries += own.pop(name)
            continue
        if name in PROBLEM_ARGS:
            text = PROBLEM_ARGS[name]
        elif name in options:
            text = options[name].metadata["help"] + "."
        else:
            raise TypeError(f"{name}: a parameter without an entry in Args:")
        entries += textwrap.wrap(
            f"{name}: {text}",
            80,
            initial_indent=" " * 4,
            subsequent_indent=" " * 8,
            break_long_words=False,
            break_on_hyphens=False,
        )
    if own:
        raise TypeError(f"{', '.join(own)}: documented in Args:, not a parameter")
    lines[start:start] = ["Args:", *entries] + ([""] if start < len(lines) else [])
    return "\n".join(lines) + "\n"


def _options(given: Mapping[str, object], call: Callable) -> Options:
    """The option keywords ``given`` to the experiment ``call`` as one
    :class:`~deepxde_lnn.config.Options`, checked before anything is written: a
    ``ValueError`` names an unknown or bad one (or an unreachable backend)."""
    names = list(inspect.signature(call).parameters)[1:]  # after the problem
    o = Options.of(given, f"{call.__name__}()", names)
    check_backend(o.execution.backend, o.execution.address, slurm_settings(o.execution))
    check_threads(o.execution)
    return o


def problem_of(
    case: Case | str | os.PathLike | None = None,
    data: Callable | None = None,
    nets: Mapping[str, Callable] | None = None,
    name: str | None = None,
    train: Callable | None = None,
    reference: Reference | None = None,
    true_values: Sequence[float] | Mapping[str, float] | None = None,
    fields: Sequence[str] | None = None,
    inputs: Sequence[str] | None = None,
) -> Problem:
    """The problem of an experiment (see the module's docstring)."""
    if train is not None:
        if case is not None or data is not None:
            raise ValueError("train: give train= and nets=, without a case or data=")
        if nets is None:
            raise ValueError("nets: train= needs nets= (the networks it trains)")
        return ScriptedProblem(
            train, nets, name, reference, true_values, fields, inputs
        )
    for given, what in (
        (reference, "reference"),
        (true_values, "true_values"),
        (fields, "fields"),
        (inputs, "inputs"),
    ):
        if given is not None:
            raise ValueError(f"{what}: only with train= (and nets=)")
    if data is not None or nets is not None:
        if case is not None:
            raise ValueError("case: give a case, or data= and nets=, not both")
        if data is None or nets is None:
            raise ValueError("data, nets: plain DeepXDE needs both data= and nets=")
        return DeepXDEProblem(data, nets, name)
    if name is not None:
        raise ValueError("name: only with data= and nets= (a case has its own)")
    if isinstance(case, Case):
        case.check()  # its functions tried once, before anything trains
        return registry.identified(case)
    if isinstance(case, (str, os.PathLike)):
        text = os.fspath(case)
        return load_file(text) if text.endswith(".py") else registry.get(text)
    raise ValueError(
        f"case must be a case name, a case file (.py) or a Case; got {case!r}"
    )


def scripted_options(o: Options, problem: Problem) -> None:
    """With ``train=``, the training is the function's: a training option other
    than ``score`` is a ValueError naming it (never silently ignored), as is
    stacking."""
    if not problem.trains_itself:
        return
    for name, f in option_fields(Training).items():
        if name != "score" and getattr(o.training, name) != f.default:
            raise ValueError(
                f"{name}: with train=, your function sets the training; pass "
                "it there (the package's training options do not apply)"
            )
    if o.execution.stack == "on":
        raise ValueError("stack: with train=, each run trains one network")
    assert isinstance(problem, ScriptedProblem)  # the one problem that trains itself
    problem.check_score(o.training.score)


@_api(RUN_OPTIONS)
def run(
    case: Case | str | os.PathLike | None = None,
    *,
    method: str | None = None,
    seed: int | None = None,
    out: str | os.PathLike | None = None,
    resume: bool = False,
    data: Callable[[], Data] | None = None,
    nets: Mapping[str, Callable[[], NN]] | None = None,
    name: str | None = None,
    train: Callable[[NN], Model] | None = None,
    reference: Reference | None = None,
    true_values: Sequence[float] | Mapping[str, float] | None = None,
    fields: Sequence[str] | None = None,
    inputs: Sequence[str] | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """Train one run (``method``, ``seed``) into ``out`` and return it.

    A finished run of the same configuration is returned as it is (status
    ``reused``).

    Args:
        method: the method (default ``lnn``; plain DeepXDE: the first network).
        seed: the run's seed (default: the profile's).
        out: the run's folder (default ``runs/CASE/METHOD/seed-S``).
        resume: continue the checkpoint in ``out``.

    Returns:
        The run: its folder, status and record (``metrics.json``).

    Raises:
        ValueError: a bad argument, named in the message (nothing trained).
        RunInterrupted: SIGINT or SIGTERM (a checkpoint is saved; rerun with
            ``resume=True``).
        TrainingDiverged: a non-finite loss (the last good checkpoint is kept).
    """
    o = _options(options, run)
    check_bool(resume, "resume")
    problem = problem_of(
        case, data, nets, name, train, reference, true_values, fields, inputs
    )
    scripted_options(o, problem)
    method = method or methods_of(None, problem, [SUBJECT])[0]
    cfg = config(o, problem, method, seed).resolved(problem)  # before writing
    assert cfg.seed is not None  # resolved: set
    out = out_of(out, run_folder("runs", cfg.case, cfg.method, seed_name(cfg.seed)))
    overwrite = o.execution.overwrite
    folder = RunFolder(out)
    folder.check()  # ours and writable, before anything in it is read
    done = None if overwrite else folder.finished(cfg.identity(), RunConfig.identity_of)
    label = run_label(cfg.case, cfg.method, cfg.seed)
    with torch_threads(o.execution.threads or 1):
        rec = runner.run(
            cfg,
            out,
            resume=resume,
            overwrite=overwrite,
            progress=progress_of(o, label),
            problem=problem,
            on_done=functools.partial(draw_missing, problem=problem),
        )
    print_record(o, rec, out)
    status = "done" if done is None else "reused"
    return RunResult(cfg.method, cfg.seed, cfg.lr, Path(out), status, rec)


@_api(MANY_OPTIONS)
def compare(
    case: Case | str | os.PathLike | None = None,
    *,
    data: Callable[[], Data] | None = None,
    nets: Mapping[str, Callable[[], NN]] | None = None,
    name: str | None = None,
    train: Callable[[NN], Model] | None = None,
    reference: Reference | None = None,
    true_values: Sequence[float] | Mapping[str, float] | None = None,
    fields: Sequence[str] | None = None,
    inputs: Sequence[str] | None = None,
    methods: Sequence[str] | str | None = None,
    seeds: Sequence[int] | None = None,
    baseline: str | Sequence[str] | None = None,
    budget: str = "steps",
    until_decided: bool = False,
    max_seeds: int | None = None,
    out: str | os.PathLike | None = None,
    **options: Unpack[ManyOptions],
) -> Comparison:
    """Methods × seeds into ``out/METHOD/seed-S``, then ``summary.md``,
    ``summary.csv`` and ``summary.png`` there (the paper's number beside each
    case's, verdicts against ``baseline``).

    Args:
        methods: default ``lnn, pinn`` (plain DeepXDE: every network).
        seeds: default the profile's seed and the next ones, as many as the
            profile has (laplace's quick profile: 8 from 888888).
        baseline: what every other method is judged against (default ``pinn``;
            plain DeepXDE: the first network); several (a list, e.g. the plain
            network and its parameter-matched twin): each one's verdicts are
            one family, Holm-adjusted, and the first decides ``until_decided``.
        budget: "steps" (every method the same steps) or "time" (the same
            seconds: ``seconds``, or the first method's measured time for the
            profile's steps, kept in ``out/budget.json``).
        until_decided: add seeds in batches (as many as ``seeds``) to the
            comparisons with ``baseline`` still undecided, up to ``max_seeds``;
            the error rate is spread over the looks.
        max_seeds: with ``until_decided``, at most this many seeds per method
            (default :data:`~deepxde_lnn.config.MAX_SEEDS`, 15).
        out: default ``runs/compare-CASE-PROFILE`` (``-time`` for a time budget).

    Returns:
        The comparison: its runs, summary table and verdicts.

    Raises:
        ValueError: a bad argument, named in the message (nothing trained; also
            a case whose functions do not fit it).
        FolderError: a file that cannot be written (a full disk), named.
        RunInterrupted: SIGINT or SIGTERM (rerun to resume).
        WorkersLost: a worker process died; it names the runs cut short, and a
            rerun goes on.
    """
    o = _options(options, compare)
    problem = problem_of(
        case, data, nets, name, train, reference, true_values, fields, inputs
    )
    scripted_options(o, problem)
    check_choice(budget, "budget", BUDGETS)
    if budget == "time" and problem.trains_itself:
        raise ValueError("budget: with train=, your function sets the steps")
    check_bool(until_decided, "until_decided")
    methods = methods_of(methods, problem, COMPARED)
    prof = profile_of(o, problem)
    seeds = seeds_of(seeds, prof)
    baseline = baseline_of(baseline, problem, methods)
    time = "-time" if budget == "time" else ""
    root = out_of(out, f"runs/compare-{problem.name}-{profile_name(o, problem)}{time}")
    if until_decided:
        return decide_runs(
            o, problem, methods, seeds, root, budget, baseline, max_seeds
        )
    if max_seeds is not None:
        raise ValueError(
            "max_seeds (--max-seeds): only with until_decided (--until-decided)"
        )
    return compare_runs(o, problem, methods, seeds, root, budget, baseline)


@_api(MANY_OPTIONS)
def sweep(
    case: Case | str | os.PathLike | None = None,
    *,
    lrs: Sequence[float],
    data: Callable[[], Data] | None = None,
    nets: Mapping[str, Callable[[], NN]] | None = None,
    name: str | None = None,
    methods: Sequence[str] | str | None = None,
    seeds: Sequence[int] | None = None,
    baseline: str | None = None,
    out: str | os.PathLike | None = None,
    **options: Unpack[ManyOptions],
) -> Sweep:
    """Learning-rate sweep: one :func:`compare` per learning rate of ``lrs`` into
    ``out/lr-X`` (``methods`` × ``seeds``, with its summary), then ``sweep.md``
    (error against learning rate per method).

    Args:
        lrs: the learning rates (so ``lr`` is not an option here).
        methods: default ``lnn`` (plain DeepXDE: every network).
        seeds: default the profile's seed.
        baseline: what the other methods are judged against in ``sweep.md``
            (default ``pinn``; plain DeepXDE: the first network).
        out: default ``runs/sweep-CASE-PROFILE``.

    Returns:
        The sweep: one comparison per learning rate and the table.

    Raises:
        ValueError: a bad argument, named in the message (nothing trained).
    """
    o = _options(options, sweep)
    if o.training.lr is not None:
        raise ValueError("lr: a sweep takes its learning rates from lrs=, not lr=")
    problem = problem_of(case, data, nets, name)
    methods = methods_of(methods, problem, [SUBJECT])
    seeds = seeds_of(seeds, profile_of(o, problem), 1)
    against = baseline_of(baseline, problem, methods)
    if not isinstance(against, str):  # sweep.md judges against one method
        raise ValueError(f"baseline: a sweep takes one method; got {baseline!r}")
    lrs = _lrs(lrs)
    root = out_of(out, f"runs/sweep-{problem.name}-{profile_name(o, problem)}")
    each = {lr: o.with_training(lr=lr) for lr in lrs}
    for lr, o_lr in each.items():  # every run checked before any folder is made
        check_configs(o_lr, problem, methods, seeds)
    with claim(root):  # empty or ours, pinned: it gets sweep.md
        comparisons = {
            lr: compare_runs(
                o_lr, problem, methods, seeds, root / lr_name(lr), "steps", against
            )
            for lr, o_lr in each.items()
        }
        with writing(root):  # a full disk: one error naming the file
            text = sweep_table(root, o.verdicts.margin, against)
    return Sweep(root, comparisons, text)


@_api(MANY_OPTIONS)
def ablate(
    case: Case | str | os.PathLike,
    *,
    methods: Sequence[str] | str | None = None,
    seeds: Sequence[int] | None = None,
    budget: str = BOTH,
    out: str | os.PathLike | None = None,
    **options: Unpack[ManyOptions],
) -> Ablation:
    """LNN/MLP variants of a case, step-matched and time-matched: one
    :func:`compare` per budget into ``out/steps`` and ``out/time``, then the table
    ``ablation.md`` (every variant against ``pinn`` of the same budget) and the
    figure ``ablation.png`` (each variant's median seed, every seed, the losses).

    Args:
        methods: variants (default: lnn, pinn, pinn-matched and the LNN with
            alpha_init=0, fixed gates, no residual path, blocks on the first half
            of the layers, sin blocks, the other layout; see
            :mod:`deepxde_lnn.experiments.ablation`).
        seeds: default the profile's seed and the next ones.
        budget: "steps", "time" or "both" (default).
        out: default ``runs/ablate-CASE-PROFILE``.

    Returns:
        The ablation: one comparison per budget and the table.

    Raises:
        ValueError: a bad argument, named in the message (nothing trained).
    """
    o = _options(options, ablate)
    problem = problem_of(case)
    assert isinstance(problem, Case)  # a case by name, file or object
    check_choice(budget, "budget", (*BUDGETS, BOTH))
    seeds = seeds_of(seeds, profile_of(o, problem))
    root = out_of(out, f"runs/ablate-{problem.name}-{profile_name(o, problem)}")
    methods = methods_of(methods, problem, variants(problem))
    budgets = list(BUDGETS) if budget == BOTH else [budget]
    check_configs(o, problem, methods, seeds)
    with claim(root):  # empty or ours, pinned: it gets steps/, time/, ablation.md
        comparisons = {
            b: compare_runs(o, problem, methods, seeds, root / b, b) for b in budgets
        }
        text = table(root, problem.name, problem.fields, o.verdicts.margin)
        with writing(root):  # a full disk: one error naming the file
            atomic.atomic_write_text(root / ABLATION_TABLE, text + "\n")
            ablation_figure(root)
    return Ablation(root, comparisons, text)


#: the most learning rates a sweep takes (each is a compare of its own)
MAX_LRS = 100


def _lrs(lrs: Sequence[float]) -> list[float]:
    """The sweep's learning rates: a non-empty list of at most :data:`MAX_LRS`
    distinct numbers > 0."""
    if isinstance(lrs, str) or not isinstance(lrs, Iterable):
        lrs = []
    lrs = list(itertools.islice(lrs, MAX_LRS + 1))  # never more in memory
    if not lrs:
        raise ValueError(f"lrs: give a list of learning rates; got {lrs!r}")
    if len(lrs) > MAX_LRS:
        raise ValueError(
            f"lrs: at most {MAX_LRS} learning rates (each is a compare of its own); "
            "sweep a few decades first, then refine"
        )
    for value in lrs:
        check_positive(value, "lrs")
    return unique(lrs, "lrs")


# the typed dictionaries of deepxde_lnn.keywords: name, the calls, their options
KEYWORDS = (
    ("RunOptions", ":func:`deepxde_lnn.run`", RUN_OPTIONS),
    (
        "ManyOptions",
        ":func:`deepxde_lnn.compare`, :func:`~deepxde_lnn.sweep` and :func:`~deepxde_lnn.ablate`",
        MANY_OPTIONS,
    ),
)


def keywords_source() -> str:
    """The text of :mod:`deepxde_lnn.keywords`: one ``TypedDict`` per entry of
    :data:`KEYWORDS`, a key per option with the field's type and help text, for
    static analysis (``**options: Unpack[ManyOptions]``), which cannot run the
    code that builds the signatures."""
    options, types = option_fields(), option_types()
    out = [
        '"""The option keywords of the Python API as typed dictionaries, for static',
        "analysis (IDEs, type checkers): :func:`deepxde_lnn.compare`'s",
        "``**options: Unpack[ManyOptions]``. At run time the API's signatures and",
        "docstrings are built from the options of :mod:`deepxde_lnn.config` themselves.",
        "",
        "Generated from those options by ``python -m deepxde_lnn.api",
        'deepxde_lnn/keywords.py`` (``make docs``); a test keeps it current."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TypedDict",
        "",
        f"__all__ = {[name for name, _, _ in KEYWORDS]!r}".replace("'", '"'),
    ]
    for name, calls, names in KEYWORDS:
        out += ["", "", f"class {name}(TypedDict, total=False):"]
        out += [f'    """The option keywords of {calls}."""', ""]
        for key in names:
            text = options[key].metadata["help"] + "."
            if '"' in text or "\\" in text:
                raise ValueError(f"{key}: its help text cannot be a docstring")
            lines = textwrap.wrap(f'"""{text}"""', 84, break_on_hyphens=False)
            out += [f"    {key}: {inspect.formatannotation(types[key])}"]
            out += [f"    {line}" for line in lines]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # python -m deepxde_lnn.api deepxde_lnn/keywords.py
    atomic.atomic_write_text(sys.argv[1], keywords_source())
