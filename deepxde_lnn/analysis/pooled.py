"""One comparison over several problems: is method A's error smaller than method
B's, not on one problem (:mod:`.stats`) but over a study's problems?

Each problem ``p`` gives its log geometric-mean ratio ``y_p`` as
:func:`~.stats.ratio_ci` computes it (paired over the common seeds when there are
at least two, else the difference of the mean log errors). The pooled ratio is
their geometric mean, ``exp(mean_p y_p)``: every problem weighs the same (no
inverse-variance weights, so a problem whose seeds agree exactly neither
dominates nor collapses the pool). Two percentile bootstrap intervals at
``level``:

* *over seeds*: the problems fixed, the seeds of each resampled (in pairs where
  paired, each method's on its own where not): a stratified bootstrap,
  :func:`scipy.stats.bootstrap` over the problems' samples;
* *over seeds and problems*: problems drawn with replacement, then the seeds of
  each drawn problem: a two-stage bootstrap. Its verdict is the verdict
  (:class:`Pooled`): it asks whether the answer holds beyond the problems chosen.

Beside them: P(improvement), the mean over problems of :func:`~.stats.p_below`'s
``P(A < B)`` with an over-seeds interval, and how much the problems disagree
(between-problem spread ``tau``, ``I²``, Cochran's Q, the problems that go the
other way). Problems where a method did not converge, whose ratio is undefined
(an error of 0) or with fewer than 2 seeds a method are not pooled but listed
apart with the reason. ``docs/verdicts.md`` states the rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from scipy import stats

from ..checks import check_int, is_number
from .stats import (
    BOOTSTRAP,
    DECIDING,
    LEVEL,
    MARGIN,
    UNDECIDED,
    RatioCI,
    bound_text,
    check_margin,
    ratio_ci,
    share_below,
)

__all__ = ["Errors", "Pooled", "pool", "FEWER"]

FEWER = "fewer than 2 problems to pool"  # why a pool of 0 or 1 problem says nothing


class Errors(NamedTuple):
    """One problem's errors of A and of B (each ``{seed: error}``, finite and >=
    0) and whether each method converged there (:func:`~.stats.converged`; None:
    unknown, taken as converged)."""

    a: Mapping[int, float]
    b: Mapping[int, float]
    converged_a: bool | None = None
    converged_b: bool | None = None


@dataclass(frozen=True)
class Pooled:
    """Method ``a`` against ``b`` over the pooled ``problems`` (name: its own
    :class:`~.stats.RatioCI`, sorted by name).

    ``ratio``: the geometric mean of the problems' ratios; ``interval`` over
    seeds and problems (its ``verdict`` is the verdict), ``seeds_interval`` over
    seeds alone (``seeds_verdict``); ``p_improve``: the mean over problems of
    P(a < b), ``p_interval`` over seeds. ``tau2``: the between-problem variance of
    the log ratios, ``i2`` its share of the total, ``q_p`` Cochran's Q test's
    p-value (None: ``q_note`` says why). ``opposite``: problems whose own ratio
    lies on the other side of 1 from ``ratio``; ``decided_opposite``: those of
    them whose own verdict says so. ``excluded``: name: why it is not pooled.
    With fewer than 2 problems to pool every estimate is None, the verdicts
    undecided.
    """

    a: str
    b: str
    problems: dict[str, RatioCI]
    excluded: dict[str, str]
    level: float
    margin: float
    n_resamples: int
    ratio: float | None = None
    interval: tuple[float, float] | None = None
    seeds_interval: tuple[float, float] | None = None
    verdict: str = UNDECIDED
    seeds_verdict: str = UNDECIDED
    p_improve: float | None = None
    p_interval: tuple[float, float] | None = None
    tau2: float | None = None
    i2: float | None = None
    q_p: float | None = None
    q_note: str = FEWER
    opposite: tuple[str, ...] = ()
    decided_opposite: tuple[str, ...] = ()

    @property
    def tau_factor(self) -> float | None:
        """``exp(tau)``: one standard deviation between problems, as a factor."""
        return None if self.tau2 is None else math.exp(math.sqrt(self.tau2))

    def text(self) -> str:
        """One line: ratio, both intervals, verdict, P(a < b), how the problems
        disagree and which were not pooled."""
        k = len(self.problems)
        head = f"{self.a}/{self.b} over {k} problem{'' if k == 1 else 's'}"
        if self.ratio is None:
            parts = [f"{head}: {self.verdict} ({FEWER})"]
        else:  # pooled: every estimate set
            assert self.interval and self.seeds_interval and self.p_interval
            lo, hi = map(bound_text, self.interval)
            slo, shi = map(bound_text, self.seeds_interval)
            alone = (
                f" (over seeds alone: {self.seeds_verdict})"
                if self.seeds_verdict != self.verdict
                else ""
            )
            plo, phi = self.p_interval
            parts = [
                f"{head}: {self.ratio:.3g} ({lo}–{hi} over seeds and problems; "
                f"{slo}–{shi} over seeds): {self.verdict}{alone}",
                f"P({self.a} < {self.b}) {self.p_improve:.2f} ({plo:.2f}–{phi:.2f})",
                self._spread_text(),
            ]
        if self.excluded:
            apart = ", ".join(f"{n} ({why})" for n, why in self.excluded.items())
            parts.append(f"not pooled: {apart}")
        return "; ".join(parts)

    def _spread_text(self) -> str:
        """``problems disagree: I² 0.31, ×1.4 between problems, Q test p 0.041,
        the other way: heat (decided)``."""
        assert self.tau2 is not None  # pooled: every estimate set
        word = "disagree" if self.tau2 > 0 else "agree"
        q = f"Q test p {self.q_p:.2g}" if self.q_p is not None else self.q_note
        out = (
            f"problems {word}: I² {self.i2:.2f}, ×{self.tau_factor:.3g} between "
            f"problems, {q}"
        )
        if self.opposite:
            names = ", ".join(
                f"{n} (decided)" if n in self.decided_opposite else n
                for n in self.opposite
            )
            out += f", the other way: {names}"
        return out


class _Logs(NamedTuple):
    """One pooled problem's log errors over the seeds its ratio uses (the common
    seeds, in the same order, where ``paired``)."""

    la: np.ndarray
    lb: np.ndarray
    paired: bool

    def samples(self) -> tuple[np.ndarray, ...]:
        """The seed indices the bootstrap resamples: one array of pairs where
        paired, else one per method."""
        if self.paired:
            return (np.arange(len(self.la)),)
        return np.arange(len(self.la)), np.arange(len(self.lb))

    def at(self, ia: np.ndarray, ib: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The log ratio and P(A < B) of the seeds ``ia`` of A and ``ib`` of B
        (indices along the last axis)."""
        xa, xb = self.la[ia], self.lb[ib]
        return xa.mean(-1) - xb.mean(-1), share_below(xa, xb)

    def draw(self, rng: np.random.Generator, m: int) -> np.ndarray:
        """``m`` log ratios over seeds drawn with replacement."""
        ia = rng.integers(0, len(self.la), size=(m, len(self.la)))
        ib = ia if self.paired else rng.integers(0, len(self.lb), (m, len(self.lb)))
        return self.at(ia, ib)[0]


def _verdict(low: float, high: float, margin: float) -> str:
    """The verdict of an interval by :attr:`.stats.RatioCI.verdict`, the one rule
    (better / worse / equivalent within ×m / undecided)."""
    return RatioCI(math.nan, low, high, 0, 0, False, LEVEL, margin).verdict


def _check(problems: Mapping[str, Errors], level, margin, seed) -> dict:
    """The errors as :class:`Errors` and each problem's :class:`RatioCI`, or a
    ValueError naming the bad argument."""
    if not (is_number(level) and 0 < level < 1):
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    check_margin(margin)
    check_int(seed, "seed", 0)
    out = {}
    for name in sorted(problems):
        errs = Errors(*problems[name])
        for who, flag in (("converged_a", errs[2]), ("converged_b", errs[3])):
            if flag is not None and not isinstance(flag, bool):
                raise ValueError(
                    f"problems[{name!r}].{who} must be True, False or None; "
                    f"got {flag!r}"
                )
        if not errs.a or not errs.b:
            raise ValueError(f"problems[{name!r}] needs at least one error per method")
        try:
            ci = ratio_ci(errs.a, errs.b, level, margin)
        except ValueError as err:
            raise ValueError(f"problems[{name!r}].{err}") from None
        unconverged = (errs.converged_a is False, errs.converged_b is False)
        out[name] = (errs, replace(ci, unconverged=unconverged))
    return out


def _why_apart(ci: RatioCI, a: str, b: str) -> str:
    """Why a problem is not pooled ("" where it is)."""
    if any(ci.unconverged):
        return ci.convergence_text(a, b)
    if ci.undefined:
        return "ratio undefined: an error of 0"
    if min(ci.n_a, ci.n_b) < 2:
        return f"fewer than 2 seeds ({a} {ci.n_a}, {b} {ci.n_b})"
    return ""


def _logs(errs: Errors, ci: RatioCI) -> _Logs:
    """The log errors ``ci`` uses, seeds in increasing order."""
    if ci.paired:
        common = sorted(set(errs.a) & set(errs.b))
        sa = sb = common
    else:
        sa, sb = sorted(errs.a), sorted(errs.b)
    la = np.log(np.array([errs.a[s] for s in sa], float))
    lb = np.log(np.array([errs.b[s] for s in sb], float))
    return _Logs(la, lb, ci.paired)


def _over_seeds(
    logs: list[_Logs], level: float, n_resamples: int, seed: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Percentile intervals, seeds resampled within each problem (problems
    fixed), of the pooled log ratio and of the mean P(A < B)."""
    where: list[range] = []
    data: list[np.ndarray] = []
    for lg in logs:
        where.append(range(len(data), len(data) + len(lg.samples())))
        data.extend(lg.samples())

    def statistic(*given: np.ndarray, axis: int = -1) -> np.ndarray:
        idx = [np.moveaxis(i, axis, -1) for i in given]
        y, p = zip(*(lg.at(idx[w[0]], idx[w[-1]]) for lg, w in zip(logs, where)))
        return np.stack([np.mean(y, axis=0), np.mean(p, axis=0)])

    cells = sum(len(lg.la) * len(lg.lb) for lg in logs)
    ci = stats.bootstrap(
        tuple(data),
        statistic,
        paired=False,  # each sample on its own: seeds resampled within problems
        vectorized=True,
        confidence_level=level,
        n_resamples=n_resamples,
        batch=max(1, 2**22 // cells),  # bounded memory
        method="percentile",
        rng=np.random.default_rng(seed),
    ).confidence_interval
    low, high = np.asarray(ci.low, float), np.asarray(ci.high, float)
    ratio = (math.exp(low[0]), math.exp(high[0]))
    return ratio, (float(low[1]), float(high[1]))


def _over_problems(
    logs: list[_Logs], level: float, n_resamples: int, seed: int
) -> tuple[float, float]:
    """Percentile interval of the pooled ratio, problems drawn with replacement
    and then the seeds of each drawn problem (two stages)."""
    rng = np.random.default_rng(seed)
    k = len(logs)
    chosen = rng.integers(0, k, size=(n_resamples, k))
    y = np.empty((n_resamples, k))
    for p, lg in enumerate(logs):  # every draw of problem p, its seeds anew
        drawn = chosen == p
        y[drawn] = lg.draw(rng, int(drawn.sum()))
    q = (1 - level) / 2
    low, high = np.quantile(y.mean(axis=1), [q, 1 - q])
    return math.exp(low), math.exp(high)


def _spread(cis: dict[str, RatioCI]) -> dict:
    """Heterogeneity: ``tau2`` by the unweighted method of moments, ``i2``,
    Cochran's Q p-value (``q_p``, None with a note where a problem has se 0)."""
    y = np.array([ci.log_mean for ci in cis.values()])
    se2 = np.array([ci.se for ci in cis.values()]) ** 2
    tau2 = max(0.0, float(y.var(ddof=1) - se2.mean()))
    i2 = tau2 / (tau2 + float(se2.mean())) if tau2 > 0 else 0.0
    tied = [n for n, ci in cis.items() if ci.se == 0]
    if tied:
        note = f"no Q test ({', '.join(tied)}: no spread between seeds, se 0)"
        return {"tau2": tau2, "i2": i2, "q_p": None, "q_note": note}
    w = 1 / se2
    q = float(np.sum(w * (y - np.sum(w * y) / np.sum(w)) ** 2))
    q_p = float(stats.chi2.sf(q, len(y) - 1))
    return {"tau2": tau2, "i2": i2, "q_p": q_p, "q_note": ""}


def pool(
    problems: Mapping[str, Errors],
    a: str = "A",
    b: str = "B",
    level: float = LEVEL,
    margin: float = MARGIN,
    n_resamples: int | None = None,
    seed: int | None = None,
) -> Pooled:
    """:class:`Pooled` verdict of method ``a`` against ``b`` over ``problems``
    (name: :class:`Errors`, or a tuple of its fields). The bootstraps draw
    ``n_resamples`` resamples from a generator seeded by ``seed`` (by default
    :data:`.stats.BOOTSTRAP`'s, so that a report is rebuilt byte for byte)."""
    n_resamples = check_int(
        BOOTSTRAP["n_resamples"] if n_resamples is None else n_resamples,
        "n_resamples",
        1,
    )
    seed = BOOTSTRAP["seed"] if seed is None else seed
    checked = _check(problems, level, margin, seed)
    margin = float(margin)
    excluded = {n: _why_apart(ci, a, b) for n, (_, ci) in checked.items()}
    excluded = {n: why for n, why in excluded.items() if why}
    kept = {n: v for n, v in checked.items() if n not in excluded}
    cis = {n: ci for n, (_, ci) in kept.items()}
    out = Pooled(a, b, cis, excluded, level, margin, n_resamples)
    if len(cis) < 2:
        return out
    logs = [_logs(errs, ci) for errs, ci in kept.values()]
    y = float(np.mean([ci.log_mean for ci in cis.values()]))
    seeds_interval, p_interval = _over_seeds(logs, level, n_resamples, seed)
    interval = _over_problems(logs, level, n_resamples, seed)
    p_improve = float(np.mean([share_below(lg.la, lg.lb) for lg in logs]))
    opposite = tuple(n for n, ci in cis.items() if ci.log_mean * y < 0)  # 1 between
    return replace(
        out,
        ratio=math.exp(y),
        interval=interval,
        seeds_interval=seeds_interval,
        verdict=_verdict(*interval, margin),
        seeds_verdict=_verdict(*seeds_interval, margin),
        p_improve=p_improve,
        p_interval=p_interval,
        opposite=opposite,
        decided_opposite=tuple(n for n in opposite if cis[n].verdict in DECIDING),
        **_spread(cis),
    )
