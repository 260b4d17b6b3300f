"""Result files from anywhere (``metrics.json`` run records, ``budget.json``,
checkpoints, ``fields.npz``, ``loss.csv``, the FEM reference): read as untrusted
data, checked once, rendered escaped.

* :func:`read_bytes` is the one way the package reads back a file: it opens a
  regular file only (no FIFO, device or symbolic link: ``lstat``, then
  ``O_NOFOLLOW | O_NONBLOCK`` and ``fstat``) and reads at most ``limit`` bytes;
  :func:`read_json` parses it as strict JSON (no ``NaN``/``Infinity``, no float
  overflowing to infinity, no integer over :data:`MAX_DIGITS` digits, nesting
  beyond the parser's depth refused); :func:`read_npz` reads the arrays asked
  for from an ``.npz``, each one's type and shape checked from its header and
  their inflated size capped before any is loaded. A record is a few kB:
  :data:`MAX_JSON_BYTES` (1 MiB) bounds the memory a file can take,
  :data:`MAX_ARTIFACT_BYTES` (256 MiB) that of ``fields.npz``, ``loss.csv`` and
  the FEM reference (tens of MB at the largest grids and step counts) and
  :data:`MAX_INFLATED_BYTES` (256 MiB) an ``.npz``'s arrays once inflated,
  :data:`MAX_CHECKPOINT_BYTES` (1 GiB) a checkpoint.
* :func:`find` the entries of a name below a folder: at most :data:`MAX_DEPTH`
  folders deep, symbolic links to folders not followed (a deeper record is not
  one: no walk can recurse without end or leave the folder).
* :func:`problem` says what a record lacks: ``"report"`` — what the
  reproduction report reads (records of older versions included); ``"run"`` —
  a record as the runner writes it, which compare/sweep/ablation summaries and
  reuse read. Every name matches :data:`NAME` (a case's name
  :func:`~deepxde_lnn.checks.check_name`), so no name can reach a path or the
  markup, and the float type is one of :data:`~.names.DTYPES`; a reader that
  knows registries (:class:`Known`: cases and their fields, profiles, methods)
  holds the names to them too. Numbers must be finite, metrics >= 0 (or null
  where :data:`~.names.NULLABLE_METRICS` allows it, or all five null: a run
  that failed on that set, :func:`failed`). The values of the run's
  options are checked by the options' own rules, passed in (``options``:
  :func:`deepxde_lnn.config.record_problem`; this layer sits below the options').
* :func:`load_runs` every record below a folder, each checked, in a run's
  folder ``METHOD/seed-S`` only as the record of that method and seed (a
  ``FolderError`` naming the file otherwise); :func:`run_problem` a finished
  run's folder (a ``"run"`` record and the artifacts summaries read).
* :func:`escape` is the one way a string from a record enters markdown.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

from ..checks import SEED_MAX, check_name, is_integer, is_number
from .errors import FolderError
from .names import (
    BUDGETS,
    DEFAULT_PROFILE,
    DTYPES,
    FIELDS,
    LOSS,
    METRICS,
    NAME,
    NULLABLE_METRICS,
    RECORD,
    inside,
    is_fingerprint,
    seed_name,
    set_names,
)

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_ARTIFACT_BYTES",
    "NAME",
    "MAX_INFLATED_BYTES",
    "MAX_CHECKPOINT_BYTES",
    "MAX_DEPTH",
    "read_bytes",
    "read_json",
    "read_npz",
    "npz_arrays",
    "find",
    "read_record",
    "current_names",
    "read_budget",
    "stack_sizes_problem",
    "Known",
    "problem",
    "check",
    "metric_sets",
    "failed",
    "load_runs",
    "run_problem",
    "is_pruned",
    "inside",
    "escape",
]

MAX_JSON_BYTES = 2**20
MAX_ARTIFACT_BYTES = 2**28  # fields.npz, loss.csv: tens of MB at most
MAX_INFLATED_BYTES = 2**28  # an .npz's arrays, inflated
MAX_CHECKPOINT_BYTES = 2**30  # networks, Adam's moments, the loss table: MBs
MAX_DEPTH = 16  # folders below a root that a walk reads (records sit 2-5 deep)
MAX_DIGITS = 30  # integers in a record are counts, seeds and bytes
MAX_TEXT = 200  # device names, version strings
ARTIFACTS = (LOSS, FIELDS)  # what summaries read besides the record
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_BINARY", 0)
)


# ---------------------------------------------------------------- reading


def _unsafe(path: Path, why: str | None) -> FolderError:
    return FolderError(f"{path}: unreadable ({why})")


def read_bytes(path: str | os.PathLike, limit: int, prefix: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``; ``prefix``: its
    first ``limit`` bytes, whatever its size); ``FolderError`` naming it for a
    link, FIFO, device, folder, a larger file or an OS error."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode):
            link = stat.S_ISLNK(mode)
            raise _unsafe(path, "a symbolic link" if link else "not a regular file")
        fd = os.open(path, _FLAGS)
    except OSError as err:
        why = "a symbolic link" if err.errno == errno.ELOOP else err.strerror
        raise _unsafe(path, why) from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):  # swapped after the lstat
            raise _unsafe(path, "not a regular file")
        if info.st_size > limit and not prefix:
            raise _unsafe(path, f"larger than {limit:,} bytes")
        size = min(info.st_size, limit)
        data = f.read(size + 1)  # its size, not the limit, allocated
    if prefix:
        data = data[:size]
    if len(data) != size:  # written meanwhile, or /proc's size 0
        raise _unsafe(path, "changed while it was read")
    return data


def stack_sizes_problem(sizes, last: int | None = None) -> str | None:
    """What keeps ``sizes`` (a run's ``stack_sizes``: ``[step, K]`` pairs, after
    each step the run trained in a stack of K runs; none after ``last``) from
    being one, or None."""
    pairs = isinstance(sizes, list) and all(
        isinstance(p, list) and len(p) == 2 and all(map(is_integer, p)) for p in sizes
    )
    if not pairs:
        return "stack_sizes must be a list of [step, runs] pairs of integers"
    steps = [s for s, _ in sizes]
    if any(s < 0 for s in steps) or any(k < 1 for _, k in sizes):
        return "stack_sizes must hold steps >= 0 and runs >= 1"
    if steps != sorted(steps):
        return "stack_sizes must hold rising steps"
    if last is not None and steps and steps[-1] > last:
        return f"stack_sizes must end by the step {last}"
    return None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a finite number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite float")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are distinct (a key given twice: which one counts
    depends on the reader, so neither is taken)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"the key {k[:40]!r} is given twice")
            seen.add(k)
    return out


def read_json(path: str | os.PathLike, limit: int = MAX_JSON_BYTES):
    """``path`` parsed as strict JSON (see the module); ``FolderError`` naming it."""
    data = read_bytes(path, limit)
    try:
        return json.loads(
            data.decode("utf-8"),
            parse_constant=_no_constant,
            parse_float=_float,
            parse_int=_int,
            object_pairs_hook=_unique_keys,
        )
    except RecursionError:
        raise _unsafe(Path(path), "nested too deeply") from None
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, the above
        raise _unsafe(Path(path), str(err)) from None


def _header(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple, np.dtype]:
    """The shape and type an ``.npy`` member's header declares (read alone)."""
    with zf.open(info) as f:
        version = npy.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = npy.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = npy.read_array_header_2_0(f)
        else:
            raise ValueError(f"npy format version {version}")
    return shape, dtype


def _array_problem(name: str, shape: tuple, dtype: np.dtype, kinds: str, ndim):
    if dtype.hasobject or dtype.kind not in kinds:
        return f"array {name!r} is of type {dtype}"
    if ndim is not None and len(shape) != ndim:
        return f"array {name!r} has shape {shape}, not {ndim} dimensions"
    if any(n < 0 for n in shape):
        return f"array {name!r} has shape {shape}"
    return None


_NPZ_ERRORS = (
    OSError,
    ValueError,
    EOFError,
    KeyError,
    RuntimeError,
    NotImplementedError,
    zipfile.BadZipFile,
    zlib.error,
)


def read_npz(
    path: str | os.PathLike, arrays: Mapping[str, tuple[str, int | None]]
) -> dict[str, np.ndarray]:
    """The ``arrays`` (name -> (dtype kinds, dimensions or None)) of the ``.npz``
    file ``path`` (:func:`read_bytes`, at most :data:`MAX_ARTIFACT_BYTES`), read
    as :func:`npz_arrays` reads them."""
    return npz_arrays(read_bytes(path, MAX_ARTIFACT_BYTES), arrays, path)


def npz_arrays(
    data: bytes, arrays: Mapping[str, tuple[str, int | None]], name: object
) -> dict[str, np.ndarray]:
    """The ``arrays`` of the ``.npz`` bytes ``data`` (from the file ``name``),
    never pickled. Every header is read first: a missing array, another type or
    number of dimensions, or arrays taking more than :data:`MAX_INFLATED_BYTES`
    together once inflated (by their headers' shapes or the zip's sizes) is a
    ``FolderError`` naming the file, before any array is loaded."""
    path, total = Path(str(name)), 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = {}
            for key, (kinds, ndim) in arrays.items():
                try:
                    members[key] = info = zf.getinfo(f"{key}.npy")
                except KeyError:
                    raise _unsafe(path, f"no array {key!r}") from None
                shape, dtype = _header(zf, info)
                why = _array_problem(key, shape, dtype, kinds, ndim)
                if why:
                    raise _unsafe(path, why)
                total += max(math.prod(shape) * dtype.itemsize, info.file_size)
                if total > MAX_INFLATED_BYTES:
                    why = f"inflate beyond {MAX_INFLATED_BYTES:,} bytes"
                    raise _unsafe(path, f"its arrays up to {key!r} {why}")
            out = {}
            for key, info in members.items():
                with zf.open(info) as f:
                    out[key] = npy.read_array(f, allow_pickle=False)
            return out
    except FolderError:
        raise
    except _NPZ_ERRORS as err:  # a damaged zip or npy
        raise _unsafe(path, str(err) or type(err).__name__) from None


def find(
    root: str | os.PathLike,
    name: str,
    depth: int = MAX_DEPTH,
    passed: list[tuple[Path, str]] | None = None,
) -> list[Path]:
    """The entries called ``name`` (not folders) in ``root`` and in its folders
    up to ``depth`` levels below it, sorted. Symbolic links to folders are not
    followed; folders that cannot be listed are skipped (as ``Path.rglob``).
    ``passed``, where given, receives ``(path, why)`` for each entry passed over
    that may hold a run: a link to a folder, a folder called ``name``."""
    found, todo = [], [(Path(root), 0)]
    passed = [] if passed is None else passed
    while todo:  # a stack, not recursion: any nesting is safe
        folder, level = todo.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name == name:
                            passed.append((Path(entry.path), "a folder, not a file"))
                        elif level < depth:
                            todo.append((Path(entry.path), level + 1))
                    elif entry.name == name:
                        found.append(Path(entry.path))
                    elif entry.is_symlink() and entry.is_dir():
                        passed.append((Path(entry.path), "a link to a folder"))
        except OSError:  # gone, not a folder, no permission, a name too long
            continue
    passed.sort()
    return sorted(found)


# keys of records written before a rename: old -> new, migrated on reading
RENAMED = {
    "batched_runs": "stacked_runs",
    "batch_wall_seconds": "stack_wall_seconds",
    "seconds_per_iteration": "seconds_per_step",
}
# profiles of records written before one default profile: old -> new, likewise
RENAMED_PROFILES = {"custom": DEFAULT_PROFILE, "script": DEFAULT_PROFILE}


def read_record(path: str | os.PathLike) -> dict:
    """A ``metrics.json`` as a JSON object (not yet checked: :func:`check`), its
    names as this version's (:func:`current_names`)."""
    record = read_json(path)
    if not isinstance(record, dict):
        raise FolderError(f"{path}: not a JSON object")
    return current_names(record)


def current_names(record: Mapping) -> dict:
    """``record`` (a run's record, or a checkpoint's configuration) with its keys
    (:data:`RENAMED`) and its profile (:data:`RENAMED_PROFILES`) as this version
    names them; its values otherwise as they are (not yet checked)."""
    out = {RENAMED.get(k, k): v for k, v in record.items()}
    profile = out.get("profile")
    if isinstance(profile, str) and profile in RENAMED_PROFILES:
        out["profile"] = RENAMED_PROFILES[profile]
    return out


def read_budget(path: str | os.PathLike) -> float:
    """The seconds per run kept in a ``budget.json`` (finite, > 0)."""
    budget = read_json(path)
    seconds = budget.get("seconds") if isinstance(budget, dict) else None
    if not is_number(seconds) or seconds <= 0:
        raise FolderError(f"{path}: malformed (seconds must be a finite number > 0)")
    return float(seconds)


# ---------------------------------------------------------------- checking


def _name(v) -> bool:
    return isinstance(v, str) and NAME.fullmatch(v) is not None


def _text(v) -> bool:
    return isinstance(v, str) and len(v) <= MAX_TEXT


def _seconds_or_null(v) -> bool:
    return v is None or (is_number(v) and v >= 0)


# a record's budget: a comparison's (the same steps, seconds) or the function's
RECORDED_BUDGETS = (*BUDGETS, "script")
# key -> (test, what it must be), the keys a run writes beside its options (which
# their own fields check: ``options`` of :func:`problem`); absent keys are
# checked by ``problem``
_TYPES = {
    "seed": (
        lambda v: is_integer(v) and 0 <= v <= SEED_MAX,
        f"an integer in [0, {SEED_MAX}]",
    ),
    "problem": (is_fingerprint, "sha256: and 64 hex digits"),
    "budget": (
        lambda v: v in RECORDED_BUDGETS,
        " or ".join(map(repr, RECORDED_BUDGETS)),
    ),
    "lbfgs_loss_scale": (lambda v: v is None or is_number(v), "a finite number"),
    "parameters": (lambda v: is_integer(v) and v >= 0, "an integer >= 0"),
    "seconds_per_step": (lambda v: is_number(v) and v >= 0, "a number >= 0"),
    "train_seconds": (lambda v: is_number(v) and v >= 0, "a number >= 0"),
    # timing (:mod:`.cost`): null CPU time is a session that did not keep it
    "cpu_seconds": (_seconds_or_null, "a number >= 0 or null"),
    "cpu_share": (_seconds_or_null, "a number >= 0 or null"),
    "threads": (lambda v: is_integer(v) and v > 0, "an integer > 0"),
    "load_average": (
        lambda v: (
            isinstance(v, list)
            and len(v) == 2
            and all(is_number(x) and x >= 0 for x in v)
        ),
        "[start, end], two numbers >= 0",
    ),
    "stack_wall_seconds": (lambda v: is_number(v) and v >= 0, "a number >= 0"),
    "stack_cpu_seconds": (_seconds_or_null, "a number >= 0 or null"),
    "steps": (lambda v: is_integer(v) and v >= 0, "an integer >= 0"),
    "grid_points": (lambda v: is_integer(v) and v > 0, "an integer > 0"),
    "stacked_runs": (lambda v: is_integer(v) and v > 0, "an integer > 0"),
    "stack_sizes": (
        lambda v: stack_sizes_problem(v) is None,
        "a list of [step, runs] pairs, steps rising",
    ),
    "device": (_name, "a device name"),
    "device_name": (_text, f"a string of at most {MAX_TEXT} characters"),
    "versions": (
        lambda v: isinstance(v, dict) and all(map(_text, v.values())),
        "an object of strings",
    ),
    "final_loss": (
        lambda v: (
            isinstance(v, dict) and "total" in v and all(map(is_number, v.values()))
        ),
        "an object of finite numbers with the total",
    ),
}
NEEDS = {
    "report": ("case", "method", "profile", "dtype", "seed", "iterations", "lr"),
    "run": (
        *("case", "method", "profile", "dtype", "seed", "iterations", "lr"),
        *("train_seconds", "seconds_per_step", "parameters", "final_loss"),
        *("grid_points", "device"),
    ),
}


@dataclass(frozen=True)
class Known:
    """The registries a reader holds names to, beyond their form: the registered
    ``cases`` (name -> fields) and the ``profiles`` their records may name, the
    ``own_profiles`` that a problem of the user's own (a case file, plain
    DeepXDE, a training function) may name, and ``method``, raising
    ``ValueError`` for a method of no registry (asked of a registered case's
    record only: a problem of the user's own names its methods, plain DeepXDE
    and a training function after their networks)."""

    cases: Mapping[str, Sequence[str]]
    profiles: Sequence[str]
    own_profiles: Sequence[str]
    method: Callable[[str], object]


#: what is wrong with the options a record holds, or None
#: (:func:`deepxde_lnn.config.record_problem`: each option's own check, declared
#: with the option in a layer above this one)
OptionCheck = Callable[[Mapping], "str | None"]


def problem(
    record: dict,
    need: str = "report",
    known: Known | None = None,
    options: OptionCheck | None = None,
) -> str | None:
    """What is wrong with ``record`` for readers of kind ``need`` (see the
    module), or None; ``known``: the registries its names are held to;
    ``options``: the check of its option values (None: not checked here, as
    when only telling a record of this package from other files)."""
    missing = [k for k in NEEDS[need] if k not in record]
    if missing:
        return f"missing {', '.join(missing)}"
    return (
        _names_problem(record, known)
        or next(
            (
                f"{k} must be {what}"
                for k, (ok, what) in _TYPES.items()
                if k in record and not ok(record[k])
            ),
            None,
        )
        or (options(record) if options is not None else None)
        or _metrics_problem(record, known)
    )


def _names_problem(rec: dict, known: Known | None) -> str | None:
    """Names a path or a report is built from: safe names, and with ``known`` a
    registered case (its profiles, its methods) or a problem of the user's own
    (a safe name, ``known.own_profiles``, its own networks' names for plain
    DeepXDE; a record with a ``problem`` fingerprint is one, whatever its name)."""
    registered = _registered(rec, known)
    if not registered and not _case_name(rec["case"]):
        some = "" if known is None else f"one of {', '.join(known.cases)} or "
        return f"case must be {some}a name of letters, digits, '_' and '-'"
    allowed: list[tuple[str, Sequence[str]]] = [("dtype", DTYPES)]
    if known is not None:
        profiles = known.profiles if registered else known.own_profiles
        allowed.insert(0, ("profile", profiles))
    elif not _name(rec["profile"]):
        return f"profile must match {NAME.pattern}"
    for key, choices in allowed:
        if rec[key] not in choices:
            return f"{key} must be one of {', '.join(choices)}"
    if not _name(rec["method"]):
        return "method must be a method name such as lnn or lnn:width=32"
    if known is None or not registered:
        return None
    try:
        known.method(rec["method"])
    except ValueError:
        return "method is not a method of this version"
    return None


def _registered(rec: dict, known: Known | None) -> bool:
    """Whether ``rec`` is a run of a registered case of ``known``: its name, and
    no ``problem`` fingerprint (a problem of the user's own of that name)."""
    return known is not None and rec["case"] in known.cases and "problem" not in rec


def _case_name(v) -> bool:
    try:
        check_name(v, "case")
    except ValueError:
        return False
    return True


def _fields(rec: dict, known: Known | None) -> list[str] | None:
    """A registered case's fields, or the record's own (a problem of the user's
    own; those its metrics name in records written before ``fields``)."""
    if known is not None and _registered(rec, known):
        return set_names(known.cases[rec["case"]])
    own = rec.get("fields")
    if own is None and isinstance(rec.get("metrics"), dict):
        own = [k for k in rec["metrics"] if k != "Avg"]
    if isinstance(own, list) and own and all(map(_name, own)):
        return set_names(own) if len(set(own)) == len(own) else None
    return None


def metric_sets(record: dict) -> dict:
    """Every set of the five metrics in a run record: the fields, then extra sets
    (e.g. heat's absolute-T modes, ``name@grid`` for other evaluation grids)."""
    sets = dict(record["metrics"])
    for name, v in record.get("extra_metrics", {}).items():
        if isinstance(v, dict) and set(METRICS) <= set(v):
            sets[name] = v
    for label, per_field in record.get("extra_grid_metrics", {}).items():
        for fld, v in per_field.items():
            sets[f"{fld}@{label}"] = v
    return sets


def _metrics_problem(rec: dict, known: Known | None) -> str | None:
    fields = _fields(rec, known)
    if fields is None:
        return "fields must be a list of distinct field names"
    if not isinstance(rec.get("metrics"), dict) or set(rec["metrics"]) != set(fields):
        return f"metrics must be an object of the fields {', '.join(fields)}"
    for key in ("extra_metrics", "extra_grid_metrics"):
        if not isinstance(rec.get(key, {}), dict):
            return f"{key} must be an object"
    if not all(isinstance(v, dict) for v in rec.get("extra_grid_metrics", {}).values()):
        return "extra_grid_metrics must map grids to objects"
    grids = rec.get("extra_grid_metrics", {})
    names = [*rec["metrics"], *rec.get("extra_metrics", {}), *grids]
    bad = [n for n in [*names, *(f for g in grids.values() for f in g)] if not _name(n)]
    if bad:
        return f"name {bad[0][:40]!r} must match {NAME.pattern}"
    for name, values in metric_sets(rec).items():
        if not isinstance(values, dict):
            return f"metrics {name!r} must be an object"
        why = _values_problem(values)
        if why:
            return f"metrics {name!r} {why}"
    return None


def failed(values: Mapping) -> bool:
    """Whether ``values``, one metric set of a checked record, is that of a run
    that failed on it: its error not a finite number (a prediction of NaN or
    infinity), so every metric is null (:mod:`deepxde_lnn.problems.metrics`)."""
    return "RMSE" in values and values["RMSE"] is None


def _values_problem(values: Mapping) -> str | None:
    """What is wrong with one metric set's values, or None: finite numbers >= 0,
    null where :data:`~.names.NULLABLE_METRICS` allows it, or all null
    (:func:`failed`)."""
    if failed(values):
        if any(values.get(m, 0) is not None for m in METRICS):
            return "must all be null where RMSE is (a failed run: no error is a number)"
        return None
    for m in METRICS:
        if m in values and values[m] is None and m in NULLABLE_METRICS:
            continue  # not a number there (a zero truth's relL2)
        if not is_number(values.get(m)) or values[m] < 0:
            null = " or null" if m in NULLABLE_METRICS else ""
            return f"{m} must be a finite number >= 0{null}"
    return None


def check(
    record: dict,
    path: str | os.PathLike,
    need: str = "report",
    known: Known | None = None,
    *,
    options: OptionCheck,
) -> dict:
    """``record`` if it passes :func:`problem` (its option values by
    ``options``); ``FolderError`` naming ``path``."""
    why = problem(record, need, known, options)
    if why:
        raise FolderError(f"{path}: malformed record ({why})")
    return record


def load_runs(
    root: str | os.PathLike,
    need: str = "run",
    known: Known | None = None,
    *,
    options: OptionCheck,
) -> list[dict]:
    """Every record (``metrics.json``) below ``root`` (:func:`find`: at most
    :data:`MAX_DEPTH` folders deep, links to folders not followed), checked for
    ``need`` (names held to ``known``, option values by ``options``) and
    against its folder (:func:`_check_run_folder`), with its folder as
    ``"_dir"``; sorted by path."""
    runs = []
    for path in find(root, RECORD):
        rec = check(read_record(path), path, need, known, options=options)
        _check_run_folder(path, rec)
        runs.append({**rec, "_dir": str(path.parent)})
    return runs


def _check_run_folder(path: Path, record: dict) -> None:
    """``FolderError`` naming ``path`` where its folder is a run's
    (``METHOD/seed-S``: its name a seed's) and the record says another seed or
    method: it would stand in for that run."""
    folder = path.parent
    if not folder.name.startswith("seed-"):
        return
    if folder.name != seed_name(record["seed"]):
        what, where = f"seed {record['seed']}", folder.name
    elif folder.parent.name != record["method"]:
        where = f"{folder.parent.name}/{folder.name}"
        what = f"method {record['method']}"
    else:
        return
    raise FolderError(
        f"{path}: the record of {what} in the folder {where}; a run's record "
        "stays in its own method's and seed's folder (METHOD/seed-S)"
    )


def run_problem(
    folder: str | os.PathLike, record: dict, pruned_ok: bool = False
) -> str | None:
    """What keeps ``folder`` (holding ``record``) from being a finished run that
    summaries can read, or None. ``pruned_ok``: a checked record whose artifacts
    are all gone (pruned, as in a repository's committed records: the record holds
    every metric) is a finished run too."""
    why = problem(record, "run")
    if why:
        return f"malformed record ({why})"
    if pruned_ok and is_pruned(folder):
        return None
    for name in ARTIFACTS:
        try:
            regular = stat.S_ISREG(os.lstat(Path(folder) / name).st_mode)
        except OSError:
            regular = False
        if not regular:
            return f"no {name}"
    return None


def is_pruned(folder: str | os.PathLike) -> bool:
    """Whether none of the artifacts summaries read is in ``folder`` (a run kept
    as its ``metrics.json`` alone)."""
    return not any(os.path.lexists(Path(folder) / name) for name in ARTIFACTS)


# ---------------------------------------------------------------- writing


_MARKUP = str.maketrans(
    {
        "\\": "\\\\",
        "`": "&#96;",
        "|": "\\|",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
    }
)


def escape(value) -> str:
    """``value`` as text for markdown, in a table cell, heading or code span: no
    markup, HTML, link, table cell or line can start or end inside it.

    Control characters become spaces; ``\\ | [ ]`` are backslash-escaped,
    ``< > &`` and the backtick become HTML references, a leading ``#`` is
    escaped. Names from the registries pass unchanged."""
    text = "".join(" " if c.isspace() or not c.isprintable() else c for c in str(value))
    text = text.translate(_MARKUP)
    return "\\" + text if text.startswith("#") else text
