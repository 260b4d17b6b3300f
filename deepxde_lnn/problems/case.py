"""A PDE problem declared as data: its physics, sampling and evaluation grid.

A case module (``cases/*.py``, or a file of your own) reads like a DeepXDE example
and ends with one ``CASE = Case(...)``: the loss terms with their point counts,
the exact solution and the grid where runs are scored (then
``deepxde_lnn.main(CASE)``, to run as a script). Training profiles and network
settings are optional: without them a case trains with :data:`~.problem.DEFAULT`
and the default :class:`~.methods.Trunk`. A ``Case`` is a
:class:`~deepxde_lnn.problems.problem.Problem` whose methods are the package's
(:mod:`.methods`, built by :mod:`.build`); :func:`load_file` reads a case file.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from ..checks import check_choice, check_int, check_name
from . import build, methods
from .data import ResampledPDE, Term
from .data.terms import checked_terms
from .fingerprints import of_definition, of_file
from .methods import Trunk
from .problem import DEFAULT, DEFAULT_PROFILE, MAX_POINTS, Evaluation, Grid, Profile

__all__ = ["Case", "Grid", "Trunk", "Profile", "load_file", "fingerprinted"]


def __getattr__(name: str):
    if name == "Nets":  # Trunk's name before
        warnings.warn("Nets is now Trunk", DeprecationWarning, stacklevel=2)
        return Trunk
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _default_profiles() -> dict[str, Profile]:
    return {DEFAULT_PROFILE: DEFAULT}


@dataclass(frozen=True)
class Case:
    """A PDE problem: its loss terms (each with its point count), exact solution
    and evaluation grid. Where no formula is known, ``exact`` is None and
    ``reference()`` gives the points where a solver computed the solution and its
    values there, ``(x, y)``: runs are scored on those points (the grid then only
    bounds the domain). Optional: ``profiles`` (name -> training
    :class:`Profile`; default ``{"quick": DEFAULT}``), the network settings
    ``trunk`` (``nets``, its name before, still works, with a
    DeprecationWarning) and ``paper_table``, reference numbers set beside its
    summaries (``{method: {field: {metric: value}, "train_s": seconds}}``, as a
    study attaches them)."""

    name: str
    title: str
    inputs: tuple[str, ...]
    fields: tuple[str, ...]
    terms: Sequence[Term]
    exact: Callable[[np.ndarray], np.ndarray] | None
    grid: Grid
    output_transform: Callable | None = None
    extra_metrics: Callable[[np.ndarray, np.ndarray, np.ndarray], dict] | None = None
    extra_grids: Mapping[str, int] = field(default_factory=dict)  # label -> n
    profiles: Mapping[str, Profile] = field(default_factory=_default_profiles)
    trunk: Trunk = Trunk()
    paper_table: Mapping = field(default_factory=dict)
    reference: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None
    fingerprint: str | None = field(default=None, repr=False)
    nets: InitVar[Trunk | None] = None  # trunk's name before

    scores = ("final",)  # a case's runs are scored on their final iterate
    trains_itself = False  # the package's runner trains it

    @property
    def default_profile(self) -> str:
        """``quick`` where the case has it (a case that declares no profiles
        has it), else the first of its profiles."""
        if DEFAULT_PROFILE in self.profiles:
            return DEFAULT_PROFILE
        return next(iter(self.profiles))

    def __post_init__(self, nets: Trunk | None = None):
        check_name(self.name, "case name")  # it names folders and records
        for what in ("fields", "inputs"):  # they name records' columns: checked now
            names = getattr(self, what)
            for n in names:
                check_name(n, f"{self.name}: {what}: a name")
            if len(set(names)) != len(names) or "Avg" in names:
                raise ValueError(
                    f"{self.name}: {what} must be distinct names other than 'Avg'"
                )
        if not isinstance(self.profiles, Mapping) or not self.profiles:
            raise ValueError(f"{self.name}: profiles must be a non-empty mapping")
        for key, prof in self.profiles.items():
            check_name(key, "profile name")  # it names folders and records
            if not isinstance(prof, Profile):
                raise ValueError(f"{self.name}: profiles[{key!r}] is not a Profile")
        if (self.exact is None) == (self.reference is None):
            raise ValueError(
                f"{self.name}: give exactly one of exact (a formula) and reference "
                "(a solver's points and values)"
            )
        if nets is not None:
            warnings.warn(
                "Case(nets=...) is now Case(trunk=...)",
                DeprecationWarning,
                stacklevel=3,
            )
            object.__setattr__(self, "trunk", nets)
        if not isinstance(self.trunk, Trunk):
            raise ValueError(f"{self.name}: trunk must be a Trunk; got {self.trunk!r}")
        try:
            checked_terms(self.terms)
        except ValueError as err:
            raise ValueError(f"{self.name}: {err}") from None
        _check_sizes(self)

    def check(self) -> None:
        """Check the case once before anything trains (a ``ValueError`` naming the
        case and what failed): its networks' trunk within
        :func:`~.build.check_size`, and its functions tried on a few points: the
        exact solution on a few grid points (a finite value per point and field)
        and every loss term's residual and jet (:func:`~.build.check_terms`)."""
        try:
            # the plain network of trunk.hidden, every method's trunk (each method's
            # own network is checked with it: check_method)
            build.check_size("pinn", self)
            _check_exact(self)
            build.check_terms(self)
        except ValueError as err:
            raise ValueError(f"case {self.name!r}: {err}") from err

    def profile(self, name: str) -> Profile:
        check_choice(name, "profile", tuple(self.profiles))
        return self.profiles[name]

    def make_terms(self, profile: Profile) -> list[Term]:
        """The terms with the profile's point counts (missing names keep theirs)."""
        unknown = set(profile.counts) - {t.name for t in self.terms}
        if unknown:
            raise ValueError(f"{self.name}: counts for unknown terms {sorted(unknown)}")
        return [replace(t, n=profile.counts.get(t.name, t.n)) for t in self.terms]

    # --- the runner's interface (deepxde_lnn.problems.problem.Problem) --------------------

    def check_method(self, method: str) -> None:
        build.check(method, self)

    def loss_names(self, method: str, profile: Profile) -> list[str]:
        return build.loss_names(method, self, profile)

    def deterministic(self, method: str) -> bool:
        return methods.get(method).deterministic

    def stackable(self, method: str) -> bool:
        return methods.get(method).stackable

    def build_data(
        self, method: str, profile: Profile, seed: int, compile_jets: bool = False
    ) -> ResampledPDE:
        return build.build_data(method, self, profile, seed, compile_jets=compile_jets)

    def build_net(self, method: str):
        return build.build_net(method, self)

    def evaluation(self, profile: Profile, data=None) -> Evaluation:
        """The tensor grid (``profile.grid_n`` points per axis, default
        ``grid.n``) restricted by the grid's mask, and the exact solution there;
        for a case with a ``reference``, its points and values."""
        if self.reference is not None:
            x, y = self.reference()
            return Evaluation(x, y, np.ones(len(x), bool))
        x, keep = self.grid.points(profile.grid_n)
        axes = self.grid.axes(profile.grid_n)
        mask = keep.reshape([len(a) for a in axes])
        assert self.exact is not None  # exact or reference: one is given
        return Evaluation(x, self.exact(x), mask, axes)


EXACT_POINTS = 5  # per axis: the grid points check() tries the exact solution on


def _check_sizes(case: Case) -> None:
    """ValueError naming the case unless its evaluation grids (the grid, each
    profile's ``grid_n``, ``extra_grids``) and each profile's training points per
    step are positive and at most :data:`~.problem.MAX_POINTS`."""
    if not isinstance(case.grid, Grid):
        raise ValueError(f"{case.name}: grid must be a Grid; got {case.grid!r}")
    grids = {"grid.n": case.grid.n}
    grids |= {f"extra_grids[{k!r}]": n for k, n in case.extra_grids.items()}
    for key, prof in case.profiles.items():
        if prof.grid_n is not None:
            grids[f"profiles[{key!r}].grid_n"] = prof.grid_n
    for what, n in grids.items():
        check_int(n, f"{case.name}: {what}", 1)
        if case.grid.size(n) > MAX_POINTS:
            raise ValueError(
                f"{case.name}: {what}: {n} points per axis make a grid of "
                f"{case.grid.size(n):,} points, more than {MAX_POINTS:,}"
            )
    for key, prof in case.profiles.items():
        counts = [prof.counts.get(t.name, t.n) for t in case.terms]
        for name, n in prof.counts.items():
            check_int(n, f"{case.name}: profiles[{key!r}].counts[{name!r}]", 1)
        if sum(counts) > MAX_POINTS:
            raise ValueError(
                f"{case.name}: profile {key!r}: {sum(counts):,} training points per "
                f"step (all terms), more than {MAX_POINTS:,}"
            )


def _check_exact(case: Case) -> None:
    """ValueError unless ``case.exact`` gives one finite value per field at a few
    points of its grid (``EXACT_POINTS`` per axis, inside its mask), or
    ``case.reference()`` finite points of the inputs and values of the fields."""
    what = "exact" if case.exact is not None else "reference"
    said = "exact(x)" if case.exact is not None else "reference()"
    where = "grid points" if case.exact is not None else "points"
    u = None  # reference()'s values, or exact(x) below
    try:
        if case.exact is not None:
            x = case.grid.points(EXACT_POINTS)[0]
        else:
            assert case.reference is not None  # exact or reference: one is given
            x, u = case.reference()
            x = np.asarray(x, dtype=np.float64)
    except Exception as err:
        raise ValueError(f"{what} raised {type(err).__name__}: {err}") from err
    if x.ndim != 2 or x.shape[1] != len(case.inputs) or not np.isfinite(x).all():
        raise ValueError(
            f"{what}: points of shape {x.shape}, expected finite (M, "
            f"{len(case.inputs)}): a row per point, a column per input"
        )
    try:
        if case.exact is not None:
            u = case.exact(x)
    except Exception as err:
        raise ValueError(f"exact raised {type(err).__name__}: {err}") from err
    try:
        u = np.asarray(u, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{said} gave {type(u).__name__} {u!r:.40}, not an array of numbers"
        ) from None
    want = (len(x), len(case.fields))
    if u.shape != want:
        raise ValueError(
            f"{said} on {len(x)} {where} gave an array of shape {u.shape}; "
            f"expected {want}: a row per point, a column per field "
            f"({', '.join(case.fields)})"
        )
    if not np.isfinite(u).all():
        raise ValueError(f"{said} on {len(x)} {where} gave NaN or inf")


def load_file(path: str | Path) -> Case:
    """The ``CASE`` declared by the Python file ``path`` (a case file of your own,
    written like ``cases/laplace.py``), checked (:meth:`Case.check`). The file is
    executed: pass only files you trust, as you would run them. ValueError naming
    the file otherwise."""
    path = Path(path)
    if not os.path.lexists(path):
        raise ValueError(f"case: no such file: {path}")
    if path.suffix != ".py" or not path.is_file():
        raise ValueError(f"case: {path} is not a Python file")
    fingerprint = of_file(path)  # the file is the problem
    module_name = f"_deepxde_lnn_case_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None  # a .py file's
    module = importlib.util.module_from_spec(spec)
    # importable by name only while it runs: its functions then pickle by value
    # (to worker processes), which need not import it
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as err:  # sys.exit() in a case file too
        raise ValueError(f"case: {path} failed: {type(err).__name__}: {err}") from err
    finally:
        sys.modules.pop(module_name, None)
    case = getattr(module, "CASE", None)
    if not isinstance(case, Case):
        raise ValueError(f"case: {path} does not declare CASE = Case(...)")
    try:
        case.check()  # its functions tried once, before anything trains
    except ValueError as err:
        raise ValueError(f"case: {path}: {err}") from err
    return replace(case, fingerprint=fingerprint)


def fingerprinted(case: Case) -> Case:
    """``case`` with a fingerprint: its own (a case file's), else that of its
    definition (:func:`~.fingerprints.of_definition`: every field but the
    reference numbers ``paper_table``). For a case that is not the registered
    one of its name (:func:`deepxde_lnn.study.registry.identified`)."""
    if case.fingerprint is not None:
        return case
    skip = ("paper_table", "fingerprint")
    declared = [
        (f.name, getattr(case, f.name)) for f in fields(case) if f.name not in skip
    ]
    return replace(case, fingerprint=of_definition(type(case).__name__, declared))
