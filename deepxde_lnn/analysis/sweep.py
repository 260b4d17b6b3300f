"""A learning-rate sweep folder (``lr-X/METHOD/seed-S``): ``sweep.md`` and ``sweep.png``."""

from __future__ import annotations

from pathlib import Path

from ..config import record_problem
from ..problems.metrics import summary_field
from ..runs import atomic as aio
from ..runs.names import lr_text
from ..runs.records import escape, load_runs
from .figures import drawn, plt_module
from .stats import MARGIN
from .summaries import one_problem
from .table import (
    BASELINE,
    Row,
    ci_text,
    judged,
    method_order,
    rows,
    spread_text,
    timing_mark,
    timing_notes,
    timing_states,
)
from .verdict_text import verdict_rule

__all__ = ["sweep_table", "sweep_figure"]


def sweep_table(
    root: str | Path, margin: float = MARGIN, baseline: str = BASELINE
) -> str:
    """``sweep.md`` for a learning-rate sweep folder (``lr-X/METHOD/seed-S``): per lr
    and method, mean ± std over seeds of the final loss J and the first field's
    RMSE, relL2 and MaxErr (the 8-field average where there is one), and the
    verdict against ``baseline`` at the same lr (where the sweep ran it; each
    learning rate's verdicts are one family)."""
    root = Path(root)
    runs = load_runs(root, options=record_problem)
    if not runs:
        raise ValueError(f"no finished runs below {root}")
    key = summary_field(list(runs[0]["metrics"]))
    base = escape(baseline)
    lines = [
        f"# {escape(one_problem(runs))}: learning-rate sweep ({escape(key)})",
        "",
        verdict_rule(margin, baseline=baseline),
        "",
        "| lr | method | seeds | J(final) | RMSE | relL2 | MaxErr | train s "
        f"| RMSE / {base} (95 % CI) | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_lr: dict[float, list[dict]] = {}
    for r in runs:
        by_lr.setdefault(r["lr"], []).append(r)
    tables = {lr: rows(by_lr[lr], key, baseline, margin) for lr in sorted(by_lr)[::-1]}
    for lr, table in tables.items():
        texts = judged([row.ci for row in table])
        for row, verdict in zip(table, texts):
            cells = [
                spread_text(row.stats.get(k))
                for k in ("J", "RMSE", "relL2", "MaxErr", "train_seconds")
            ]
            cells[-1] += timing_mark(row.timing)
            cells += [ci_text(row.ci), verdict]
            lines.append(
                f"| {lr_text(lr)} | {escape(row.method)} | {row.n} | "
                + " | ".join(cells)
                + " |"
            )
    notes = timing_notes(timing_states(runs))
    lines += ["", " ".join(notes)] if notes else []
    text = "\n".join(lines) + "\n"
    aio.atomic_write_text(root / "sweep.md", text)
    sweep_figure(root, tables, key)
    return text


def sweep_figure(root: Path, tables: dict[float, list[Row]], key: str) -> Path:
    """``sweep.png``: RMSE against the learning rate per method, mean ± std over
    seeds (log-log)."""
    plt = plt_module()
    fig, ax = plt.subplots(figsize=(6, 4))
    found = {row.method for table in tables.values() for row in table}
    for m in sorted(found, key=method_order):
        points = sorted(
            (lr, row.stats["RMSE"])
            for lr, table in tables.items()
            for row in table
            if row.method == m and "RMSE" in row.stats  # none: every seed failed
        )
        lrs = [lr for lr, _ in points]
        mean = drawn([s["mean"] for _, s in points], log=True, ax=ax)
        std = drawn([s["std"] for _, s in points], ax=ax)
        ax.errorbar(lrs, mean, yerr=std, marker="o", capsize=3, label=m)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel(f"{key} RMSE (mean ± std over seeds)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = aio.save_figure(root / "sweep.png", fig, dpi=110)
    plt.close(fig)
    return path
