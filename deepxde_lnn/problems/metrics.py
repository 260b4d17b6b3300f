"""Error metrics on an evaluation grid (docs/protocol.md, evaluation grids and metrics), computed in float64.

With ``e = u_pred - u*`` over the M points, per field: MSE = mean(e^2),
RMSE = sqrt(MSE), MAE = mean|e|, relL2 = sqrt(sum e^2 / sum u*^2), MaxErr = max|e|.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..runs.names import METRICS, set_names

__all__ = [
    "METRICS",
    "all_fields",
    "field_metrics",
    "set_names",
    "summary_field",
]


def field_metrics(pred: np.ndarray, exact: np.ndarray, dtype=np.float64) -> dict:
    """Metrics of one field; ``dtype=np.float32`` gives the paper-compatible mode."""
    p = np.asarray(pred, dtype=dtype).ravel()
    u = np.asarray(exact, dtype=dtype).ravel()
    e = p - u
    mse = np.mean(e * e, dtype=dtype)
    return {
        "RMSE": float(np.sqrt(mse)),
        "MSE": float(mse),
        "MAE": float(np.mean(np.abs(e), dtype=dtype)),
        "relL2": float(
            np.sqrt(np.sum(e * e, dtype=dtype) / np.sum(u * u, dtype=dtype))
        ),
        "MaxErr": float(np.max(np.abs(e))),
    }


def all_fields(pred: np.ndarray, exact: np.ndarray, names: Sequence[str]) -> dict:
    """Per-field metrics plus, for several fields, their arithmetic mean ``Avg``."""
    out = {n: field_metrics(pred[:, i], exact[:, i]) for i, n in enumerate(names)}
    if "Avg" in set_names(names):
        out["Avg"] = {m: float(np.mean([out[n][m] for n in names])) for m in METRICS}
    return out


def summary_field(names: Sequence[str]) -> str:
    """The one field that sums up a case: ``Avg`` where there are several, else the
    first."""
    return "Avg" if "Avg" in names else next(iter(names))
