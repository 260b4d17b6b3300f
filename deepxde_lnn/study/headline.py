"""The report's headline: per case and configuration holding both, the LNN and the
parameter-matched MLP against `pinn` on the case's summary field, one family of
verdicts (Holm over the table), as a table and a forest plot."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote

from ..analysis.companions import companion_pair_cells, companion_pair_heads
from ..analysis.forest import CLIP, ForestRow, forest_figure
from ..analysis.stats import LEVEL, MARGIN, RatioCI, holm
from ..analysis.table import (
    BASELINE,
    MATCHED,
    SUBJECT,
    Group,
    Row,
    ci_text,
    judged_text,
    prepare,
)
from ..problems.metrics import JOINT, summary_field
from ..runs.records import escape
from .report_records import by_case, field_rows, fields_of, published_group
from .shipped import SETTLED, names_of

__all__ = [
    "Headline",
    "headline",
    "headline_table",
    "headline_section",
    "verdicts_figure",
    "FOREST",
    "STUDY_HEADLINES",
    "of_study",
]

HEADLINE = (
    "## Headline",
    "",
    "The liquid blocks against the same network without them (`pinn`) and against "
    "the plain MLP of the LNN's parameter count (`pinn-matched`): one row per case "
    "and configuration holding both `lnn` and `pinn`, on the case's summary field "
    "(`Avg`, the mean over fields, where a case has several; otherwise its first "
    "field). The rows of the settled profiles come first, one per case and "
    "configuration (the package's answer: Adam's learning rate decayed so that "
    "every seed ends settled, docs/protocol.md), then every other configuration, "
    "the paper's protocol among them. Mean RMSE over seeds, the geometric-mean RMSE "
    "ratio to `pinn` with its 95 % interval and verdict, the probability that a "
    "seed of `lnn` ends below a seed of `pinn` and the failed seeds of each, as in "
    "the case's tables below ([k] is the configuration's number there). The "
    "table's {n} verdicts are one family (Holm's adjustment in brackets where it "
    "changes one).",
    "",
)


FOREST = "_verdicts.png"  # the headline's figure (no case is named with a "_" first)

PINNACLE_HEADLINE = (
    "## PINNacle",
    "",
    "The same comparisons on the problems of PINNacle, the field's own PINN "
    "benchmark (Hao et al., NeurIPS 2024): one row per problem and configuration "
    "holding both `lnn` and `pinn`, on the problem's pooled error where it has "
    "several fields (`joint`: every field's values together, PINNacle's L2 "
    "relative error), otherwise its field. `pinnacle` is PINNacle's own protocol "
    "(a GPU's job); `quick` the CPU profile (a share of its points, redrawn every "
    "step, the settled decay). The table's {n} verdicts are their own family "
    "(Holm's adjustment over this table). A method that did not converge (median "
    "relL2 0.5 or more) is named in its verdict. PINNacle's published numbers "
    "for its vanilla PINN are beside ours in the next section.",
    "",
)
#: per study: its headline's heading and text, and its figure's file
STUDY_HEADLINES = {
    "paper": (HEADLINE, FOREST),
    "pinnacle": (PINNACLE_HEADLINE, "_pinnacle_verdicts.png"),
}


FOREST_NOTE = (
    "The figure draws this table's verdicts, one section per profile (the settled "
    "profiles first), one row per case and configuration: the RMSE ratio to "
    "`pinn` as a point and its 95 % interval as a bar, on a logarithmic axis, for "
    "`lnn` (left) and `pinn-matched` (right), and under each section the verdict "
    "pooled over its problems as a diamond spanning its interval (over seeds and "
    "problems; [the answer over problems](#the-answer-over-problems)). The shaded "
    "band is the equivalence margin [1/{m}, {m}]; the colour is the interval's "
    "verdict; an open point is a verdict that Holm's adjustment over the table "
    "changes (to the one in brackets below); an arrow marks an interval that runs "
    "past ×{clip:g} either way."
)


def headline_table_head() -> list[str]:
    """The headline table's head (its companions' columns from
    :data:`~deepxde_lnn.analysis.companions.COMPANIONS`)."""
    heads = [
        *("case", "field", "configuration", "seeds (lnn / pinn)"),
        *("`lnn` RMSE", "`pinn` RMSE", "`lnn` / `pinn` (95 % CI)", "verdict"),
        *companion_pair_heads("`lnn`", "`pinn`"),
        *("`pinn-matched` / `pinn` (95 % CI)", "verdict"),
    ]
    return ["| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]


def headline_section(
    cases: dict, margin: float, figures: str | None = None, study: str = "paper"
) -> list[str]:
    """The headline of ``study``'s cases (``paper``: every case not PINNacle's,
    the user's problems among them): its text, figure link and table."""
    found = _headline(of_study(cases, study), margin)
    if not found:
        return []
    text, forest = STUDY_HEADLINES[study]
    n = sum(ci is not None for h in found for ci in (h.lnn, h.matched))
    head = [h.replace("{n}", str(n)) for h in text]
    if figures is not None:
        alt = "lnn / pinn and pinn-matched / pinn per case and configuration"
        note = FOREST_NOTE.format(m=f"{margin:g}", clip=CLIP)
        head += [f"![{alt}]({quote(f'{figures}/{forest}')})", "", note, ""]
    return [*head, *headline_table_head(), *map(_headline_line, found), ""]


def of_study(cases: dict, study: str) -> dict:
    """The entries of ``cases`` (by case name) of ``study``: PINNacle's problems,
    or (``paper``) every other case."""
    pinnacle = set(names_of("pinnacle"))
    return {c: g for c, g in cases.items() if (c in pinnacle) == (study == "pinnacle")}


def headline_table(runs: list[dict], margin: float = MARGIN) -> str:
    """The report's headline table alone, for records from :func:`~.report_records.load`; empty
    when no case has both `lnn` and `pinn`."""
    lines = list(map(_headline_line, headline(runs, margin)))
    return "\n".join([*headline_table_head(), *lines]) + "\n" if lines else ""


@dataclass(frozen=True)
class Headline:
    """One row of the headline: case ``case``'s configuration ``[k]`` (``group``)
    on its summary ``field``, the comparisons of `lnn` and `pinn-matched` with
    `pinn` (``lnn``, ``matched``; None: not run) and the verdict of each after
    Holm's adjustment over the table (``adjusted``), and the row's ``cells`` up to
    the `lnn` interval followed by its robust companions; ``rows``: the table
    rows of `lnn`, `pinn` and `pinn-matched` (None: not run)."""

    case: str
    field: str
    k: int
    group: Group
    cells: tuple[str, ...]
    lnn: RatioCI
    matched: RatioCI | None
    adjusted: tuple[str | None, str | None] = (None, None)
    rows: tuple[Row | None, ...] = dataclasses.field(default=(), repr=False)

    @property
    def settled(self) -> bool:
        """Whether the row is of a settled profile (the package's answer)."""
        return self.group.profile in SETTLED


def headline(
    runs: list[dict], margin: float = MARGIN, study: str = "paper"
) -> list[Headline]:
    """The headline's rows of ``study`` for records from
    :func:`~.report_records.load`, settled profiles first, each with its verdicts
    after Holm's adjustment over the table."""
    return _headline(of_study(by_case(prepare(runs)[0]), study), margin)


def _headline(cases: dict, margin: float) -> list[Headline]:
    """The headline's rows (one family of verdicts: Holm over the table)."""
    found = [
        (_settled_first(group), _headline_row(case, k, group, runs, margin))
        for case, groups in cases.items()
        for k, (group, runs) in enumerate(groups.items(), start=1)
    ]
    rows = [row for _, row in sorted(found, key=lambda x: x[0]) if row is not None]
    adjusted = iter(holm([ci for h in rows for ci in (h.lnn, h.matched)], LEVEL))
    return [replace(h, adjusted=(next(adjusted), next(adjusted))) for h in rows]


def _headline_line(h: Headline) -> str:
    """A headline row as a line of the markdown table."""
    cells = [
        *h.cells[:7],
        judged_text(h.lnn, h.adjusted[0]),
        *h.cells[7:],
        ci_text(h.matched),
        judged_text(h.matched, h.adjusted[1]),
    ]
    return "| " + " | ".join(cells) + " |"


def _settled_first(group: Group) -> int:
    """A headline row's place: the settled profiles' rows first (in the order of
    :data:`~deepxde_lnn.study.shipped.SETTLED`), then the others (a stable sort
    keeps the case order within each)."""
    return SETTLED.index(group.profile) if group.profile in SETTLED else len(SETTLED)


PUBLISHED = ("the paper's protocol", "PINNacle's protocol")  # by: is it PINNacle's


def _headline_row(
    case: str, k: int, group: Group, runs: list[dict], margin: float
) -> Headline | None:
    """The row of one configuration, before Holm's adjustment; None without
    `lnn` and `pinn`."""
    sets = fields_of(runs)
    field = JOINT if JOINT in sets else summary_field(sets)
    found = {row.method: row for row in field_rows(runs, field, None, margin)}
    lnn, pinn = found.get(SUBJECT), found.get(BASELINE)
    if lnn is None or pinn is None:
        return None
    matched = found[MATCHED].ci if MATCHED in found else None
    where = f"[{k}] {group.short()}"
    if group == published_group(case):
        where += f" ({PUBLISHED[case in names_of('pinnacle')]})"
    cells = (
        escape(case),
        escape(field),
        where,
        f"{lnn.n} / {pinn.n}",
        _mean_text(lnn),
        _mean_text(pinn),
        ci_text(lnn.ci),
        *companion_pair_cells(lnn, pinn),
    )
    rows = (lnn, pinn, found.get(MATCHED))
    return Headline(case, field, k, group, cells, lnn.ci, matched, rows=rows)


def _mean_text(row) -> str:
    """A method's mean RMSE in a headline cell ("—" where every seed failed)."""
    mean = row.stats.get("RMSE", {}).get("mean")
    return "—" if mean is None else f"{mean:.2e}"


def verdicts_figure(rows: Sequence[Headline], verdicts: Sequence = ()):
    """The headline's verdicts as a forest plot (:mod:`deepxde_lnn.analysis.forest`):
    `lnn` / `pinn` and `pinn-matched` / `pinn`, one section per profile (the
    settled profiles first), one row per case and configuration, and under each
    section its pooled verdict over the problems as a diamond (``verdicts``:
    :func:`~.pooled_verdicts.pooled_verdicts`' for these rows' study)."""
    ordered = sorted(rows, key=lambda h: (_settled_first(h.group), h.group.profile))
    columns: dict[str, list[ForestRow]] = {
        f"{SUBJECT} / {BASELINE}": [],
        f"{MATCHED} / {BASELINE}": [],
    }
    for profile, group in itertools.groupby(ordered, key=lambda h: h.group.profile):
        found = list(group)
        section = f"{profile} profile"
        for (name, column), pick in zip(columns.items(), ("lnn", "matched")):
            for h in found:
                label = f"{h.case} {h.field}, {_tag(h.group)}{_unconverged(h)}"
                column.append(
                    ForestRow(
                        label, getattr(h, pick), h.adjusted[pick == "matched"], section
                    )
                )
        for (name, column), a in zip(columns.items(), (SUBJECT, MATCHED)):
            pooled = _pooled_row(verdicts, profile, a, section)
            if pooled is not None:
                column.append(pooled)
        # the two columns share their rows: a pool drawn in one only is a blank row
        # in the other
        n = max(len(c) for c in columns.values())
        for column in columns.values():
            while len(column) < n:
                column.append(ForestRow("", None, None, section))
    return forest_figure(
        columns,
        title="RMSE ratio to pinn over seeds, per case and configuration",
        xlabel="RMSE ratio to pinn (geometric mean, 95 % CI)",
    )


def _pooled_row(verdicts, profile: str, a: str, section: str) -> ForestRow | None:
    """The diamond of ``a`` / `pinn` pooled at ``profile`` (None: no pool)."""
    for v in verdicts:
        p = v.pooled
        if (v.profile, p.a, p.b) == (profile, a, BASELINE) and p.ratio is not None:
            (lo, hi), n = p.interval, len(p.problems)
            ci = RatioCI(p.ratio, lo, hi, n, n, False, p.level, p.margin)
            label = f"pooled over {len(p.problems)} problems"
            return ForestRow(label, ci, None, section, pooled=True)
    return None


def _unconverged(h: Headline) -> str:
    """A row's note where `lnn` or `pinn` did not converge (a ratio of failures
    is not a result): `` (neither converged)``, or who did not."""
    note = h.lnn.convergence_text(SUBJECT, BASELINE)
    return f" ({note})" if note else ""


def _tag(group: Group) -> str:
    """A configuration in a few words, for a figure's row (its section names the
    profile)."""
    if group.seconds is not None:
        return f"{group.seconds:.4g} s per run"
    if group.lbfgs:
        return f"{group.iterations} Adam + ≤ {group.lbfgs} L-BFGS"
    return f"{group.iterations} steps" + (", decay" if group.decay else "")
