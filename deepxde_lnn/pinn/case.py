"""What a benchmark declares for the runner: protocol, evaluation grid, fields.

A case module (``cases/*.py``) reads like a DeepXDE example and ends with one
``CASE = Case(...)`` that states, as data, what the runner needs (then
``deepxde_lnn.main(CASE)``, to run as a script). A ``Case`` is a
:class:`~deepxde_lnn.pinn.problem.Problem` whose methods come from the registry
(:mod:`deepxde_lnn.pinn.methods`); :func:`load_file` reads a case file of your own.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..checks import check_choice, check_name
from . import methods
from .paper import paper_table
from .problem import CUSTOM_PROFILE, DTYPES, PROFILES, Evaluation, Profile

if TYPE_CHECKING:  # annotations only: a Case is declared without torch
    from .data import ResampledPDE, Term

__all__ = [
    "Case",
    "Profile",
    "Grid",
    "PROFILES",
    "DTYPES",
    "CUSTOM_PROFILE",
    "load_file",
]


@dataclass(frozen=True)
class Grid:
    """Tensor grid ``linspace(lo_i, hi_i, n)`` per axis (endpoints included),
    optionally restricted by ``mask(points) -> bool array``."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    n: int
    mask: Callable[[np.ndarray], np.ndarray] | None = None

    def axes(self, n: int | None = None) -> list[np.ndarray]:
        n = n or self.n
        return [np.linspace(a, b, n) for a, b in zip(self.lo, self.hi)]

    def points(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """float64 points (M, d) in C order of ``meshgrid(..., indexing="ij")`` and
        the boolean mask over the full tensor grid (all True without a mask)."""
        mesh = np.meshgrid(*self.axes(n), indexing="ij")
        full = np.column_stack([m.ravel() for m in mesh])
        keep = np.ones(len(full), bool) if self.mask is None else self.mask(full)
        return full[keep], keep


@dataclass(frozen=True)
class Case:
    """A benchmark: terms (with the paper's counts), exact solution, grid, nets."""

    name: str
    title: str
    inputs: tuple[str, ...]
    fields: tuple[str, ...]
    terms: Sequence[Term]
    exact: Callable[[np.ndarray], np.ndarray]
    grid: Grid
    paper: Profile
    quick: Profile
    hidden: tuple[int, ...] = (64, 64, 64, 64)
    lnn_layout: str = "standard"
    output_transform: Callable | None = None
    extra_metrics: Callable[[np.ndarray, np.ndarray, np.ndarray], dict] | None = None
    extra_grids: Mapping[str, int] = field(default_factory=dict)  # label -> n
    # XPINN subdomains: cut positions per input axis (default: the grid box's
    # mid-planes); the domain is the grid's box restricted by its mask
    xpinn_cuts: tuple[tuple[float, ...], ...] | None = None

    default_profile = "quick"  # the main job's protocol (a class attribute)

    def __post_init__(self):
        check_name(self.name, "case name")  # it names folders and records

    @property
    def paper_table(self) -> dict:
        """The paper's reported numbers for this case (``deepxde_lnn.pinn.paper``)."""
        return paper_table(self.name)

    @property
    def accurate(self) -> Profile:
        """float64, fixed pool, Adam with decay then L-BFGS
        (:mod:`deepxde_lnn.training.accurate`; the same setting for every case)."""
        from ..training.accurate import profile_from

        return profile_from(self)

    def profile(self, name: str) -> Profile:
        check_choice(name, "profile", PROFILES)
        return getattr(self, name)

    def make_terms(self, profile: Profile) -> list[Term]:
        unknown = set(profile.counts) - {t.name for t in self.terms}
        if unknown:
            raise ValueError(f"{self.name}: counts for unknown terms {sorted(unknown)}")
        return [replace(t, n=profile.counts.get(t.name, t.n)) for t in self.terms]

    def decomposition(self, fractions: Sequence[float] | None = None):
        """The XPINN split: ``xpinn_cuts``, or one cut per axis at ``fractions``
        of the grid box (e.g. the authors' ``(0.38, 0.62)``)."""
        from .xpinn import Decomposition

        lo, hi = self.grid.lo, self.grid.hi
        if fractions is not None:
            cuts = tuple((a + f * (b - a),) for a, b, f in zip(lo, hi, fractions))
        elif self.xpinn_cuts is not None:
            cuts = self.xpinn_cuts
        else:
            cuts = tuple(((a + b) / 2,) for a, b in zip(lo, hi))
        return Decomposition(tuple(lo), tuple(hi), cuts, self.grid.mask)

    def layer_sizes(self, width: int | None = None) -> list[int]:
        hidden = self.hidden if width is None else (width,) * len(self.hidden)
        return [len(self.inputs), *hidden, len(self.fields)]

    # --- the runner's interface (deepxde_lnn.pinn.problem.Problem) --------------------

    def check_method(self, method: str) -> None:
        methods.check(method, self)

    def deterministic(self, method: str) -> bool:
        return methods.get(method).deterministic

    def stackable(self, method: str) -> bool:
        return methods.get(method).stackable

    def build_data(
        self, method: str, profile: Profile, seed: int, compile_jets: bool = False
    ) -> ResampledPDE:
        return methods.build_data(
            method, self, profile, seed, compile_jets=compile_jets
        )

    def build_net(self, method: str):
        return methods.build_net(method, self)

    def evaluation(self, profile: Profile, data=None) -> Evaluation:
        """The tensor grid (``profile.grid_n`` points per axis, default
        ``grid.n``) restricted by the grid's mask, and the exact solution there."""
        x, keep = self.grid.points(profile.grid_n)
        axes = self.grid.axes(profile.grid_n)
        mask = keep.reshape([len(a) for a in axes])
        return Evaluation(x, self.exact(x), mask, axes)


def load_file(path: str | Path) -> Case:
    """The ``CASE`` declared by the Python file ``path`` (a case file of your own,
    written like ``cases/laplace.py``). The file is executed: pass only files you
    trust, as you would run them. ValueError naming the file otherwise."""
    path = Path(path)
    if path.suffix != ".py" or not path.is_file():
        raise ValueError(f"case: {path} is not a Python file")
    module_name = f"_deepxde_lnn_case_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    # importable by name only while it runs: its functions then pickle by value
    # (to worker processes), which need not import it
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        raise ValueError(f"case: {path} failed: {type(err).__name__}: {err}") from err
    finally:
        sys.modules.pop(module_name, None)
    case = getattr(module, "CASE", None)
    if not isinstance(case, Case):
        raise ValueError(f"case: {path} does not declare CASE = Case(...)")
    return case
