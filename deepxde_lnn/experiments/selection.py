"""What a call on a problem runs: its methods, baseline and seeds, and its output
folder; each checked before anything runs (a ``ValueError`` naming the argument)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..analysis.stats import SEEDS_CAP
from ..analysis.table import BASELINE
from ..checks import check_choice, check_path, parse_list, unique
from ..problems.deepxde_problem import DeepXDEProblem
from ..problems.methods import canonical
from ..problems.problem import Problem
from ..problems.scripted_problem import ScriptedProblem
from ..runs.names import check_case_distinct, safe_name

__all__ = ["methods_of", "baseline_of", "seeds_of", "check_seed_count", "out_of"]

# problems whose methods are the networks the user gave (a dict ``nets``)
_GIVEN_NETS = (DeepXDEProblem, ScriptedProblem)


def methods_of(methods, problem: Problem, default: Sequence[str]) -> list[str]:
    """The methods to run: ``methods`` (a sequence, or comma-separated text), or
    ``default`` (plain DeepXDE: every network)."""
    if methods is None:
        methods = problem.nets if isinstance(problem, _GIVEN_NETS) else default
    if isinstance(methods, str):
        methods = parse_list(methods, "methods")
    methods = [m.strip() if isinstance(m, str) else m for m in methods]
    methods = [m for m in methods if m != ""]
    if not methods:
        raise ValueError("methods: give at least one method")
    return _distinct(methods)


def _distinct(methods: list[str]) -> list[str]:
    """Each a folder name, none twice (also not spelled another way, e.g.
    ``lnn:alpha_init=0`` and ``lnn:alpha_init=0.0``, nor only by case)."""
    seen: dict[str, str] = {}
    for m in methods:
        key = _spelling(m)
        first = seen.get(key)
        if first is not None:
            same = "is given twice" if m == first else f"is the same as {first!r}"
            raise ValueError(f"methods: {m!r} {same}")
        seen[key] = m
    folders = [safe_name(m, "method") for m in methods]
    check_case_distinct(folders, "methods")
    return folders


def _spelling(method) -> str:
    """A registered method's one spelling (:func:`~deepxde_lnn.problems.methods.canonical`); any other
    name (a plain DeepXDE network's, or an unknown one, refused later) as it is."""
    try:
        return canonical(method)
    except (ValueError, TypeError):
        return method


def baseline_of(baseline, problem: Problem, methods: list[str]) -> str | list[str]:
    """The method every other one is judged against: ``pinn`` for a case, the
    first network for plain DeepXDE, unless given (one of ``methods``; several,
    as a list or comma-separated text: each one's verdicts are a family, the first
    decides ``until_decided``)."""
    if baseline is None:
        return methods[0] if isinstance(problem, _GIVEN_NETS) else BASELINE
    if isinstance(baseline, str) and "," in baseline:
        baseline = baseline.split(",")
    if isinstance(baseline, str):
        check_choice(baseline, "baseline", methods)
        return baseline
    if not isinstance(baseline, Sequence) or not baseline:
        raise ValueError(
            f"baseline must be a method or a list of methods; got {baseline!r}"
        )
    for b in baseline:
        check_choice(b, "baseline", methods)
    found = unique(list(baseline), "baseline")
    return found[0] if len(found) == 1 else found


def seeds_of(seeds, profile, n: int | None = None) -> list[int]:
    """``seeds``, or the profile's seed and the next ``n - 1`` (default: the
    profile's ``n_seeds``)."""
    if seeds is None:
        return [profile.seed + i for i in range(n or profile.n_seeds)]
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds must be a list of seeds; got {seeds!r}")
    given = list(itertools.islice(seeds, SEEDS_CAP + 1))  # never more in memory
    if not given:
        raise ValueError("seeds: give at least one seed")
    check_seed_count(len(given), "seeds", _count(seeds))
    return unique(given, "seeds")  # each checked with its run's configuration


def check_seed_count(n: int, name: str, shown: str | None = None) -> None:
    """ValueError naming ``name`` if ``n`` seeds per method (``shown``: how many
    in words) are more than a comparison asks for (``SEEDS_CAP``, and why)."""
    if n > SEEDS_CAP:
        raise ValueError(
            f"{name}: at most {SEEDS_CAP:,} seeds per method; got "
            f"{shown or f'{n:,}'}. {SEEDS_CAP:,} seeds narrow an error ratio's "
            "95 % interval to within x1.16 even at the widest spread between "
            "seeds in the shipped records, well inside the default margin x2: "
            "more cannot change a verdict"
        )


def _count(seeds) -> str:
    """How many ``seeds`` there are, in words (``more`` where unknown)."""
    try:
        return f"{len(seeds):,}"
    except (TypeError, OverflowError):
        return f"more than {SEEDS_CAP:,}"


def out_of(out, default: str | Path) -> Path:
    """``out`` (a path: :func:`~deepxde_lnn.checks.check_path`) or ``default``,
    made absolute once, before anything runs: a function that changes the working
    directory cannot move where the results go."""
    if out is None:
        return Path(os.path.abspath(default))
    return Path(os.path.abspath(check_path(out, "out")))
