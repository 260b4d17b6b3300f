"""The study-level answer: each comparison pooled over a study's problems, per
profile (:func:`deepxde_lnn.analysis.pooled.pool`).

A study is the paper's six cases, PINNacle's problems, or the problems of the
user's own (:data:`STUDY_NAMES`); ``both`` pools the first two per training
strength (:data:`~.shipped.STRENGTHS`: each study's problems at its own profile
of that strength), the one answer over every shipped problem. For each study,
profile and comparison (:data:`COMPARISONS`: `lnn` / `pinn`, `pinn-matched` /
`pinn`, `lnn` / `pinn-matched`, and each alternative to the block (`laaf`,
`pirate`, `fourier`) against `pinn` and against `lnn`; on the user's problems
each method against the baseline), every problem that ran both methods at that
profile gives one configuration: the step budget (a time budget is another
question, equal wall time) with the most common seeds, on the problem's summary
field as the headline has it. Problems where a method did not converge are
listed apart by the pool, never pooled.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..analysis.pooled import FEWER, Errors, Pooled, pool
from ..analysis.stats import MARGIN, bound_text
from ..analysis.table import BASELINE, MATCHED, SUBJECT, Group, Row, prepare, value
from ..problems.methods import ALTERNATIVES
from ..problems.metrics import JOINT, summary_field
from ..runs.records import escape
from .report_records import baseline_for, by_case, field_rows, fields_of, is_paper_case
from .shipped import STRENGTHS, names_of

__all__ = [
    "StudyVerdict",
    "pooled_verdicts",
    "pooled_table",
    "interval_text",
    "study_of",
    "COMPARISONS",
    "STUDY_NAMES",
    "POOLED_HEADING",
]

#: the comparisons pooled over a shipped study: (method, against); each
#: alternative to the block against the plain network and against the block
COMPARISONS = (
    *((SUBJECT, BASELINE), (MATCHED, BASELINE), (SUBJECT, MATCHED)),
    *((m, against) for m in ALTERNATIVES for against in (BASELINE, SUBJECT)),
)
#: each study's name in a sentence
STUDY_NAMES = {
    "both": "both studies",
    "paper": "the paper's cases",
    "pinnacle": "PINNacle's problems",
    "yours": "your problems",
}


@dataclass(frozen=True)
class StudyVerdict:
    """``pooled``: one comparison over ``study``'s problems at ``profile``, with
    the rows each problem contributed (``rows``: problem -> the rows of the
    pool's two methods, every problem that ran both, pooled or not)."""

    study: str
    profile: str
    pooled: Pooled
    rows: dict[str, tuple[Row, Row]]

    def text(self) -> str:
        """``your problems, profile quick: lnn/fnn over 5 problems: ...``."""
        where = self.where if self.study == "both" else f"profile {self.profile}"
        return f"{STUDY_NAMES[self.study]}, {where}: {self.pooled.text()}"

    @property
    def where(self) -> str:
        """The profile; over both studies the strength and the studies'
        profiles of it: ``short training (settled, quick)``."""
        if self.study != "both":
            return self.profile
        profiles = ", ".join(dict.fromkeys(STRENGTHS[self.profile].values()))
        return f"{self.profile} training ({profiles})"

    @property
    def label(self) -> str:
        """``lnn / pinn, the paper's cases, settled``."""
        p = self.pooled
        return f"{p.a} / {p.b}, {STUDY_NAMES[self.study]}, {self.profile}"


def study_of(case: str, runs: list[dict]) -> str:
    """The study ``case``'s runs belong to: ``pinnacle``, ``paper`` or
    ``yours`` (a problem of the user's own, or a case registered as yours)."""
    if case in names_of("pinnacle"):
        return "pinnacle"
    return "paper" if is_paper_case(case, runs) else "yours"


def baseline_errors(
    runs: Sequence[dict], study: str, profile: str
) -> dict[str, tuple[float | None, int]]:
    """Per problem of ``study`` whose `pinn` ran at ``profile`` (a step budget),
    the median relL2 of `pinn` on the problem's summary field (its pooled error
    where it has one, as the verdicts) and its seeds, whether or not another
    method ran beside it."""
    out: dict[str, tuple[float | None, int]] = {}
    for case, groups in by_case(prepare(list(runs))[0]).items():
        rows = [rs for g, rs in groups.items() if _at(g, profile)]
        if not rows or study_of(case, [r for rs in rows for r in rs]) != study:
            continue
        for runs_of in rows:
            sets = fields_of(runs_of)
            field = JOINT if JOINT in sets else summary_field(sets)
            for row in field_rows(runs_of, field, None, MARGIN, BASELINE):
                rel = row.values("relL2") if row.method == BASELINE else []
                if len(rel) > out.get(case, (None, 0))[1]:
                    out[case] = (float(np.median(rel)), len(rel))
    return out


def _at(group: Group, profile: str) -> bool:
    return group.profile == profile and group.seconds is None


def pooled_verdicts(runs: list[dict], margin: float = MARGIN) -> list[StudyVerdict]:
    """Every study-level verdict of the records from
    :func:`~.report_records.load`: per study (in :data:`STUDY_NAMES`' order),
    profile and comparison, with at least one problem that ran both methods."""
    found: dict[tuple[str, str, str, str], dict] = {}
    for case, groups in by_case(prepare(runs)[0]).items():
        study = study_of(case, [r for rs in groups.values() for r in rs])
        for profile, a, b, rows in _candidates(groups, margin):
            found.setdefault((study, profile, a, b), {})[case] = rows
    found.update(_both(found))
    out = []
    for (study, profile, a, b), cases in sorted(found.items(), key=_order):
        errors = {case: _errors(*rows) for case, rows in cases.items()}
        pooled = pool(errors, a, b, margin=margin)
        out.append(StudyVerdict(study, profile, pooled, cases))
    return out


def _both(found: dict[tuple[str, str, str, str], dict]) -> dict:
    """Per training strength and comparison, the problems of every study in
    :data:`~.shipped.STRENGTHS` at its profile of that strength, keyed
    ``("both", strength, a, b)``; only where two studies or more ran it."""
    out = {}
    for strength, profiles in STRENGTHS.items():
        for a, b in COMPARISONS:
            parts = [found.get((st, p, a, b), {}) for st, p in profiles.items()]
            if sum(map(bool, parts)) > 1:
                out["both", strength, a, b] = {
                    k: v for d in parts for k, v in d.items()
                }
    return out


def _order(item) -> tuple:
    (study, profile, a, b), _ = item
    comparisons = [*COMPARISONS]
    rank = comparisons.index((a, b)) if (a, b) in comparisons else len(comparisons)
    return (list(STUDY_NAMES).index(study), profile, rank, a, b)


def _candidates(
    groups: dict[Group, list[dict]], margin: float
) -> Iterator[tuple[str, str, str, tuple[Row, Row]]]:
    """Per profile and comparison, the step-budget configuration of one problem
    with the most common seeds of both methods (the first in the report's order
    on a tie), as its two rows and group."""
    best: dict[tuple[str, str, str], tuple[int, tuple[Row, Row]]] = {}
    for group, runs in groups.items():
        if group.seconds is not None:
            continue
        for a, b in _comparisons(group, runs):
            rows = _rows(runs, a, b, margin)
            if rows is None:
                continue
            common = len(set(rows[0].seeds) & set(rows[1].seeds))
            key = (group.profile, a, b)
            if key not in best or common > best[key][0]:
                best[key] = (common, rows)
    for (profile, a, b), (_, rows) in best.items():
        yield profile, a, b, rows


def _comparisons(group: Group, runs: list[dict]) -> list[tuple[str, str]]:
    """The comparisons of one configuration: the shipped three, or on a problem
    of the user's each method against its baseline."""
    methods = {r["method"] for r in runs}
    if group.problem:
        base = baseline_for(runs[0]["case"], runs)
        return [(m, base) for m in sorted(methods - {base})]
    return [(a, b) for a, b in COMPARISONS if {a, b} <= methods]


def _rows(runs: list[dict], a: str, b: str, margin: float) -> tuple[Row, Row] | None:
    """Rows of ``a`` and ``b`` on the problem's summary field (its pooled error
    where it has one, as the headline); None where one lacks it."""
    sets = fields_of(runs)
    field = JOINT if JOINT in sets else summary_field(sets)
    found = {row.method: row for row in field_rows(runs, field, None, margin, b)}
    if a not in found or b not in found:
        return None
    return found[a], found[b]


def _errors(a: Row, b: Row) -> Errors:
    """One problem's RMSE per seed of each method and whether each converged (a
    seed without an RMSE, a failed one, is left out)."""

    def by_seed(row: Row) -> dict[int, float]:
        found = {r["seed"]: value(r, row.field, "RMSE") for r in row.runs}
        return {s: v for s, v in found.items() if v is not None}

    return Errors(by_seed(a), by_seed(b), a.converged, b.converged)


POOLED_HEADING = "## The answer over problems"
POOLED_TEXT = (
    "One verdict per study, profile and comparison: the geometric mean over "
    "problems of each problem's RMSE ratio (every problem weighs the same; each "
    "contributes its step-budget configuration with the most seeds, on its "
    "summary field as in the headline), with two 95 % percentile bootstrap "
    "intervals: over seeds and problems (problems drawn again, then their seeds; "
    "the verdict's) and over seeds alone (the problems fixed). P(A < B) is the "
    "mean over problems of the probability that a seed of A ends below a seed of "
    "B. I² is the share of the spread between problems' ratios that is not seed "
    "noise; Cochran's Q tests whether they differ; 'the other way' names the "
    "problems whose own ratio lies on the other side of 1 ('decided' where its "
    "own verdict says so). A problem where a method did not converge is listed "
    "apart, never pooled ([docs/verdicts.md](verdicts.md))."
)


def interval_text(p: Pooled, which: str = "interval") -> str:
    """``0.675–1.29``: one of a pool's intervals (``interval``, over seeds and
    problems; ``seeds_interval``, over seeds)."""
    low, high = getattr(p, which)
    return f"{bound_text(low)}–{bound_text(high)}"


def pooled_table(verdicts: list[StudyVerdict]) -> list[str]:
    """The report's section of study-level verdicts (empty without any)."""
    if not verdicts:
        return []
    heads = [
        *("study", "profile", "comparison", "problems pooled", "ratio"),
        *("over seeds and problems", "verdict", "over seeds", "P(A < B)"),
        *("I² (Q test p)", "the other way", "not pooled"),
    ]
    lines = [POOLED_HEADING, "", POOLED_TEXT, ""]
    lines += ["| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]
    return [*lines, *map(_pooled_line, verdicts), ""]


def _pooled_line(v: StudyVerdict) -> str:
    p = v.pooled
    apart = ", ".join(f"{escape(n)} ({why})" for n, why in p.excluded.items())
    head = [
        STUDY_NAMES[v.study],
        escape(v.where),
        f"`{escape(p.a)}` / `{escape(p.b)}`",
        str(len(p.problems)),
    ]
    if p.ratio is None:
        return (
            "| "
            + " | ".join(
                [*head, "—", "—", f"{p.verdict} ({FEWER})", *["—"] * 4, apart or "—"]
            )
            + " |"
        )
    assert p.p_interval is not None  # pooled: every estimate set
    q = "—" if p.q_p is None else f"{p.q_p:.2g}"
    other = ", ".join(
        f"{escape(n)} (decided)" if n in p.decided_opposite else escape(n)
        for n in p.opposite
    )
    cells = [
        f"{p.ratio:.3g}",
        interval_text(p),
        p.verdict,
        f"{interval_text(p, 'seeds_interval')} ({p.seeds_verdict})",
        f"{p.p_improve:.2f} ({p.p_interval[0]:.2f}–{p.p_interval[1]:.2f})",
        f"{p.i2:.2f} ({q})",
        other or "—",
        apart or "—",
    ]
    return "| " + " | ".join([*head, *cells]) + " |"
