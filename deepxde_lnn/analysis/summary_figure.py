"""``summary.png``: what a comparison found, every seed and every field visible.

One row of panels per field (its own scales: a small field never vanishes under
a large one), drawn from the run folders (never live runs):

* per method, the field's ``|error|`` of its **worst seed** (the largest error
  of the summary field), on one logarithmic colour scale for all methods
  (:func:`error_norm`); 1-D panels share one y-scale;
* over one input, the field **predicted against its truth** (each method's
  picked seed, the truth dashed): a learned unknown function ``k(x)`` is seen
  as it is, not only its error;
* **every seed's error** of the field: one point per seed and method (log
  scale), the same seed joined by a line across methods (paired seeds), the
  geometric mean marked.

Then one row for the whole comparison:

* the **verdicts**, where the summary states some: one row per verdict (network
  against baseline on a field), the error ratio and its interval as a forest
  plot (:mod:`.forest`: log axis, the equivalence band shaded, coloured by
  verdict, open where Holm's adjustment changes it);
* the loss histories (geometric mean over seeds, min–max band; each logged
  point marked where there are few, as for L-BFGS alone);
* for a problem with unknowns (``variables.csv``), each unknown against the step,
  one thin line per seed, its true value dashed.

At most :data:`MAX_FIELDS` field rows are drawn (the others are in the tables).
Its size does not grow with the methods: the maps, predictions, losses and
unknowns of at most :data:`MAX_MAPS` methods, the strips of at most
:data:`MAX_STRIP`, at most :data:`MAX_VERDICTS` verdicts, the first in order; the
figure's title says what it leaves to the tables. Runs kept as their record
alone (pruned artifacts) count in the strips only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..problems.metrics import summary_field
from ..runs.records import is_pruned, metric_sets
from .figures import (
    drawn,
    error_panel,
    load_fields,
    load_loss,
    load_variables,
    log_y,
    plt_module,
    point_means,
)
from .forest import ROW_INCHES, ForestRow, forest, forest_legend

__all__ = ["summary_figure", "error_norm", "worst_seed"]

MAX_UNKNOWNS = 4  # panels of unknowns drawn (the rest are in variables.csv)
MAX_FIELDS = 8  # rows of fields drawn (the rest are in the tables)
MAX_MAPS = 6  # methods whose error maps, predictions, losses and unknowns are drawn
MAX_STRIP = 40  # methods in each strip of every seed's error
MAX_VERDICTS = 40  # rows of the verdicts' forest plot
FEW_POINTS = 20  # a loss history of at most this many logged points is marked


def error_norm(errors: list[np.ndarray], decades: float = 6.0):
    """One logarithmic colour scale for several |error| maps, so that a map ten
    times worse is one decade brighter: from the largest value over all maps down
    to the 1st percentile of the positive ones (the few points where an error
    changes sign do not stretch it), at most ``decades`` below the top."""
    from matplotlib.colors import LogNorm

    values = drawn(np.concatenate([np.ravel(e) for e in errors]), log=True)
    values = values[np.isfinite(values)]
    if not values.size:
        return LogNorm(vmin=10**-decades, vmax=1.0)
    top = float(values.max())
    low = float(np.percentile(values, 1))
    return LogNorm(vmin=max(low, top * 10**-decades), vmax=top)


def _error(run: dict, name: str | None = None) -> float | None:
    """The RMSE of a run's field ``name`` (None: its summary field); None for a
    record without metrics or without that field."""
    sets = metric_sets(run) if isinstance(run.get("metrics"), dict) else {}
    if not sets:
        return None
    values = sets.get(name or summary_field(list(sets)))
    return values.get("RMSE") if isinstance(values, dict) else None


def worst_seed(runs: list[dict]) -> dict:
    """The run of the largest summary-field RMSE (the first seed where no run
    has metrics)."""
    scored = [r for r in runs if _error(r) is not None]
    if not scored:
        return min(runs, key=lambda r: r["seed"])
    return max(scored, key=lambda r: (_error(r), -r["seed"]))


def median_seed(runs: list[dict]) -> dict:
    """The run of the median summary-field RMSE (the lower of the two middle
    ones for an even count; the first seed where no run has metrics)."""
    scored = sorted(
        (r for r in runs if _error(r) is not None), key=lambda r: (_error(r), r["seed"])
    )
    if not scored:
        return min(runs, key=lambda r: r["seed"])
    return scored[(len(scored) - 1) // 2]


#: which seed's error map a figure shows per method
PICKS = {"worst": worst_seed, "median": median_seed}


def summary_figure(
    runs, methods, verdicts: Sequence[ForestRow] = (), pick: str = "worst"
):
    """The figure of the module's docstring, or None when no run has artifacts;
    ``verdicts``: the summary's, one forest row each (none: no such panel);
    ``pick``: the seed whose error map is shown per method (:data:`PICKS`)."""
    plt = plt_module()
    kept = [r for r in runs if not is_pruned(r["_dir"])]  # with their artifacts
    shown = [m for m in methods if any(r["method"] == m for r in kept)][:MAX_MAPS]
    if not shown:
        return None
    note = _left_out(len(methods), len(verdicts))
    verdicts, strip = verdicts[:MAX_VERDICTS], methods[:MAX_STRIP]
    picked = {m: PICKS[pick]([r for r in kept if r["method"] == m]) for m in shown}
    fields = {m: load_fields(Path(picked[m]["_dir"])) for m in shown}
    maps = [m for m in shown if fields[m]["x"].shape[1] > 0]  # unknowns alone: none
    names = _field_names(fields[shown[0]], runs)[:MAX_FIELDS]
    profile = bool(maps) and _one_input(fields[maps[0]])
    traces = _traces(kept, shown)
    colour = {m: f"C{i % 10}" for i, m in enumerate(methods)}  # one per method
    judged = bool(verdicts)
    per_field = len(maps) + profile + 1  # maps, predicted vs true, every seed
    overall = judged + 1 + min(len(traces), MAX_UNKNOWNS)
    ncols = max(per_field, overall)
    last = max(3.6, ROW_INCHES * (len(verdicts) + 2) + 1.4) if judged else 3.6
    heights = [3.4] * len(names) + [last]
    fig, axs = plt.subplots(
        len(heights),
        ncols,
        figsize=(4.2 * ncols, sum(heights)),
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    for row, name in zip(axs, names):
        _maps(fig, row[: len(maps)], maps, fields, picked, pick, name)
        if profile:
            _profile(row[len(maps)], maps, fields, name, colour)
        _strip(row[len(maps) + profile], runs, strip, colour, name)
        for ax in row[per_field:]:
            ax.set_axis_off()
    bottom = list(axs[-1])
    if judged:
        _verdicts(bottom.pop(0), verdicts)
    _losses(bottom.pop(0), kept, shown, colour)
    for ax, (name, lines) in zip(bottom, list(traces.items())[:MAX_UNKNOWNS]):
        _unknown(ax, name, lines, colour)
    for ax in bottom[min(len(traces), MAX_UNKNOWNS) :]:
        ax.set_axis_off()
    fig.suptitle(runs[0]["case"] + (f"\n{note}" if note else ""))
    fig.tight_layout()
    return fig


def _left_out(methods: int, verdicts: int) -> str:
    """What a figure of ``methods`` and ``verdicts`` leaves to the tables, in
    words ("": nothing)."""
    parts = [
        text.format(cap=cap, n=n)
        for text, cap, n in (
            (
                "maps, predictions, losses and unknowns of the first {cap} of {n} "
                "methods",
                MAX_MAPS,
                methods,
            ),
            ("every seed of the first {cap} methods", MAX_STRIP, methods),
            ("the first {cap} of {n} verdicts", MAX_VERDICTS, verdicts),
        )  # fmt: skip
        if n > cap
    ]
    return "; ".join(parts) + " (the rest in the tables)" if parts else ""


def _field_names(f: dict, runs) -> list[str]:
    """The fields a figure draws a row for: those of ``fields.npz``; for the
    unknowns alone (no inputs), the metric sets of the records."""
    names = [str(n) for n in f["fields"]]
    if names:
        return names
    sets = metric_sets(runs[0]) if isinstance(runs[0].get("metrics"), dict) else {}
    return [k for k in sets if k != "Avg"][:1] or ["u"]


def _one_input(f: dict) -> bool:
    """Whether the field is drawn over one input (a line, not a map)."""
    return (
        f["axes"].shape[0] != 2
        and np.asarray(f["x"]).reshape(len(f["x"]), -1).shape[1] == 1
    )


def _column(f: dict, name: str) -> int | None:
    """The column of field ``name`` in a run's ``fields.npz`` (None: absent)."""
    names = [str(n) for n in f["fields"]]
    return names.index(name) if name in names else None


def _maps(fig, axs, methods, fields, picked, pick: str, name: str) -> None:
    """The picked seed's |error| of field ``name`` per method, one colour scale
    (and y-scale) for the row."""
    cols = {m: _column(fields[m], name) for m in methods}
    have = [m for m in methods if cols[m] is not None]
    if not have:
        return
    errors = {m: fields[m]["abs_error"][:, cols[m]] for m in have}
    norm = error_norm(list(errors.values()))
    for ax, m in zip(axs, methods):
        if m not in errors:
            ax.set_axis_off()
            continue
        error_panel(ax, fig, fields[m], errors[m], norm)
        ax.set_title(
            f"{m}: |error| of {name}\n({pick} seed, {picked[m]['seed']})", fontsize=9
        )
    lines = [ax for ax in axs if ax.get_lines()]  # 1-D panels: one y-scale
    if len(lines) > 1:
        low = min(ax.get_ylim()[0] for ax in lines)
        high = max(ax.get_ylim()[1] for ax in lines)
        for ax in lines:
            ax.set_ylim(low, high)


def _profile(ax, methods, fields, name: str, colour) -> None:
    """Field ``name`` over the one input: each method's picked seed predicted,
    the truth dashed (where a point repeats, the mean there)."""
    truth = None
    for m in methods:
        f, j = fields[m], _column(fields[m], name)
        if j is None:
            continue
        at, pred = point_means(f["x"], drawn(f["pred"][:, j], ax=ax))
        ax.plot(at, pred, lw=1.2, color=colour[m], label=m)
        truth = truth or point_means(f["x"], drawn(f["exact"][:, j], ax=ax))
    if truth is not None:
        ax.plot(*truth, "k--", lw=1, label="true")
    inputs = [str(n) for n in fields[methods[0]]["inputs"]]
    ax.set_xlabel(inputs[0] if inputs else "x")
    ax.set_title(f"{name}: predicted and true", fontsize=9)
    ax.legend(fontsize=7, loc="best")


def _strip(ax, runs, methods, colour, name: str | None = None) -> None:
    """Every seed's error of field ``name`` (None: the summary field) per
    method; the same seed joined across methods."""
    at = {m: i for i, m in enumerate(methods)}
    by_seed: dict[int, dict[str, float]] = {}
    for r in runs:
        e = _error(r, name)
        if e is not None and e > 0 and r["method"] in at:
            e = float(drawn(e, log=True, ax=ax))  # beyond the axis: at its edge
            by_seed.setdefault(r["seed"], {})[r["method"]] = e
    for errors in by_seed.values():
        order = sorted(errors, key=at.__getitem__)
        ax.plot(
            [at[m] for m in order],
            [errors[m] for m in order],
            color="0.7",
            lw=0.6,
            zorder=1,
        )
    for m, i in at.items():
        values = [e[m] for e in by_seed.values() if m in e]
        if not values:
            continue
        ax.scatter([i] * len(values), values, s=14, zorder=2, color=colour[m])
        geo = float(np.exp(np.mean(np.log(values))))
        ax.plot([i - 0.25, i + 0.25], [geo, geo], color="k", lw=1.5, zorder=3)
    log_y(ax, [e for errors in by_seed.values() for e in errors.values()])
    ax.set_xticks(range(len(methods)), methods, fontsize=8, rotation=20)
    key = name or _key(runs)
    ax.set_ylabel(f"{key} RMSE" if key else "RMSE")
    ax.set_title(f"{key}: every seed (grey: one seed; bar: geo. mean)", fontsize=9)


def _verdicts(ax, verdicts: Sequence[ForestRow]) -> None:
    """The summary's verdicts as a forest plot (each row names its field), with
    its legend below the axes, where it covers no row."""
    forest(
        ax,
        verdicts,
        title="verdicts: error ratio to the baseline",
        xlabel="RMSE ratio of the row's field (geometric mean, 95 % CI)",
    )
    ax.legend(
        handles=forest_legend(verdicts),
        fontsize=6,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18),
        ncol=2,
    )


def _key(runs) -> str | None:
    for r in runs:
        sets = metric_sets(r) if isinstance(r.get("metrics"), dict) else {}
        if sets:
            return summary_field(list(sets))
    return None


def _losses(ax, runs, methods, colour) -> None:
    """Total loss per method: geometric mean over seeds, min–max band."""
    for m in methods:
        curves = [load_loss(Path(r["_dir"]))[1] for r in runs if r["method"] == m]
        n = min(len(c) for c in curves)
        total = drawn([c[:n, 1] for c in curves], log=True, ax=ax)  # 0: not drawn
        steps = curves[0][:n, 0]
        ax.semilogy(
            steps,
            np.exp(np.log(total).mean(0)),
            label=f"{m} (geo. mean)",
            color=colour[m],
            marker="o" if n <= FEW_POINTS else None,  # e.g. L-BFGS alone
            ms=3,
        )
        ax.fill_between(steps, total.min(0), total.max(0), alpha=0.2, color=colour[m])
    ax.set_xlabel("step")
    ax.set_title("total loss, min–max over seeds", fontsize=9)
    ax.legend(fontsize=8)


def _traces(
    runs, methods
) -> dict[str, list[tuple[str, np.ndarray, np.ndarray, float | None]]]:
    """Per unknown: ``(method, steps, values, true value)`` of every run that
    kept its unknowns (``variables.csv``)."""
    out: dict[str, list] = {}
    for r in runs:
        table = load_variables(Path(r["_dir"]))
        if table is None or r["method"] not in methods:
            continue
        names, rows = table
        known = r.get("variables") if isinstance(r.get("variables"), dict) else {}
        for j, name in enumerate(names[1:], start=1):
            true = (
                known.get(name, {}).get("true")
                if isinstance(known.get(name), dict)
                else None
            )
            out.setdefault(name, []).append((r["method"], rows[:, 0], rows[:, j], true))
    return out


def _unknown(ax, name: str, lines, colour) -> None:
    """One unknown against the step: a thin line per seed, coloured by method;
    its true value dashed."""
    labelled = set()
    for method, steps, values, _ in lines:
        label = None if method in labelled else method
        labelled.add(method)
        values = drawn(values, ax=ax)
        ax.plot(steps, values, lw=0.8, color=colour.get(method), label=label)
    true = next((t for *_, t in lines if t is not None), None)
    if true is not None:
        at = drawn(true, ax=ax)
        ax.axhline(at, color="k", ls="--", lw=1, label=f"true {true:g}")
    ax.set_xlabel("step")
    ax.set_title(f"unknown {name}, every seed", fontsize=9)
    ax.legend(fontsize=8)
