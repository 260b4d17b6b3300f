"""Error metrics on an evaluation grid (docs/protocol.md, evaluation grids and metrics), computed in float64.

With ``e = u_pred - u*`` over the M points, per field: MSE = mean(e^2),
RMSE = sqrt(MSE), MAE = mean|e|, relL2 = sqrt(sum e^2 / sum u*^2), MaxErr = max|e|.

A metric that is not a number is ``None`` (null in ``metrics.json``,
:data:`~deepxde_lnn.runs.names.NULLABLE_METRICS`): relL2 where the truth is zero
at every point (a relative error of a zero truth is undefined) or so near zero
that the ratio exceeds float64's range, MSE where it exceeds float64's range.
Where an error itself is not a finite number (a prediction of NaN or infinity, or
a difference beyond float64's range) all five are ``None``: the run failed on
that field (:func:`~deepxde_lnn.runs.records.failed`). Where plain sums of squares
overflow (values beyond ~1e154), RMSE, MAE and relL2 are computed on the values
scaled by their largest magnitude, so that they stay finite for finite values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..runs.names import METRICS, NULLABLE_METRICS, set_names

__all__ = [
    "METRICS",
    "NULLABLE_METRICS",
    "all_fields",
    "errors_line",
    "field_metrics",
    "joint_metrics",
    "JOINT",
    "metric_text",
    "set_names",
    "summary_field",
]


def field_metrics(pred: np.ndarray, exact: np.ndarray, dtype=np.float64) -> dict:
    """Metrics of one field; ``dtype=np.float32`` gives the paper-compatible mode."""
    p = np.asarray(pred, dtype=dtype).ravel()
    u = np.asarray(exact, dtype=dtype).ravel()
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        e = p - u  # overflows and NaN handled below
        if not np.isfinite(e).all():  # no error is a number: the run failed here
            return dict.fromkeys(METRICS)
        mse = np.mean(e * e, dtype=dtype)
        rmse, mae = np.sqrt(mse), np.mean(np.abs(e), dtype=dtype)
        scale = _largest(e)
        if 0 < scale < math.inf:  # beyond float64's squares: on e / scale
            if not np.isfinite(mse) or mse == 0:
                rmse = scale * np.sqrt(np.mean((e / scale) ** 2, dtype=dtype))
            if not np.isfinite(mae):
                mae = scale * np.mean(np.abs(e / scale), dtype=dtype)
        return {
            "RMSE": float(rmse),
            "MSE": float(mse) if np.isfinite(mse) else None,
            "MAE": float(mae),
            "relL2": _relative_l2(e, u, dtype),
            "MaxErr": float(np.max(np.abs(e))),
        }


def _largest(v: np.ndarray) -> float:
    return float(np.max(np.abs(v))) if v.size else 0.0


def _relative_l2(e: np.ndarray, u: np.ndarray, dtype) -> float | None:
    """``sqrt(sum e^2 / sum u^2)``; None for a zero truth ``u``, and where the
    ratio is beyond float64's range (a truth near zero, e.g. 5e-324)."""
    if _largest(u) == 0:
        return None
    se, su = np.sum(e * e, dtype=dtype), np.sum(u * u, dtype=dtype)
    if np.isfinite(se) and np.isfinite(su) and su > 0:
        ratio = np.sqrt(se / su)
        if np.isfinite(ratio):
            return float(ratio)
    ratio = _l2(e, dtype) / _l2(u, dtype)  # on scaled values: squares under/overflow
    return float(ratio) if np.isfinite(ratio) else None


def _l2(v: np.ndarray, dtype) -> float:
    """``sqrt(sum v^2)`` on ``v`` scaled by its largest magnitude."""
    scale = _largest(v)
    if scale == 0 or not math.isfinite(scale):
        return scale
    return scale * float(np.sqrt(np.sum((v / scale) ** 2, dtype=dtype)))


def metric_text(value: float | None, spec: str = ".3e") -> str:
    """A metric for a person: the number, or "—" where it is not one (None)."""
    return "—" if value is None else format(value, spec)


def errors_line(name: str, metrics: dict) -> str:
    """One field's RMSE, relL2 and MaxErr on one line, as a run prints them."""
    return (
        f"  {name:8s} RMSE {metric_text(metrics['RMSE'])}  relL2 "
        f"{metric_text(metrics['relL2'])}  MaxErr {metric_text(metrics['MaxErr'])}"
    )


def all_fields(pred: np.ndarray, exact: np.ndarray, names: Sequence[str]) -> dict:
    """Per-field metrics plus, for several fields, their arithmetic mean ``Avg``."""
    out = {n: field_metrics(pred[:, i], exact[:, i]) for i, n in enumerate(names)}
    if "Avg" in set_names(names):  # None where a field's is: not a mean of all
        out["Avg"] = {m: _mean([out[n][m] for n in names]) for m in METRICS}
    return out


#: the metric set of all fields pooled (:func:`joint_metrics`)
JOINT = "joint"


def joint_metrics(x: np.ndarray, pred: np.ndarray, exact: np.ndarray) -> dict:
    """The five metrics over every field's values pooled, as one set named
    :data:`JOINT` (a case's ``extra_metrics``): its relL2 is
    ``||pred - exact||_F / ||exact||_F`` over all points and fields, the L2
    relative error of benchmarks that score a vector solution as one (PINNacle's
    L2RE). Nothing for one field (its own metrics are the same)."""
    if np.ndim(pred) < 2 or np.shape(pred)[1] < 2:
        return {}
    return {JOINT: field_metrics(np.ravel(pred), np.ravel(exact))}


def _mean(values: list) -> float | None:
    """The mean of ``values``; None where one is None; finite for finite values
    (near float64's largest, the mean of the values halved, doubled)."""
    if None in values:
        return None
    with np.errstate(over="ignore"):
        mean = np.mean(values)
    return float(mean if np.isfinite(mean) else 2 * np.mean(np.divide(values, 2)))


def summary_field(names: Sequence[str]) -> str:
    """The one field that sums up a case: ``Avg`` where there are several, else the
    first."""
    return "Avg" if "Avg" in names else next(iter(names))
