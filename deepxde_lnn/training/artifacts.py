"""A run folder's files: ``loss.csv``, ``fields.npz``, ``model.pt`` and, last,
``metrics.json`` (its presence marks the run finished), each written atomically."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ..problems.problem import Problem
from ..runs import atomic
from ..runs.csvtext import formula_safe
from ..runs.names import FIELDS, LOSS, MODEL
from .stack import Run

__all__ = ["write_fields", "write_loss", "write_model", "write_run"]


def write_run(r: Run, problem: Problem, record: dict) -> None:
    """Artifacts first, ``metrics.json`` last (it marks the run finished); the
    checkpoint stays until every run trained with it is written (the runner's
    ``_finish``)."""
    f, folder = r.fields, r.folder
    assert f is not None and r.prior_rows is not None  # a finished run's
    write_loss(folder.path / LOSS, r.prior_rows, r.data.names)
    write_fields(
        folder.path,
        f["x"],
        f["exact"],
        f["pred"],
        f["mask"],
        f["axes"],
        problem.inputs,
        problem.fields,
    )
    write_model(folder.path, r.net)
    atomic.write_json(folder.metrics, record)


def write_fields(
    folder: Path, x, exact, pred, mask, axes, inputs: Sequence[str], fields
) -> None:
    """``fields.npz``: the evaluation points ``x``, the exact and predicted
    fields, ``|pred - exact|``, the mask of points inside the domain, the grid's
    axes (empty off a grid), the input names and the field names."""
    atomic.save_npz(
        folder / FIELDS,
        x=x,
        exact=exact,
        pred=pred,
        abs_error=np.abs(pred - exact),
        mask=mask,
        axes=np.array(axes),
        inputs=np.array(inputs, dtype=str),
        fields=np.array(fields),
    )


def write_model(folder: Path, net: torch.nn.Module) -> None:
    """``model.pt``: the network's ``state_dict``."""
    buf = io.BytesIO()
    torch.save(net.state_dict(), buf)
    atomic.atomic_write_bytes(folder / MODEL, buf.getvalue())


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
