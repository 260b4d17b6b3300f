"""One rule per kind of value: integers and finite numbers, given as objects (the
API) or as text (command-line arguments, method options).

Every check raises ``ValueError`` naming the value; text is read strictly (plain
decimal digits for integers, a decimal number for reals), so that ``1_0``,
``inf``, ``nan`` or ``Infinity`` are refused rather than read as another spelling.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Iterable
from typing import TypeGuard

__all__ = [
    "SEED_MAX",
    "is_integer",
    "is_number",
    "check_int",
    "check_number",
    "check_positive",
    "parse_int",
    "parse_number",
    "parse_list",
    "unique",
    "check_choice",
    "check_bool",
    "check_name",
    "check_margin",
    "check_path",
]

SEED_MAX = 2**32 - 1  # numpy and DeepXDE seeds are 32-bit

_INT = re.compile(r"[0-9]+")
# the record reader's rule (runs.names.NAME) narrowed to folder-safe names: a
# letter or digit first (never an option-like "-x"), at most 100 characters
_CASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _bounds(minimum, maximum, above: bool = False) -> str:
    """`` >= 0``, `` <= 9``, `` in [0, 9]`` or `` in (0, 9]`` (or nothing)."""
    lo, hi = (f"{b:g}" if isinstance(b, float) else b for b in (minimum, maximum))
    if maximum is None:
        return "" if minimum is None else f" {'>' if above else '>='} {lo}"
    if minimum is None:
        return f" <= {hi}"
    return f" in {'(' if above else '['}{lo}, {hi}]"


def is_integer(value) -> TypeGuard[int]:
    """Whether ``value`` is an integer (Python's or NumPy's), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value) -> TypeGuard[float]:
    """Whether ``value`` is a finite real number, not a bool (an integer beyond
    float64's range is not: no computation here could use it)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    try:
        return ok and math.isfinite(value)
    except OverflowError:  # an int of hundreds of digits
        return False


def check_int(value, name: str, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) with ``minimum <=
    value (<= maximum)``; else ValueError naming ``name``."""
    ok = is_integer(value)
    if not ok or value < minimum or (maximum is not None and value > maximum):
        bound = _bounds(minimum, maximum)
        raise ValueError(f"{name} must be an integer{bound}; got {value!r}")
    return int(value)


def check_number(
    value,
    name: str,
    minimum: float | None = None,
    maximum: float | None = None,
    above: bool = False,
) -> float:
    """``value`` as a ``float`` if it is a finite real number (not a bool) with
    ``minimum <= value <= maximum`` (``minimum < value`` when ``above``); else
    ValueError naming ``name``."""
    ok = is_number(value)
    if ok and minimum is not None:
        ok = value > minimum if above else value >= minimum
    if not ok or (maximum is not None and value > maximum):
        bound = _bounds(minimum, maximum, above)
        raise ValueError(f"{name} must be a finite number{bound}; got {value!r}")
    return float(value)


def check_positive(value, name: str, maximum: float | None = None) -> float:
    """``value`` as a ``float`` if it is a finite number > 0 (<= ``maximum``)."""
    return check_number(value, name, 0, maximum, above=True)


def parse_int(text: str, name: str, minimum: int, maximum: int | None = None) -> int:
    """An integer written in plain decimal digits, checked by :func:`check_int`."""
    if not isinstance(text, str) or not _INT.fullmatch(text):
        raise ValueError(f"{name} must be an integer (digits 0-9); got {text!r}")
    return check_int(int(text), name, minimum, maximum)


def parse_number(
    text: str,
    name: str,
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    above: bool = False,
) -> float:
    """A decimal number (``1e-3``, ``0.5``; not ``inf``/``nan``), checked by
    :func:`check_number`."""
    if not isinstance(text, str) or not _NUMBER.fullmatch(text):
        raise ValueError(f"{name} must be a decimal number; got {text!r}")
    return check_number(float(text), name, minimum, maximum, above=above)


def parse_list(text: str, name: str) -> list[str]:
    """The comma-separated items of ``text``, each stripped; ValueError naming
    ``name`` for no item or an empty one (``1,,2``, a trailing comma)."""
    if not text.strip():
        raise ValueError(f"{name}: give at least one value")
    items = [s.strip() for s in text.split(",")]
    if "" in items:
        raise ValueError(
            f"{name}: an empty item in {text!r}; separate the values by single commas"
        )
    return items


def unique(values: Iterable, name: str) -> list:
    """``values`` as a list, or ValueError naming ``name`` and the repeated one."""
    values, seen = list(values), set()
    for v in values:
        if v in seen:
            raise ValueError(f"{name}: {v!r} is given twice")
        seen.add(v)
    return values


def check_choice(value, name: str, choices) -> None:
    """ValueError naming ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def check_bool(value, name: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (not 0/1, not text), else a
    ValueError naming ``name``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def check_name(value, name: str) -> None:
    """ValueError naming ``name`` unless ``value`` is a name of letters, digits,
    ``_`` and ``-``, beginning with a letter or digit, at most 100 characters (a
    case's name: safe as a folder name and in a record, which reads it back by
    the same rule)."""
    if not isinstance(value, str) or not _CASE_NAME.fullmatch(value):
        raise ValueError(
            f"{name} must be a name of letters, digits, '_' and '-' beginning with a "
            f"letter or digit (at most 100); got {value!r}"
        )


def check_margin(margin) -> float:
    """``margin`` (an equivalence margin) as a float, or ValueError naming it unless
    a finite number > 1."""
    ok = isinstance(margin, (int, float)) and not isinstance(margin, bool)
    if not ok or not 1 < margin < math.inf:
        raise ValueError(f"margin must be a finite number > 1; got {margin!r}")
    return float(margin)


def check_path(value, name: str):
    """``value`` if it is a path: text or an ``os.PathLike`` of text, neither
    empty nor holding a null character; else ValueError naming ``name``."""
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else value
    if not isinstance(text, str):
        raise ValueError(
            f"{name} must be a path (text or a pathlib.Path), not {type(text).__name__}"
        )
    if not text.strip():
        raise ValueError(f"{name} must be a path, got an empty string")
    if "\x00" in text:
        raise ValueError(
            f"{name} must be a path without a null character; got {text!r}"
        )
    return value
