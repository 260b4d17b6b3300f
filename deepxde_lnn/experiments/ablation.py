"""When do the liquid blocks help? Variants of the LNN and of its plain twin, each
trained over seeds, step-matched and time-matched, in one table.

Variants (method names with options, :mod:`deepxde_lnn.problems.methods`):

* ``lnn``: the paper's block (``alpha_init`` 0.5, the case's layout, width 64);
* ``lnn:alpha_init=0``: every block the identity at the start;
* ``lnn:layout=...``: the other layout (``standard`` <-> ``reduced``);
* ``lnn:width=32``, ``lnn:width=98``: narrower and wider;
* ``rezero``: the blocks with one scalar ``alpha`` each, initialised to 0 (ReZero);
* ``pinn``, ``pinn:width=32``, ``pinn-matched``: the plain MLP at width 64, 32 and
  at the LNN's parameter count.

Every row's error is compared with ``pinn`` of the same budget (geometric-mean
RMSE ratio over seeds with a 95 % interval, paired by seed) and judged "better",
"worse", "equivalent within ×m" or "undecided" (:mod:`deepxde_lnn.analysis.stats`); each
column's verdicts are one family, with Holm's adjustment shown where it differs.
"""

from __future__ import annotations

from pathlib import Path

from ..analysis.sequential import looks_of
from ..analysis.stats import MARGIN
from ..analysis.summaries import one_case, verdict_rule
from ..analysis.table import (
    BASELINE,
    MATCHED,
    SUBJECT,
    Row,
    ci_text,
    judged,
    method_order,
    rows,
    timing_notes,
)
from ..config import record_problem
from ..problems.case import Case
from ..runs.records import escape, load_runs

__all__ = ["variants", "table", "BUDGETS"]

BUDGETS = ("steps", "time")


def variants(case: Case) -> list[str]:
    other = "reduced" if case.nets.lnn_layout == "standard" else "standard"
    lnn, pinn = SUBJECT, BASELINE
    return [
        lnn,
        f"{lnn}:alpha_init=0",
        f"{lnn}:layout={other}",
        f"{lnn}:width=32",
        f"{lnn}:width=98",
        "rezero",
        pinn,
        f"{pinn}:width=32",
        MATCHED,
    ]


def _column(root: Path, case: Case, field: str, margin: float) -> dict[str, tuple]:
    """One budget's column: per method, its :class:`~deepxde_lnn.analysis.table.Row` and
    its verdict cell (one family: Holm over the column)."""
    runs = load_runs(root, options=record_problem) if root.exists() else []
    if runs:
        one_case(runs, case.name)
    table = rows(runs, field, BASELINE, margin, looks_of(root))
    texts = judged([row.ci for row in table])
    return {row.method: (row, _verdict(row, text)) for row, text in zip(table, texts)}


def _verdict(row: Row, text: str) -> str:
    if row.method == BASELINE:
        return "baseline"
    return "—" if row.ci is None else f"{ci_text(row.ci)} {text}"


def table(root: str | Path, case: Case, margin: float = MARGIN) -> str:
    """The ablation table (markdown) from ``root/steps`` and ``root/time``."""
    root = Path(root)
    lines = [f"# Ablation: {case.name}", ""]
    lines += [
        "Geometric-mean RMSE over seeds, and the ratio to `pinn` of the same "
        "budget with its interval and verdict. *steps*: every variant the same "
        "number of steps; *time*: the same training seconds (the `lnn` time for "
        "the profile's steps). "
        + verdict_rule(margin)
        + " Each column's verdicts are one family: where Holm's adjustment for "
        "their number changes a verdict, it follows in brackets.",
        "",
    ]
    for field in case.fields:
        cols = {b: _column(root / b, case, field, margin) for b in BUDGETS}
        names = sorted({*cols["steps"], *cols["time"]}, key=method_order)
        lines += [f"## {field}", ""]
        lines += [
            "| variant | parameters | s/step | seeds | RMSE (steps) | vs pinn (steps) "
            "| steps taken (time) | RMSE (time) | vs pinn (time) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [_line(cols["steps"].get(m), cols["time"].get(m)) for m in names]
        shown = [(cols["steps"].get(m) or cols["time"][m])[0] for m in names]
        notes = timing_notes(k for row in shown for k in row.timing)  # s/step's
        lines += ["", *([" ".join(notes), ""] if notes else []), _family_line(cols), ""]
    return "\n".join(lines)


def _line(steps: tuple | None, time: tuple | None) -> str:
    """One variant's line: its (row, verdict) in the step and time columns."""
    ref = (steps or time)[0]
    line = (
        f"| `{escape(ref.method)}` | {' / '.join(f'{p:,}' for p in ref.parameters)} "
        f"| {ref.s_per_step_text} | {ref.n} | "
    )
    if steps:
        line += f"{steps[0].rmse_geomean:.3e} | {steps[1]} | "
    else:
        line += "— | — | "
    if time:
        row, verdict = time
        line += (
            f"{row.stats['steps']['mean']:.0f} | {row.rmse_geomean:.3e} | {verdict} |"
        )
    else:
        line += "— | — | — |"
    return line


def _family_line(cols: dict) -> str:
    """How many verdicts each column (family) holds."""
    n = {b: sum(row.ci is not None for row, _ in cols[b].values()) for b in cols}
    return "Verdicts per family: " + ", ".join(f"{n[b]} ({b})" for b in cols) + "."
