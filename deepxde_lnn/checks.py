"""The package's validation rules, one definition each: a ``ValueError`` naming
the argument (the CLI prints it as one ``error:`` line and exits with 2)."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["SEED_MAX", "check_positive", "check_int", "check_choice", "check_name"]

SEED_MAX = 2**32 - 1  # numpy and DeepXDE seeds are 32-bit
_NAME = re.compile(r"[A-Za-z0-9_-]+")


def check_positive(value, name: str) -> None:
    """ValueError naming ``name`` unless ``value`` is a finite number > 0."""
    ok = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")


def check_int(value, name: str, minimum: int, maximum: int | None = None) -> None:
    """ValueError naming ``name`` unless ``minimum <= value (<= maximum)``."""
    ok = not isinstance(value, bool) and isinstance(value, (int, np.integer))
    if not ok or value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer {bound}; got {value!r}")


def check_choice(value, name: str, choices) -> None:
    """ValueError naming ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def check_name(value, name: str) -> None:
    """ValueError naming ``name`` unless ``value`` is a non-empty name of letters,
    digits, ``_`` and ``-`` (safe as a folder name and in a record)."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValueError(
            f"{name} must be a non-empty name of letters, digits, '_' and '-'; "
            f"got {value!r}"
        )
