"""One run folder's figures: exact / prediction / |error| maps per field
(``fields.png``, 2-D inputs) and the loss history (``loss.png``), drawn from its
``fields.npz`` and ``loss.csv`` (read as untrusted data,
:mod:`deepxde_lnn.runs.records`); the caller that writes a run folder draws them
(:func:`draw_missing`).
"""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import numpy as np

from ..runs import atomic as aio
from ..runs.csvtext import read_cell
from ..runs.errors import FolderError
from ..runs.records import MAX_ARTIFACT_BYTES, check, read_bytes, read_record

__all__ = [
    "plt_module",
    "image",
    "load_fields",
    "load_loss",
    "figure_names",
    "run_figures",
    "missing_figures",
    "draw_missing",
]


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


def load_fields(run: Path) -> dict:
    """``fields.npz`` of a run folder (arrays only, never pickles)."""
    path = run / "fields.npz"
    data = read_bytes(path, MAX_ARTIFACT_BYTES)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise FolderError(f"{path}: unreadable ({err})") from None


def load_loss(run: Path) -> tuple[list[str], np.ndarray]:
    """``loss.csv`` of a run folder: its header and its rows."""
    path = run / "loss.csv"
    data = read_bytes(path, MAX_ARTIFACT_BYTES)
    try:
        text = data.decode("utf-8")
        table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    except ValueError as err:  # bad UTF-8 or numbers
        raise FolderError(f"{path}: unreadable ({err})") from None
    header = next(csv.reader([text.partition("\n")[0].rstrip("\r")]), [])
    return [read_cell(name) for name in header], table


def figure_names(inputs: int) -> list[str]:
    """The figures :func:`run_figures` draws for a case with ``inputs`` inputs."""
    return (["fields.png"] if inputs == 2 else []) + ["loss.png"]


def run_figures(run: str | Path) -> list[Path]:
    """Write ``fields.png`` (2-D inputs) and ``loss.png`` into a run folder."""
    plt = plt_module()
    run = Path(run)
    meta = check(read_record(run / "metrics.json"), run / "metrics.json", "run")
    written = []
    f = load_fields(run)
    names = [str(n) for n in f["fields"]]
    if "fields.png" in figure_names(f["axes"].shape[0]):
        ext = [f["axes"][0][0], f["axes"][0][-1], f["axes"][1][0], f["axes"][1][-1]]
        fig, axs = plt.subplots(
            len(names), 3, figsize=(12, 3.4 * len(names)), squeeze=False
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
            lim = (f["exact"][:, i].min(), f["exact"][:, i].max())
            for j, (ax, (v, title, cmap)) in enumerate(zip(axs[i], panels)):
                vmin, vmax = lim if j < 2 else (None, None)
                im = ax.imshow(
                    image(v, f["mask"]),
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
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))
        written.append(aio.save_figure(run / "fields.png", fig, dpi=110))
        plt.close(fig)
    header, table = load_loss(run)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for j, name in enumerate(header[1:], start=1):
        ax.semilogy(table[:, 0], table[:, j], lw=1.6 if j == 1 else 0.8, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    ax.set_title(f"{meta['case']} — {meta['method']} loss history")
    fig.tight_layout()
    written.append(aio.save_figure(run / "loss.png", fig, dpi=110))
    plt.close(fig)
    return written


def missing_figures(path: str | Path, case) -> list[str]:
    """The figures of a run folder of ``case`` (a problem: its ``inputs``) that
    are not there but can be drawn (its ``fields.npz`` and ``loss.csv`` are
    there)."""
    path = Path(path)
    if not ((path / "fields.npz").is_file() and (path / "loss.csv").is_file()):
        return []
    return [n for n in figure_names(len(case.inputs)) if not (path / n).exists()]


def draw_missing(path: str | Path, case) -> list[Path]:
    """A finished run's figures, drawn where one is missing (a run trained now,
    or killed between ``metrics.json`` and its figures)."""
    return run_figures(path) if missing_figures(path, case) else []
