"""Reference solutions stored as data: a case scored on a file's points.

A reference is the points ``x`` (M, d) where a solver gave the solution and its
values ``y`` (M, k) there. :func:`load_table` reads the plain-text exports of
COMSOL (``%`` comment lines, one row per mesh node; gzip-compressed where the name
ends in ``.gz``). A time-dependent export holds one row per spatial node and one
column block per time, its header naming the times (``u (1) @ t=0.1``):
``time_stacked=True`` unfolds it into one row per node and time, ``[x..., t,
fields...]``, the node's times consecutive.

:func:`shipped` finds a file shipped in ``deepxde_lnn.reference``;
:class:`ShippedTable` declares one as a case's ``reference`` (read once per
process). :class:`Observations` are measured values at fixed points, as an inverse
problem's data term reads them.
"""

from __future__ import annotations

import gzip
import importlib.resources
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["Observations", "ShippedTable", "load_table", "shipped", "times_of"]

_TIME = re.compile(r"@\s*t\s*=\s*([-+0-9.eE]+)")


def shipped(*parts: str) -> Path:
    """The path of ``deepxde_lnn.reference/<parts>`` (FileNotFoundError naming it
    where the package lacks it)."""
    path = importlib.resources.files("deepxde_lnn.reference").joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"no reference file {'/'.join(parts)} in the package")
    return Path(str(path))


def _text(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    return path.read_text(encoding="utf-8")


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
    NaN left out. ValueError naming the file where its columns do not fit."""
    path = Path(path)
    text = _text(path)
    data = np.loadtxt(io.StringIO(text), comments="%", dtype=np.float64, ndmin=2)
    if not time_stacked:
        if data.shape[1] != inputs + outputs:
            raise ValueError(
                f"{path.name}: {data.shape[1]} columns, expected {inputs} + {outputs}"
            )
        x, y = data[:, :inputs], data[:, inputs:]
    else:
        space = inputs - 1
        header = [line for line in text.splitlines() if line.startswith("%")]
        try:
            times = times_of(header[-1] if header else "", outputs)
        except ValueError as err:
            raise ValueError(f"{path.name}: {err}") from None
        if data.shape[1] != space + len(times) * outputs:
            raise ValueError(
                f"{path.name}: {data.shape[1]} columns, expected {space} + "
                f"{len(times)} times x {outputs}"
            )
        nodes = data[:, :space]
        values = data[:, space:].reshape(len(data), len(times), outputs)
        x = np.column_stack(
            [np.repeat(nodes, len(times), axis=0), np.tile(times, len(data))]
        )
        y = values.reshape(-1, outputs)
    keep = ~(np.isnan(x).any(axis=1) | np.isnan(y).any(axis=1))
    return x[keep], y[keep]


_LOADED: dict = {}  # ShippedTable -> (x, y), once per process


@dataclass(frozen=True)
class ShippedTable:
    """A case's ``reference``: the table ``deepxde_lnn.reference/<parts>`` as
    :func:`load_table` reads it, loaded on the first call (a declaration that
    pickles to worker processes as its fields)."""

    parts: tuple[str, ...]
    inputs: int
    outputs: int
    time_stacked: bool = False

    def __call__(self) -> tuple[np.ndarray, np.ndarray]:
        if self not in _LOADED:
            path = shipped(*self.parts)
            _LOADED[self] = load_table(
                path, self.inputs, self.outputs, self.time_stacked
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
