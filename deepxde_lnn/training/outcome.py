"""What became of one run: the result of training it, whichever way it was
trained, the errors a single run raises for the two ways it can stop early, and
the error of runs whose worker process died."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Outcome", "RunInterrupted", "TrainingDiverged", "WorkersLost"]


class RunInterrupted(RuntimeError):
    """Training stopped by SIGINT/SIGTERM; a checkpoint was saved."""


class TrainingDiverged(RuntimeError):
    """A non-finite loss appeared; the last good checkpoint is kept."""


class WorkersLost(RuntimeError):
    """A worker process died (killed, out of memory) while runs were training; the
    message names the runs cut short and says how to go on (rerun: finished runs
    are reused, the others resume from their checkpoints)."""


@dataclass(frozen=True)
class Outcome:
    """One run's ``config`` (a :class:`~deepxde_lnn.config.RunConfig`),
    its folder ``out`` and ``status``: done (``record`` holds its
    ``metrics.json``), diverged or interrupted (``message`` says where and why)."""

    config: object
    out: Path
    status: str
    record: dict | None = None
    message: str = ""
