"""The paper's six benchmarks, one module each (see docs/cases.md).

Each module reads like a DeepXDE example and ends with ``CASE = Case(...)``;
:func:`get` imports it (and with it torch and DeepXDE). What reports read of a
case, its title, inputs, fields and profiles, :func:`info` gives from
``catalog.json`` without importing the module. The catalog is written from the
modules by ``python -m deepxde_lnn.cases`` (``make docs``; a test checks it).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import json
from collections.abc import Mapping
from importlib import resources

from deepxde_lnn.checks import check_choice
from deepxde_lnn.pinn.paper import paper_table
from deepxde_lnn.pinn.problem import PROFILES, Profile

NAMES = ("drift_decay", "laplace", "heat", "beam", "rel_b", "rel_c")
CATALOG = "catalog.json"


def available() -> list[str]:
    """Names of the cases shipped in this version."""
    return [n for n in NAMES if importlib.util.find_spec(f"{__name__}.{n}") is not None]


def _check(name: str) -> None:
    if name not in available():
        raise ValueError(
            f"unknown case {name!r}; choose from {', '.join(available())}, or give "
            "the path of a case file of your own (.py)"
        )


def get(name: str):
    """The ``Case`` called ``name``; ValueError naming the choices otherwise."""
    _check(name)
    return importlib.import_module(f"{__name__}.{name}").CASE


@dataclasses.dataclass(frozen=True)
class Info:
    """A shipped case as reports see it: its ``Case``'s name, title, inputs,
    fields and profiles, read from the catalog (no torch, no DeepXDE)."""

    name: str
    title: str
    inputs: tuple[str, ...]
    fields: tuple[str, ...]
    profiles: Mapping[str, Profile]

    def profile(self, name: str) -> Profile:
        check_choice(name, "profile", tuple(self.profiles))
        return self.profiles[name]

    @property
    def paper_table(self) -> dict:
        """The paper's reported numbers for this case (``deepxde_lnn.pinn.paper``)."""
        return paper_table(self.name)


def info(name: str) -> Info:
    """The :class:`Info` of the shipped case ``name``; ValueError as :func:`get`."""
    _check(name)
    entry = _catalog()[name]
    profiles = {
        k: Profile(**{**p, "decay": None if p["decay"] is None else tuple(p["decay"])})
        for k, p in entry["profiles"].items()
    }
    return Info(
        name, entry["title"], tuple(entry["inputs"]), tuple(entry["fields"]), profiles
    )


@functools.lru_cache(maxsize=None)
def _catalog() -> dict:
    return json.loads(resources.files(__name__).joinpath(CATALOG).read_text())


def catalog_text() -> str:
    """The catalog as the case modules declare it now (imports every case)."""
    out = {}
    for name in available():
        case = get(name)
        out[name] = {
            "title": case.title,
            "inputs": list(case.inputs),
            "fields": list(case.fields),
            "profiles": {p: dataclasses.asdict(case.profile(p)) for p in PROFILES},
        }
    return json.dumps(out, indent=1) + "\n"
