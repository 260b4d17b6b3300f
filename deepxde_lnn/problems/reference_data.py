"""Reference solutions stored as data: a case scored on a file's points.

A reference is the points ``x`` (M, d) where a solver gave the solution and its
values ``y`` (M, k) there. :func:`load_table` reads the plain-text exports of
COMSOL (``%`` comment lines, one row per mesh node; gzip-compressed where the name
ends in ``.gz``). A time-dependent export holds one row per spatial node and one
column block per time, its header naming the times (``u (1) @ t=0.1``):
``time_stacked=True`` unfolds it into one row per node and time, ``[x..., t,
fields...]``, the node's times consecutive.

:func:`shipped` finds a file shipped in ``deepxde_lnn.reference``;
:func:`shipped_text` reads one after checking it against the SHA-256 that the
``manifest.json`` beside it records; :class:`ShippedTable` declares one as a case's
``reference``, checked when it is declared (when the case's module is imported,
before anything trains) and read once per process. :class:`Observations` are
measured values at fixed points, as an inverse problem's data term reads them.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import io
import json
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

from ..runs.errors import FolderError
from ..runs.records import MAX_ARTIFACT_BYTES, read_bytes

__all__ = [
    "MANIFEST",
    "Observations",
    "ShippedTable",
    "check_shipped",
    "load_table",
    "shipped",
    "shipped_text",
    "times_of",
]

PACKAGE = "deepxde_lnn.reference"
#: beside shipped files: ``{"files": {NAME: {"uncompressed_sha256": HEX}}}``, the
#: SHA-256 of each file's contents (uncompressed where it ends in ``.gz``)
MANIFEST = "manifest.json"

_TIME = re.compile(r"@\s*t\s*=\s*([-+0-9.eE]+)")


def _path(*parts: str) -> Path:
    """Where ``deepxde_lnn.reference/<parts>`` is (or would be)."""
    return Path(str(importlib.resources.files(PACKAGE).joinpath(*parts)))


def shipped(*parts: str) -> Path:
    """The path of ``deepxde_lnn.reference/<parts>`` (FileNotFoundError naming it
    where the package lacks it)."""
    path = _path(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"no reference file {'/'.join(parts)} in the package")
    return path


def _damaged(path: Path, why: str) -> ValueError:
    return ValueError(f"reference file {path}: {why}")


def _contents(path: Path) -> bytes:
    """The bytes of the regular file ``path`` (no link, capped), gunzipped where its
    name ends in ``.gz``; ValueError naming it where it cannot be read."""
    try:
        raw = read_bytes(path, MAX_ARTIFACT_BYTES)
    except FolderError as err:
        raise _damaged(path, str(err).removeprefix(f"{path}: ")) from None
    if path.suffix != ".gz":
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            data = f.read(MAX_ARTIFACT_BYTES + 1)
    except (OSError, EOFError, zlib.error) as err:  # BadGzipFile is an OSError
        raise _damaged(
            path, f"not a whole gzip file ({str(err) or 'cut short'})"
        ) from None
    if len(data) > MAX_ARTIFACT_BYTES:
        raise _damaged(path, f"more than {MAX_ARTIFACT_BYTES:,} bytes uncompressed")
    return data


def _decoded(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        why = f"not UTF-8 text ({err.reason} at byte {err.start})"
        raise _damaged(path, why) from None


def _text(path: Path) -> str:
    return _decoded(path, _contents(path))


@functools.cache
def _recorded(folder: Path) -> dict[str, str]:
    """``{file name: SHA-256}`` of the :data:`MANIFEST` in ``folder`` (read once
    per process); ValueError naming it where it is missing or malformed."""
    path = folder / MANIFEST
    text = _decoded(path, _contents(path))
    try:
        files = json.loads(text)["files"]
        return {name: e["uncompressed_sha256"] for name, e in files.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        why = err if isinstance(err, ValueError) else repr(err)
        raise _damaged(path, f"not a valid manifest: {why}") from None


_CHECKED: set = set()  # (path, size, mtime) of shipped files whose SHA-256 matched


def _state(path: Path) -> tuple:
    try:
        info = os.lstat(path)
    except OSError:
        return (path,)  # never checked: reading it says why
    return path, info.st_size, info.st_mtime_ns


def shipped_text(*parts: str) -> str:
    """The text of ``deepxde_lnn.reference/<parts>`` (gunzipped where ``.gz``),
    its contents' SHA-256 checked against the :data:`MANIFEST` beside it (once
    per process and state of the file); one ValueError naming the file where it
    is missing, not a regular file, not whole gzip, not the recorded contents or
    not UTF-8."""
    path = _path(*parts)
    want = _recorded(path.parent).get(path.name)
    if want is None:
        raise _damaged(path, f"not listed in {path.parent / MANIFEST}")
    state = _state(path)
    data = _contents(path)
    if state not in _CHECKED:
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            raise _damaged(
                path,
                f"its contents are not the shipped ones (SHA-256 {got}, "
                f"{MANIFEST} records {want}): reinstall deepxde-lnn",
            )
        _CHECKED.add(state)
    return _decoded(path, data)


def check_shipped(*parts: str) -> None:
    """The check of :func:`shipped_text`, where this process has not yet made it
    on the file as it is now."""
    if _state(_path(*parts)) not in _CHECKED:
        shipped_text(*parts)


def times_of(header: str, blocks: int) -> np.ndarray:
    """The times named in a COMSOL column header (``... @ t=T``), one per block
    of ``blocks`` columns; ValueError where the header does not name them."""
    found = [float(t) for t in _TIME.findall(header)]
    if not found or len(found) % blocks:
        raise ValueError(f"the header names {len(found)} times, not blocks of {blocks}")
    times = np.asarray(found[::blocks])
    if any(
        found[i * blocks : (i + 1) * blocks] != [t] * blocks
        for i, t in enumerate(times)
    ):
        raise ValueError("the header's column blocks do not share their times")
    return times


def load_table(
    path: str | Path, inputs: int, outputs: int, time_stacked: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` of the export ``path``: ``inputs`` columns of coordinates (time
    counted where ``time_stacked``) and ``outputs`` of values, float64, rows with a
    NaN left out. ValueError naming the file where it cannot be read or its
    columns do not fit."""
    path = Path(path)
    return _table(_text(path), path, inputs, outputs, time_stacked)


def _table(text: str, path: Path, inputs, outputs, time_stacked) -> tuple:
    """:func:`load_table` of the text ``text`` of ``path``."""
    try:
        data = np.loadtxt(io.StringIO(text), comments="%", dtype=np.float64, ndmin=2)
    except ValueError as err:  # a row of another length, a word
        raise _damaged(path, f"not a table of numbers ({err})") from None
    if not time_stacked:
        if data.shape[1] != inputs + outputs:
            raise _damaged(
                path, f"{data.shape[1]} columns, expected {inputs} + {outputs}"
            )
        x, y = data[:, :inputs], data[:, inputs:]
    else:
        space = inputs - 1
        header = [line for line in text.splitlines() if line.startswith("%")]
        try:
            times = times_of(header[-1] if header else "", outputs)
        except ValueError as err:
            raise _damaged(path, str(err)) from None
        if data.shape[1] != space + len(times) * outputs:
            raise _damaged(
                path,
                f"{data.shape[1]} columns, expected {space} + {len(times)} times x "
                f"{outputs}",
            )
        nodes = data[:, :space]
        values = data[:, space:].reshape(len(data), len(times), outputs)
        x = np.column_stack(
            [np.repeat(nodes, len(times), axis=0), np.tile(times, len(data))]
        )
        y = values.reshape(-1, outputs)
    keep = ~(np.isnan(x).any(axis=1) | np.isnan(y).any(axis=1))
    if not keep.any():
        raise _damaged(path, "no row without NaN")
    return x[keep], y[keep]


_LOADED: dict = {}  # ShippedTable -> (x, y), once per process


@dataclass(frozen=True)
class ShippedTable:
    """A case's ``reference``: the table ``deepxde_lnn.reference/<parts>`` as
    :func:`load_table` reads it, checked when declared (:func:`check_shipped`:
    a case module's import, before anything trains) and loaded on the first call
    (a declaration that pickles to worker processes as its fields)."""

    parts: tuple[str, ...]
    inputs: int
    outputs: int
    time_stacked: bool = False

    def __post_init__(self):
        check_shipped(*self.parts)

    def __call__(self) -> tuple[np.ndarray, np.ndarray]:
        if self not in _LOADED:
            text = shipped_text(*self.parts)
            path = _path(*self.parts)
            _LOADED[self] = _table(
                text, path, self.inputs, self.outputs, self.time_stacked
            )
        x, y = _LOADED[self]
        return x.copy(), y.copy()


class Observations:
    """Values ``values`` (M, 1) observed at the points ``points`` (M, d): called on
    rows that are observation points (a term's fixed pool of them, e.g. through
    :class:`~deepxde_lnn.problems.sampling.Points`), it gives each row's value,
    found by its nearest point (ValueError for a row farther than ``TOLERANCE``
    from every point), e.g. as a ``DirichletBC``'s function."""

    TOLERANCE = 1e-5

    def __init__(self, points: np.ndarray, values: np.ndarray):
        self.points = np.asarray(points, dtype=np.float64)
        self.values = np.asarray(values, dtype=np.float64).reshape(len(self.points), -1)
        self._tree = cKDTree(self.points)

    def __call__(self, x) -> np.ndarray:
        dist, idx = self._tree.query(np.asarray(x, dtype=np.float64))
        if np.any(dist > self.TOLERANCE):
            raise ValueError("observations: a row that is not an observation point")
        return self.values[idx]
