"""The forest plot of verdicts: one row per verdict, its ratio a point and its
interval a bar on a log axis over the equivalence band, coloured by verdict,
open where Holm's adjustment changes it; drawn in a compare's summary.png."""

import json
import math

import pytest
from helpers import write_fields
from matplotlib.colors import to_hex

from deepxde_lnn.analysis import summaries, verdict_text
from deepxde_lnn.analysis.figures import plt_module
from deepxde_lnn.analysis.forest import COLOURS, ForestRow, forest, forest_figure
from deepxde_lnn.analysis.stats import RatioCI


def _ci(ratio: float, low: float, high: float, margin: float = 2.0) -> RatioCI:
    return RatioCI(ratio, low, high, 8, 8, True, 0.95, margin)


ROWS = [
    ForestRow("a", _ci(0.5, 0.4, 0.6), "better", "first"),
    ForestRow("b", _ci(1.7, 1.4, 2.1), "worse", "first"),
    ForestRow("c", _ci(0.98, 0.7, 1.37), "undecided", "second"),  # Holm: changed
    ForestRow("d", _ci(3.0, 0.001, 5000.0), "undecided", "second"),  # runs off
    ForestRow("e", None, None, "second"),  # no comparison: no point
    ForestRow("f", _ci(2.0, 2.0, math.inf), "undecided", "second"),  # one seed
]


def _points(ax) -> list:
    """The drawn points (one per comparison), top to bottom."""
    return _drawn(ax, "ratio")


def _drawn(ax, gid: str) -> list:
    """The lines of one kind (their ``gid``), top to bottom."""
    found = [line for line in ax.get_lines() if line.get_gid() == gid]
    return sorted(found, key=lambda line: line.get_ydata()[0])


def test_one_row_per_verdict_coloured_by_verdict_open_where_holm_changes_it():
    plt = plt_module()
    fig, ax = plt.subplots()
    forest(ax, ROWS, title="t")
    points = _points(ax)
    assert len(points) == 5  # every row with a comparison, "e" none
    assert all(p.get_marker() == "o" for p in points)
    labels = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    # one row per verdict, in order, under a heading per section
    assert list(labels) == ["a", "b", "c", "d", "e", "f", "first", "second"]
    ys = [p.get_ydata()[0] for p in points]
    assert ys == [labels[n] for n in "abcdf"]
    assert labels["first"] < labels["a"] < labels["b"] < labels["second"]
    assert labels["second"] < labels["c"]
    colours = [to_hex(p.get_markeredgecolor()) for p in points]
    expected = ["better", "worse", "equivalent", "undecided", "undecided"]
    assert colours == [COLOURS[k].lower() for k in expected]
    faces = [to_hex(p.get_markerfacecolor()) for p in points]
    assert faces[2] == "#ffffff"  # equivalent, undecided after Holm: open
    assert faces[:2] == colours[:2] and faces[3:] == colours[3:]
    # the interval as a bar at the point's row (clipped to the axis), log x
    bars = _drawn(ax, "interval")
    assert [b.get_ydata()[0] for b in bars] == [labels[n] for n in "abcd"]
    assert list(bars[0].get_xdata()) == [0.4, 0.6]
    low, high = ax.get_xlim()
    assert ax.get_xscale() == "log" and (low, high) == pytest.approx((0.01, 100))
    assert list(bars[3].get_xdata()) == pytest.approx([low, high])
    arrows = [(a.get_marker(), a.get_ydata()[0]) for a in _drawn(ax, "clipped")]
    assert sorted(arrows) == [("<", labels["d"]), (">", labels["d"])]
    # the equivalence band [1/2, 2], shaded
    (band,) = ax.patches
    box = band.get_bbox()  # x in data coordinates
    assert (box.x0, box.x1) == pytest.approx((0.5, 2.0))
    plt.close(fig)


def test_the_figure_has_one_panel_per_column_and_one_legend():
    other = [ForestRow(r.label, r.ci, r.adjusted, r.section) for r in ROWS[::-1]]
    fig = forest_figure({"left": ROWS, "right": other}, title="T")
    left, right = fig.axes
    assert [a.get_title() for a in fig.axes] == ["left", "right"]
    assert len(_points(left)) == len(_points(right)) == 5
    assert all(t.get_text() == "" for t in right.get_yticklabels())
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts[:4] == ["better", "equivalent within ×2", "worse", "undecided"]
    assert "open: undecided after Holm's adjustment" in texts
    assert texts[-1] == "equivalence band [1/2, 2]"
    plt_module().close(fig)


def test_a_panel_takes_one_margin():
    rows = [ForestRow("a", _ci(1, 0.9, 1.1)), ForestRow("b", _ci(1, 0.9, 1.1, 3.0))]
    plt = plt_module()
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="one margin per panel"):
        forest(ax, rows)
    plt.close(fig)


def _run(folder, method, seed, rmse):
    """A finished run folder: its record and the artifacts summary.png reads."""
    folder.mkdir(parents=True)
    metrics = {"RMSE": rmse, "MSE": rmse**2, "MAE": rmse, "relL2": rmse,
               "MaxErr": rmse}  # fmt: skip
    record = {
        "case": "laplace", "method": method, "seed": seed, "lr": 1e-3,
        "iterations": 10, "profile": "quick", "dtype": "float32", "device": "cpu",
        "device_name": "Test CPU", "parameters": 100, "train_seconds": 1.0,
        "seconds_per_step": 1e-3, "grid_points": 25, "versions": {},
        "final_loss": {"total": 0.5}, "metrics": {"phi": metrics},
    }  # fmt: skip
    (folder / "metrics.json").write_text(json.dumps(record))
    write_fields(folder, rmse, "phi")


def test_summary_png_draws_the_summarys_verdicts(tmp_path, monkeypatch):
    errors = {
        "lnn": (1e-3, 2e-3, 4e-3),
        "pinn": (2e-3, 4.4e-3, 7.2e-3),
        "pinn-matched": (1e-3, 8e-3, 4e-3),
    }
    for method, errs in errors.items():
        for seed, rmse in enumerate(errs, start=1):
            _run(tmp_path / method / f"seed-{seed}", method, seed, rmse)
    drawn = []
    real = summaries.summary_figure

    def keep(*args, **kwargs):
        drawn.append(real(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(summaries, "summary_figure", keep)
    out = summaries.write_summary(tmp_path)
    assert (tmp_path / "summary.png") in out.files
    (panel,) = [a for a in drawn[0].axes if a.get_title().startswith("verdicts")]
    labels = [t.get_text() for t in panel.get_yticklabels()]
    assert labels == ["lnn / pinn: phi", "pinn-matched / pinn: phi"]
    points = _points(panel)
    assert [p.get_xdata()[0] for p in points] == pytest.approx(
        [v.ci.ratio for v in out.verdicts]
    )
    colours = [to_hex(p.get_markeredgecolor()) for p in points]
    assert colours == [COLOURS["better"].lower(), COLOURS["undecided"].lower()]
    assert [v.ci.verdict for v in out.verdicts] == ["better", "undecided"]


def test_several_baselines_are_sections_of_the_panel():
    verdicts = [
        verdict_text.Judged("lnn", "fnn", "u", _ci(0.5, 0.4, 0.6), "better", ""),
        verdict_text.Judged("lnn", "fnn-m", "u", _ci(0.9, 0.6, 1.2), "undecided", ""),
    ]
    rows = verdict_text.forest_rows(verdicts)
    assert [(r.label, r.section) for r in rows] == [
        ("lnn / fnn: u", "against fnn"),
        ("lnn / fnn-m: u", "against fnn-m"),
    ]
    assert rows[1].changed and not rows[0].changed
