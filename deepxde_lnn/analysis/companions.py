"""The statistics shown beside every verdict, in one table: each output (the
verdict line of ``summary.md`` and the console, ``summary.csv``, the report's field
tables and headline, the reading guides) takes its columns from :data:`COMPANIONS`.

A verdict (the geometric-mean RMSE ratio and its interval,
:mod:`deepxde_lnn.analysis.stats`) rests on log-normal errors; its companions do
not:

* ``P(< B)``: the probability that a seed of the method ends with a smaller RMSE
  than a seed of the baseline B (:func:`~deepxde_lnn.analysis.stats.p_below`);
* ``failures``: the seeds that failed out of the method's seeds
  (:func:`~deepxde_lnn.analysis.stats.failures`).

A new statistic is one :class:`Companion` here (and the function computing it, in
:mod:`.stats`, with the :class:`~.table.Row` field or property holding it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..runs.records import escape
from .stats import LEVEL, PBelow
from .table import BASELINE, FAILURE_RULE, Row

__all__ = [
    "Companion",
    "COMPANIONS",
    "P_BELOW",
    "FAILURES",
    "p_below_text",
    "failures_text",
    "companions",
    "companions_rule",
    "companion_heads",
    "companion_cells",
    "companion_pair_heads",
    "companion_pair_cells",
    "companion_columns",
]


@dataclass(frozen=True)
class Companion:
    """A statistic beside a verdict, as each output shows it.

    ``head`` and ``pair_head`` are column heads (``{b}``: the baseline; ``{a}``: the
    method, in the headline's pair); ``cell(row)`` is the method's cell and
    ``pair_cell(row, base)`` the headline's cell of a method against its
    baseline; ``words(row, base, a, b)`` is its part of a verdict line;
    ``columns(row)`` its ``summary.csv`` columns (on a field's RMSE line; None
    elsewhere); ``rule`` its sentence in the reading guides."""

    head: str
    pair_head: str
    cell: Callable[[Row], str]
    pair_cell: Callable[[Row, Row], str]
    words: Callable[[Row, Row, str, str], str]
    columns: Callable[[Row], Mapping[str, object]]
    rule: str


def p_below_text(below: PBelow | None) -> str:
    """The probability's table cell, ``p (low–high)``; "—" for no comparison."""
    return "—" if below is None else below.text()


def failures_text(row: Row) -> str:
    """A row's failed seeds out of its seeds, e.g. ``1/8``."""
    return f"{row.failures}/{row.n}"


def _p_below_columns(row: Row) -> dict:
    below = row.below
    return {
        "p_below_baseline": None if below is None else below.p,
        "p_below_low": None if below is None else below.low,
        "p_below_high": None if below is None else below.high,
    }


P_BELOW = Companion(
    head="P(< {b}) (95 % CI)",
    pair_head="P({a} < {b}) (95 % CI)",
    cell=lambda row: p_below_text(row.below),
    pair_cell=lambda row, base: p_below_text(row.below),
    words=lambda row, base, a, b: f"P({a} < {b}) {p_below_text(row.below)}",
    columns=_p_below_columns,
    rule=(
        "P(A < B): the probability that a seed of A ends with a smaller RMSE than "
        "a seed of B (Mann-Whitney's U over the pairs of seeds, ties counting 1/2; "
        "over the common seeds where the ratio is paired; 0.5 when neither tends "
        f"to be lower), with a {LEVEL:.0%} percentile bootstrap interval (seeds "
        "resampled, in pairs where paired; not adjusted for looks or Holm)"
    ),
)
FAILURES = Companion(
    head="failures",
    pair_head="failures {a}; {b}",
    cell=failures_text,
    pair_cell=lambda row, base: f"{failures_text(row)}; {failures_text(base)}",
    words=lambda row, base, a, b: (
        f"failures {a} {failures_text(row)}, {b} {failures_text(base)}"
    ),
    columns=lambda row: {"failures": row.failures},
    rule=f"failures: the seeds that failed out of the method's seeds, where "
    f"{FAILURE_RULE}",
)
#: the statistics beside every verdict, in the order every output shows them
COMPANIONS = (P_BELOW, FAILURES)


def companions(row: Row, base: Row, baseline: str = BASELINE) -> str:
    """The companions of ``row``'s verdict against the ``base`` row, in words:
    ``P(lnn < pinn) 0.56 (0.34–0.78); failures lnn 0/8, pinn 1/8``."""
    a, b = escape(row.method), escape(baseline)
    return "; ".join(c.words(row, base, a, b) for c in COMPANIONS)


def companions_rule() -> str:
    """What the companions state, in one paragraph (the reading guides)."""
    return (
        "Beside each verdict, robust companions that do not rest on log-normal "
        "errors: " + "; ".join(c.rule for c in COMPANIONS) + "."
    )


def companion_heads(baseline: str) -> list[str]:
    """The field tables' companion column heads against ``baseline``."""
    return [c.head.format(b=baseline) for c in COMPANIONS]


def companion_cells(row: Row) -> list[str]:
    """``row``'s companion cells in a field table."""
    return [c.cell(row) for c in COMPANIONS]


def companion_pair_heads(a: str, b: str) -> list[str]:
    """The headline's companion column heads, method ``a`` against ``b``."""
    return [c.pair_head.format(a=a, b=b) for c in COMPANIONS]


def companion_pair_cells(row: Row, base: Row) -> list[str]:
    """The headline's companion cells of ``row`` against ``base``."""
    return [c.pair_cell(row, base) for c in COMPANIONS]


def companion_columns(row: Row, rmse_line: bool) -> dict:
    """``row``'s companion columns of ``summary.csv`` (None off the RMSE line)."""
    cols = {k: v for c in COMPANIONS for k, v in c.columns(row).items()}
    return cols if rmse_line else dict.fromkeys(cols)
