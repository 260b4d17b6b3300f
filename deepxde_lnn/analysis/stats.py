"""Is one method's error smaller than another's, over seeds? And what if we do not
know yet?

Errors span orders of magnitude and multiply rather than add, so methods are
compared on log errors: the geometric-mean ratio

    ratio = exp(mean(log e_A) - mean(log e_B))

with a Student-t confidence interval on the log scale. When both methods ran at
least two common seeds the differences are paired over those seeds (the same seed
draws the same points for both, so pairing removes that shared noise); otherwise
Welch's unequal-variance interval is used. Four verdicts (``docs/verdicts.md``):

* ``better`` / ``worse``: the whole interval below / above 1;
* ``equivalent within ×m``: the whole interval inside ``[1/m, m]`` (the margin);
* ``undecided``: anything else, with the number of seeds that would likely
  decide it (:attr:`RatioCI.seeds_needed`).

A sequential design (seeds added until a verdict is reached) spreads the error
rate over its ``looks`` (Bonferroni): each look's interval has level
``1 - (1 - level) / looks``. :func:`holm` controls the family-wise error of the
verdicts of one table.

Beside each verdict, two robust companions that do not assume log-normal errors
(Agarwal et al. 2021 and Bouthillier et al. 2021 recommend both kinds):

* :func:`p_below`, the probability that a seed of A ends with a smaller error than
  a seed of B (ties count 1/2): Mann-Whitney's ``U / (n_A n_B)``, the
  common-language effect size, over the seeds the ratio uses (the common seeds
  where it is paired), with a 95 % percentile bootstrap interval
  (:func:`scipy.stats.bootstrap`, seeds resampled in pairs where paired; a fixed
  random generator, so a report is rebuilt byte for byte). It is descriptive: no
  adjustment for looks or for the table's family;
* :func:`failures`, the seeds of one method whose error exceeds
  ``FAILURE_FACTOR`` (10) times that method's median: a heavy tail that a
  geometric mean averages in. The median is not moved by the outliers it judges,
  and 10x is a decade above the typical seed (settled runs' seeds stay within a
  few times of each other); two seeds can never fail (neither exceeds 10x their
  mean), three can show one. A seed whose error is not a number (a prediction
  that is not finite, null in its record) fails too; no ratio or P(A < B) can
  hold it.

A ratio of two failures is not a result: where a method's median relative L2
error is at least ``CONVERGED_BELOW`` (0.5, an error half the size of the
solution) it did not converge, and every verdict says so beside it
(:attr:`RatioCI.unconverged`): ``equivalent within ×2 (neither converged)``.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import overload

import numpy as np
from scipy import stats

from ..checks import check_margin, is_number
from ..config import MARGIN

__all__ = [
    "RatioCI",
    "ratio_ci",
    "PBelow",
    "p_below",
    "share_below",
    "failures",
    "FAILURE_FACTOR",
    "CONVERGED_BELOW",
    "converged",
    "holm",
    "check_margin",
    "UNDECIDED",
    "DECIDING",
    "MARGIN",
    "LEVEL",
    "SEEDS_CAP",
]

LEVEL = 0.95  # default confidence level (of a table's family, with holm)
UNDECIDED = "undecided"
DECIDING = ("better", "worse")  # verdicts that say which method is better
# the most seeds a comparison asks for: seeds_needed searches up to this many, and
# a call runs at most this many per method (deepxde_lnn.experiments.selection).
# Even at the widest spread of log errors between seeds in the shipped records (a
# standard deviation of about 2.4), 1000 paired seeds narrow a ratio's 95 %
# interval to within x1.16 either way, well inside the default margin x2: more
# seeds cannot change what a verdict says, so a larger count is a typo
# (``seeds=range(10**5)``), not a design
SEEDS_CAP = 1000
FAILURE_FACTOR = 10.0  # a seed fails when its error exceeds this x its method's median
#: a run has converged when its relative L2 error is below this: its error is
#: smaller than half the solution (a network that learned nothing scores about 1)
CONVERGED_BELOW = 0.5
BOOTSTRAP = {"n_resamples": 9999, "seed": 0}  # p_below's interval, reproducibly


_LOG_MAX = math.log(sys.float_info.max)  # the largest x whose exp(x) is finite


def _exp(x: float) -> float:
    """``exp(x)``, infinite beyond float64's range (an interval that wide has no
    upper bound to speak of), without an overflow warning."""
    return float(np.exp(x)) if x <= _LOG_MAX else math.inf


@functools.lru_cache(maxsize=4096)
def _t(q: float, dof: float) -> float:
    return float(stats.t.ppf(q, dof))


@dataclass(frozen=True)
class RatioCI:
    """Geometric-mean error ratio A/B with its confidence interval.

    ``level`` is the confidence level before the sequential adjustment; the
    interval itself has :attr:`interval_level`. ``log_mean``, ``se`` and ``dof``
    are the log-scale estimate, its standard error and degrees of freedom;
    ``spread`` is one seed's standard deviation (so ``se = spread / sqrt(n)``).
    ``exact``: the seeds of A and of B with an error of 0 (an exact solution);
    with any, the ratio is :attr:`undefined` (0 has no logarithm) and undecided.
    """

    ratio: float
    low: float
    high: float
    n_a: int
    n_b: int
    paired: bool
    level: float
    margin: float = MARGIN
    looks: int = 1
    log_mean: float = 0.0
    se: float = math.inf
    dof: float = 0.0
    spread: float = math.nan
    exact: tuple[int, int] = (0, 0)
    #: whether A and B did not converge (:func:`converged`); a note, not a verdict
    unconverged: tuple[bool, bool] = (False, False)

    def convergence_text(self, a: str = "it", b: str = "the baseline") -> str:
        """``neither converged``, ``A did not converge``, ``B did not converge``
        or "" (both did)."""
        if all(self.unconverged):
            return "neither converged"
        return next(
            (
                f"{who} did not converge"
                for who, u in zip((a, b), self.unconverged)
                if u
            ),
            "",
        )

    @property
    def undefined(self) -> bool:
        """Whether a seed's error is 0, so that no ratio of geometric means is."""
        return any(self.exact)

    @property
    def interval_level(self) -> float:
        """The interval's own level: ``level`` spread over the looks."""
        return 1 - (1 - self.level) / self.looks

    @property
    def verdict(self) -> str:
        """``better``, ``worse``, ``equivalent within ×m`` or ``undecided``."""
        if not np.isfinite(self.low) or not np.isfinite(self.high):
            return UNDECIDED
        if self.high < 1:
            return "better"
        if self.low > 1:
            return "worse"
        if 1 / self.margin <= self.low and self.high <= self.margin:
            return f"equivalent within ×{self.margin:g}"
        return UNDECIDED

    @property
    def decided(self) -> bool:
        return self.verdict != UNDECIDED

    @property
    def p_diff(self) -> float:
        """Two-sided t-test p-value of ratio 1 (times the looks: Bonferroni):
        below ``1 - level`` exactly when the interval excludes 1."""
        return self._p(abs(self.log_mean))

    @property
    def p_equiv(self) -> float:
        """Equivalence (TOST) p-value, twice the larger one-sided p-value of the
        two margins (times the looks): below ``1 - level`` exactly when the
        interval lies inside ``[1/m, m]``."""
        return self._p(math.log(self.margin) - abs(self.log_mean))

    def _p(self, distance: float) -> float:
        if not self.dof > 0 or not np.isfinite(self.se):
            return 1.0
        if self.se == 0:  # identical differences: the interval is one point
            return 0.0 if distance > 0 else 1.0
        p = 2 * stats.t.sf(distance / self.se, self.dof)
        return float(min(1.0, self.looks * p))

    def at_level(self, level: float) -> RatioCI:
        """The same estimate with the interval at another ``level``."""
        if not self.dof > 0:
            return replace(self, level=level)
        q = 1 - (1 - level) / self.looks / 2
        half = _t(q, self.dof) * self.se
        return replace(
            self,
            level=level,
            low=_exp(self.log_mean - half),
            high=_exp(self.log_mean + half),
        )

    @property
    def seeds_needed(self) -> int | None:
        """Seeds (per method) at which this comparison would likely be decided:
        the smallest ``n`` whose t-interval half-width ``t(n - 1) * spread /
        sqrt(n)``, with the observed spread, is below ``max(|log_mean|, log m -
        |log_mean|)`` (the interval around the observed mean then excludes 1 or
        fits in ``[1/m, m]``). None without a spread (one seed); ``SEEDS_CAP + 1``
        when even ``SEEDS_CAP`` seeds would not do."""
        if not np.isfinite(self.spread) or self.spread <= 0:
            return None
        d = abs(self.log_mean)
        target = max(d, math.log(self.margin) - d)
        n = np.arange(2, SEEDS_CAP + 1)
        q = 1 - (1 - self.level) / self.looks / 2
        ok = stats.t.ppf(q, n - 1) * self.spread / np.sqrt(n) < target
        return int(n[np.argmax(ok)]) if ok.any() else SEEDS_CAP + 1

    def verdict_text(self, a: str = "it", b: str = "the baseline") -> str:
        """The verdict, for an undecided one the seeds that would likely decide
        it, and whether ``a`` and ``b`` converged, e.g. ``undecided (~14 seeds;
        neither converged)``."""
        notes = [self._seeds_text()] if self.verdict == UNDECIDED else []
        notes.append(self.convergence_text(a, b))
        said = "; ".join(n for n in notes if n)
        return f"{self.verdict} ({said})" if said else self.verdict

    def _seeds_text(self) -> str:
        """What an undecided verdict lacks: the seeds that would likely decide it."""
        if self.undefined:
            return "ratio undefined: an error of 0"
        need = self.seeds_needed
        if need is None:
            return "one seed: no spread yet"
        if need > SEEDS_CAP:
            return f"> {SEEDS_CAP} seeds"
        return f"~{need} seeds"

    def describe(
        self, a: str = "A", b: str = "B", adjusted: str | None = None, family: int = 1
    ) -> str:
        """The ratio, its interval and its verdict in words. Where Holm's
        adjustment over a ``family`` of verdicts changed it (``adjusted``), the
        adjusted verdict leads, the interval's own follows: ``lnn undecided
        (Holm over 12; alone: better); lnn/pinn error ratio ...``."""
        how = "paired by seed" if self.paired else "Welch"
        if self.undefined:
            zero = ", ".join(
                f"{who} on {k} of {n} seeds"
                for who, k, n in zip((a, b), self.exact, (self.n_a, self.n_b))
                if k
            )
            return (
                f"{a}/{b} error ratio undefined: an error of 0 ({zero}) has no "
                f"logarithm (n={self.n_a}/{self.n_b}, {how}): {self.verdict}"
            )
        ratio = (
            f"{a}/{b} error ratio {self.ratio:.3g} "
            f"({_pct(self.interval_level)} CI {bound_text(self.low)}–"
            f"{bound_text(self.high)}, n={self.n_a}/{self.n_b}, {how})"
        )
        alone = self.verdict_text(a, b)
        if adjusted is None or adjusted == self.verdict:
            return f"{ratio}: {_named(a, self.verdict, alone)}"
        notes = "; ".join(
            n for n in (f"alone: {alone}", self.convergence_text(a, b)) if n
        )
        lead = _named(a, adjusted, adjusted)
        return f"{lead} (Holm over {family}; {notes}); {ratio}"


def _named(a: str, verdict: str, text: str) -> str:
    """``text`` (saying ``verdict``), led by the method's name where it says
    which method is better: ``lnn better``."""
    return f"{a} {text}" if verdict in DECIDING else text


def bound_text(x: float) -> str:
    """An interval's bound to 3 significant digits, or more where 3 would hide
    on which side of 1 it lies (``1.0012``, not ``1``)."""
    side = np.sign(x - 1.0)
    for digits in range(3, 17):
        text = f"{x:.{digits}g}"
        if np.sign(float(text) - 1.0) == side:
            return text
    return repr(float(x))


def _pct(level: float) -> str:
    return f"{100 * level:.3g}%"


def ratio_ci(
    a: Mapping[int, float],
    b: Mapping[int, float],
    level: float = LEVEL,
    margin: float = MARGIN,
    looks: int = 1,
) -> RatioCI:
    """Geometric-mean ratio of errors ``a`` to ``b`` (each ``{seed: error}``, all
    finite and >= 0), paired over their common seeds when there are at least two;
    the interval at level ``1 - (1 - level) / looks``. An error of 0 among them
    makes the ratio undefined (:attr:`RatioCI.undefined`): no interval."""
    for name, errors in (("a", a), ("b", b)):
        bad = [(s, v) for s, v in errors.items() if not is_number(v) or v < 0]
        if bad:
            raise ValueError(
                f"{name}: the error of seed {bad[0][0]} must be a finite number "
                f">= 0; got {bad[0][1]!r}"
            )
    if not a or not b:
        raise ValueError("ratio_ci needs at least one error per method")
    margin = check_margin(margin)
    common = sorted(set(a) & set(b))
    paired = len(common) > 1
    if paired:
        a, b = ({s: m[s] for s in common} for m in (a, b))
    exact = (sum(v == 0 for v in a.values()), sum(v == 0 for v in b.values()))
    if any(exact):
        n_a, n_b = len(a), len(b)
        return RatioCI(
            math.nan, math.nan, math.nan, n_a, n_b, paired, level, margin,
            int(looks), math.nan, exact=exact,
        )  # fmt: skip
    la = {s: float(np.log(v)) for s, v in a.items()}
    lb = {s: float(np.log(v)) for s, v in b.items()}
    dof: float
    if paired:
        d = np.array([la[s] - lb[s] for s in common])
        n_a = n_b = len(d)
        sd = float(d.std(ddof=1))
        mean, se, dof = d.mean(), sd / np.sqrt(len(d)), len(d) - 1
    else:
        xa, xb = np.array(list(la.values())), np.array(list(lb.values()))
        n_a, n_b = len(xa), len(xb)
        mean = xa.mean() - xb.mean()
        se, dof = _welch(xa, xb)
        sd = float(np.sqrt(xa.var(ddof=1) + xb.var(ddof=1))) if dof > 0 else math.nan
    out = RatioCI(
        _exp(mean), math.nan, math.nan, n_a, n_b, paired, level, margin,
        int(looks), float(mean), float(se), float(dof), sd,
    )  # fmt: skip
    if dof > 0:
        return out.at_level(level)
    return replace(out, low=0.0, high=math.inf)


def _welch(xa: np.ndarray, xb: np.ndarray) -> tuple[float, float]:
    """Standard error of a difference of means and Welch-Satterthwaite dof."""
    if len(xa) < 2 or len(xb) < 2:
        return np.inf, 0.0
    va, vb = xa.var(ddof=1) / len(xa), xb.var(ddof=1) / len(xb)
    se = np.sqrt(va + vb)
    if se == 0:
        return 0.0, float(len(xa) + len(xb) - 2)
    dof = (va + vb) ** 2 / (va**2 / (len(xa) - 1) + vb**2 / (len(xb) - 1))
    return float(se), float(dof)


@overload
def holm(cis: Sequence[RatioCI], level: float = LEVEL) -> list[str]: ...
@overload
def holm(cis: Sequence[RatioCI | None], level: float = LEVEL) -> list[str | None]: ...
def holm(cis: Sequence[RatioCI | None], level: float = LEVEL) -> list:
    """Holm's step-down adjustment of one table's verdicts (None: no comparison),
    with Shaffer's logical constraint.

    Each comparison tests two hypotheses: ratio 1 (rejected: better or worse, by
    :attr:`RatioCI.p_diff`) and ratio outside the margin (rejected: equivalent,
    :attr:`RatioCI.p_equiv`); at most one of them is true. The p-values, in
    increasing order, are rejected while ``p <= (1 - level) / t``, ``t`` the
    number of comparisons not yet rejected on both counts (the most hypotheses
    that can still be true); the first failure stops. This keeps the chance of
    any false verdict in the table at most ``1 - level`` (Holm 1979; Shaffer
    1986). The verdict: better/worse if ratio 1 was rejected, else equivalent if
    the margin was, else undecided.
    """
    alpha = 1 - level
    given = {i: ci for i, ci in enumerate(cis) if ci is not None}
    tests = sorted(
        (p, i, kind)
        for i, ci in given.items()
        for kind, p in (("diff", ci.p_diff), ("equiv", ci.p_equiv))
    )
    rejected: dict[int, set] = {i: set() for i in given}
    for p, i, kind in tests:
        t = sum(len(r) < 2 for r in rejected.values())
        if p > alpha / t:
            break
        rejected[i].add(kind)
    out: list[str | None] = [None] * len(cis)
    for i, done in rejected.items():
        if "diff" in done:
            out[i] = "better" if given[i].log_mean < 0 else "worse"
        elif "equiv" in done:
            out[i] = f"equivalent within ×{given[i].margin:g}"
        else:
            out[i] = UNDECIDED
    return out


@dataclass(frozen=True)
class PBelow:
    """``p``: the probability that a seed of A ends with a smaller error than a
    seed of B (ties 1/2), over ``n_a`` / ``n_b`` seeds (``paired``: the common
    seeds, resampled in pairs); ``low``-``high``: its bootstrap interval at
    ``level`` (NaN with fewer than two seeds a side)."""

    p: float
    low: float
    high: float
    n_a: int
    n_b: int
    paired: bool
    level: float = LEVEL

    def text(self) -> str:
        """``p (low–high)``, e.g. ``0.62 (0.41–0.84)``."""
        if not np.isfinite(self.low):
            return f"{self.p:.2f} (no interval)"
        return f"{self.p:.2f} ({self.low:.2f}–{self.high:.2f})"


def share_below(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """The share of pairs (one of ``x``, one of ``y``) with ``x < y``, ties 1/2,
    along ``axis`` (Mann-Whitney's U of ``y`` over ``n_x n_y``), vectorized."""
    x, y = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
    wins = np.sign(y[..., None, :] - x[..., :, None])  # 1: x below, 0: a tie
    return (wins.mean(axis=(-2, -1)) + 1) / 2


@functools.lru_cache(maxsize=4096)
def _p_below_of(xa: tuple, xb: tuple, paired: bool, level: float) -> PBelow:
    a, b = np.array(xa), np.array(xb)
    p = float(share_below(a, b))
    if min(len(a), len(b)) < 2:
        return PBelow(p, math.nan, math.nan, len(a), len(b), paired, level)
    ci = stats.bootstrap(
        (a, b),
        share_below,
        paired=paired,
        vectorized=True,
        confidence_level=level,
        n_resamples=BOOTSTRAP["n_resamples"],
        batch=max(1, 2**22 // (len(a) * len(b))),  # bounded memory
        method="percentile",
        rng=np.random.default_rng(BOOTSTRAP["seed"]),
    ).confidence_interval
    low, high = float(ci.low), float(ci.high)
    return PBelow(p, low, high, len(a), len(b), paired, level)


def p_below(
    a: Mapping[int, float], b: Mapping[int, float], level: float = LEVEL
) -> PBelow:
    """:class:`PBelow` of errors ``a`` against ``b`` (each ``{seed: error}``),
    over their common seeds, resampled in pairs, when there are at least two (as
    :func:`ratio_ci` pairs), otherwise over all seeds of each."""
    if not a or not b:
        raise ValueError("p_below needs at least one error per method")
    common = sorted(set(a) & set(b))
    paired = len(common) > 1
    if paired:
        xa, xb = (tuple(float(m[s]) for s in common) for m in (a, b))
    else:
        xa, xb = (tuple(float(m[s]) for s in sorted(m)) for m in (a, b))
    return _p_below_of(xa, xb, paired, float(level))


def converged(relative_errors: Sequence[float | None]) -> bool | None:
    """Whether one method converged: the median of its seeds' relative L2 errors
    is below :data:`CONVERGED_BELOW` (None where no seed has one: a zero truth)."""
    known = [v for v in relative_errors if v is not None]
    return bool(np.median(known) < CONVERGED_BELOW) if known else None


def failures(
    errors: Sequence[float | None],
    relative: Sequence[float | None] = (),
    factor: float = FAILURE_FACTOR,
) -> int:
    """How many of one method's seeds failed: their error (``errors``, one per
    seed) is not a number (None: a prediction that is not finite) or exceeds
    ``factor`` times the median of those that are, or their relative L2 error
    (``relative``, None where unknown) is at least :data:`CONVERGED_BELOW`."""
    tail = np.array([e is None for e in errors], bool)
    known = np.array([e for e in errors if e is not None], float)
    if len(known):
        with np.errstate(over="ignore"):  # a median near float64's largest
            tail[~tail] = known > factor * np.median(known)
    far = np.array([q is not None and q >= CONVERGED_BELOW for q in relative], bool)
    if len(far):
        tail |= far
    return int(np.sum(tail))
