"""Seeds where they are needed: add seeds in batches to the comparisons still
undecided, and stop each one when it decides or reaches a maximum
(``deepxde-lnn compare --until-decided``; ``docs/verdicts.md``).

The rule stays valid under this optional stopping because the error rate is spread
over the planned looks (Bonferroni): with K looks, every look's interval has level
``1 - (1 - level) / K``, so the chance that *any* look's interval misses the true
ratio is at most ``1 - level``, and a false verdict needs such a miss. The design
is written to ``until-decided.json`` in the comparison's folder, where summaries
and the report read it back (:func:`looks_of`), so their intervals are the ones
the stopping decisions used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..runs import atomic
from ..runs.errors import FolderError
from ..runs.records import read_json
from .stats import LEVEL, MARGIN, RatioCI, check_margin, ratio_ci

__all__ = ["Design", "until_decided", "DESIGN_FILE", "write_design", "looks_of"]

DESIGN_FILE = "until-decided.json"

# train(methods, seeds) -> {method: {seed: error}} for every method and seed asked
Train = Callable[[list[str], list[int]], Mapping[str, Mapping[int, float]]]


@dataclass(frozen=True)
class Design:
    """Looks after ``first``, ``first + batch``, ... seeds, the last at
    ``max_seeds``; ``level`` is the whole design's confidence level."""

    first: int
    batch: int
    max_seeds: int
    level: float = LEVEL
    margin: float = MARGIN

    def __post_init__(self):
        for name in ("first", "batch", "max_seeds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {v!r}")
        if self.max_seeds < self.first:
            raise ValueError(
                f"max_seeds must be at least the first look's {self.first} seeds; "
                f"got {self.max_seeds}"
            )
        if not 0 < self.level < 1:
            raise ValueError(f"level must be in (0, 1); got {self.level!r}")
        check_margin(self.margin)

    @property
    def looks(self) -> list[int]:
        """Seeds per method at each look."""
        return [*range(self.first, self.max_seeds, self.batch), self.max_seeds]


def until_decided(
    train: Train,
    methods: Sequence[str],
    seeds: Sequence[int],
    design: Design,
    baseline: str = "pinn",
    on_look: Callable[[int, dict[str, RatioCI]], None] | None = None,
) -> dict[str, RatioCI]:
    """Every method of ``methods`` against ``baseline`` over ``seeds`` (at least
    ``design.max_seeds`` of them, in order): at each look, ``train`` the methods
    still undecided and the baseline on the look's new seeds, then compare each
    on the look's first n seeds (those with an error: a failed seed has none). Returns each method's last interval;
    ``on_look(n, intervals)`` is told every look's (n seeds, the open ones)."""
    if baseline not in methods:
        raise ValueError(f"methods: --until-decided needs the baseline {baseline!r}")
    if len(seeds) < design.max_seeds:
        raise ValueError(f"seeds: {design.max_seeds} needed, got {len(seeds)}")
    errors: dict[str, dict[int, float]] = {m: {} for m in methods}
    open_ = [m for m in methods if m != baseline]
    result: dict[str, RatioCI] = {}
    done, looks = 0, design.looks
    for n in looks:
        got = train([*open_, baseline], list(seeds[done:n]))
        for m, errs in got.items():
            errors[m].update(errs)
        done = n
        now = {
            m: ratio_ci(
                {s: errors[m][s] for s in seeds[:n] if s in errors[m]},
                {s: errors[baseline][s] for s in seeds[:n] if s in errors[baseline]},
                design.level,
                design.margin,
                looks=len(looks),
            )
            for m in open_
        }
        result.update(now)
        if on_look is not None:
            on_look(n, now)
        open_ = [m for m in open_ if not now[m].decided]
        if not open_:
            break
    return result


def write_design(root: str | Path, design: Design) -> Path:
    """``root/until-decided.json``: the design, its looks and their count."""
    record = {**asdict(design), "looks": design.looks, "n_looks": len(design.looks)}
    return atomic.write_json(Path(root) / DESIGN_FILE, record)


def looks_of(root: str | Path) -> int:
    """The number of looks of the design in ``root`` (1: none, a plain compare);
    ``FolderError`` naming the file if it is unreadable."""
    path = Path(root) / DESIGN_FILE
    if not os.path.lexists(path):
        return 1
    record = read_json(path)  # a regular file, capped, strict JSON: untrusted
    n = record.get("n_looks") if isinstance(record, dict) else None
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise FolderError(f"{path}: n_looks must be an integer >= 1")
    return n
