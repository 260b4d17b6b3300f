"""PINNacle's published errors beside ours: the relative L2 errors (L2RE, mean and
standard deviation over PINNacle's 3 runs) that its paper reports per problem and
method, shipped as ``reference/pinnacle/published_l2re.csv`` (its provenance in
``reference/pinnacle/README.md``; its SHA-256 checked as every shipped file's).

A PINNacle case is matched to its rows by the name its title gives
(``"PINNacle Burgers 1d-C: ..."``): PINNacle names a problem ``FAMILY PROBLEM``
(``Burgers 1d-C``) or by its problem alone (``PNd``, ``HInv``).
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..analysis.stats import CONVERGED_BELOW
from ..analysis.table import BASELINE, SUBJECT
from ..problems.reference_data import shipped_text
from ..runs.records import escape
from . import shipped
from .catalog import info
from .pooled_verdicts import StudyVerdict, baseline_errors
from .shipped import STRENGTHS, names_of

__all__ = [
    "Published",
    "published",
    "pinnacle_name",
    "Beside",
    "beside_published",
    "published_section",
    "PUBLISHED_FILE",
    "PROTOCOL",
    "PINNACLE_PROFILE",
]

PUBLISHED_FILE = ("pinnacle", "published_l2re.csv")
#: how PINNacle's numbers were obtained, in a few words (beside ours in a report)
PROTOCOL = (
    "PINNacle's protocol: a 5 × 100 tanh network, Adam for 20,000 steps at lr "
    "1e-3, 8,192 domain points (and per boundary and initial term 2,048, four "
    "times as many on some problems), mean ± std over 3 runs"
)
_TITLE = re.compile(r"^PINNacle (.+?):")
PINNACLE_PROFILE = STRENGTHS["short"]["pinnacle"]  # PINNacle's CPU profile
STRONG_PROFILE = STRENGTHS["strong"]["pinnacle"]  # ... and the strong one
MATCH_WITHIN = 2.0  # ours "matches" theirs at most this many times their error


@dataclass(frozen=True)
class Published:
    """One published L2RE: ``mean`` and ``std`` (None: the paper gives none) of
    ``method`` (PINNacle's column name) from the paper's ``table``."""

    method: str
    mean: float
    std: float | None
    table: str

    def text(self) -> str:
        """``0.0145 ± 0.00159``, or the mean alone."""
        std = "" if self.std is None else f" ± {self.std:.3g}"
        return f"{self.mean:.3g}{std}"


def pinnacle_name(case: str) -> str | None:
    """PINNacle's name of the shipped case ``case`` (None: not one of its)."""
    if case not in names_of("pinnacle"):
        return None
    found = _TITLE.match(info(case).title)
    return found.group(1) if found else None


def published(case: str) -> dict[str, Published]:
    """PINNacle's published L2RE of ``case`` by method (empty where it is not a
    PINNacle case, and without the methods whose cell is empty)."""
    name = pinnacle_name(case)
    return dict(_table().get(name, {})) if name else {}


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, Published]]:
    """Every published number, by problem name (both of its forms) and method."""
    out: dict[str, dict[str, Published]] = {}
    text = shipped_text(*PUBLISHED_FILE)
    for row in csv.DictReader(io.StringIO(text)):
        if not row["l2re_mean"]:
            continue
        std = float(row["l2re_std"]) if row["l2re_std"] else None
        value = Published(row["method"], float(row["l2re_mean"]), std, row["table"])
        if not math.isfinite(value.mean):
            raise ValueError(f"{'/'.join(PUBLISHED_FILE)}: a mean that is not finite")
        for name in (f"{row['family']} {row['problem']}", row["problem"]):
            out.setdefault(name, {})[row["method"]] = value
    return out


@dataclass(frozen=True)
class Beside:
    """One PINNacle problem: our `pinn`'s relative L2 errors (``ours``, median
    over ``seeds``, at the CPU profile) beside PINNacle's published vanilla PINN
    (``theirs``, its mean) and Adam then L-BFGS (``lbfgs``; None: not published)."""

    case: str
    ours: float | None
    seeds: int
    theirs: float | None
    theirs_text: str
    lbfgs: float | None
    strong: float | None = None  # ours at STRONG_PROFILE (median), its seeds:
    strong_seeds: int = 0

    @property
    def agree(self) -> bool | None:
        """Whether both converge or both fail (None: a number is missing)."""
        if self.ours is None or self.theirs is None:
            return None
        return (self.ours < CONVERGED_BELOW) == (self.theirs < CONVERGED_BELOW)

    @property
    def matches(self) -> bool | None:
        """Whether ours at the strong profile is at most :data:`MATCH_WITHIN`
        times one of PINNacle's converged errors (its PINN's, or Adam then
        L-BFGS's); None where theirs did not converge or a number is missing."""
        theirs = [t for t in (self.theirs, self.lbfgs) if t is not None]
        converged = [t for t in theirs if t < CONVERGED_BELOW]
        if self.strong is None or not converged:
            return None
        return self.strong <= MATCH_WITHIN * max(converged)


def beside_published(
    verdicts: Sequence[StudyVerdict], runs: Sequence[dict] = ()
) -> list[Beside]:
    """Our `pinn` beside PINNacle's published numbers, per PINNacle problem that
    ran `lnn` and `pinn` at the CPU profile (:data:`PINNACLE_PROFILE`), or `pinn`
    at the strong one (:data:`STRONG_PROFILE`, in ``strong``: from the verdicts,
    and from ``runs``, the records, where `pinn` ran there alone)."""
    ours = {p: _pinn_errors(verdicts, p) for p in (PINNACLE_PROFILE, STRONG_PROFILE)}
    alone = baseline_errors(runs, "pinnacle", STRONG_PROFILE)
    ours[STRONG_PROFILE] = {**alone, **ours[STRONG_PROFILE]}
    out = []
    for case in dict.fromkeys([*ours[PINNACLE_PROFILE], *ours[STRONG_PROFILE]]):
        short, seeds = ours[PINNACLE_PROFILE].get(case, (None, 0))
        strong, strong_seeds = ours[STRONG_PROFILE].get(case, (None, 0))
        numbers = published(case)
        pinn_pub, lbfgs = numbers.get("PINN"), numbers.get("LBFGS")
        out.append(
            Beside(
                case,
                short,
                seeds,
                pinn_pub.mean if pinn_pub else None,
                pinn_pub.text() if pinn_pub else "—",
                lbfgs.mean if lbfgs else None,
                strong,
                strong_seeds,
            )
        )
    return out


def _pinn_errors(verdicts, profile: str) -> dict[str, tuple[float | None, int]]:
    """Per PINNacle problem, our `pinn`'s median relL2 at ``profile`` and its
    seeds (from the `lnn` / `pinn` verdict's rows)."""
    out: dict[str, tuple[float | None, int]] = {}
    for v in verdicts:
        if (v.study, v.profile, v.pooled.a, v.pooled.b) != (
            "pinnacle",
            profile,
            SUBJECT,
            BASELINE,
        ):
            continue
        for case, (_, pinn) in v.rows.items():
            rel = pinn.values("relL2")
            out[case] = (float(np.median(rel)) if rel else None, len(rel))
    return out


PUBLISHED_HEADING = "## PINNacle's published errors beside ours"


def published_section(
    verdicts: Sequence[StudyVerdict], runs: Sequence[dict] = ()
) -> list[str]:
    """The report's table of our `pinn` beside PINNacle's published numbers
    (:func:`beside_published`)."""
    found = beside_published(verdicts, runs)
    if not found:
        return []
    lines = [
        PUBLISHED_HEADING,
        "",
        f"Our `{BASELINE}`'s relative L2 error at the CPU profile (`"
        f"{PINNACLE_PROFILE}`: a share of PINNacle's points, redrawn every step, "
        "2,000 steps with the settled decay; the median over seeds) beside the "
        f"L2RE that PINNacle publishes for its vanilla PINN ({PROTOCOL}) and for "
        "Adam then L-BFGS (its mean alone; — where it publishes none). The "
        "protocols differ, so the numbers are not the same experiment: the "
        f"question is whether each converges (an error below {CONVERGED_BELOW:g}) "
        "where the other does.",
        "",
        "| problem | PINNacle's name | our `pinn` (seeds) | PINNacle's PINN | "
        "PINNacle's Adam + L-BFGS | both converge or both fail |",
        "|---|---|---|---|---|---|",
    ]
    strong = any(b.strong is not None for b in found)
    if strong:
        lines[-4] += _strong_text()
        lines[-2] += f" our `pinn` at `{STRONG_PROFILE}` (seeds) | "
        lines[-2] += f"ours at `{STRONG_PROFILE}` within ×{MATCH_WITHIN:g} of theirs |"
        lines[-1] += "---|---|"
    yes_no = {True: "yes", False: "no", None: "—"}
    for b in found:
        lbfgs = "—" if b.lbfgs is None else f"{b.lbfgs:.3g}"
        name = escape(pinnacle_name(b.case) or "")
        line = (
            f"| {escape(b.case)} | {name} | {_median(b.ours, b.seeds)} | "
            f"{b.theirs_text} | {lbfgs} | {yes_no[b.agree]} |"
        )
        if strong:
            line += f" {_median(b.strong, b.strong_seeds)} | {yes_no[b.matches]} |"
        lines.append(line)
    return [*lines, ""]


def _median(value: float | None, seeds: int) -> str:
    return "—" if value is None else f"{value:.3g} ({seeds})"


def _strong_text() -> str:
    return (
        f" At the strong CPU profile (`{STRONG_PROFILE}`: "
        f"1/{1 / shipped.PINNACLE_ACCURATE_SHARE:g} of PINNacle's points, at most "
        f"{shipped.PINNACLE_ACCURATE_CAP:,} a term, one fixed set; "
        f"{shipped.PINNACLE_ACCURATE_STEPS:,} Adam steps, then L-BFGS), "
        f"ours matches theirs where it is at most {MATCH_WITHIN:g} times "
        "PINNacle's PINN's error or its Adam + L-BFGS error, on the problems "
        "where PINNacle's converged (— elsewhere)."
    )
