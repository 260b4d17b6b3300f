"""The paper's reported numbers (Tables 2-7), stored as data.

``paper_results.csv`` (package data) has one row per case, method and field:
``case, table, method, field, RMSE, MSE, MAE, relL2, MaxErr, train_s``. Method names
are this package's: ``rba`` is the paper's "RA-PINN" row. Heat's field is
``T_paper_float32``: the paper's metrics on absolute temperature in float32 (see
``docs/heat.md``).
"""

from __future__ import annotations

import csv
import functools
import io
from importlib import resources

from ..runs.names import METRICS

__all__ = ["paper_rows", "paper_table"]


@functools.lru_cache(maxsize=None)
def paper_rows() -> tuple[dict, ...]:
    """Every row of the paper's tables, numbers as floats."""
    text = resources.files(__package__).joinpath("paper_results.csv").read_text()
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        for k in (*METRICS, "train_s"):
            row[k] = float(row[k])
        row["table"] = int(row["table"])
        rows.append(row)
    return tuple(rows)


def paper_table(case: str) -> dict:
    """``{method: {field: {metric: value}, "train_s": seconds}}`` for one case
    (empty for a case the paper does not report)."""
    out: dict = {}
    for row in paper_rows():
        if row["case"] == case:
            entry = out.setdefault(row["method"], {"train_s": row["train_s"]})
            entry[row["field"]] = {m: row[m] for m in METRICS}
    return out
