"""What the experiments return: a run (:class:`RunResult`), a verdict
(:class:`Verdict`), a comparison of methods over seeds (:class:`Comparison`), a
learning-rate sweep (:class:`Sweep`) and an ablation (:class:`Ablation`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.stats import RatioCI
from ..problems.metrics import metric_text
from ..runs.names import lr_label

__all__ = ["RunResult", "Verdict", "Comparison", "Sweep", "Ablation"]


@dataclass(frozen=True, eq=False)
class RunResult:
    """One run: its folder and, once finished, its ``metrics.json`` ``record``.
    ``status``: ``done`` (trained now), ``reused`` (finished before) or
    ``diverged`` (``message`` says where; its last good checkpoint is kept)."""

    method: str
    seed: int
    lr: float | None  # None: the user's function's own (train=)
    out: Path
    status: str
    record: dict | None = field(default=None, repr=False)
    message: str = ""

    @property
    def metrics(self) -> dict:
        """The errors per field (RMSE, MSE, MAE, relL2, MaxErr), empty unless
        finished."""
        return {} if self.record is None else self.record["metrics"]

    def __repr__(self) -> str:
        errors = ", ".join(
            f"{f} relL2 {metric_text(m['relL2'])} RMSE {metric_text(m['RMSE'])}"
            for f, m in self.metrics.items()
        )
        return (
            f"RunResult({self.method} seed {self.seed}{lr_label(self.lr)}: "
            f"{self.status}{'; ' + errors if errors else ''}; {str(self.out)!r})"
        )


@dataclass(frozen=True)
class Verdict:
    """``method`` against ``baseline`` on ``field``: the geometric-mean ``metric``
    ratio over seeds with its 95 % interval (``ci``) and what it says, as one of
    a family: the verdicts against one baseline (``adjusted``: Holm's adjustment
    over that family, the verdict that counts; ``text``: its line in
    ``summary.md``)."""

    method: str
    baseline: str
    field: str
    metric: str
    ci: RatioCI
    adjusted: str | None = None
    text: str = ""

    @property
    def verdict(self) -> str:
        """The family's (Holm-adjusted) verdict as ``summary.md`` states it
        (better, worse, equivalent within ×m, or undecided)."""
        return self.ci.verdict if self.adjusted is None else self.adjusted

    @property
    def unadjusted(self) -> str:
        """The verdict of this interval alone (:mod:`deepxde_lnn.analysis.stats`), before Holm's
        adjustment over its family."""
        return self.ci.verdict

    def __str__(self) -> str:
        return (
            self.text
            or f"{self.field} {self.metric}: {self.ci.describe(self.method, self.baseline)}"
        )

    def __repr__(self) -> str:
        return f"Verdict({self})"


@dataclass(frozen=True, eq=False)
class Comparison:
    """Methods × seeds in ``out``: the ``runs`` of this call, the ``summary`` table
    (the rows of ``summary.csv``: per method, field and metric, mean, std, median,
    min, max over seeds) and the ``verdicts`` against ``baseline``; ``files``: the
    summary's files written (``summary.md``, ``summary.csv``, and ``summary.png``
    when there was a figure to draw); ``excluded``: the other records in ``out``,
    left out and counted by why (an earlier call's: its summary was replaced)."""

    out: Path
    case: str
    baseline: str
    runs: tuple[RunResult, ...]
    summary: tuple[dict, ...] = field(repr=False)
    verdicts: tuple[Verdict, ...]
    markdown: str = field(default="", repr=False)  # summary.md
    files: tuple[Path, ...] = field(default=(), repr=False)
    baselines: tuple[str, ...] = ()  # every baseline judged against (first: baseline)
    excluded: tuple[str, ...] = ()

    def __repr__(self) -> str:
        """The verdicts first (as ``summary.md`` states them), then each
        method's mean ± std of RMSE per field."""
        methods = list(dict.fromkeys(r["method"] for r in self.summary))
        lines = [
            f"Comparison({self.case!r}, {', '.join(methods)} over "
            f"{len(self.runs)} runs, baseline "
            f"{', '.join(map(repr, self.baselines or (self.baseline,)))}, "
            f"out={str(self.out)!r})"
        ]
        lines += [f"  {v}" for v in self.verdicts]
        for r in self.summary:
            if r["metric"] == "RMSE":
                lines.append(
                    f"  {r['method']:<12} {r['field']:<8} RMSE "
                    f"{r['mean']:.3e} ± {r['std']:.1e}  (n={r['n']})"
                )
        if self.excluded:  # an earlier call's runs: their summary was replaced
            lines.append(f"  excluded (not asked for): {', '.join(self.excluded)}")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class Sweep:
    """A learning-rate sweep in ``out``: one :class:`Comparison` per learning rate
    and the ``table`` of ``sweep.md``."""

    out: Path
    comparisons: Mapping[float, Comparison] = field(repr=False)
    table: str = field(repr=False)

    def __repr__(self) -> str:
        return f"Sweep(out={str(self.out)!r})\n{self.table.rstrip()}"


@dataclass(frozen=True, eq=False)
class Ablation:
    """An ablation in ``out``: one :class:`Comparison` per budget (``steps``,
    ``time``) and the ``table`` of ``ablation.md``."""

    out: Path
    comparisons: Mapping[str, Comparison] = field(repr=False)
    table: str = field(repr=False)

    def __repr__(self) -> str:
        return f"Ablation(out={str(self.out)!r})\n{self.table.rstrip()}"
