"""A run folder's files: ``loss.csv``, ``fields.npz``, ``model.pt`` and, last,
``metrics.json`` (its presence marks the run finished), each written atomically."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import torch

from ..problems.problem import Problem
from ..runs import atomic
from ..runs.csvtext import formula_safe
from .job import Run

__all__ = ["write_loss", "write_run"]


def write_run(r: Run, case: Problem, record: dict) -> None:
    """Artifacts first, ``metrics.json`` last (it marks the run finished); the
    checkpoint stays until every run trained with it is written (the runner's
    ``_finish``)."""
    f, folder = r.fields, r.folder
    write_loss(folder.path / "loss.csv", r.prior_rows, r.data.names)
    atomic.save_npz(
        folder.path / "fields.npz",
        x=f["x"],
        exact=f["exact"],
        pred=f["pred"],
        abs_error=np.abs(f["pred"] - f["exact"]),
        mask=f["mask"],
        axes=np.array(f["axes"]),
        inputs=np.array(case.inputs),
        fields=np.array(case.fields),
    )
    buf = io.BytesIO()
    torch.save(r.net.state_dict(), buf)
    atomic.atomic_write_bytes(folder.path / "model.pt", buf.getvalue())
    atomic.write_json(folder.metrics, record)


def write_loss(path: Path, table: np.ndarray, names) -> None:
    """``loss.csv``: step, total and one column per term (names as CSV cells that
    cannot start a formula: :mod:`deepxde_lnn.runs.csvtext`)."""
    buf = io.StringIO()
    line = io.StringIO()
    csv.writer(line, lineterminator="").writerow(
        [formula_safe(n) for n in ["step", "total", *names]]
    )
    header = line.getvalue()
    if table.size:
        np.savetxt(buf, table, delimiter=",", header=header, comments="", fmt="%.10g")
    else:
        buf.write(header + "\n")
    atomic.atomic_write_text(path, buf.getvalue())
