"""When do the liquid blocks help? Variants of the LNN and of its plain twin, each
trained over seeds, step-matched and time-matched, in one table.

Variants (method names with options, :mod:`deepxde_lnn.methods`):

* ``lnn``: the paper's block (``alpha_init`` 0.5, the case's layout, width 64);
* ``lnn:alpha_init=0``: every block the identity at the start;
* ``lnn:layout=...``: the other layout (``standard`` <-> ``reduced``);
* ``lnn:width=32``, ``lnn:width=98``: narrower and wider;
* ``rezero``: the blocks with one scalar ``alpha`` each, initialised to 0 (ReZero);
* ``pinn``, ``pinn:width=32``, ``pinn-matched``: the plain MLP at width 64, 32 and
  at the LNN's parameter count.

Every row's error is compared with ``pinn`` of the same budget (geometric-mean
RMSE ratio over seeds with a 95 % interval, paired by seed) and judged "better",
"worse", "equivalent within ×m" or "undecided" (:mod:`deepxde_lnn.stats`); each
column's verdicts are one family, with Holm's adjustment shown where it differs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .case import Case
from .records import escape
from .report import judged, load_runs, one_case, verdict_rule, verdicts
from .sequential import looks_of
from .stats import MARGIN

__all__ = ["variants", "table", "BUDGETS"]

BUDGETS = ("steps", "time")


def variants(case: Case) -> list[str]:
    other = "reduced" if case.lnn_layout == "standard" else "standard"
    return [
        "lnn",
        "lnn:alpha_init=0",
        f"lnn:layout={other}",
        "lnn:width=32",
        "lnn:width=98",
        "rezero",
        "pinn",
        "pinn:width=32",
        "pinn-matched",
    ]


def _geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values))))


def _column(root: Path, case: Case, field: str, margin: float) -> dict:
    """Per method: (parameters, s/step, geometric-mean RMSE, seeds, steps,
    verdict text)."""
    runs = load_runs(root) if root.exists() else []
    if runs:
        one_case(runs, case.name)
    out = {}
    found = {
        m: ci
        for m, f, ci in verdicts(runs, [field], margin=margin, looks=looks_of(root))
        if f == field
    }
    texts = dict(zip(found, judged(list(found.values()))))
    for m in dict.fromkeys(r["method"] for r in runs):
        mine = [r for r in runs if r["method"] == m]
        rmse = [r["metrics"][field]["RMSE"] for r in mine]
        ci = found.get(m)
        verdict = "baseline" if m == "pinn" else "—"
        if ci is not None:
            verdict = f"{ci.ratio:.3g} ({ci.low:.3g}–{ci.high:.3g}) {texts[m]}"
        steps = np.mean([r.get("steps", r["iterations"]) for r in mine])
        out[m] = (
            mine[0]["parameters"],
            float(np.mean([r["seconds_per_iteration"] for r in mine])),
            _geomean(rmse),
            len(mine),
            steps,
            verdict,
        )
    return out


def table(root: str | Path, case: Case, margin: float = MARGIN) -> str:
    """The ablation table (markdown) from ``root/steps`` and ``root/time``."""
    root = Path(root)
    lines = [f"# Ablation: {case.name}", ""]
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
    for field in case.fields:
        cols = {b: _column(root / b, case, field, margin) for b in BUDGETS}
        names = list(dict.fromkeys([*cols["steps"], *cols["time"]]))
        lines += [f"## {field}", ""]
        lines += [
            "| variant | parameters | s/step | seeds | RMSE (steps) | vs pinn (steps) "
            "| steps taken (time) | RMSE (time) | vs pinn (time) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for m in names:
            s, t = cols["steps"].get(m), cols["time"].get(m)
            ref = s or t
            lines.append(
                f"| `{escape(m)}` | {ref[0]:,} | {ref[1]:.4g} | {ref[3]} | "
                + (f"{s[2]:.3e} | {s[5]} | " if s else "— | — | ")
                + (f"{t[4]:.0f} | {t[2]:.3e} | {t[5]} |" if t else "— | — | — |")
            )
        lines += ["", _family_line(cols), ""]
    return "\n".join(lines)


def _family_line(cols: dict) -> str:
    """How many verdicts each column (family) holds."""
    n = {b: sum(v[5] not in ("—", "baseline") for v in cols[b].values()) for b in cols}
    return "Verdicts per family: " + ", ".join(f"{n[b]} ({b})" for b in cols) + "."
