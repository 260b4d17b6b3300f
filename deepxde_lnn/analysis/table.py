"""Run records -> one table: per training configuration and method, statistics
over seeds and the verdict against a baseline.

Every table the package writes is built from these rows: a compare's
``summary.md``, a sweep's ``sweep.md``, the ablation table and the reproduction
report with its headline (:mod:`deepxde_lnn.analysis.summaries`,
:mod:`deepxde_lnn.experiments.ablation`, :mod:`deepxde_lnn.study.reproduction`).

* :class:`Group` is a training configuration: a run's identity without its case,
  method and seed (:meth:`deepxde_lnn.config.RunConfig.identity_of`, so every
  option that shapes a result, and the problem for a user's problem named like
  a registered case), with its budget: runs of different groups are never
  pooled;
* :func:`rows` gives one :class:`Row` per method for one field (or metric set)
  of one group's runs, in the registry's method order (:func:`method_order`):
  seeds, parameters, s/step (:func:`deepxde_lnn.runs.cost.cost`, marked where
  flagged: :func:`timing_mark`), ``mean ± std`` (and median, min, max) of every
  metric, the paper's numbers, and the geometric-mean RMSE ratio to the
  baseline with its interval (:func:`deepxde_lnn.analysis.stats.ratio_ci`),
  and beside it the robust companions (:mod:`deepxde_lnn.analysis.companions`);
* :func:`judged` states the verdicts of one family (a table's, or a column's)
  with Holm's adjustment where it changes one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..config import RunConfig
from ..problems.methods import COMPARED, METHODS
from ..problems.metrics import METRICS
from ..runs.cost import LOADED_SHARE, cost
from ..runs.names import lr_text
from ..runs.records import escape, failed, metric_sets
from .stats import (
    CONVERGED_BELOW,
    FAILURE_FACTOR,
    LEVEL,
    MARGIN,
    PBelow,
    RatioCI,
    bound_text,
    converged,
    failures,
    holm,
    p_below,
    ratio_ci,
)

__all__ = [
    "SUBJECT",
    "BASELINE",
    "MATCHED",
    "Group",
    "RUN_KEYS",
    "option_text",
    "Row",
    "method_order",
    "stats",
    "geomean",
    "paper_value",
    "rows",
    "prepare",
    "judged",
    "judged_text",
    "ci_text",
    "spread_text",
    "FAILURE_RULE",
    "CONVERGENCE_RULE",
    "not_converged",
    "value",
    "TIMING_MARKS",
    "timing_mark",
    "timing_notes",
    "timing_states",
]

# compare's default pair: the LNN and its plain twin, the baseline of every verdict
SUBJECT, BASELINE = COMPARED
MATCHED = "pinn-matched"  # the plain MLP of the LNN's parameter count (a control)
# per-run quantities beside the metrics: the training seconds (the run's cost,
# :func:`deepxde_lnn.runs.cost.cost`), the final loss J and the steps taken (a
# time budget stops at its own step)
EXTRA = ("train_seconds", "J", "steps")

#: the mark a timing cell carries when its runs' timing is flagged
#: (:func:`deepxde_lnn.runs.cost.timing_state`), and the sentence that explains it
TIMING_MARKS = {"loaded": "†", "unknown": "‡"}
_TIMING_NOTES = {
    "loaded": (
        "† timed under load: the process got less than "
        f"{LOADED_SHARE:.0%} of the CPU time its threads asked for, so its CPU "
        "seconds are shown instead of its wall seconds (with one thread, what it "
        "costs on an idle core)."
    ),
    "unknown": (
        "‡ timing unknown: recorded before CPU time was kept, so whether the "
        "machine was loaded is unknown; its wall seconds may overstate the cost "
        "many times."
    ),
}


def timing_states(runs: Iterable[dict]) -> tuple[str, ...]:
    """The flagged timing states among ``runs`` (``"loaded"``, ``"unknown"``)."""
    found = {cost(r).state for r in runs}
    return tuple(k for k in TIMING_MARKS if k in found)


def timing_mark(states: Iterable[str]) -> str:
    """A timing cell's marks for ``states`` (:func:`timing_states`), e.g. ``†``."""
    found = set(states)
    return "".join(TIMING_MARKS[k] for k in TIMING_MARKS if k in found)


def timing_notes(states: Iterable[str]) -> list[str]:
    """The sentences under a table explaining its marks, one per state found."""
    found = set(states)
    return [_TIMING_NOTES[k] for k in TIMING_MARKS if k in found]


def method_order(method: str) -> tuple[int, str]:
    """A method's place in every table: the registry's order
    (:data:`deepxde_lnn.problems.methods.METHODS`), then other names (variants with
    options, a user's networks) alphabetically."""
    return (METHODS.index(method) if method in METHODS else len(METHODS), method)


def stats(values: Iterable[float]) -> dict:
    """``mean``, sample ``std`` (0 for one value), ``median``, ``min``, ``max``
    and ``n`` of ``values`` (finite for finite values, however large)."""
    v = np.asarray(list(values), float)
    return {
        "mean": _finite(np.mean, v),
        "std": _finite(lambda x: np.std(x, ddof=1), v) if len(v) > 1 else 0.0,
        "median": _finite(np.median, v),
        "min": float(v.min()),
        "max": float(v.max()),
        "n": int(len(v)),
    }


def _finite(statistic, v: np.ndarray) -> float:
    """``statistic(v)``; where that overflows (values near float64's largest),
    the same on the values scaled by their largest magnitude, scaled back."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = float(statistic(v))
        if np.isfinite(out) or not np.isfinite(v).all():
            return out
        scale = float(np.max(np.abs(v)))
        return scale * float(statistic(v / scale))


def geomean(values: Iterable[float]) -> float:
    """``exp(mean(log v))``; 0 where a value is 0 (its limit: 0 has no logarithm)."""
    v = np.asarray(list(values), float)
    return 0.0 if (v == 0).any() else float(np.exp(np.mean(np.log(v))))


#: the keys of an identity that name a run within its configuration
RUN_KEYS = ("case", "method", "seed")
# the options a label names in its own words, and the order groups sort in (the
# others follow, by name: :attr:`Group.others`)
_NAMED = ("profile", "iterations", "lr", "dtype", "seconds", "lbfgs", "decay")


@dataclasses.dataclass(frozen=True)
class Group:
    """One training configuration: a run's identity
    (:meth:`~deepxde_lnn.config.RunConfig.identity_of`: the problem and every
    option that shapes the result) without its case, method and seed, with how
    the run counted its budget and how L-BFGS saw the loss (older records); runs
    of different groups are never pooled."""

    options: tuple[tuple[str, object], ...]  # the identity's (key, value), in order
    budget: str = "steps"
    lbfgs_loss: str = ""  # "scaled" (to 1 at the switch) or "raw" (older records)

    @classmethod
    def of(cls, record: Mapping) -> Group:
        """The group of the run that wrote ``record``."""
        identity = RunConfig.identity_of(record)
        return cls(
            tuple((k, _frozen(v)) for k, v in identity.items() if k not in RUN_KEYS),
            record.get("budget", "steps"),
            _lbfgs_loss(record),
        )

    def get(self, key: str, default=None):
        """The value of the identity's ``key`` (``default`` where it is left out:
        an option at its default)."""
        return dict(self.options).get(key, default)

    @property
    def profile(self) -> str:
        return self.get("profile")

    @property
    def iterations(self) -> int | None:
        return self.get("iterations")

    @property
    def lr(self) -> float | None:
        return self.get("lr")

    @property
    def dtype(self) -> str:
        return self.get("dtype")

    @property
    def seconds(self) -> float | None:
        """The time budget per run, if any."""
        return self.get("seconds")

    @property
    def lbfgs(self) -> int:
        """L-BFGS iterations (at most) after the Adam steps."""
        return self.get("lbfgs", 0)

    @property
    def decay(self) -> str:
        """Adam's learning-rate schedule ("": constant)."""
        decay = self.get("decay")
        return "" if decay is None else ", ".join(map(str, decay))

    @property
    def problem(self) -> str:
        """A problem of the user's own: its fingerprint ("": none)."""
        return self.get("problem", "")

    @property
    def others(self) -> tuple[tuple[str, object], ...]:
        """The identity's options that the label does not name in its own words
        (e.g. ``loss_weights``, ``score``), by name."""
        return tuple(
            sorted((k, v) for k, v in self.options if k not in (*_NAMED, "problem"))
        )

    def _lr(self) -> str:
        lr = f"lr {lr_text(None)}" if self.lr is None else f"lr {self.lr:g}"
        return lr + (f" with decay ({escape(self.decay)})" if self.decay else "")

    def _others(self) -> str:
        """The other options, in words: ``, loss_weights (1, 100), score best``."""
        return "".join(f", {escape(k)} {option_text(v)}" for k, v in self.others)

    @property
    def own_training(self) -> bool:
        """Whether the runs were trained by the user's function (its steps,
        optimizer and learning rate its own: none of the package's)."""
        return self.iterations is None

    def label(self) -> str:
        profile, dtype, budget = map(escape, (self.profile, self.dtype, self.budget))
        if self.own_training:
            return (
                f"trained by your function (its own steps, optimizer and learning "
                f"rate), {dtype}" + self._others() + self._problem()
            )
        steps = f"{self.iterations} steps"
        if self.lbfgs:
            steps = f"{self.iterations} Adam steps + at most {self.lbfgs} L-BFGS"
            steps += " on the raw loss" if self.lbfgs_loss == "raw" else ""
        if self.seconds is not None:
            steps = f"{self.seconds:.4g} s per run (at most {self.iterations} steps)"
        return (
            f"profile `{profile}`, {steps}, {self._lr()}, "
            f"{dtype}, budget `{budget}`" + self._others() + self._problem()
        )

    def _problem(self) -> str:
        """The problem, where the case's name does not say it."""
        return f", problem `{escape(self.problem[:19])}…`" if self.problem else ""

    def short(self) -> str:
        """A few words naming the group in the headline table."""
        profile = escape(self.profile) + self._problem()
        if self.own_training:
            return f"{profile}, your function's training" + self._others()
        if self.seconds is not None:
            return f"{profile}, {self.seconds:.4g} s per run" + self._others()
        if self.lbfgs:
            adam = f"{self.iterations} Adam + ≤ {self.lbfgs} L-BFGS"
            return f"{profile}, {adam}" + self._others()
        return f"{profile}, {self.iterations} steps, {self._lr()}" + self._others()

    def sort_key(self) -> tuple:
        """The group's place in a report; a step budget (no ``seconds``) sorts
        before time budgets, so groups with and without seconds compare; the
        options named by no word of the label sort last, by their text."""
        return (
            self.profile,
            self.iterations,
            self.lr,
            self.dtype,
            self.budget,
            self.seconds is not None,
            self.seconds or 0.0,
            self.lbfgs,
            self.lbfgs_loss,
            self.decay,
            self.problem,
            tuple((k, option_text(v)) for k, v in self.others),
        )


def _frozen(value):
    """An identity's value, hashable (its lists as tuples)."""
    return tuple(map(_frozen, value)) if isinstance(value, list) else value


def option_text(value) -> str:
    """A record's option value in a sentence (escaped)."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(map(option_text, value)) + ")"
    if isinstance(value, float):
        return lr_text(value)
    return escape(value)


def _lbfgs_loss(record: Mapping) -> str:
    """How L-BFGS saw the loss: records before the scaled L-BFGS have no scale."""
    if not record.get("lbfgs"):
        return ""
    return "scaled" if "lbfgs_loss_scale" in record else "raw"


def prepare(runs: Iterable[dict]) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """Records with their metric sets (``"sets"``) and configuration
    (``"group"``), one per run (case, group, method, seed: the run's identity):
    the first one given is kept; later ones come back as ``(duplicate, kept)``
    pairs."""
    kept: list[dict] = []
    first: dict[tuple, dict] = {}
    dropped: list[tuple[dict, dict]] = []
    for rec in runs:
        r = {**rec, "sets": metric_sets(rec), "group": Group.of(rec)}
        key = (r["case"], r["group"], r["method"], r["seed"])
        if key in first:
            dropped.append((r, first[key]))
            continue
        first[key] = r
        kept.append(r)
    return kept, dropped


def paper_value(
    table: Mapping | None, method: str, field: str, metric: str = "RMSE"
) -> float | None:
    """The paper's ``metric`` for ``method`` and ``field`` in ``table`` (a case's
    :func:`deepxde_lnn.study.paper.paper_table`; its methods are named as ours); a set
    ``F@GRID`` (another evaluation grid) gets the paper's number for ``F``;
    ``train_seconds`` is the paper's training time."""
    row = (table or {}).get(method, {})
    if metric == "train_seconds":
        return row.get("train_s")
    ref = row.get(field) or row.get(field.split("@")[0])
    return ref.get(metric) if isinstance(ref, dict) else None


@dataclasses.dataclass(frozen=True)
class Row:
    """One method's runs (sorted by seed) on one field: ``stats`` of every
    metric and of :data:`EXTRA` (over the runs that hold it; absent when none
    does), the paper's numbers, and ``ci``, the RMSE ratio to the baseline
    (None for the baseline itself or without it), with ``below``, the
    probability that a seed's RMSE is below one of the baseline's."""

    method: str
    field: str
    runs: tuple[dict, ...] = dataclasses.field(repr=False)
    stats: Mapping[str, dict]
    parameters: tuple[int, ...]
    s_per_step: float | None  # mean of the runs' cost per step
    devices: tuple[str, ...]
    paper: Mapping[str, float]
    ci: RatioCI | None
    below: PBelow | None = None
    timing: tuple[str, ...] = ()  # the flagged timing states (timing_states)

    @property
    def s_per_step_text(self) -> str:
        """s/step in a cell, marked where flagged (:func:`timing_mark`)."""
        if self.s_per_step is None:
            return "—"
        return f"{self.s_per_step:.3g}{timing_mark(self.timing)}"

    @property
    def n(self) -> int:
        return len(self.runs)

    @property
    def seeds(self) -> list[int]:
        return [r["seed"] for r in self.runs]

    def values(self, metric: str) -> list[float]:
        """``metric`` per run (a metric of the field, or one of :data:`EXTRA`)."""
        values = (value(r, self.field, metric) for r in self.runs)
        return [v for v in values if v is not None]

    @property
    def rmse_geomean(self) -> float:
        return geomean(self.values("RMSE"))

    @property
    def failures(self) -> int:
        """Seeds that failed (:data:`FAILURE_RULE`): an RMSE above
        ``FAILURE_FACTOR`` times the median's, or a relative L2 error of at
        least ``CONVERGED_BELOW`` (so a method failing every seed shows it), or
        no error that is a number (:func:`~deepxde_lnn.runs.records.failed`)."""
        rmse = [value(r, self.field, "RMSE") for r in self.runs]
        return failures(rmse, _relative_errors(self.runs, self.field))

    @property
    def converged(self) -> bool | None:
        """Whether the method converged (:func:`~.stats.converged`)."""
        return _converged(self.runs, self.field)

    @property
    def vs_paper(self) -> float | None:
        """Our mean RMSE over the paper's."""
        ref, ours = self.paper.get("RMSE"), self.stats.get("RMSE")
        return ours["mean"] / ref if ref and ours else None  # none: every seed failed


def value(record: dict, field: str, metric: str) -> float | None:
    """A run's ``metric`` on ``field`` (or one of :data:`EXTRA`; None if the
    record lacks it)."""
    if metric == "J":
        return record.get("final_loss", {}).get("total")
    if metric == "steps":
        return record.get("steps", record["iterations"])
    if metric == "train_seconds":
        return cost(record).run_seconds
    if metric in EXTRA:
        return record.get(metric)
    return _sets(record)[field][metric]


def _sets(record: dict) -> dict:
    """The record's metric sets (kept as ``"sets"`` by :func:`prepare`)."""
    return record["sets"] if "sets" in record else metric_sets(record)


def rows(
    runs: Sequence[dict],
    field: str,
    baseline: str = BASELINE,
    margin: float = MARGIN,
    looks: int = 1,
    paper: Mapping | None = None,
) -> list[Row]:
    """One :class:`Row` per method of the ``runs`` holding ``field`` (records of
    one configuration), in :func:`method_order`. Each method ``m`` but ``baseline``
    is compared with it by ``exp(mean log RMSE_m - mean log RMSE_baseline)`` over
    seeds (paired by seed where possible), judged with ``margin`` over a design of
    ``looks`` looks (:func:`deepxde_lnn.analysis.stats.ratio_ci`); ``paper`` is the case's
    paper table (None: no paper numbers)."""
    have = [r for r in runs if field in _sets(r)]
    by_method: dict[str, list[dict]] = {}
    for r in sorted(have, key=lambda r: (method_order(r["method"]), r["seed"])):
        by_method.setdefault(r["method"], []).append(r)
    base = _errors(by_method.get(baseline, []), field)
    failed_base = _converged(by_method.get(baseline, []), field) is False
    several = len({r.get("device", "?") for r in have}) > 1
    out = []
    for m, mine in by_method.items():
        row = _row(m, field, mine, paper)
        rmse = _errors(mine, field)
        compared = base and rmse and m != baseline
        ci = ratio_ci(rmse, base, LEVEL, margin, looks) if compared else None
        if ci is not None:
            ci = dataclasses.replace(ci, unconverged=(not_converged(row), failed_base))
        below = p_below(rmse, base, LEVEL) if compared else None
        devices = row.devices if several else ()
        out.append(dataclasses.replace(row, ci=ci, below=below, devices=devices))
    return out


def _errors(runs: Sequence[dict], field: str) -> dict[int, float]:
    """``{seed: RMSE}`` of ``runs`` on ``field``; a run that failed on it
    (:func:`~deepxde_lnn.runs.records.failed`: no error that is a number) has
    none, so no ratio or P(< B) holds it: it counts in :attr:`Row.failures`."""
    errors = {r["seed"]: value(r, field, "RMSE") for r in runs}
    return {s: e for s, e in errors.items() if e is not None}


def _relative_errors(runs: Sequence[dict], field: str) -> list[float | None]:
    """Each run's relative L2 error on ``field`` (None: unknown, a zero truth);
    infinite for a run that failed on it: it did not converge."""
    return [
        math.inf if failed(_sets(r)[field]) else value(r, field, "relL2") for r in runs
    ]


def _converged(runs: Sequence[dict], field: str) -> bool | None:
    """Whether the method of ``runs`` converged on ``field`` (None: unknown)."""
    return converged(_relative_errors(runs, field))


def not_converged(row: Row) -> bool:
    """Whether ``row``'s method did not converge (unknown counts as converged)."""
    return row.converged is False


def _row(
    method: str, field: str, mine: list[dict], paper: Mapping | None = None
) -> Row:
    """The row of ``method``'s runs ``mine``, without a comparison."""
    metrics = {k: [value(r, field, k) for r in mine] for k in (*METRICS, *EXTRA)}
    steps = [c.step_seconds for c in map(cost, mine) if c.step_seconds is not None]
    ref = {k: paper_value(paper, method, field, k) for k in (*METRICS, EXTRA[0])}
    return Row(
        method=method,
        field=field,
        runs=tuple(mine),
        stats={
            k: stats(v for v in vals if v is not None)
            for k, vals in metrics.items()
            if any(v is not None for v in vals)
        },
        parameters=tuple(sorted({r["parameters"] for r in mine if "parameters" in r})),
        s_per_step=float(np.mean(steps)) if steps else None,
        devices=tuple(sorted({r.get("device", "?") for r in mine})),
        paper={k: v for k, v in ref.items() if v is not None},
        ci=None,
        timing=timing_states(mine),
    )


def judged(cis: Sequence[RatioCI | None]) -> list[str]:
    """Each verdict of one family (a table, or a column), with Holm's adjusted
    verdict where it differs, e.g. ``better (Holm: undecided)``; "—" for no
    comparison."""
    return [judged_text(ci, adj) for ci, adj in zip(cis, holm(cis, LEVEL))]


def judged_text(ci: RatioCI | None, adjusted: str | None) -> str:
    """One verdict's cell: the interval's verdict, with ``adjusted`` (its family's,
    after Holm) where it differs; "—" for no comparison."""
    if ci is None:
        return "—"
    if adjusted == ci.verdict:
        return ci.verdict_text()
    alone = dataclasses.replace(ci, unconverged=(False, False)).verdict_text()
    notes = (f"Holm: {adjusted}", ci.convergence_text())
    return f"{alone} (" + "; ".join(n for n in notes if n) + ")"


def ci_text(ci: RatioCI | None) -> str:
    """A ratio's table cell: ``ratio (low–high)``, marked where unpaired (Welch);
    "—" for no comparison."""
    if ci is None:
        return "—"
    if ci.undefined:
        return "undefined (an error of 0)"
    if not math.isfinite(ci.high):
        return f"{ci.ratio:.3g} (no interval)"
    how = "" if ci.paired else ", Welch"
    return f"{ci.ratio:.3g} ({bound_text(ci.low)}–{bound_text(ci.high)}{how})"


def spread_text(stats: Mapping | None) -> str:
    """A metric over seeds in a table cell, ``mean ± std``; "—" where no run
    holds it as a number (:data:`~deepxde_lnn.runs.names.NULLABLE_METRICS`)."""
    if not stats or stats.get("mean") is None:
        return "—"
    return f"{stats['mean']:.3e} ± {stats['std']:.1e}"


FAILURE_RULE = (
    f"a seed fails when its RMSE exceeds {FAILURE_FACTOR:g}× the median RMSE of "
    f"its method's seeds, or when its relative L2 error is {CONVERGED_BELOW:g} or "
    "more (it did not converge)"
)
#: when a verdict says that a method did not converge, in a sentence (summaries)
CONVERGENCE_RULE = (
    "A method did not converge where the median of its seeds' relative L2 errors "
    f"is {CONVERGED_BELOW:g} or more (an error half the size of the solution): a "
    "verdict between two such methods compares two failures and says so "
    '("neither converged").'
)
