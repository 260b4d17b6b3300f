"""When do the liquid blocks help, and why? Variants of the LNN and of its plain
twin, each trained over seeds, step-matched and time-matched, in one table.

Variants (method names with options, :mod:`deepxde_lnn.problems.methods`), each
separating one explanation of what the block does:

* ``lnn``: the paper's block ``h + alpha * tanh(A h + c)`` (``alpha_init`` 0.5,
  the case's layout, width 64);
* ``pinn-matched``: the plain MLP of the LNN's parameter count (is it the size?);
* ``lnn:alpha_init=0``: every block the identity at the start (is it the start?);
* ``lnn:train_alpha=false``: the gates fixed at 0.5 (is it the trained gate?);
* ``lnn:residual=false``: the blocks without their identity path, ``alpha *
  tanh(A h + c)`` (is it the residual path?);
* ``lnn:blocks=...``: blocks on the first half of the hidden layers only (is it
  how many, or where?);
* ``lnn:block_activation=sin``: another block activation (is it tanh's shape?);
* ``lnn:layout=...``: the other layout (``standard`` <-> ``reduced``);
* ``pinn``: the plain MLP, the baseline.

``lnn:width=32``, ``lnn:width=98``, ``rezero`` and ``pinn:width=32`` remain
available through ``methods=``.

Every row's error is compared with ``pinn`` of the same budget (geometric-mean
RMSE ratio over seeds with a 95 % interval, paired by seed) and judged "better",
"worse", "equivalent within ×m" or "undecided" (:mod:`deepxde_lnn.analysis.stats`); each
column's verdicts are one family, with Holm's adjustment shown where it differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.figures import plt_module
from ..analysis.sequential import looks_of
from ..analysis.stats import MARGIN
from ..analysis.summaries import one_problem
from ..analysis.summary_figure import summary_figure
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
from ..analysis.verdict_text import verdict_rule
from ..config import record_problem
from ..runs import atomic
from ..runs.names import BUDGETS
from ..runs.records import escape, load_runs

if TYPE_CHECKING:  # the table is built without torch (the report's promise)
    from ..problems.case import Case

__all__ = ["variants", "table", "figure", "BUDGETS", "TABLE", "FIGURE"]

#: the ablation's table and figure in its folder (the table marks the folder)
TABLE, FIGURE = "ablation.md", "ablation.png"


def variants(case: Case) -> list[str]:
    """The default variants of the module's docstring for ``case``."""
    other = "reduced" if case.trunk.lnn_layout == "standard" else "standard"
    half = "+".join(map(str, range(max(1, len(case.trunk.hidden) // 2))))
    lnn = SUBJECT
    return [
        lnn,
        BASELINE,
        MATCHED,
        f"{lnn}:alpha_init=0",
        f"{lnn}:train_alpha=false",
        f"{lnn}:residual=false",
        f"{lnn}:blocks={half}",
        f"{lnn}:block_activation=sin",
        f"{lnn}:layout={other}",
    ]


def _column(root: Path, case: str, field: str, margin: float) -> dict[str, tuple]:
    """One budget's column: per method, its :class:`~deepxde_lnn.analysis.table.Row` and
    its verdict cell (one family: Holm over the column)."""
    runs = load_runs(root, options=record_problem) if root.exists() else []
    if runs:
        one_problem(runs, case)
    table = rows(runs, field, BASELINE, margin, looks_of(root))
    texts = judged([row.ci for row in table])
    return {row.method: (row, _verdict(row, text)) for row, text in zip(table, texts)}


def _verdict(row: Row, text: str) -> str:
    if row.method == BASELINE:
        return "baseline"
    return "—" if row.ci is None else f"{ci_text(row.ci)} {text}"


def table(
    root: str | Path, case: str, fields: Sequence[str], margin: float = MARGIN
) -> str:
    """The ablation table (markdown) of case ``case`` on its ``fields`` from
    ``root/steps`` and ``root/time``."""
    root = Path(root)
    lines = [f"# Ablation: {escape(case)}", ""]
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
    for field in fields:
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
    either = steps or time
    assert either is not None  # a variant is in one column at least
    ref = either[0]
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


def figure(root: str | Path) -> Path | None:
    """``root/ablation.png`` from the step-matched runs (``root/steps``): per
    variant the |error| map of its median seed (one colour scale), every seed's
    error and the total loss over the steps; None where no run kept its fields."""
    root = Path(root)
    steps = root / "steps"
    runs = load_runs(steps, options=record_problem) if steps.exists() else []
    methods = sorted({r["method"] for r in runs}, key=method_order)
    fig = summary_figure(runs, methods, pick="median") if runs else None
    if fig is None:
        return None
    path = atomic.save_figure(root / FIGURE, fig, dpi=90)
    plt_module().close(fig)
    return path
