"""The paper's six benchmarks, one module each (see docs/cases.md).

Each module reads like a DeepXDE example and ends with ``CASE = Case(...)``.
"""

from __future__ import annotations

import importlib
import importlib.util

NAMES = ("drift_decay", "laplace", "heat", "beam", "rel_b", "rel_c")


def available() -> list[str]:
    """Names of the cases shipped in this version."""
    return [n for n in NAMES if importlib.util.find_spec(f"{__name__}.{n}") is not None]


def get(name: str):
    """The ``Case`` called ``name``; ValueError naming the choices otherwise."""
    if name not in available():
        raise ValueError(
            f"unknown case {name!r}; choose from {', '.join(available())}, or give "
            "the path of a case file of your own (.py)"
        )
    return importlib.import_module(f"{__name__}.{name}").CASE
