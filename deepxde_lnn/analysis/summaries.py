"""Tables and figures of folders of runs (never of live runs; one run's figures
are :mod:`.figures`').

* :func:`write_summary` — a folder of runs (``METHOD/seed-S/``): ``summary.csv``
  and ``summary.md`` with mean ± std (and median, min, max) over seeds per method
  and field, the paper-seed run as its own row, the paper's number beside it, the
  verdicts against the baseline (in words: :mod:`.verdict_text`; the records a
  call asked for: :mod:`.asked`), and one combined figure
  (:mod:`.summary_figure`). A learning-rate sweep's table is :mod:`.sweep`'s.

The numbers come from :mod:`deepxde_lnn.analysis.table`. Records and artifacts are read as
untrusted data (:mod:`deepxde_lnn.runs.records`): checked before use, every string
escaped in the markdown.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..config import record_problem
from ..problems.metrics import METRICS
from ..runs import atomic as aio
from ..runs.cost import cost
from ..runs.csvtext import formula_safe
from ..runs.errors import FolderError
from ..runs.folder import record_decay
from ..runs.records import escape, load_runs, metric_sets
from .asked import asked_runs
from .companions import companion_columns, companions, companions_rule
from .figures import plt_module
from .sequential import looks_of
from .stats import MARGIN
from .summary_figure import error_norm, summary_figure
from .table import (
    BASELINE,
    Row,
    method_order,
    rows,
    spread_text,
    timing_mark,
    timing_notes,
    timing_states,
    value,
)
from .verdict_text import Judged, forest_rows, judge, verdict_rule

__all__ = [
    "Summary",
    "write_summary",
    "build_summary",
    "one_problem",
    "summary_figure",
    "error_norm",
    "average_judged",
    "field_scales",
    "AVERAGE_SCALES",
]


def one_problem(runs: list[dict], name: str | None = None) -> str:
    """The name of the one problem of ``runs`` (``name``, or the first run's
    ``case``); ``FolderError`` naming a record of another problem."""
    name = name or runs[0]["case"]
    for r in runs:
        if r["case"] != name:
            raise FolderError(
                f"{Path(r['_dir']) / 'metrics.json'}: a run of {r['case']} among "
                f"runs of {name}; a summary holds one problem"
            )
    return name


@dataclass(frozen=True)
class Summary:
    """A compare's summary: the ``rows`` of ``summary.csv`` (per method, field and
    metric), the text of ``summary.md`` and its ``verdicts`` (:class:`Judged`;
    those against each baseline one family); ``excluded``: the records it
    left out, counted by why (:func:`asked_runs`); ``files``: those written
    (``summary.md``, ``summary.csv`` and, when there was a figure to draw,
    ``summary.png``)."""

    rows: list[dict]
    markdown: str
    verdicts: list[Judged]
    excluded: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()


def write_summary(
    root: str | Path,
    paper_seed: int | None = None,
    paper_table: dict | None = None,
    baseline: str | Sequence[str] = BASELINE,
    margin: float = MARGIN,
    asked: Sequence[Mapping] | None = None,
) -> Summary:
    """Aggregate the runs below ``root`` into ``summary.csv``, ``summary.md`` and
    ``summary.png``. Verdicts against the method ``baseline`` use ``margin`` and
    the looks of a sequential design in ``root``
    (:func:`deepxde_lnn.analysis.sequential.looks_of`). ``asked``: the identities
    of the runs a call asked for (:meth:`~deepxde_lnn.config.RunConfig.identity`):
    only their records are summarised, the others below ``root`` are named as
    excluded, with a note that this summary replaces any of theirs
    (:data:`REPLACED`; None: every record)."""
    root = Path(root)
    runs = load_runs(root, options=record_problem)
    excluded: list[str] = []
    if asked is not None:
        runs, excluded = asked_runs(runs, asked)
    if not runs:
        raise ValueError(f"no finished runs (metrics.json) below {root}")
    looks = looks_of(root)
    out = build_summary(
        runs, paper_seed, paper_table, baseline, margin, looks, excluded
    )
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(out.rows[0]))
    writer.writeheader()
    # text cells that a spreadsheet would run as formulas are quoted
    writer.writerows({k: formula_safe(v) for k, v in r.items()} for r in out.rows)
    table = aio.atomic_write_text(root / "summary.csv", buf.getvalue())
    text = aio.atomic_write_text(root / "summary.md", out.markdown)
    methods = list(dict.fromkeys(r["method"] for r in out.rows))
    figure = _summary_figure(root, runs, methods, out.verdicts)
    return replace(out, files=(text, table) + ((figure,) if figure else ()))


def build_summary(
    runs: list[dict],
    paper_seed: int | None = None,
    paper_table: dict | None = None,
    baseline: str | Sequence[str] = BASELINE,
    margin: float = MARGIN,
    looks: int = 1,
    excluded: Sequence[str] = (),
) -> Summary:
    """The :class:`Summary` of run records of one case: every metric set that
    all of them hold (:func:`deepxde_lnn.runs.records.metric_sets`), verdicts against
    the method ``baseline`` with ``margin`` over a design of ``looks`` looks;
    ``excluded`` names the records left out (:func:`asked_runs`)."""
    case = one_problem(runs)
    baselines = [baseline] if isinstance(baseline, str) else list(baseline)
    sets = [metric_sets(r) for r in runs]
    # extra sets (e.g. heat's FEM cross-check) only where every run has them
    fields = [f for f in sets[0] if all(f in s for s in sets)]
    tables = {
        b: {
            (row.method, fld): row
            for fld in fields
            for row in rows(runs, fld, b, margin, looks, paper_table)
        }
        for b in baselines
    }
    table = tables[baselines[0]]
    methods = sorted({m for m, _ in table}, key=method_order)
    out = [
        _csv_row(case, table[m, fld], metric, paper_seed)
        for m in methods
        for fld in fields
        for metric in (*METRICS, "train_seconds")
    ]
    # several baselines: each judges the methods that are not baselines
    subjects = [m for m in methods if len(baselines) == 1 or m not in baselines]
    judged = [f for f in fields if f != "Avg" or average_judged(runs, paper_table)]
    verdicts = [v for b, t in tables.items() for v in _family(t, subjects, judged, b)]
    text = _markdown(runs, out, methods, fields, paper_seed, verdicts, excluded)
    return Summary(out, text, verdicts, tuple(excluded))


#: the fields' scales (their truth's RMS) may differ this many times for their
#: mean ``Avg`` to be judged (beyond it, the largest field would decide it alone)
AVERAGE_SCALES = 10.0


def field_scales(runs: Sequence[dict]) -> dict[str, float]:
    """Each field's scale, the RMS of its truth: the median over ``runs`` of
    RMSE / relL2 (fields whose truth is zero, without relL2, left out)."""
    ratios: dict[str, list[float]] = {}
    for r in runs:
        for name, m in r["metrics"].items():
            if name != "Avg" and m.get("relL2"):
                ratios.setdefault(name, []).append(m["RMSE"] / m["relL2"])
    return {k: float(np.median(v)) for k, v in ratios.items()}


def average_judged(runs: Sequence[dict], paper_table: Mapping | None = None) -> bool:
    """Whether the mean over fields ``Avg`` gets a verdict: where the case's paper
    reports it (its table has ``Avg``), or where the fields' scales
    (:func:`field_scales`) lie within :data:`AVERAGE_SCALES` of each other.
    Otherwise it is a mean of errors of different sizes, which the largest
    decides; each field has its own verdict."""
    if any("Avg" in row for row in (paper_table or {}).values()):
        return True
    scales = [v for v in field_scales(runs).values() if v > 0]
    if len(scales) < len(set(_own_fields(runs))):  # a truth of zero: not known
        return True
    return max(scales) <= AVERAGE_SCALES * min(scales)


def _own_fields(runs) -> list[str]:
    return [k for r in runs for k in r["metrics"] if k != "Avg"]


def _family(table: dict, methods, fields, baseline: str) -> list[Judged]:
    """The verdicts of ``table``'s rows against ``baseline`` (one family), each
    with its robust companions and both networks' training time beside it."""
    found = [
        (m, fld, table[m, fld].ci)
        for m in methods
        for fld in fields
        if (m, fld) in table and table[m, fld].ci is not None
    ]
    beside = {
        (m, fld): companions(table[m, fld], table[baseline, fld], baseline)
        + "; "
        + _times(table[m, fld], table[baseline, fld])
        for m, fld, _ in found
    }
    return judge(found, baseline, beside)


def _times(row: Row, base: Row) -> str:
    """What each network's error cost: its median training time per run."""

    def median(r: Row) -> str:
        s = r.stats.get("train_seconds")
        return "?" if s is None else f"{s['median']:.3g} s{timing_mark(r.timing)}"

    return (
        f"time per run {escape(row.method)} {median(row)}, "
        f"{escape(base.method)} {median(base)} (median)"
    )


# a metric no run of a row holds as a number (a zero truth's relL2)
_NO_STATS = dict.fromkeys(("mean", "std", "median", "min", "max"), None) | {"n": 0}


def _csv_row(case: str, row: Row, metric: str, paper_seed: int | None) -> dict:
    """One line of ``summary.csv``: ``row``'s statistics of ``metric``, the run of
    the paper's seed and the paper's number; on the RMSE line the robust
    companions of its verdict (P(below the baseline) and its interval, failed
    seeds)."""
    seed_run = [r for r in row.runs if r["seed"] == paper_seed]
    return {
        "case": case,
        "method": row.method,
        "field": row.field,
        "metric": metric,
        **row.stats.get(metric, _NO_STATS),
        "seeds": " ".join(str(s) for s in row.seeds),
        "paper_seed_run": (value(seed_run[0], row.field, metric) if seed_run else None),
        "paper": row.paper.get(metric),
        **companion_columns(row, metric == "RMSE"),
    }


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.3e}"


def _markdown(runs, rows, methods, fields, paper_seed, verdicts, excluded=()) -> str:
    r0 = {k: escape(v) if isinstance(v, str) else v for k, v in runs[0].items()}
    looks = verdicts[0].ci.looks if verdicts else 1
    baselines = list(dict.fromkeys(v.baseline for v in verdicts))
    left_out = []  # the records below the folder that were not asked for
    if excluded:
        text = f"Excluded (not asked for, never pooled): {', '.join(excluded)}."
        left_out = [text, "", REPLACED, ""]
    lines = [
        f"# {r0['case']}: " + " vs ".join(map(escape, methods)),
        "",
        _training(r0)
        + f", {r0['dtype']}, device {r0['device']} ({r0.get('device_name', '')}). "
        "Mean ± sample std over seeds; metrics in float64 on "
        f"{r0['grid_points']} points."
        + (PAPER_NOTE if any(r["paper"] is not None for r in rows) else ""),
        "",
        *left_out,
    ]
    if verdicts:  # one method alone, or no baseline asked for: nothing judged
        rule = verdict_rule(
            verdicts[0].ci.margin,
            looks,
            baselines[0] if len(baselines) == 1 else baselines,
        )
        lines += [rule, ""]
    lines += _per_function(runs, methods)
    lines += _networks(runs, methods)
    marks = {m: timing_mark(_states(runs, m)) for m in methods}
    get = {(r["method"], r["field"], r["metric"]): r for r in rows}
    for fld in fields:
        lines += [f"## {escape(fld)}", ""]
        head = "| method | seeds | " + " | ".join(METRICS) + " | train s |"
        lines += [head, "|" + "---|" * (len(METRICS) + 3)]
        for m in methods:
            cells = [spread_text(get[(m, fld, k)]) for k in (*METRICS, "train_seconds")]
            cells[-1] += marks[m]
            lines.append(
                f"| {escape(m)} | {get[(m, fld, 'RMSE')]['n']} | "
                + " | ".join(cells)
                + " |"
            )
        for m in methods:
            s = get[(m, fld, "RMSE")]
            if s["paper_seed_run"] is not None:
                cells = [
                    _fmt(get[(m, fld, k)]["paper_seed_run"])
                    for k in (*METRICS, "train_seconds")
                ]
                lines.append(
                    f"| {escape(m)}, seed {paper_seed} | 1 | "
                    + " | ".join(cells)
                    + " |"
                )
        for m in methods:
            if get[(m, fld, "RMSE")]["paper"] is not None:
                cells = [
                    _fmt(get[(m, fld, k)]["paper"]) for k in (*METRICS, "train_seconds")
                ]
                lines.append(f"| {escape(m)}, paper | 1 | " + " | ".join(cells) + " |")
        lines.append("")
    for b in baselines:
        title = "## Verdict" + (f" against {escape(b)}" if len(baselines) > 1 else "")
        lines += [title, ""]
        lines += [f"- {v.line}" for v in verdicts if v.baseline == b]
        lines.append("")
    if verdicts:
        lines += [companions_rule(), ""]
    if "Avg" in fields and not any(v.field == "Avg" for v in verdicts):
        lines += [_unjudged_average(runs), ""]
    return "\n".join(lines)


def _unjudged_average(runs) -> str:
    """Why the mean over fields has no verdict: the fields' scales."""
    scales = field_scales(runs)
    shown = ", ".join(f"{escape(k)} {v:.3g}" for k, v in scales.items())
    return (
        "Avg (the mean of the fields' errors) has no verdict: the fields' scales "
        f"(the RMS of each truth: {shown}) differ by more than "
        f"×{AVERAGE_SCALES:g}, so the largest field would decide it alone; each "
        "field is judged on its own."
    )


def _per_function(runs, methods) -> list[str]:
    """For operator learning (runs recording ``relL2_mean_per_function``): which
    relL2 the tables give, and DeepXDE's (the mean of each function's relL2),
    median over seeds per method and field."""
    key = "relL2_mean_per_function"
    have = [r for r in runs if isinstance(r.get(key), dict)]
    if not have:
        return []
    parts = []
    for m in methods:
        per: dict[str, list[float]] = {}
        for r in have:
            if r["method"] == m:
                for fld, v in r[key].items():
                    if isinstance(v, (int, float)) and np.isfinite(v):
                        per.setdefault(fld, []).append(v)
        parts += [
            f"{escape(m)} {escape(fld)} {np.median(v):.3e}" for fld, v in per.items()
        ]
    return [
        "relL2 in the tables is over all functions' values together; DeepXDE's "
        "operator metric, the mean of each function's relL2 (median over seeds): "
        + ", ".join(parts)
        + ".",
        "",
    ]


def _networks(runs, methods) -> list[str]:
    """Each method's network: its parameters and time per step (the median over
    its seeds; stacked seeds: the stack's step over its seeds)."""
    lines = ["| method | network | parameters | ms/step |", "|---|---|---|---|"]
    for m in methods:
        mine = [r for r in runs if r["method"] == m]
        params = sorted({r["parameters"] for r in mine})
        steps = [c.step_seconds for c in map(cost, mine) if c.step_seconds is not None]
        per_step = f"{np.median(steps) * 1e3:.3g}" if steps else "—"
        net = escape(mine[0].get("network", "")) if mine else ""
        count = " / ".join(map(str, params))
        mark = timing_mark(_states(runs, m))
        lines.append(f"| {escape(m)} | {net} | {count} | {per_step}{mark} |")
    notes = timing_notes(timing_states(r for r in runs if r["method"] in methods))
    # the marks' sentences hold for every time in the summary (tables, verdicts)
    return [*lines, "", *([" ".join(notes), ""] if notes else [])]


def _states(runs, method: str) -> tuple[str, ...]:
    """The flagged timing states of ``method``'s runs."""
    return timing_states(r for r in runs if r["method"] == method)


#: under the records a summary left out: it replaced any summary of theirs
REPLACED = (
    "This summary holds this call's runs alone and replaces any earlier summary "
    "in this folder; to summarise runs of one configuration together, compare "
    "all their methods and seeds in one call (finished runs are reused, not "
    "trained again)."
)

PAPER_NOTE = (
    " 'paper' = the paper's single-seed number (its own protocol, hardware and seed)."
)


def _training(r0: dict) -> str:
    """How the runs were trained, as the summary's header says it."""
    if r0["lr"] is None:  # the user's own function (train=)
        return (
            f"Trained by your function `{r0.get('training', 'train(net)')}` "
            f"({r0.get('optimizer', '')}; seed {r0['seed']}: {r0['steps']} steps)"
        )
    out = (
        f"Profile `{r0['profile']}`, {r0['iterations']} iterations, lr {r0['lr']:g}"
        + _schedule(r0)
    )
    if r0.get("initialization"):  # the package's choices, beside the user's own
        out += f"; initialisation {r0['initialization']}"
    if r0.get("resampling"):
        out += f"; {r0['resampling']}"
    return out


def _schedule(record: dict) -> str:
    decay = record_decay(record)
    return "" if decay is None else " with decay (" + ", ".join(map(str, decay)) + ")"


def _summary_figure(
    root: Path, runs, methods, verdicts: Sequence[Judged] = ()
) -> Path | None:
    """``summary.png``, or None when there is nothing to draw."""
    plt = plt_module()
    fig = summary_figure(runs, methods, forest_rows(verdicts))
    if fig is None:  # every run pruned to its record: nothing to draw
        return None
    path = aio.save_figure(root / "summary.png", fig, dpi=110)
    plt.close(fig)
    return path
