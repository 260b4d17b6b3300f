"""A verdict in words: the lines of summary.md (the adjusted verdict first where Holm changed it), the paragraph that says how verdicts are reached, and the rows of a forest plot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..runs.records import escape
from .forest import ForestRow
from .stats import LEVEL, RatioCI, holm
from .table import BASELINE, CONVERGENCE_RULE

__all__ = ["verdict_lines", "Judged", "judge", "verdict_rule", "forest_rows"]


def verdict_lines(
    found, baseline: str = BASELINE, metric: str = "RMSE", beside=None
) -> list[str]:
    """One line per verdict ``(method, field, ci)`` of ``found`` (one family), with
    Holm's adjusted verdict where it differs; ``beside``: ``{(method, field):
    text}`` appended to a verdict's line (its robust companions)."""
    adjusted = holm([ci for _, _, ci in found], LEVEL)
    return [
        _verdict_line(m, fld, ci, adj, len(found), baseline, metric, beside)
        for (m, fld, ci), adj in zip(found, adjusted)
    ]


def _verdict_line(m, fld, ci, adj, n, baseline, metric="RMSE", beside=None) -> str:
    beside = beside or {}
    said = ci.describe(escape(m), escape(baseline), adj, n)
    return f"{escape(fld)} {metric}: {said}" + (
        f"; {beside[m, fld]}" if (m, fld) in beside else ""
    )


@dataclass(frozen=True)
class Judged:
    """One verdict of a summary: ``method`` against ``baseline`` on ``field``, its
    interval ``ci``, the verdict of its family (``adjusted``: Holm's over the
    verdicts against that baseline; the one that counts) and its ``line`` as
    ``summary.md`` says it."""

    method: str
    baseline: str
    field: str
    ci: RatioCI
    adjusted: str
    line: str


def judge(found, baseline: str, beside=None) -> list[Judged]:
    """The verdicts ``(method, field, ci)`` of ``found``, one family against
    ``baseline``, each with Holm's adjustment and its line."""
    adjusted = holm([ci for _, _, ci in found], LEVEL)
    return [
        Judged(
            m,
            baseline,
            fld,
            ci,
            adj,
            _verdict_line(m, fld, ci, adj, len(found), baseline, beside=beside),
        )
        for (m, fld, ci), adj in zip(found, adjusted)
    ]


def verdict_rule(
    margin: float, looks: int = 1, baseline: str | Sequence[str] = BASELINE
) -> str:
    """How the verdicts were reached, in one paragraph (summaries, tables);
    several baselines: each one's verdicts are one family."""
    m = f"{margin:g}"
    several = not isinstance(baseline, str)
    named = (
        " and to ".join(f"`{escape(b)}`" for b in baseline)
        if several
        else f"`{escape(baseline)}`"
    )
    text = (
        f"Verdicts on the geometric-mean RMSE ratio to {named} over "
        f"seeds, with a {LEVEL:.0%} Student-t interval on log errors (paired over "
        "common seeds, otherwise Welch): 'better' / 'worse' when the whole interval "
        f"lies below / above 1, 'equivalent within ×{m}' when it lies inside "
        f"[1/{m}, {m}] (margin ×{m}), otherwise 'undecided', with the seeds that "
        "would likely decide it at the observed spread. " + CONVERGENCE_RULE
    )
    text += (
        " The verdicts against each baseline are one family, with Holm's "
        "adjustment in brackets where it changes one (the verdict that counts)."
        if several
        else ""
    )
    if looks > 1:
        text += (
            f" Seeds were added until decided over {looks} looks: each interval "
            f"has level {1 - (1 - LEVEL) / looks:.4g} (Bonferroni over the looks)."
        )
    return text


def forest_rows(verdicts: Sequence[Judged]) -> list[ForestRow]:
    """A summary's verdicts as the rows of a forest plot (:mod:`.forest`): one per
    verdict, ``METHOD / BASELINE: FIELD``; several baselines: one section each."""
    several = len({v.baseline for v in verdicts}) > 1
    return [
        ForestRow(
            f"{v.method} / {v.baseline}: {v.field}",
            v.ci,
            v.adjusted,
            f"against {v.baseline}" if several else "",
        )
        for v in verdicts
    ]
