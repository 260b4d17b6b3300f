"""One aggregation (deepxde_lnn.analysis.table) behind every table: summary.md, sweep.md,
the ablation table and the reproduction report list the same methods in the
registry's order with the same numbers."""

import numpy as np
import pytest
from helpers import write_record

from deepxde_lnn.analysis.summaries import build_summary
from deepxde_lnn.analysis.sweep import sweep_table
from deepxde_lnn.analysis.table import method_order, rows
from deepxde_lnn.config import record_problem
from deepxde_lnn.experiments.ablation import table as ablation_table
from deepxde_lnn.problems.methods import METHODS
from deepxde_lnn.runs.records import load_runs
from deepxde_lnn.study import reproduction

# RMSE per seed; folders sort these alphabetically, the registry does not
ERRORS = {
    "pinn:width=32": (4e-3, 5e-3, 6e-3),
    "ra-gated": (3e-3, 2e-3, 5e-3),
    "rba": (1e-3, 1.5e-3, 2e-3),
    "pinn": (2e-3, 4.4e-3, 7.2e-3),
    "lnn": (1e-3, 2e-3, 4e-3),
}
ORDER = ["lnn", "pinn", "rba", "ra-gated", "pinn:width=32"]  # registry, then others


@pytest.fixture
def folders(tmp_path):
    """The same runs as an ablation's step budget and as one rate of a sweep."""
    for folder in (tmp_path / "ab" / "steps", tmp_path / "sw" / "lr-0.001"):
        for method, errors in ERRORS.items():
            for seed, rmse in enumerate(errors, start=1):
                write_record(folder, method, seed, rmse, parameters=100 + len(method))
    return tmp_path


def _lines(text: str, start: str) -> list[list[str]]:
    """The cells of the table lines of ``text`` that start with ``start``."""
    return [
        [c.strip() for c in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith(start)
    ]


def test_the_registry_orders_every_table(folders):
    assert ORDER == sorted(ERRORS, key=method_order)
    assert [m for m in ORDER if m in METHODS] == [m for m in METHODS if m in ERRORS]
    runs = load_runs(folders / "ab" / "steps", options=record_problem)
    assert [r.method for r in rows(runs, "phi")] == ORDER
    text = build_summary(runs).markdown
    assert text.startswith("# laplace: " + " vs ".join(ORDER) + "\n")
    phi = text.split("## phi\n")[1].split("\n\n")[0]
    assert [c[0] for c in _lines(phi, "| ")[1:]] == ORDER
    sweep = _lines(sweep_table(folders / "sw"), "| 0.001 |")
    assert [c[1] for c in sweep] == ORDER
    ablation = _lines(ablation_table(folders / "ab", "laplace", ["phi"]), "| `")
    assert [c[0] for c in ablation] == [f"`{m}`" for m in ORDER]
    report = reproduction.render(reproduction.load([folders / "ab"]), ["ab"])
    assert [c[0] for c in _lines(report, "| `")] == [f"`{m}`" for m in ORDER]
    # one ratio and verdict per method, whichever table states it
    for m in ORDER[2:]:
        cells = {
            "sweep": next(c for c in sweep if c[1] == m)[8:10],
            "report": next(c for c in _lines(report, f"| `{m}`"))[8:10],
            "ablation": next(c for c in ablation if c[0] == f"`{m}`")[5],
        }
        assert " ".join(cells["sweep"]) == " ".join(cells["report"])
        assert cells["ablation"] == " ".join(cells["report"])
        assert cells["report"][0].startswith(("0.", "1.", "2.", "3."))


def test_summary_shows_the_robust_companions_beside_each_verdict(folders):
    """summary.md's verdict lines and summary.csv's RMSE lines carry P(A < pinn)
    with its interval and the failed seeds, the same numbers as the report's."""
    from deepxde_lnn.analysis.stats import p_below

    runs = load_runs(folders / "ab" / "steps", options=record_problem)
    summary = build_summary(runs)
    pinn = dict(enumerate(ERRORS["pinn"], start=1))
    lnn = p_below(dict(enumerate(ERRORS["lnn"], start=1)), pinn)
    (line,) = [
        v for v in summary.markdown.splitlines() if v.startswith("- phi RMSE: lnn/")
    ]
    assert (
        f"; P(lnn < pinn) {lnn.p:.2f} ({lnn.low:.2f}–{lnn.high:.2f}); "
        "failures lnn 0/3, pinn 0/3; time per run lnn "
    ) in line
    assert line.endswith(" (median)")  # what each method's error cost
    rule = (
        "failures: the seeds that failed out of the method's seeds, where a seed "
        "fails when its RMSE exceeds 10× the median"
    )
    assert rule in summary.markdown
    got = {(r["method"], r["metric"]): r for r in summary.rows}
    rmse = got["lnn", "RMSE"]
    assert (rmse["p_below_baseline"], rmse["p_below_low"], rmse["p_below_high"]) == (
        lnn.p,
        lnn.low,
        lnn.high,
    )
    assert rmse["failures"] == 0 and got["pinn", "RMSE"]["p_below_baseline"] is None
    assert got["lnn", "MAE"]["p_below_baseline"] is None
    report = reproduction.render(reproduction.load([folders / "ab"]), ["ab"])
    (cells,) = _lines(report, "| `lnn`")
    assert cells[10:12] == [lnn.text(), "0/3"]


def test_two_failed_networks_are_never_just_equivalent(tmp_path):
    # issue 52, item 2: relL2 = 10 x RMSE in these records: 0.6-0.8 for both
    for seed, (a, b) in enumerate([(0.06, 0.062), (0.07, 0.068), (0.08, 0.081)]):
        write_record(tmp_path, "lnn", seed, a)
        write_record(tmp_path, "pinn", seed, b)
    runs = load_runs(tmp_path, options=record_problem)
    summary = build_summary(runs)
    (verdict,) = summary.verdicts
    assert verdict.ci.verdict.startswith("equivalent")
    assert verdict.line.split(";")[0].endswith("(neither converged)")
    assert "failures lnn 3/3, pinn 3/3" in verdict.line
    assert "did not converge where the median" in summary.markdown
    report = reproduction.render(reproduction.load([tmp_path]), [str(tmp_path)])
    (cells,) = _lines(report, "| `lnn`")
    assert cells[9].endswith("(neither converged)") and cells[11] == "3/3"
    # one of them converged: the other is named
    write_record(tmp_path / "more", "lnn", 0, 0.01)
    write_record(tmp_path / "more", "pinn", 0, 0.07)
    more = load_runs(tmp_path / "more", options=record_problem)
    (one,) = [r for r in rows(more, "phi") if r.ci is not None]
    assert one.ci.convergence_text("lnn", "pinn") == "pinn did not converge"


def test_statistics_of_errors_near_floats_largest_stay_finite():
    # issue 55, item 11: RMSE 1e308 showed as "± inf"
    from deepxde_lnn.analysis.table import spread_text, stats

    got = stats([1e308, 1.5e308, 1.7e308])
    assert got["mean"] == pytest.approx(1.4e308) and got["median"] == 1.5e308
    assert got["std"] == pytest.approx(3.6056e307, rel=1e-4)
    assert spread_text(got) == "1.400e+308 ± 3.6e+307"
    assert stats([1.0, 2.0, 4.0]) == {"mean": 7 / 3, "std": float(np.std([1, 2, 4], ddof=1)),
                                      "median": 2.0, "min": 1.0, "max": 4.0, "n": 3}  # fmt: skip


def test_a_statistic_added_to_the_companions_reaches_every_output(folders, monkeypatch):
    """One Companion (issue 51: a statistic touches one place) shows in the verdict
    lines, summary.csv, the report's field tables, its headline and the guides."""
    from deepxde_lnn.analysis import companions as comp

    seeds = comp.Companion(
        head="seeds vs {b}",
        pair_head="seeds {a}; {b}",
        cell=lambda row: f"n{row.n}",
        pair_cell=lambda row, base: f"n{row.n}; n{base.n}",
        words=lambda row, base, a, b: f"seeds {a} n{row.n}",
        columns=lambda row: {"seed_count": row.n},
        rule="SEEDS-RULE",
    )
    monkeypatch.setattr(comp, "COMPANIONS", (*comp.COMPANIONS, seeds))
    runs = load_runs(folders / "ab" / "steps", options=record_problem)
    summary = build_summary(runs)
    (line,) = [
        v for v in summary.markdown.splitlines() if v.startswith("- phi RMSE: lnn/")
    ]
    assert "failures lnn 0/3, pinn 0/3; seeds lnn n3; time per run" in line
    assert "SEEDS-RULE" in summary.markdown
    got = {(r["method"], r["metric"]): r for r in summary.rows}
    assert (
        got["lnn", "RMSE"]["seed_count"] == 3
        and got["lnn", "MAE"]["seed_count"] is None
    )
    report = reproduction.render(reproduction.load([folders / "ab"]), ["ab"])
    assert "| failures | seeds vs pinn | relL2" in report and "SEEDS-RULE" in report
    (cells,) = _lines(report, "| `lnn`")
    assert cells[11:13] == ["0/3", "n3"]
    assert "| failures `lnn`; `pinn` | seeds `lnn`; `pinn` |" in report
    assert "| 0/3; 0/3 | n3; n3 |" in report


def test_a_summary_without_a_baseline_states_no_verdict_rule(tmp_path):
    # one method alone: no verdict, so no rule naming an empty baseline
    for seed, rmse in enumerate([0.01, 0.02]):
        write_record(tmp_path, "lnn", seed, rmse)
    text = build_summary(load_runs(tmp_path, options=record_problem)).markdown
    assert "Verdicts on" not in text and "ratio to " not in text
    write_record(tmp_path, "pinn", 0, 0.03)
    write_record(tmp_path, "pinn", 1, 0.02)
    text = build_summary(load_runs(tmp_path, options=record_problem)).markdown
    assert "Verdicts on the geometric-mean RMSE ratio to `pinn`" in text
