"""The published documents, rebuilt from run records (nothing trains):
``deepxde_lnn.report(...)`` and ``deepxde-lnn report``.

The reproduction report (:mod:`deepxde_lnn.study.reproduction`) and, if asked, the
README's generated blocks (:mod:`deepxde_lnn.study.readme`), from the ``metrics.json``
records below some folders.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..analysis.stats import MARGIN, check_margin
from ..checks import check_path
from ..runs import atomic
from ..runs.folder import writing
from .pooled_verdicts import StudyVerdict, pooled_verdicts
from .readme import rebuild
from .report_records import load
from .reproduction import build_report

__all__ = ["report", "Report"]


@dataclass(frozen=True)
class Report:
    """The reproduction report written to ``out``, its ``figures`` folder and the
    README whose generated blocks were rebuilt (``None``: none asked), and the
    study-level verdicts (:mod:`~.pooled_verdicts`: each comparison pooled over
    a study's problems per profile; on your own problems, over yours)."""

    out: Path
    figures: Path
    readme: Path | None = None
    verdicts: tuple[StudyVerdict, ...] = ()


def report(
    runs_dirs: Sequence[str | os.PathLike] | str | os.PathLike,
    out: str | os.PathLike = "docs/REPRODUCTION.md",
    readme: str | os.PathLike | None = None,
    margin: float = MARGIN,
) -> Report:
    """The reproduction report of every finished run below ``runs_dirs``
    (:func:`deepxde_lnn.study.reproduction.build_report`; records only, nothing
    trains).

    Args:
        runs_dirs: the folders searched for finished runs (``metrics.json``),
            at least one.
        out: the markdown file; one figure per case goes to the folder of its
            name without ``.md``.
        readme: a markdown file whose generated blocks (``<!-- BEGIN generated:
            NAME -->`` ... ``<!-- END generated: NAME -->``) are rebuilt from the
            same records (:mod:`deepxde_lnn.study.readme`); checked before
            anything is written.
        margin: the verdicts' equivalence margin ``m`` (``margin`` of
            :class:`~deepxde_lnn.config.Verdicts`).

    Returns:
        The report's file, its figures' folder, the README rewritten and the
        study-level verdicts.

    Raises:
        ValueError: a bad argument, named in the message.
        FolderError: a file that cannot be written (a full disk), named.
    """
    if isinstance(runs_dirs, (str, os.PathLike)):
        runs_dirs = [runs_dirs]
    runs_dirs = list(runs_dirs)
    if not runs_dirs:
        raise ValueError("runs_dirs: give at least one folder of runs")
    margin = check_margin(margin)
    out = check_path(out, "out")  # before anything is read
    text = None if readme is None else rebuild(readme, runs_dirs)
    verdicts = pooled_verdicts(load(runs_dirs), margin)
    path = build_report(runs_dirs, out, margin=margin, verdicts=verdicts)
    if readme is not None:
        assert text is not None  # rebuilt above
        with writing(Path(readme).parent):  # a full disk: one error naming it
            readme = atomic.atomic_write_text(Path(readme), text)
    return Report(path, path.parent / path.stem, readme, tuple(verdicts))
