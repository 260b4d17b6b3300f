"""Is one method's error smaller than another's, over seeds?

Errors span orders of magnitude and multiply rather than add, so methods are
compared on log errors: the geometric-mean ratio

    ratio = exp(mean(log e_A) - mean(log e_B))

with a Student-t confidence interval on the log scale. When both methods ran the
same seeds the differences are paired by seed (the same seed draws the same points
for both, so pairing removes that shared noise); otherwise Welch's unequal-variance
interval is used. The verdict says "better" only if the whole interval is below 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["RatioCI", "ratio_ci"]


@dataclass(frozen=True)
class RatioCI:
    """Geometric-mean error ratio A/B with its confidence interval."""

    ratio: float
    low: float
    high: float
    n_a: int
    n_b: int
    paired: bool
    level: float

    @property
    def verdict(self) -> str:
        if not np.isfinite(self.low) or not np.isfinite(self.high):
            return "too few seeds"
        if self.high < 1:
            return "better"
        if self.low > 1:
            return "worse"
        return "no significant difference"

    def describe(self, a: str = "A", b: str = "B") -> str:
        how = "paired by seed" if self.paired else "Welch"
        verdict = self.verdict
        if verdict in ("better", "worse"):
            verdict = f"{a} {verdict}"
        return (
            f"{a}/{b} error ratio {self.ratio:.3g} "
            f"({self.level:.0%} CI {self.low:.3g}–{self.high:.3g}, "
            f"n={self.n_a}/{self.n_b}, {how}): {verdict}"
        )


def ratio_ci(
    a: Mapping[int, float], b: Mapping[int, float], level: float = 0.95
) -> RatioCI:
    """Geometric-mean ratio of errors ``a`` to ``b`` (each ``{seed: error}``, all
    > 0), paired over the common seeds when both have the same seeds."""
    la = {s: float(np.log(v)) for s, v in a.items()}
    lb = {s: float(np.log(v)) for s, v in b.items()}
    if not la or not lb:
        raise ValueError("ratio_ci needs at least one error per method")
    paired = set(la) == set(lb) and len(la) > 1
    q = 0.5 + level / 2
    if paired:
        d = np.array([la[s] - lb[s] for s in sorted(la)])
        mean, se, dof = d.mean(), d.std(ddof=1) / np.sqrt(len(d)), len(d) - 1
    else:
        xa, xb = np.array(list(la.values())), np.array(list(lb.values()))
        mean = xa.mean() - xb.mean()
        se, dof = _welch(xa, xb)
    half = stats.t.ppf(q, dof) * se if dof > 0 else np.inf
    return RatioCI(
        ratio=float(np.exp(mean)),
        low=float(np.exp(mean - half)),
        high=float(np.exp(mean + half)),
        n_a=len(la),
        n_b=len(lb),
        paired=paired,
        level=level,
    )


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
