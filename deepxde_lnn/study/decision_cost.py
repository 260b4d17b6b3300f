"""What deciding each undecided verdict would cost: the seeds it would likely
need (:attr:`~deepxde_lnn.analysis.stats.RatioCI.seeds_needed`, at the observed
spread) times what a run of each method costs today, in core-hours.

A run's cost is the median over its method's runs of
:func:`~deepxde_lnn.runs.cost.core_seconds` (its process's CPU seconds): the
core-seconds one more seed takes. A
verdict of ``n`` seeds that needs ``N`` costs ``(N - n) × (cost_A + cost_B)``;
for a device other than a CPU it is device time, not core time, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..analysis.stats import SEEDS_CAP, UNDECIDED, RatioCI
from ..analysis.table import BASELINE, Row
from ..runs.cost import core_seconds
from ..runs.records import escape
from .headline import Headline

__all__ = ["run_core_seconds", "decision_cost", "cost_section", "COST_HEADING"]

COST_HEADING = "## What deciding would cost"


def _timed(row: Row) -> tuple[list[dict], str]:
    """The runs whose time prices a seed, and their device: the CPU runs where
    there are any (this machine's cost), else the others."""
    cpu = [r for r in row.runs if r.get("device", "cpu") == "cpu"]
    if cpu:
        return cpu, "cpu"
    return list(row.runs), "/".join(sorted({r.get("device", "?") for r in row.runs}))


def run_core_seconds(row: Row) -> float | None:
    """The median :func:`~deepxde_lnn.runs.cost.core_seconds` of one run of
    ``row``'s method (device seconds where it ran only on another device); None:
    no run recorded its time."""
    found = [s for r in _timed(row)[0] if (s := core_seconds(r)) is not None]
    return float(np.median(found)) if found else None


def decision_cost(ci: RatioCI, a: Row, b: Row) -> tuple[int, float | None] | None:
    """The seeds ``ci`` would still need per method and their core-hours (None
    where the verdict is decided or no seed count would decide it; hours None
    where a run's time is unknown)."""
    if ci.verdict != UNDECIDED:
        return None
    needed = ci.seeds_needed
    if needed is None or needed > SEEDS_CAP:
        return None
    more = max(0, needed - max(ci.n_a, ci.n_b))
    sa, sb = run_core_seconds(a), run_core_seconds(b)
    if sa is None or sb is None:
        return more, None
    return more, more * (sa + sb) / 3600


def cost_section(rows: Sequence[Headline]) -> list[str]:
    """The report's table of the headline's undecided verdicts with what deciding
    each would cost, cheapest first (empty where none is undecided)."""
    found = []
    for h in rows:
        lnn, pinn, matched = (*h.rows, None, None, None)[:3]
        for ci, a in ((h.lnn, lnn), (h.matched, matched)):
            if ci is None or a is None or pinn is None:
                continue
            got = decision_cost(ci, a, pinn)
            if got is not None:
                key = got[1] if got[1] is not None else np.inf
                found.append((key, h, ci, a, pinn, got))
    if not found:
        return []
    lines = [
        COST_HEADING,
        "",
        "Each undecided verdict of the headlines with the seeds it would likely "
        "need at the spread observed so far, and what those runs would cost at "
        "the measured time per run (the median over the method's runs of its "
        "process's CPU seconds; the CPU runs where some ran on a CPU), cheapest "
        "first: core-hours, or a device's hours "
        "where a method ran only there.",
        "",
        "| case | field | configuration | comparison | seeds now | seeds needed "
        "| core-seconds per run (A / `pinn`) | hours for the seeds missing |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, h, ci, a, pinn, (more, hours) in sorted(found, key=lambda x: x[0]):
        per = [run_core_seconds(a), run_core_seconds(pinn)]
        per_text = " / ".join("—" if s is None else f"{s:.3g}" for s in per)
        device = _timed(a)[1]
        when = "—" if hours is None else f"{hours:.2g}"
        if device != "cpu":
            when += f" ({escape(device)} hours)"
        lines.append(
            f"| {escape(h.case)} | {escape(h.field)} | {h.group.short()} | "
            f"`{escape(a.method)}` / `{BASELINE}` | {max(ci.n_a, ci.n_b)} | "
            f"{max(ci.n_a, ci.n_b) + more} | {per_text} | {when} |"
        )
    return [*lines, ""]
