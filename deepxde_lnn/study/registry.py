"""The paper's cases by name, with the study's profiles attached.

A case module (``cases/*.py``, the package ``deepxde_lnn.cases``) declares its
physics only; :func:`get` imports it (and with it torch and DeepXDE) and returns
its ``CASE`` with the study's profiles and network settings
(:mod:`.shipped`) and the paper's numbers (:mod:`.paper`) attached (a module
that sets any of them itself is refused, :data:`ATTACHED`). What
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
    "catalog_entry",
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


#: what the study sets on a registered case, and where each belongs instead of
#: the case's module
ATTACHED = {
    "profiles": "its Shipped's published= and quick=",
    "trunk": "its Shipped's trunk=",
    "paper_table": "rows of deepxde_lnn/study/paper_results.csv",
}


def attach(case: Case) -> StudyCase:
    """``case`` (a registered case's declaration) with the study's profiles,
    network settings and the paper's numbers; ValueError naming them where the
    declaration sets any of them itself (one home each: the study's)."""
    entry = shipped.SHIPPED[case.name]
    declared = {f.name: getattr(case, f.name) for f in dataclasses.fields(Case)}
    own = [name for name in ATTACHED if declared[name] != _default(name)]
    if own:
        where = "; ".join(f"{name}: {ATTACHED[name]}" for name in own)
        raise ValueError(
            f"{case.name}: a registered case takes "
            f"{' and '.join(f'{name}=' for name in own)} from the study, not from "
            f"its module ({where}; its Shipped is SHIPPED[{case.name!r}] in "
            "deepxde_lnn/study/shipped.py): leave them out of its CASE"
        )
    return StudyCase(
        **{
            **declared,
            "profiles": shipped.profiles(case, entry),
            "trunk": entry.trunk,
            "paper_table": paper_table(case.name),
        }
    )


def _default(name: str):
    """The default of ``Case``'s field ``name``."""
    (f,) = (f for f in dataclasses.fields(Case) if f.name == name)
    return (
        f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
    )


def as_script(case: Case, path: str) -> Case:
    """The case a file ``path`` runs as a script (``deepxde_lnn.main(CASE)``): a
    paper case's own module gets the study's profiles; any other file's case
    (of whatever name) runs as it is declared."""
    if isinstance(case, StudyCase) or case.name not in available():
        return case
    spec = importlib.util.find_spec(f"{CASES}.{case.name}")
    assert spec is not None and spec.origin is not None  # an available case's
    if Path(path).resolve() != Path(spec.origin).resolve():
        return case
    return attach(case)


def catalog_text() -> str:
    """The catalog (:mod:`.catalog`) as the case modules and :mod:`.shipped`
    declare it now (imports every case)."""
    out = {name: catalog_entry(name) for name in available()}
    return json.dumps(out, indent=1) + "\n"


def catalog_entry(name: str) -> dict:
    """The catalog's entry of case ``name``, as its module and :mod:`.shipped`
    declare it now (imports it)."""
    case = get(name)
    return {
        "title": case.title,
        "inputs": list(case.inputs),
        "fields": list(case.fields),
        "study": shipped.SHIPPED[name].study,
        "profiles": {p: dataclasses.asdict(v) for p, v in case.profiles.items()},
    }
