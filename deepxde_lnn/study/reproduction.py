"""The reproduction report (``deepxde-lnn report``): every finished run below some
result folders, per case and training configuration, set against the paper.

Built from ``metrics.json`` files only (read as JSON, never code), so runs made
anywhere can be merged. :func:`load` reads and checks the records
(:mod:`deepxde_lnn.runs.records`: regular files of bounded size, strict JSON, names
from the registries), :func:`render` turns them into markdown (pure: the same
records give the same text; every string from a record escaped), and
:func:`build_report` writes the markdown and one figure per case, atomically,
only inside the output folder.
"""

from __future__ import annotations

import functools
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ..analysis.figures import plt_module
from ..analysis.sequential import looks_of
from ..analysis.stats import MARGIN
from ..analysis.table import (
    BASELINE,
    MATCHED,
    SUBJECT,
    Group,
    Row,
    ci_text,
    geomean,
    judged,
    method_order,
    prepare,
    rows,
)
from ..problems.methods import METHODS
from ..problems.metrics import summary_field
from ..runs import atomic as aio
from ..runs.errors import FolderError
from ..runs.folder import writing
from ..runs.records import escape, inside, load_runs
from . import catalog
from .paper import paper_rows, paper_table

__all__ = [
    "Group",
    "load",
    "prepare",
    "missing",
    "render",
    "headline_table",
    "case_figure",
    "build_report",
]

# groups shown beside the paper's numbers: its protocol, and the accurate profile
# (same cases, better training: how far below the paper's rows it gets)
WITH_PAPER = ("paper", "accurate")
# the methods a complete reproduction has, each with N_SEEDS seeds: those the
# paper reports, the LNN's plain twin and the parameter-matched MLP
REQUIRED = tuple(
    m
    for m in METHODS
    if m in (SUBJECT, BASELINE, MATCHED) or m in {r["method"] for r in paper_rows()}
)
N_SEEDS = 3


# ---------------------------------------------------------------- loading


def load(roots: Sequence[str | Path]) -> list[dict]:
    """Every run below ``roots``, checked; each root must be a folder holding at
    least one ``metrics.json``, and a run reached through two roots counts once."""
    runs, seen, looks = [], set(), {}
    for root in map(Path, roots):
        if not root.is_dir():
            what = "not a folder" if root.exists() else "no such folder"
            raise FolderError(f"{root}: {what}")
        found = load_runs(root, "report", catalog.known())  # checked
        if not found:
            raise FolderError(f"{root}: no finished runs (metrics.json) below it")
        for rec in found:
            key = Path(rec["_dir"]).resolve()
            if key not in seen:
                seen.add(key)
                design = Path(rec["_dir"]).parent.parent  # a compare's root
                if design not in looks:
                    looks[design] = looks_of(design)
                rec["_looks"] = looks[design]
                runs.append(rec)
    return runs


# ---------------------------------------------------------------- grouping


def _case_order(case: str) -> tuple[int, str]:
    return (
        catalog.NAMES.index(case) if case in catalog.NAMES else len(catalog.NAMES),
        case,
    )


def _by_case(runs: list[dict]) -> dict[str, dict[Group, list[dict]]]:
    """case -> group -> runs, in the package's case order, groups sorted, runs by
    method order and seed."""
    out: dict[str, dict[Group, list[dict]]] = {}
    for r in sorted(runs, key=lambda r: (method_order(r["method"]), r["seed"])):
        out.setdefault(r["case"], {}).setdefault(r["group"], []).append(r)
    return {
        case: dict(sorted(groups.items(), key=lambda kv: kv[0].sort_key()))
        for case, groups in sorted(out.items(), key=lambda kv: _case_order(kv[0]))
    }


def _fields(runs: list[dict]) -> list[str]:
    return list(dict.fromkeys(f for r in runs for f in r["sets"]))


def _rows(runs: list[dict], field: str, paper: dict | None, margin: float):
    """The table of one field of one group's runs (:func:`deepxde_lnn.analysis.table.rows`),
    over the looks of a sequential design if the runs came from one."""
    looks = max((r.get("_looks", 1) for r in runs if field in r["sets"]), default=1)
    return rows(runs, field, BASELINE, margin, looks, paper)


# ---------------------------------------------------------------- numbers


@functools.lru_cache(maxsize=None)
def _paper_protocol(case: str) -> Group | None:
    """The group of a run made exactly at the paper's protocol for ``case``."""
    if case not in catalog.available():
        return None
    p = catalog.info(case).profile("paper")
    return Group("paper", p.iterations, float(p.lr), "float32", "steps")


def _paper_of(case: str, group: Group) -> dict | None:
    """The paper's numbers set beside a group's runs: for its protocols' groups
    of a registered case, never a problem of the user's own of that name."""
    return (
        paper_table(case) if group.profile in WITH_PAPER and not group.problem else None
    )


def _at_paper_protocol(record: dict) -> bool:
    protocol = _paper_protocol(record["case"])
    if protocol is None:  # a case this version does not ship
        return record["profile"] == "paper"
    return Group.of(record) == protocol


def missing(runs: list[dict]) -> dict[str, dict[str, int]]:
    """``{case: {method: seeds}}`` for every method of :data:`REQUIRED` with fewer
    than :data:`N_SEEDS` seeds at the paper's protocol (profile, steps, lr,
    float32, step budget), over the package's cases and any other case in ``runs``."""
    paper_runs = [r for r in runs if _at_paper_protocol(r)]
    names = sorted(set(catalog.NAMES) | {r["case"] for r in runs}, key=_case_order)
    out = {}
    for case in names:
        found = {
            m: len(
                {r["seed"] for r in paper_runs if (r["case"], r["method"]) == (case, m)}
            )
            for m in REQUIRED
        }
        out[case] = {m: n for m, n in found.items() if n < N_SEEDS}
    return out


# ---------------------------------------------------------------- markdown

HOW_TO_READ = (
    "**How to read.** Each case has one section per training configuration "
    "(profile, steps, learning rate, float type, budget); runs of different "
    "configurations are never pooled. Each table is one field, or one extra metric "
    "set (heat's absolute-temperature modes and FEM cross-checks, `F@GRID` for "
    "field F on another evaluation grid), with one row per method: the number of "
    "seeds, trainable parameters, training-loop seconds per step (mean over seeds; "
    "for seeds trained together as one stacked model, the batch's time divided by "
    "its runs; followed by the device where a configuration's runs were made on "
    "different hardware), RMSE mean ± sample std and median over seeds, then relL2 and MaxErr "
    "mean ± std. 'paper' is the paper's single-seed RMSE (Tables 2–7: its own "
    "protocol, hardware and seed), shown at the `paper` and `accurate` profiles "
    "(the latter trains the same problems better: float64, a fixed point set, Adam "
    "with decay then L-BFGS), and "
    "'ours/paper' is our mean RMSE divided by it; for `F@GRID` sets it repeats the "
    "paper's number for F (the paper evaluated its beam baselines on 150 × 150 and "
    "its LNN on 200 × 200). `rba` (residual-based attention) stands beside the "
    "paper's RA-PINN row and `xpinn` (extended PINN) beside its XPINN row, but the "
    "paper's baselines were its own designs, not defined in the paper "
    "(`ra-gated` and `xpinn-authors` follow the authors' code), so those ratios "
    "compare implementations as much as methods; the other methods have no paper "
    "row. 'RMSE / pinn' is the geometric-mean RMSE ratio of the method to `pinn` "
    "over seeds with a 95 % Student-t interval on log errors, paired over the "
    "seeds both ran (otherwise Welch, marked). {rule} Figures show "
    "every seed's RMSE (dots), the geometric mean over seeds (bar) and the paper's "
    "number (star) on a log scale; where a case has several configurations, "
    "their numbers [k] follow the method names."
)

TABLE_HEAD = (
    "| method | seeds | parameters | s/step | RMSE mean ± std | RMSE median "
    "| paper RMSE | ours/paper | RMSE / pinn (95 % CI) | verdict "
    "| relL2 mean ± std | MaxErr mean ± std |"
)


VERDICTS = (
    "The verdict is 'better' or 'worse' when the whole interval lies below or "
    "above 1, 'equivalent within ×{m}' when it lies inside [1/{m}, {m}] (margin "
    "×{m}), and otherwise 'undecided', followed by the seeds per method that "
    "would likely decide it at the observed spread (docs/verdicts.md). Where seeds "
    "were added until decided (`compare --until-decided`), the interval's level is "
    "spread over the design's looks. Each table's verdicts are one family: the "
    "table states their number, and where Holm's adjustment (family-wise error "
    "5 % within the table) changes a verdict, the adjusted one follows in brackets."
)


def render(
    runs: list[dict],
    roots: Sequence[str | Path],
    figures: str | None = "REPRODUCTION",
    margin: float = MARGIN,
) -> str:
    """The report's markdown for ``runs`` (records from :func:`load`) found below
    ``roots``; ``figures`` is the folder, relative to the markdown, holding
    ``CASE.png`` (None: no figure links); verdicts judged with ``margin``."""
    kept, dropped = prepare(runs)
    by_case = _by_case(kept)
    lines = _header(roots, kept, by_case, margin)
    lines += _headline_section(by_case, margin)
    for case, groups in by_case.items():
        lines += _case_section(case, groups, figures, margin)
    lines += _missing_section(kept)
    lines += _duplicates_section(dropped)
    return "\n".join(lines).rstrip("\n") + "\n"


def _header(roots, runs, by_case, margin: float) -> list[str]:
    paths = [escape(Path(r).as_posix()) for r in roots]
    folders = " ".join(paths)
    return [
        "# Reproduction report",
        "",
        "Generated by `deepxde-lnn report` from the result folders "
        + ", ".join(f"`{p}`" for p in paths)
        + f": {_count(len(runs), 'run')} of {_count(len(by_case), 'case')}. "
        "Do not edit by hand; "
        f"rebuild with `deepxde-lnn report {folders}`.",
        "",
        HOW_TO_READ.format(rule=VERDICTS.format(m=f"{margin:g}")),
        "",
    ]


HEADLINE = (
    "## Headline",
    "",
    "The liquid blocks against the same network without them (`pinn`) and against "
    "the plain MLP of the LNN's parameter count (`pinn-matched`): one row per case "
    "and configuration holding both `lnn` and `pinn`, on the case's summary field "
    "(`Avg`, the mean over fields, where a case has several; otherwise its first "
    "field). Mean RMSE over seeds, and the geometric-mean RMSE ratio to `pinn` with "
    "its 95 % interval and verdict, as in the case's tables below ([k] is the "
    "configuration's number there). The table's {n} verdicts are one family "
    "(Holm's adjustment in brackets where it changes one).",
    "",
)
HEADLINE_TABLE = (
    "| case | field | configuration | seeds (lnn / pinn) | `lnn` RMSE | `pinn` RMSE "
    "| `lnn` / `pinn` (95 % CI) | verdict | `pinn-matched` / `pinn` (95 % CI) "
    "| verdict |",
    "|---" * 10 + "|",
)


def _headline_section(by_case: dict, margin: float) -> list[str]:
    lines, n = _headline_lines(by_case, margin)
    if not lines:
        return []
    head = [h.replace("{n}", str(n)) for h in HEADLINE]
    return [*head, *HEADLINE_TABLE, *lines, ""]


def headline_table(runs: list[dict], margin: float = MARGIN) -> str:
    """The report's headline table alone, for records from :func:`load` (the
    README shows it); empty when no case has both `lnn` and `pinn`."""
    lines, _ = _headline_lines(_by_case(prepare(runs)[0]), margin)
    return "\n".join([*HEADLINE_TABLE, *lines]) + "\n" if lines else ""


def _headline_lines(by_case: dict, margin: float) -> tuple[list[str], int]:
    """The headline's rows (one family of verdicts: Holm over the table) and the
    number of verdicts in it."""
    rows = [
        _headline_row(case, k, group, runs, margin)
        for case, groups in by_case.items()
        for k, (group, runs) in enumerate(groups.items(), start=1)
    ]
    rows = [r for r in rows if r is not None]
    cis = [ci for cells, pair in rows for ci in pair]
    texts = iter(judged(cis))
    lines = []
    for cells, (lnn, matched) in rows:
        t_lnn, t_matched = next(texts), next(texts)
        cells = [*cells[:7], t_lnn, ci_text(matched), t_matched]
        lines.append("| " + " | ".join(cells) + " |")
    return lines, sum(ci is not None for ci in cis)


def _headline_row(case: str, k: int, group: Group, runs: list[dict], margin: float):
    """The row's cells up to the `lnn` interval, and its two comparisons (`lnn`
    and `pinn-matched` against `pinn`); None without `lnn` and `pinn`."""
    field = summary_field(_fields(runs))
    found = {row.method: row for row in _rows(runs, field, None, margin)}
    lnn, pinn = found.get(SUBJECT), found.get(BASELINE)
    if lnn is None or pinn is None:
        return None
    matched = found[MATCHED].ci if MATCHED in found else None
    where = f"[{k}] {group.short()}"
    if group == _paper_protocol(case):
        where += " (the paper's protocol)"
    cells = [
        escape(case),
        escape(field),
        where,
        f"{lnn.n} / {pinn.n}",
        f"{lnn.stats['RMSE']['mean']:.2e}",
        f"{pinn.stats['RMSE']['mean']:.2e}",
        ci_text(lnn.ci),
    ]
    return cells, (lnn.ci, matched)


def _case_section(
    case: str, groups: dict, figures: str | None, margin: float
) -> list[str]:
    name = escape(case)
    lines = [f"## {name}", ""]
    if figures is not None:
        lines += [f"![{name}: RMSE per seed]({quote(f'{figures}/{case}.png')})", ""]
    for k, (group, runs) in enumerate(groups.items(), start=1):
        paper = _paper_of(case, group)
        lines += [f"### [{k}] {group.label()}", "", _group_line(runs), ""]
        for field in _fields(runs):
            table = _rows(runs, field, paper, margin)
            texts = judged([row.ci for row in table])
            n = sum(row.ci is not None for row in table)
            lines += [
                f"#### {escape(field)}",
                "",
                f"{_count(n, 'verdict')} in this table.",
                "",
            ]
            lines += [TABLE_HEAD, "|---" * 12 + "|"]
            lines += [
                "| " + " | ".join(_cells(row, text)) + " |"
                for row, text in zip(table, texts)
            ]
            lines.append("")
    return lines


def _distinct(values) -> str:
    return "; ".join(sorted(set(values))) or "—"


def _software(r: dict) -> str:
    v = {k: escape(r.get("versions", {}).get(k, "?")) for k in ("torch", "deepxde")}
    python = escape(r.get("versions", {}).get("python", "?"))
    return f"torch {v['torch']}, deepxde {v['deepxde']}, Python {python}"


def _group_line(runs: list[dict]) -> str:
    seeds = ", ".join(str(s) for s in sorted({r["seed"] for r in runs}))
    hardware = _distinct(
        f"{escape(r.get('device_name') or '?')} ({escape(r.get('device', '?'))})"
        for r in runs
    )
    sizes = sorted({r.get("stacked_runs", 1) for r in runs})
    batching = (
        "one model per run (not stacked)"
        if sizes == [1]
        else "stacked models of " + "/".join(map(str, sizes)) + " seeds"
    )
    return (
        f"{_count(len(runs), 'run')}; seeds {seeds}; "
        f"hardware: {hardware}; software: {_distinct(map(_software, runs))}; "
        f"trained {batching}."
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _num(x: float | None, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _pm(s: dict) -> str:
    return f"{s['mean']:.3e} ± {s['std']:.1e}"


def _cells(row: Row, verdict: str) -> list[str]:
    ci = row.ci
    return [
        f"`{escape(row.method)}`",
        str(row.n),
        " / ".join(f"{p:,}" for p in row.parameters) or "—",
        _num(row.s_per_step, ".3g")
        + (f" ({escape('/'.join(row.devices))})" if row.devices else ""),
        _pm(row.stats["RMSE"]),
        f"{row.stats['RMSE']['median']:.3e}",
        _num(row.paper.get("RMSE"), ".3e"),
        _num(row.vs_paper, ".3g"),
        ci_text(ci),
        verdict,
        _pm(row.stats["relL2"]),
        _pm(row.stats["MaxErr"]),
    ]


def _missing_section(runs: list[dict]) -> list[str]:
    lines = [
        "## Missing",
        "",
        f"Methods with fewer than {N_SEEDS} seeds at the paper's protocol (profile "
        "`paper` with the case's paper steps and learning rate, float32, step "
        f"budget), out of {', '.join(f'`{m}`' for m in REQUIRED)}.",
        "",
        "| case | missing (seeds found) |",
        "|---|---|",
    ]
    for case, gaps in missing(runs).items():
        text = ", ".join(f"`{m}` ({n}/{N_SEEDS})" for m, n in gaps.items())
        lines.append(f"| {escape(case)} | {text or 'none'} |")
    return lines + [""]


def _duplicates_section(dropped: list[tuple[dict, dict]]) -> list[str]:
    if not dropped:
        return []
    lines = [
        "## Duplicates",
        "",
        "Runs of a configuration and seed already found in an earlier folder; "
        "they are left out of the tables.",
        "",
    ]
    for r, kept in dropped:
        dup, first = (escape(Path(x["_dir"]).as_posix()) for x in (r, kept))
        lines.append(f"- `{dup}` (kept `{first}`)")
    return lines + [""]


# ---------------------------------------------------------------- figures


def case_figure(case: str, groups: dict[Group, list[dict]]):
    """One panel per field: every seed's RMSE per method (and group, when there
    are several), the geometric mean over seeds and the paper's value."""
    from matplotlib.lines import Line2D

    plt = plt_module()
    fields = _fields([r for runs in groups.values() for r in runs])
    ncols = min(3, len(fields))
    nrows = math.ceil(len(fields) / ncols)
    fig, axs = plt.subplots(
        nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False
    )
    for ax, field in zip(axs.flat, fields):
        _field_panel(ax, field, _panel_points(case, field, groups))
    for ax in axs.flat[len(fields) :]:
        ax.set_visible(False)
    legend = [
        Line2D([], [], ls="", marker="o", ms=4, color="C0", label="seed"),
        Line2D([], [], color="k", lw=2, label="geometric mean"),
        Line2D([], [], ls="", marker="*", ms=10, color="C3", label="paper"),
    ]
    axs.flat[0].legend(handles=legend, fontsize=7)
    fig.suptitle(f"{case}: RMSE over seeds")
    fig.tight_layout()
    return fig


def _panel_points(case: str, field: str, groups: dict) -> list[tuple]:
    """``(label, errors over seeds, paper value or None)`` per method and group."""
    points = []
    for k, (group, runs) in enumerate(groups.items(), start=1):
        paper = _paper_of(case, group)
        for row in rows(runs, field, paper=paper):
            label = row.method if len(groups) == 1 else f"{row.method} [{k}]"
            points.append((label, row.values("RMSE"), row.paper.get("RMSE")))
    return points


def _field_panel(ax, field: str, points: list[tuple]) -> None:
    for x, (_, errs, ref) in enumerate(points):
        dx = np.linspace(-0.15, 0.15, len(errs)) if len(errs) > 1 else np.zeros(1)
        ax.scatter(x + dx, errs, s=14, color="C0", alpha=0.7)
        mean = geomean(errs)
        ax.plot([x - 0.3, x + 0.3], [mean, mean], color="k", lw=2)
        if ref is not None:
            ax.scatter([x], [ref], marker="*", s=90, color="C3", zorder=3)
    ax.set_yscale("log")
    labels = [p[0] for p in points]
    ax.set_xticks(range(len(points)), labels, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("RMSE")
    ax.set_title(field, fontsize=9)


# ---------------------------------------------------------------- writing


def _check_out(out: Path) -> Path:
    """The figures' folder for markdown ``out``, after checking that both can be
    written: ``out`` a ``.md`` file in a writable folder, the figures a folder."""
    figures = out.parent / out.stem
    if out.suffix != ".md":
        raise FolderError(f"out: {out} must be a .md file")
    if out.is_dir():
        raise FolderError(f"out: {out} is a folder")
    if figures.exists() and not figures.is_dir():
        raise FolderError(f"out: {figures} (the figures' folder) is not a folder")
    try:
        figures.mkdir(parents=True, exist_ok=True)
        for folder in (out.parent, figures):
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe.", suffix=".tmp")
            os.close(fd)
            os.unlink(probe)
    except OSError as err:
        raise FolderError(f"out: cannot write in {err.filename} ({err.strerror})")
    return figures


def build_report(
    roots: Sequence[str | Path], out: str | Path, margin: float = MARGIN
) -> Path:
    """Write the report of the runs below ``roots`` to ``out`` (markdown) and its
    figures to ``out``'s name without ``.md`` (``REPRODUCTION/CASE.png``)."""
    out = Path(out)
    runs = load(roots)  # before anything is written
    figures = _check_out(out)
    text = render(runs, roots, figures=out.stem, margin=margin)
    plt = plt_module()
    by_case = _by_case(prepare(runs)[0])
    # case names come from the registry; and every path stays in the folder
    paths = {case: inside(figures / f"{case}.png", figures) for case in by_case}
    # a full disk: one error naming the file (FolderError), no partial file
    with writing(out.parent):
        for case, groups in by_case.items():
            fig = case_figure(case, groups)
            # no Software entry: the file does not change with the matplotlib version
            aio.save_figure(paths[case], fig, dpi=110, metadata={"Software": None})
            plt.close(fig)
        return aio.atomic_write_text(out, text)  # last: the links point to files
