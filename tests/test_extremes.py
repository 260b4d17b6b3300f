"""Metrics at float64's edges: a run whose error is not a number is recorded as
failed and the comparison finishes; errors of 0 and near float64's largest are
summarised and drawn (clipped, said so) without a warning; ``summary.png`` does
not grow with the methods."""

import warnings

import numpy as np
import pytest
from helpers import write_fields, write_record

from deepxde_lnn.analysis import figures, summaries
from deepxde_lnn.analysis.forest import ForestRow
from deepxde_lnn.analysis.stats import ratio_ci
from deepxde_lnn.analysis.summary_figure import (
    MAX_MAPS,
    MAX_STRIP,
    MAX_VERDICTS,
    summary_figure,
)
from deepxde_lnn.analysis.sweep import sweep_table
from deepxde_lnn.analysis.table import rows
from deepxde_lnn.config import record_problem
from deepxde_lnn.problems.metrics import METRICS, all_fields, field_metrics
from deepxde_lnn.runs.records import load_runs, problem
from deepxde_lnn.study import reproduction

FAILED = dict.fromkeys(METRICS)  # the metrics of a run whose error is not a number


def _write(root, errors: dict) -> None:
    """Laplace runs below ``root`` with their artifacts: method -> RMSE per seed
    (None: a failed run, its metrics null); errors beyond ~1e154, whose squares
    overflow, keep MSE null as :func:`field_metrics` does."""
    for method, per_seed in errors.items():
        for seed, rmse in enumerate(per_seed):
            if rmse is None:
                metrics = FAILED
            else:
                metrics = {m: rmse for m in METRICS} | {"MSE": None}
            over = {"metrics": {"phi": metrics}, "final_loss": {"total": 0.5}}
            write_record(root, method, seed, 1.0, **over)
            error = np.nan if rmse is None else rmse  # a failed run's: NaN
            write_fields(root / method / f"seed-{seed}", error, "phi")


def test_an_error_that_is_not_a_number_nulls_every_metric():
    # reliability item 2: "metrics.u.RMSE is nan" once crashed the comparison
    for pred, truth in (
        ([np.nan, 1.0], [1.0, 1.0]),
        ([np.inf, 1.0], [1.0, 1.0]),
        ([1e308, 1.0], [-1e308, 1.0]),  # finite, but their difference is not
    ):
        assert field_metrics(np.array(pred), np.array(truth)) == FAILED
    both = all_fields(np.array([[np.nan, 1.0]]), np.array([[0.0, 0.0]]), ["a", "b"])
    assert both["a"] == both["Avg"] == FAILED and both["b"]["RMSE"] == 1.0
    huge = all_fields(np.zeros((1, 2)), np.array([[1.5e308, 1.7e308]]), ["a", "b"])
    assert huge["Avg"]["RMSE"] == pytest.approx(1.6e308)  # was inf: not writable


def test_the_unknowns_relative_error_beyond_float64_is_none():
    # reliability item 2: true_values={"C": 5e-324} gave inf, refused as JSON
    from deepxde_lnn.training.scripted_run import _relative, per_function_relL2

    assert _relative(1.0, 5e-324) is None and _relative(np.nan, 1.0) is None
    assert _relative(1.5, 1.0) == 0.5 and _relative(1.0, 0.0) is None
    nan = per_function_relL2(
        np.ones((4, 1)), np.full((4, 1), np.nan), np.array([0, 0, 1, 1]), ["u"]
    )
    assert nan == {"u": None}


def test_a_record_holds_null_metrics_only_all_together():
    rec = {
        "case": "laplace", "method": "lnn", "seed": 0, "lr": 1e-3,
        "iterations": 100, "profile": "quick", "dtype": "float32",
        "metrics": {"phi": dict(FAILED)},
    }  # fmt: skip
    assert problem(rec) is None  # a failed run's record is one
    rec["metrics"]["phi"]["MAE"] = 1.0
    assert "'phi' must all be null where RMSE is" in problem(rec)
    rec["metrics"]["phi"] = {m: 1.0 for m in METRICS} | {"MaxErr": None}
    assert problem(rec) == "metrics 'phi' MaxErr must be a finite number >= 0"


def test_a_failed_seed_counts_as_failed_and_the_comparison_finishes(tmp_path):
    _write(
        tmp_path,
        {"lnn": (1e-3, None, 2e-3, 1.5e-3), "pinn": (2e-3, 3e-3, 4e-3, 3.5e-3)},
    )
    runs = load_runs(tmp_path, options=record_problem)
    lnn, pinn = rows(runs, "phi")
    assert (lnn.failures, lnn.n, lnn.stats["RMSE"]["n"]) == (1, 4, 3)
    assert (lnn.ci.n_a, lnn.below.n_a) == (3, 3)  # the seeds with a number
    assert lnn.converged  # one seed of four: the median's still converged
    out = summaries.write_summary(tmp_path)
    (verdict,) = out.verdicts
    assert "failures lnn 1/4, pinn 0/4" in verdict.line
    assert (tmp_path / "summary.png") in out.files
    # every seed failed: no ratio, every seed counted
    _write(tmp_path / "all", {"lnn": (None, None), "pinn": (2e-3, 3e-3)})
    lnn, _ = rows(load_runs(tmp_path / "all", options=record_problem), "phi")
    assert (lnn.ci, lnn.failures, lnn.converged, lnn.vs_paper) == (None, 2, False, None)


@pytest.mark.parametrize(
    "errors",
    [
        {"lnn": (1e308, 1.5e308, 1.7e308), "pinn": (1e308, 1.2e308, 1.1e308)},
        {"lnn": (1e-3, 1.7e308, 2e-3), "pinn": (1e-3, 2e-3, 3e-3)},
        {"lnn": (0.0, 1e-3, 2e-3), "pinn": (1e-3, 2e-3, 3e-3)},
        {"lnn": (1e-3, 1e-3), "pinn": (1e-3, 1e-3)},  # one level on a log axis
    ],
    ids=["huge", "one-huge", "zero", "equal"],
)
def test_zero_and_huge_errors_are_summarised_and_drawn_without_a_warning(
    tmp_path, errors, monkeypatch
):
    # reliability items 3 and 16: matplotlib's OverflowError after every run,
    # NumPy's overflow and divide-by-zero warnings
    root, out = tmp_path / "runs", tmp_path / "report" / "REPORT.md"
    _write(root, errors)
    drawn, real = [], summaries.summary_figure

    def keep(*args, **kwargs):
        drawn.append(real(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(summaries, "summary_figure", keep)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = summaries.write_summary(root)
        reproduction.build_report([root], out)
    assert root / "summary.png" in summary.files and out.is_file()
    assert sorted(p.name for p in out.with_suffix("").glob("*.png"))  # not empty
    huge = max(e for es in errors.values() for e in es) > figures.DRAWN_MAX
    (strip,) = [ax for ax in drawn[0].axes if "every seed" in ax.get_title()]
    notes = [t.get_text() for t in strip.texts if t.get_gid() == figures.CLIPPED]
    assert notes == (
        ["values beyond [1e-250, 1e+250] drawn at the edge"] if huge else []
    )


def test_a_reference_near_floats_largest_is_drawn_clipped(tmp_path):
    write_record(tmp_path, "lnn", 0, 1.0)
    run = tmp_path / "lnn" / "seed-0"
    write_fields(run, 1.0, "phi")
    with np.load(run / "fields.npz") as f:
        arrays = dict(f)
    arrays["exact"] = np.where(np.arange(25)[:, None] % 2, 1.7e308, -1.7e308)
    np.savez(run / "fields.npz", **arrays)
    (run / "loss.csv").write_text("step,total\n1,1e308\n2,0.0\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = figures.run_figures(run)
    assert [p.name for p in written] == ["fields.png", "loss.png"]


def _method_runs(root, n: int) -> list[dict]:
    """``n`` methods of one seed each, with their artifacts."""
    for i in range(n):
        method = "pinn" if i == 0 else f"pinn:width={8 + i}"
        write_record(root, method, 0, 1e-3 * (1 + i))
        write_fields(root / method / "seed-0", 1e-3 * (1 + i), "phi")
    return load_runs(root, options=record_problem)


def test_summary_png_does_not_grow_with_the_methods(tmp_path):
    # reliability item 6: 500 methods took 23 GB (an error map per method)
    ci = ratio_ci({0: 1e-3, 1: 2e-3}, {0: 2e-3, 1: 3e-3})
    few = _method_runs(tmp_path / "few", MAX_MAPS)
    many = _method_runs(tmp_path / "many", MAX_STRIP + 20)
    figs = []
    for runs, verdicts in ((few, MAX_VERDICTS), (many, MAX_VERDICTS + 9)):
        methods = list(dict.fromkeys(r["method"] for r in runs))
        rows_ = [ForestRow(f"{m} / pinn: phi", ci) for m in methods[:verdicts]]
        rows_ += [ForestRow(f"v{k}", ci) for k in range(verdicts - len(rows_))]
        figs.append(summary_figure(runs, methods, rows_))
    small, large = figs
    assert tuple(large.get_size_inches()) == tuple(small.get_size_inches())
    assert sum(len(ax.images) for ax in large.axes) == MAX_MAPS
    assert small.get_suptitle() == "laplace"
    assert large.get_suptitle() == (
        f"laplace\nmaps, predictions, losses and unknowns of the first {MAX_MAPS} "
        f"of {MAX_STRIP + 20} methods; every seed of the first {MAX_STRIP} methods; "
        f"the first {MAX_VERDICTS} of {MAX_VERDICTS + 9} verdicts (the rest in the "
        "tables)"
    )
    (strip,) = [ax for ax in large.axes if "every seed" in ax.get_title()]
    assert len(strip.get_xticks()) == MAX_STRIP


def test_a_sweep_draws_failed_and_huge_errors_without_a_warning(tmp_path):
    # every seed failed at one rate (no RMSE to draw) and errors near 1.8e308
    per_lr = {
        "lr-0.001": {"lnn": (1e308, 1.5e308, None), "pinn": (1e-3, 2e-3, 3e-3)},
        "lr-0.01": {"lnn": (None, None), "pinn": (1e-3, 2e-3)},
    }
    for folder, errors in per_lr.items():
        for method, per_seed in errors.items():
            for seed, rmse in enumerate(per_seed):
                metrics = FAILED if rmse is None else dict.fromkeys(METRICS, rmse)
                over = {"metrics": {"phi": metrics}, "final_loss": {"total": 0.5}}
                over["lr"] = float(folder[3:])
                write_record(tmp_path / folder, method, seed, 1.0, **over)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = sweep_table(tmp_path)
    assert "| 0.01 | lnn | 2 | 5.000e-01 ± 0.0e+00 | — |" in text
    assert (tmp_path / "sweep.png").is_file()
