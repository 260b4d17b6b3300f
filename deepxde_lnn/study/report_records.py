"""The report's records: every finished run below some result folders (read as
JSON, never code, checked), grouped by case and training configuration, with
what each group is judged against (the paper's numbers, the baseline) and what
a reproduction of the paper still lacks."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

from ..analysis.sequential import looks_of
from ..analysis.table import BASELINE, MATCHED, SUBJECT, Group, method_order, rows
from ..config import record_problem
from ..problems.methods import METHODS
from ..runs.errors import FolderError
from ..runs.names import RECORD
from ..runs.records import find, load_runs
from . import catalog
from .paper import paper_rows, paper_table
from .shipped import names_of

__all__ = [
    "load",
    "by_case",
    "fields_of",
    "field_rows",
    "is_paper_case",
    "baseline_for",
    "published_group",
    "paper_of",
    "missing",
    "left_out",
    "REQUIRED",
    "N_SEEDS",
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


def load(roots: Sequence[str | os.PathLike]) -> list[dict]:
    """Every run below ``roots``, checked; each root must be a folder holding at
    least one ``metrics.json``, and a run reached through two roots counts once."""
    runs, seen, looks = [], set(), {}
    for root in map(Path, roots):
        if not root.is_dir():
            what = "not a folder" if root.exists() else "no such folder"
            raise FolderError(f"{root}: {what}")
        known = catalog.known()
        found = load_runs(root, "report", known, options=record_problem)  # checked
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


def left_out(roots: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """What the walk below ``roots`` passed over that may hold runs (links to
    folders, a ``metrics.json`` that is a folder), with why: the report names
    them rather than leave them out in silence."""
    passed: list[tuple[Path, str]] = []
    for root in roots:
        find(Path(root), RECORD, passed=passed)
    return passed


def case_order(case: str) -> tuple[int, str]:
    return (
        catalog.NAMES.index(case) if case in catalog.NAMES else len(catalog.NAMES),
        case,
    )


def by_case(runs: list[dict]) -> dict[str, dict[Group, list[dict]]]:
    """case -> group -> runs, in the package's case order, groups sorted, runs by
    method order and seed."""
    out: dict[str, dict[Group, list[dict]]] = {}
    for r in sorted(runs, key=lambda r: (method_order(r["method"]), r["seed"])):
        out.setdefault(r["case"], {}).setdefault(r["group"], []).append(r)
    return {
        case: dict(sorted(groups.items(), key=lambda kv: kv[0].sort_key()))
        for case, groups in sorted(out.items(), key=lambda kv: case_order(kv[0]))
    }


def fields_of(runs: list[dict]) -> list[str]:
    return list(dict.fromkeys(f for r in runs for f in r["sets"]))


def field_rows(
    runs: list[dict],
    field: str,
    paper: dict | None,
    margin: float,
    baseline: str = BASELINE,
):
    """The table of one field of one group's runs (:func:`deepxde_lnn.analysis.table.rows`),
    over the looks of a sequential design if the runs came from one."""
    looks = max((r.get("_looks", 1) for r in runs if field in r["sets"]), default=1)
    return rows(runs, field, baseline, margin, looks, paper)


def is_paper_case(case: str, runs: list[dict]) -> bool:
    """Whether ``runs`` of ``case`` are of a shipped case of a published study,
    the paper's or PINNacle's (else of a problem of the user's: its records carry
    its fingerprint, or it is a case registered as yours)."""
    if case not in catalog.NAMES or case in names_of("yours"):
        return False
    return not any(r.get("problem") for r in runs)


def baseline_for(case: str, runs: list[dict]) -> str:
    """What a case's verdicts are against: `pinn` for the paper's cases and
    wherever a `pinn` ran; for a problem of the user's, the first method other
    than `lnn` in the tables' order (the registry's, then by name: ``fnn``
    before ``fnn-matched``)."""
    methods = sorted({r["method"] for r in runs}, key=method_order)
    if is_paper_case(case, runs) or BASELINE in methods:
        return BASELINE
    return next((m for m in methods if m != SUBJECT), methods[0])


@functools.lru_cache(maxsize=None)
def published_group(case: str) -> Group | None:
    """The group of a run made exactly at the published protocol for ``case``
    (the paper's; PINNacle's for its problems); None for a case of yours."""
    if case not in catalog.available() or case in names_of("yours"):
        return None
    entry = catalog.info(case)
    p = entry.profile(entry.published)
    assert p.lr is not None  # a case's profile: its learning rate
    run = {"profile": entry.published, "iterations": p.iterations, "lr": float(p.lr)}
    return Group.of({**run, "dtype": "float32", "budget": "steps"})


def paper_of(case: str, group: Group) -> dict | None:
    """The paper's numbers set beside a group's runs: for its protocols' groups
    of a registered case, never a problem of the user's own of that name."""
    return (
        paper_table(case) if group.profile in WITH_PAPER and not group.problem else None
    )


def _at_published(record: dict) -> bool:
    group = published_group(record["case"])
    if group is None:  # a case this version does not ship
        return record["profile"] == "paper"
    return Group.of(record) == group


def missing(runs: list[dict]) -> dict[str, dict[str, int]]:
    """``{case: {method: seeds}}`` for every method of :data:`REQUIRED` with fewer
    than :data:`N_SEEDS` seeds at the paper's protocol (profile, steps, lr,
    float32, step budget), over the paper's cases and any case in ``runs`` that
    this version does not ship (never a problem of the user's: a record with its
    fingerprint; nor a case of PINNacle's or of yours)."""
    paper_runs = [r for r in runs if _at_published(r)]
    names = sorted(
        set(names_of("paper"))
        | {
            r["case"]
            for r in runs
            if not r.get("problem") and r["case"] not in catalog.NAMES
        },
        key=case_order,
    )
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
