"""The paper's cases by name, with the study's profiles attached.

A case module (``cases/*.py``, the package ``deepxde_lnn.cases``) declares its
physics only; :func:`get` imports it (and with it torch and DeepXDE) and returns
its ``CASE`` with the study's profiles and network settings
(:mod:`.shipped`) and the paper's numbers (:mod:`.paper`) attached. What
reports read of a case comes from :mod:`.catalog` without importing it.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path

from ..problems.case import Case, fingerprinted
from . import shipped
from .catalog import CASES, NAMES, available, check, info
from .paper import paper_table

__all__ = [
    "NAMES",
    "StudyCase",
    "as_script",
    "attach",
    "available",
    "catalog_text",
    "get",
    "identified",
    "info",
]


@dataclasses.dataclass(frozen=True)
class StudyCase(Case):
    """A paper case with the study's profiles. The one :func:`get` returns
    pickles as its name (a worker process imports it by name); a changed copy
    (``dataclasses.replace``) pickles as a ``Case`` of its own."""

    def __reduce_ex__(self, protocol):
        if _CASES.get(self.name) is self:
            return _by_name, (self.name,)
        return super().__reduce_ex__(protocol)


_CASES: dict[str, StudyCase] = {}  # what get returned, by name


def get(name: str) -> StudyCase:
    """The case called ``name`` with the study's profiles (one object per name);
    ValueError naming the choices otherwise."""
    if name not in _CASES:
        check(name)
        _CASES[name] = attach(importlib.import_module(f"{CASES}.{name}").CASE)
    return _CASES[name]


def identified(case: Case) -> Case:
    """``case`` as its runs' identity names it: the registry's own case (what
    :func:`get` returned) as it is, its name says what it is; any other (a case
    file's, a changed copy of a paper case, a user's ``Case``) with its
    fingerprint (:func:`~deepxde_lnn.problems.case.fingerprinted`), so that it
    never takes a registered case's runs, nor they its own, and without the
    paper's numbers a copy of a paper case carries (they are the paper's
    problem's, not the copy's)."""
    if _CASES.get(case.name) is case:
        return case
    if case.name in available() and case.paper_table == paper_table(case.name):
        case = dataclasses.replace(case, paper_table={})
    return fingerprinted(case)


def _by_name(name: str) -> StudyCase:
    return get(name)


def attach(case: Case) -> StudyCase:
    """``case`` (a paper case's declaration) with the study's profiles, network
    settings and the paper's numbers."""
    entry = shipped.SHIPPED[case.name]
    declared = {f.name: getattr(case, f.name) for f in dataclasses.fields(Case)}
    return StudyCase(
        **{
            **declared,
            "profiles": shipped.profiles(case, entry),
            "trunk": entry.trunk,
            "paper_table": paper_table(case.name),
        }
    )


def as_script(case: Case, path: str) -> Case:
    """The case a file ``path`` runs as a script (``deepxde_lnn.main(CASE)``): a
    paper case's own module gets the study's profiles; any other file's case
    (of whatever name) runs as it is declared."""
    if isinstance(case, StudyCase) or case.name not in available():
        return case
    origin = importlib.util.find_spec(f"{CASES}.{case.name}").origin
    if Path(path).resolve() != Path(origin).resolve():
        return case
    return attach(case)


def catalog_text() -> str:
    """The catalog (:mod:`.catalog`) as the case modules and :mod:`.shipped`
    declare it now (imports every case)."""
    out = {}
    for name in available():
        case = get(name)
        out[name] = {
            "title": case.title,
            "inputs": list(case.inputs),
            "fields": list(case.fields),
            "study": shipped.SHIPPED[name].study,
            "profiles": {p: dataclasses.asdict(v) for p, v in case.profiles.items()},
        }
    return json.dumps(out, indent=1) + "\n"
