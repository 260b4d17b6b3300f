"""One run folder's figures: exact / prediction / |error| maps per field
(``fields.png``, 2-D inputs) and the loss history (``loss.png``), drawn from its
``fields.npz`` and ``loss.csv`` (read as untrusted data,
:mod:`deepxde_lnn.runs.records`); the caller that writes a run folder draws them
(:func:`draw_missing`).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from ..config import record_problem
from ..runs import atomic as aio
from ..runs.csvtext import read_cell
from ..runs.errors import FolderError
from ..runs.folder import VARIABLES
from ..runs.names import FIELDS, FIELDS_FIGURE, LOSS, LOSS_FIGURE, RECORD
from ..runs.records import (
    MAX_ARTIFACT_BYTES,
    check,
    read_bytes,
    read_npz,
    read_record,
)

__all__ = [
    "DRAWN_MAX",
    "CLIPPED",
    "drawn",
    "log_y",
    "point_means",
    "plt_module",
    "image",
    "load_fields",
    "load_loss",
    "load_variables",
    "load_table",
    "figure_names",
    "run_figures",
    "missing_figures",
    "draw_missing",
]


#: the largest magnitude a figure draws: a value beyond it is drawn at it (its
#: axis clipped there, and said so), and on a log axis a positive value below its
#: inverse at that; near float64's largest (1.8e308) matplotlib's margins, ticks
#: and colour bars overflow
DRAWN_MAX = 1e250
CLIPPED = "clipped"  # the gid of the note that says values were clipped


def drawn(values, log: bool = False, ax=None) -> np.ndarray:
    """``values`` as a figure draws them (float64): clipped to ± :data:`DRAWN_MAX`;
    for a log axis (``log``), to ``[1 / DRAWN_MAX, DRAWN_MAX]``, a value of 0 or
    below, which has no logarithm, NaN (not drawn). Where one was clipped, a
    note on ``ax`` says so."""
    v = np.asarray(values, dtype=np.float64)
    if log:
        v = np.where(v > 0, v, np.nan)
    low = 1 / DRAWN_MAX if log else -DRAWN_MAX
    if ax is not None and ((v < low) | (v > DRAWN_MAX)).any():
        _note_clipped(ax, f"[{low:g}, {DRAWN_MAX:g}]" if log else f"±{DRAWN_MAX:g}")
    return np.clip(v, low, DRAWN_MAX)


def log_y(ax, values) -> None:
    """Put ``ax``'s y axis on a log scale; where the ``values`` drawn on it lie on
    one level, a factor 2 either side of it (matplotlib cannot span one level on
    a log axis: it warns)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size and v.max() < 1.01 * v.min():
        ax.set_ylim(v.min() / 2, v.max() * 2)
    ax.set_yscale("log")


def _note_clipped(ax, bounds: str) -> None:
    """Say once on ``ax`` that values beyond ``bounds`` are drawn at its edge."""
    if not any(t.get_gid() == CLIPPED for t in ax.texts):
        ax.text(
            0.01, 0.99, f"values beyond {bounds} drawn at the edge",
            transform=ax.transAxes, fontsize=6, va="top", color="0.3", gid=CLIPPED,
        )  # fmt: skip


def plt_module():
    """``matplotlib.pyplot`` drawing to files (the Agg backend unless one is set)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def image(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Grid values (masked points only) back to an image, NaN outside the mask.
    Grid order is ``meshgrid(indexing="ij")``: transpose so axis 0 is horizontal."""
    img = np.full(mask.shape, np.nan)
    img[mask] = values
    return img.T


#: the arrays of ``fields.npz`` (as the runner writes them): name -> (dtype
#: kinds, dimensions); M points of k inputs, F fields, a grid of n per axis
ARRAYS = {
    "x": ("iuf", 2),  # (M, k)
    "exact": ("iuf", 2),  # (M, F)
    "pred": ("iuf", 2),  # (M, F)
    "abs_error": ("iuf", 2),  # (M, F)
    "mask": ("b", None),  # (n,) * k over the grid; (M,) for scattered points
    "axes": ("iuf", None),  # (k, n); empty for scattered points
    "inputs": ("U", 1),  # (k,)
    "fields": ("U", 1),  # (F,)
}


def load_fields(run: Path) -> dict:
    """``fields.npz`` of a run folder (:data:`ARRAYS`, arrays only, never
    pickles, sizes capped before loading: :func:`read_npz`), its shapes
    consistent; ``FolderError`` naming it otherwise."""
    path = run / FIELDS
    f = read_npz(path, ARRAYS)
    problem = _fields_problem(f)
    if problem:
        raise FolderError(f"{path}: malformed ({problem})")
    return f


def _fields_problem(f: dict) -> str | None:
    """What makes the arrays of a ``fields.npz`` disagree in shape, or None."""
    (m, k), shape = f["x"].shape, f["exact"].shape
    axes, mask = f["axes"], f["mask"]
    if shape[0] != m:
        return "exact has not the rows of x"
    for name in ("pred", "abs_error"):
        if f[name].shape != shape:
            return f"{name} has not the shape of exact"
    if f["fields"].shape != (shape[1],) or f["inputs"].shape != (k,):
        return "fields and inputs must name the columns of exact and x"
    if axes.size:  # a grid: one axis per input, the mask over it
        n = axes.shape[-1]
        if axes.shape != (k, n) or mask.shape != (n,) * k:
            return "axes and mask must be a grid of the inputs"
    if int(mask.sum()) != m:
        return "mask must hold as many points as x"
    return None


def load_loss(run: Path) -> tuple[list[str], np.ndarray]:
    """``loss.csv`` of a run folder: its header and its rows (as many columns)."""
    return load_table(run / LOSS)


def load_variables(run: Path) -> tuple[list[str], np.ndarray] | None:
    """``variables.csv`` of a run folder (step, then each unknown), or None
    where the run has none."""
    path = run / VARIABLES
    return load_table(path) if path.is_file() else None


def load_table(path: Path) -> tuple[list[str], np.ndarray]:
    """A CSV table of numbers a run wrote (a header of names, then rows, at least
    step and one column): its names and rows; ``FolderError`` naming it."""
    data = read_bytes(path, MAX_ARTIFACT_BYTES)
    try:
        text = data.decode("utf-8")
        table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    except ValueError as err:  # bad UTF-8 or numbers
        raise FolderError(f"{path}: unreadable ({err})") from None
    header = next(csv.reader([text.partition("\n")[0].rstrip("\r")]), [])
    if table.size and (table.shape[1] != len(header) or len(header) < 2):
        raise FolderError(
            f"{path}: malformed ({len(header)} names for {table.shape[1]} columns; "
            "step, total and the terms)"
        )
    return [read_cell(name) for name in header], table


def figure_names(inputs: int) -> list[str]:
    """The figures :func:`run_figures` draws for a case with ``inputs`` inputs."""
    return ([FIELDS_FIGURE] if inputs == 2 else []) + [LOSS_FIGURE]


def run_figures(run: str | Path) -> list[Path]:
    """Write ``fields.png`` (2-D inputs) and ``loss.png`` into a run folder."""
    plt = plt_module()
    run = Path(run)
    path = run / RECORD
    meta = check(read_record(path), path, "run", options=record_problem)
    written = []
    f = load_fields(run)
    names = [str(n) for n in f["fields"]]
    if FIELDS_FIGURE in figure_names(f["axes"].shape[0]):
        ext = [f["axes"][0][0], f["axes"][0][-1], f["axes"][1][0], f["axes"][1][-1]]
        fig, axs = plt.subplots(
            len(names),
            3,
            figsize=(12, 3.4 * len(names)),
            squeeze=False,
            layout="constrained",
        )
        for i, name in enumerate(names):
            panels = [
                (f["exact"][:, i], f"exact {name}", "viridis"),
                (f["pred"][:, i], f"{meta['method']} prediction", "viridis"),
                (
                    f["abs_error"][:, i],
                    f"|error| (max {f['abs_error'][:, i].max():.2e})",
                    "magma",
                ),
            ]
            # exact and prediction share one colour scale so they can be compared
            exact = drawn(f["exact"][:, i])
            lim = (exact.min(), exact.max())
            for j, (ax, (v, title, cmap)) in enumerate(zip(axs[i], panels)):
                vmin, vmax = lim if j < 2 else (None, None)
                im = ax.imshow(
                    image(drawn(v, ax=ax), f["mask"]),
                    origin="lower",
                    extent=ext,
                    cmap=cmap,
                    aspect="auto",
                    vmin=vmin,
                    vmax=vmax,
                )
                ax.set_title(title, fontsize=9)
                ax.set_xlabel(str(f["inputs"][0]))
                ax.set_ylabel(str(f["inputs"][1]))
                fig.colorbar(im, ax=ax)
        fig.suptitle(f"{meta['case']} — {meta['method']}, seed {meta['seed']}")
        written.append(aio.save_figure(run / FIELDS_FIGURE, fig, dpi=110))
        plt.close(fig)
    header, table = load_loss(run)
    fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
    for j, name in enumerate(header[1:], start=1):
        loss = drawn(table[:, j], log=True, ax=ax)
        ax.semilogy(table[:, 0], loss, lw=1.6 if j == 1 else 0.8, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    ax.set_title(f"{meta['case']} — {meta['method']} loss history")
    written.append(aio.save_figure(run / LOSS_FIGURE, fig, dpi=110))
    plt.close(fig)
    return written


def missing_figures(path: str | Path, problem) -> list[str]:
    """The figures of a run folder of ``problem`` (its ``inputs``) that
    are not there but can be drawn (its ``fields.npz`` and ``loss.csv`` are
    there)."""
    path = Path(path)
    if not ((path / FIELDS).is_file() and (path / LOSS).is_file()):
        return []
    return [n for n in figure_names(len(problem.inputs)) if not (path / n).exists()]


def draw_missing(path: str | Path, problem) -> list[Path]:
    """A finished run's figures, drawn where one is missing (a run trained now,
    or killed between ``metrics.json`` and its figures)."""
    return run_figures(path) if missing_figures(path, problem) else []


def error_panel(ax, fig, f: dict, error: np.ndarray, norm) -> None:
    """``|error|`` of one run (its ``fields.npz`` arrays ``f``) on one axes, on the
    log scale ``norm``: a map on a 2-D grid; on scattered points a line over a
    1-D input, else coloured points over the first two inputs (with more inputs,
    the points nearest the median of the others: a slice through the data)."""
    x = np.asarray(f["x"], dtype=np.float64)
    shown = np.clip(drawn(error, ax=ax), norm.vmin, norm.vmax)  # 0 at the lowest
    names = [str(n) for n in f["inputs"]] if "inputs" in f else []
    if f["axes"].shape[0] == 2:
        a = f["axes"]
        im = ax.imshow(
            image(shown, f["mask"]),
            origin="lower",
            cmap="magma",
            norm=norm,
            aspect="auto",
            extent=[a[0][0], a[0][-1], a[1][0], a[1][-1]],
        )
        fig.colorbar(im, ax=ax)
        return
    x = x.reshape(len(x), -1)
    if x.shape[1] == 1:  # a line; over repeated points (many functions) the mean
        at, mean, counts = point_means(x, shown, counted=True)
        ax.semilogy(at, mean, lw=1)
        ax.set_xlabel(names[0] if names else "x")
        if counts.min() > 1 and counts.min() == counts.max():  # as many per point
            ax.set_ylabel(f"mean over the {counts[0]} functions at each x", fontsize=8)
        elif counts.max() > 1:
            ax.set_ylabel(
                f"mean over the 1–{counts.max()} values at each x", fontsize=8
            )
        return
    keep = _slice(x)
    sc = ax.scatter(x[keep, 0], x[keep, 1], c=shown[keep], s=6, cmap="magma", norm=norm)
    fig.colorbar(sc, ax=ax)
    label = names if len(names) == x.shape[1] else [f"x{i + 1}" for i in range(2)]
    ax.set_xlabel(label[0])
    ax.set_ylabel(label[1])


def point_means(x, values, counted: bool = False):
    """``(at, mean)`` of ``values`` over a single input ``x``: its distinct
    points, sorted, and the mean of the values at each (several functions share
    the points of operator data); with ``counted``, how many there were too."""
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    at, where = np.unique(x[:, 0], return_inverse=True)
    counts = np.bincount(where)
    mean = np.bincount(where, np.asarray(values, dtype=np.float64)) / counts
    return (at, mean, counts) if counted else (at, mean)


def _slice(x: np.ndarray, share: float = 0.2) -> np.ndarray:
    """Points whose inputs after the first two lie nearest their medians (the
    ``share`` of points closest, in units of each input's spread); all with two
    inputs."""
    if x.shape[1] <= 2:
        return np.ones(len(x), bool)
    rest = x[:, 2:]
    spread = np.ptp(rest, axis=0)
    dist = np.abs(rest - np.median(rest, axis=0)) / np.where(spread > 0, spread, 1)
    far = dist.max(axis=1)
    return far <= np.quantile(far, share)
