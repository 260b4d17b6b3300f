"""The shipped cases (the paper's six, PINNacle's problems, any of yours) as
reports see them, without torch or DeepXDE.

What reports read of a case, its title, inputs, fields and profiles,
:func:`info` gives from ``catalog.json``; the catalog is written from the case
modules and :mod:`.shipped` by ``python -m deepxde_lnn.study``
(:func:`deepxde_lnn.study.registry.catalog_text`; ``make docs``; a test checks
it). :func:`check` says whether a name is a shipped case.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
from collections.abc import Mapping
from importlib import resources

from ..checks import check_choice
from ..problems import methods
from ..problems.problem import Profile
from ..runs.records import Known
from .paper import paper_table
from .shipped import ALL_PROFILES, SHIPPED, published_profile

__all__ = ["NAMES", "CATALOG", "CaseEntry", "available", "check", "info", "known"]

#: the shipped cases, in the package's order: those of :data:`.shipped.SHIPPED`
NAMES = tuple(SHIPPED)
CATALOG = "catalog.json"
CASES = "deepxde_lnn.cases"  # the package of the case modules


def available() -> list[str]:
    """Names of the cases shipped in this version."""
    return [n for n in NAMES if importlib.util.find_spec(f"{CASES}.{n}") is not None]


def check(name: str) -> None:
    """ValueError naming the choices unless ``name`` is a shipped case."""
    if name not in available():
        raise ValueError(
            f"unknown case {name!r}; choose from {', '.join(available())}, or give "
            "the path of a case file of your own (.py)"
        )


@dataclasses.dataclass(frozen=True)
class CaseEntry:
    """A shipped case as reports see it: its name, title, inputs, fields and
    profiles, read from the catalog (no torch, no DeepXDE); enough of a
    :class:`~deepxde_lnn.problems.problem.Problem` to resolve a run's configuration
    (methods are checked by name)."""

    name: str
    title: str
    inputs: tuple[str, ...]
    fields: tuple[str, ...]
    profiles: Mapping[str, Profile]
    study: str = "paper"
    scores = ("final",)

    @property
    def published(self) -> str:
        """The name of its published profile (its study's: ``paper``, ``pinnacle``;
        ``paper`` for yours)."""
        return published_profile(self.study)

    def profile(self, name: str) -> Profile:
        check_choice(name, "profile", tuple(self.profiles))
        return self.profiles[name]

    def check_method(self, method: str) -> None:
        methods.parse(method)

    def deterministic(self, method: str) -> bool:
        return methods.get(method).deterministic

    @property
    def paper_table(self) -> dict:
        """The paper's reported numbers for this case (:mod:`.paper`)."""
        return paper_table(self.name)


def info(name: str) -> CaseEntry:
    """The :class:`CaseEntry` of the shipped case ``name``; ValueError as :func:`check`."""
    check(name)
    entry = _catalog()[name]
    profiles = {
        k: Profile(**{**p, "decay": None if p["decay"] is None else tuple(p["decay"])})
        for k, p in entry["profiles"].items()
    }
    return CaseEntry(
        name,
        entry["title"],
        tuple(entry["inputs"]),
        tuple(entry["fields"]),
        profiles,
        entry["study"],
    )


@functools.lru_cache(maxsize=None)
def known() -> Known:
    """The names records of the study are held to: the shipped cases and their
    fields, their profiles (a problem of the user's own: the same names), the
    methods of this version."""
    return Known(
        cases={name: info(name).fields for name in available()},
        profiles=ALL_PROFILES,
        own_profiles=ALL_PROFILES,
        method=methods.parse,
    )


@functools.lru_cache(maxsize=None)
def _catalog() -> dict:
    return json.loads(resources.files(__package__).joinpath(CATALOG).read_text())
