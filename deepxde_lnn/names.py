"""Names of the run folders below an output folder (``METHOD/seed-S``,
``lr-X/METHOD/seed-S``): built from a strict pattern, one folder per configuration,
and always inside the output folder.

A learning rate is written as ``format(lr, "g")`` when that reads back as the same
number (``lr-0.001``, ``lr-3e-05``), otherwise as its shortest round-trip
``repr`` (``lr-0.0010000001``): distinct rates never share a folder.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["SAFE_NAME", "safe_name", "lr_text", "lr_name", "seed_name", "run_folder"]

#: a folder name: letters, digits and ``. _ : = + -`` and spaces, starting with a
#: letter or digit (so never ``.``, ``..``, a hidden name or an option-like ``-x``)
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:=+ -]*")
_NAME_MAX = 200  # bytes; file systems allow 255 per component


def safe_name(text, what: str) -> str:
    """``text`` if it is a safe single folder name, else ValueError naming ``what``."""
    ok = isinstance(text, str) and SAFE_NAME.fullmatch(text) is not None
    if not ok or len(text.encode()) > _NAME_MAX or text.endswith((" ", ".")):
        raise ValueError(
            f"{what} {text!r} cannot name a folder (letters, digits, '._:=+- ' "
            f"only, at most {_NAME_MAX} bytes)"
        )
    return text


def lr_text(lr: float) -> str:
    """The shortest text that reads back as ``lr`` (``%g`` where it does)."""
    short = format(lr, "g")
    return short if float(short) == lr else repr(float(lr))


def lr_name(lr: float) -> str:
    return f"lr-{lr_text(lr)}"


def seed_name(seed: int) -> str:
    return f"seed-{seed}"


def run_folder(root: str | Path, *parts: str) -> Path:
    """``root/part/...`` after checking every part with :func:`safe_name` and that
    the result (symbolic links resolved) lies inside ``root``."""
    root = Path(root)
    for part in parts:
        safe_name(part, "folder name")
    path = root.joinpath(*parts)
    top, inner = root.resolve(), path.resolve()
    if inner != top and top not in inner.parents:
        raise ValueError(f"out: {path} resolves to {inner}, outside {top}")
    return path
