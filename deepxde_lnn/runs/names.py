"""Names of the run folders below an output folder (``METHOD/seed-S``,
``lr-X/METHOD/seed-S``) and of anything a record names (float types, metrics,
metric sets): one pattern, one folder per configuration, every path inside the
output folder.

A learning rate is written as ``format(lr, "g")`` when that reads back as the same
number (``lr-0.001``, ``lr-3e-05``), otherwise as its shortest round-trip
``repr`` (``lr-0.0010000001``): distinct rates never share a folder.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from .errors import FolderError

__all__ = [
    "RECORD",
    "CHECKPOINT",
    "LOSS",
    "FIELDS",
    "MODEL",
    "FIELDS_FIGURE",
    "LOSS_FIGURE",
    "DTYPES",
    "BUDGETS",
    "BOTH",
    "METRICS",
    "set_names",
    "NAME",
    "FINGERPRINT",
    "fingerprint",
    "is_fingerprint",
    "safe_name",
    "check_case_distinct",
    "inside",
    "lr_text",
    "lr_name",
    "run_label",
    "seed_name",
    "run_folder",
    "NULLABLE_METRICS",
]

#: the files of a run folder, by what they hold (every reader and writer uses
#: these names): the record (its presence marks the run finished), the
#: checkpoint, the loss history, the fields on the evaluation points, the
#: network's weights, and their figures
RECORD = "metrics.json"
CHECKPOINT = "checkpoint.pt"
LOSS = "loss.csv"
FIELDS = "fields.npz"
MODEL = "model.pt"
FIELDS_FIGURE = "fields.png"
LOSS_FIGURE = "loss.png"

DTYPES = ("float32", "float64")  # a run's float types
#: the profile a run takes where none is asked for (every problem has one of
#: this name: a case's few steps, or the one profile of a problem that declares
#: none)
DEFAULT_PROFILE = "quick"
#: what a comparison holds equal between its methods: the steps or the seconds
BUDGETS = ("steps", "time")
#: ``ablate``'s choice of both budgets, one after the other
BOTH = "both"
#: the error metrics of every field and metric set (:mod:`deepxde_lnn.problems.metrics`)
METRICS = ("RMSE", "MSE", "MAE", "relL2", "MaxErr")
#: those a record may hold as null, where they are not a number: relL2 against a
#: truth that is zero everywhere (undefined), MSE beyond float64's range; the
#: others are finite for finite values (summaries skip a null, "—" where all are).
#: A run that failed on a set (its error not a finite number) holds all five as
#: null (:func:`.records.failed`)
NULLABLE_METRICS = ("MSE", "relL2")

#: a method (``lnn:width=32``, ``lnn:block_activation=LAAF-10 tanh``), field,
#: metric set, grid or folder name: it starts with a letter or digit (never
#: ``.``, ``..``, a hidden name or an option-like ``-x``) and holds no path
#: separator, markup, quote or control character
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:=+-]{0,99}(?: [A-Za-z0-9_.:=+-]{1,40})?")


#: what a problem of the user's own is, as a run's identity and record name it
#: (``problem``): the sha256 of its definition (:func:`fingerprint`)
FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")


def fingerprint(data: bytes) -> str:
    """``sha256:`` and the hex digest of ``data`` (a :data:`FINGERPRINT`)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_fingerprint(value) -> bool:
    """Whether ``value`` is a :data:`FINGERPRINT`."""
    return isinstance(value, str) and FINGERPRINT.fullmatch(value) is not None


def set_names(fields: Sequence[str]) -> list[str]:
    """The metric sets of a run of ``fields``: the fields, then ``Avg`` for
    several."""
    return [*fields, "Avg"] if len(fields) > 1 else list(fields)


def safe_name(text, what: str) -> str:
    """``text`` if it matches :data:`NAME`, else ValueError naming ``what``."""
    if not isinstance(text, str) or NAME.fullmatch(text) is None:
        raise ValueError(
            f"{what} {text!r} cannot name a folder (must match {NAME.pattern})"
        )
    return text


def check_case_distinct(names: Iterable[str], what: str) -> None:
    """ValueError naming ``what`` and two of ``names`` that differ only by case
    (``lnn``, ``LNN``): a case-insensitive file system (macOS's, Windows') gives
    them one file or folder."""
    seen: dict[str, str] = {}
    for name in names:
        first = seen.setdefault(name.casefold(), name)
        if first != name:
            raise ValueError(
                f"{what}: {first!r} and {name!r} differ only by case; a "
                "case-insensitive file system would give them one folder"
            )


def inside(path: str | os.PathLike, folder: str | os.PathLike) -> Path:
    """``path`` if it resolves (symbolic links followed) inside ``folder``;
    ``FolderError`` otherwise."""
    path = Path(path)
    if not path.resolve().is_relative_to(Path(folder).resolve()):
        raise FolderError(f"out: {path} resolves outside {folder}")
    return path


def lr_text(lr: float | None) -> str:
    """The shortest text that reads back as ``lr`` (``%g`` where it does);
    ``None`` (a run trained by the user's function) as ``yours``."""
    if lr is None:
        return "yours"
    short = format(lr, "g")
    return short if float(short) == lr else repr(float(lr))


def lr_label(lr: float | None) -> str:
    """`` lr 0.001`` after a run's method and seed in a message; nothing for a
    run trained by the user's function (its lr is the function's)."""
    return "" if lr is None else f" lr {lr_text(lr)}"


def run_label(case: str, method: str, seeds, lr: float | None = None) -> str:
    """How a message names a run (``laplace lnn seed 1 lr 0.001``) or a stack
    of them (``... seeds 1,2,3``): ``seeds`` one seed or several."""
    seeds = [seeds] if isinstance(seeds, int) else list(seeds)
    word = "seed" if len(seeds) == 1 else "seeds"
    return f"{case} {method} {word} {','.join(map(str, seeds))}{lr_label(lr)}"


def lr_name(lr: float) -> str:
    return f"lr-{lr_text(lr)}"


def seed_name(seed: int) -> str:
    return f"seed-{seed}"


def run_folder(root: str | os.PathLike, *parts: str) -> Path:
    """``root/part/...``, every part a :func:`safe_name`, the result
    :func:`inside` ``root``."""
    for part in parts:
        safe_name(part, "folder name")
    return inside(Path(root).joinpath(*parts), root)
