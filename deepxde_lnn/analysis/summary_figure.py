"""``summary.png``: what a comparison found, every seed visible.

One row of panels, drawn from the run folders (never live runs):

* per method, the ``|error|`` of its **worst seed** (the largest error of the
  summary field), on one logarithmic colour scale for all (:func:`error_norm`);
  over several fields, the mean of their ``|error|`` (the title says so); 1-D
  panels share one y-scale;
* **every seed's error**: one point per seed and method (log scale), the same
  seed joined by a line across methods (paired seeds), the geometric mean marked;
* the **verdicts**, where the summary states some: one row per verdict (network
  against baseline on a field), the error ratio and its interval as a forest
  plot (:mod:`.forest`: log axis, the equivalence band shaded, coloured by
  verdict, open where Holm's adjustment changes it);
* the loss histories (geometric mean over seeds, min–max band);
* for a problem with unknowns (``variables.csv``), each unknown against the step,
  one thin line per seed, its true value dashed.

Runs kept as their record alone (pruned artifacts) count in the strip only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..problems.metrics import summary_field
from ..runs.records import is_pruned, metric_sets
from .figures import error_panel, load_fields, load_loss, load_variables, plt_module
from .forest import ROW_INCHES, ForestRow, forest, forest_legend

__all__ = ["summary_figure", "error_norm", "worst_seed"]

MAX_UNKNOWNS = 4  # panels of unknowns drawn (the rest are in variables.csv)


def error_norm(errors: list[np.ndarray], decades: float = 6.0):
    """One logarithmic colour scale for several |error| maps, so that a map ten
    times worse is one decade brighter: from the largest value over all maps down
    to the 1st percentile of the positive ones (the few points where an error
    changes sign do not stretch it), at most ``decades`` below the top."""
    from matplotlib.colors import LogNorm

    values = np.concatenate([np.ravel(e) for e in errors])
    values = values[np.isfinite(values) & (values > 0)]
    if not values.size:
        return LogNorm(vmin=10**-decades, vmax=1.0)
    top = float(values.max())
    low = float(np.percentile(values, 1))
    return LogNorm(vmin=max(low, top * 10**-decades), vmax=top)


def _error(run: dict) -> float | None:
    """The RMSE of a run's summary field (None: a record without metrics)."""
    sets = metric_sets(run) if isinstance(run.get("metrics"), dict) else {}
    if not sets:
        return None
    return sets[summary_field(list(sets))].get("RMSE")


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
    drawn = [r for r in runs if not is_pruned(r["_dir"])]
    shown = [m for m in methods if any(r["method"] == m for r in drawn)]
    if not shown:
        return None
    worst = {m: PICKS[pick]([r for r in drawn if r["method"] == m]) for m in shown}
    fields = {m: load_fields(Path(worst[m]["_dir"])) for m in shown}
    maps = [m for m in shown if fields[m]["x"].shape[1] > 0]  # unknowns alone: none
    traces = _traces(drawn, shown)
    colour = {m: f"C{i % 10}" for i, m in enumerate(methods)}  # one per method
    strip = any(_error(r) is not None for r in runs)
    judged = bool(verdicts)
    ncols = len(maps) + strip + judged + 1 + min(len(traces), MAX_UNKNOWNS)
    height = max(3.6, ROW_INCHES * (len(verdicts) + 2) + 1.4)
    fig, axs = plt.subplots(1, ncols, figsize=(4.2 * ncols, height), squeeze=False)
    axs = list(axs[0])
    _maps(fig, axs[: len(maps)], maps, fields, worst, pick)
    axs = axs[len(maps) :]
    if strip:
        _strip(axs.pop(0), runs, methods, colour)
    if judged:
        _verdicts(axs.pop(0), verdicts, _key(runs))
    _losses(axs.pop(0), drawn, shown, colour)
    for ax, (name, lines) in zip(axs, list(traces.items())[:MAX_UNKNOWNS]):
        _unknown(ax, name, lines, colour)
    fig.suptitle(runs[0]["case"])
    fig.tight_layout()
    return fig


def _maps(fig, axs, methods, fields, worst, pick: str) -> None:
    """The picked seed's |error| per method, one colour scale (and y-scale)."""
    if not methods:
        return
    errors = {m: fields[m]["abs_error"].mean(axis=1) for m in methods}
    norm = error_norm(list(errors.values()))
    for ax, m in zip(axs, methods):
        error_panel(ax, fig, fields[m], errors[m], norm)
        names = [str(n) for n in fields[m]["fields"]]
        what = "|error|" if len(names) == 1 else f"mean |error| of {', '.join(names)}"
        ax.set_title(f"{m}: {what}\n({pick} seed, {worst[m]['seed']})", fontsize=9)
    lines = [ax for ax in axs if ax.get_lines()]  # 1-D panels: one y-scale
    if len(lines) > 1:
        low = min(ax.get_ylim()[0] for ax in lines)
        high = max(ax.get_ylim()[1] for ax in lines)
        for ax in lines:
            ax.set_ylim(low, high)


def _strip(ax, runs, methods, colour) -> None:
    """Every seed's error per method; the same seed joined across methods."""
    at = {m: i for i, m in enumerate(methods)}
    by_seed: dict[int, dict[str, float]] = {}
    for r in runs:
        e = _error(r)
        if e is not None and e > 0 and r["method"] in at:
            by_seed.setdefault(r["seed"], {})[r["method"]] = e
    for errors in by_seed.values():
        order = sorted(errors, key=at.get)
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
    ax.set_yscale("log")
    ax.set_xticks(range(len(methods)), methods, fontsize=8, rotation=20)
    key = _key(runs)
    ax.set_ylabel(f"{key} RMSE" if key else "RMSE")
    ax.set_title("every seed (grey: the same seed; bar: geo. mean)", fontsize=9)


def _verdicts(ax, verdicts: Sequence[ForestRow], key: str | None) -> None:
    """The summary's verdicts as a forest plot, with its legend."""
    forest(
        ax,
        verdicts,
        title="verdicts: error ratio to the baseline",
        xlabel=f"{key or 'RMSE'} RMSE ratio (geometric mean, 95 % CI)",
    )
    ax.legend(handles=forest_legend(verdicts), fontsize=6, loc="best")


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
        total = np.array([c[:n, 1] for c in curves])
        steps = curves[0][:n, 0]
        ax.semilogy(
            steps,
            np.exp(np.log(total).mean(0)),
            label=f"{m} (geo. mean)",
            color=colour[m],
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
        ax.plot(steps, values, lw=0.8, color=colour.get(method), label=label)
    true = next((t for *_, t in lines if t is not None), None)
    if true is not None:
        ax.axhline(true, color="k", ls="--", lw=1, label=f"true {true:g}")
    ax.set_xlabel("step")
    ax.set_title(f"unknown {name}, every seed", fontsize=9)
    ax.legend(fontsize=8)
