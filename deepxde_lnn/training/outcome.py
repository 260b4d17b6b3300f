"""What became of one run: the result of training it, whichever way it was trained."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Outcome"]


@dataclass(frozen=True)
class Outcome:
    """One run's ``config`` (a :class:`~deepxde_lnn.training.runner.RunConfig`), its folder
    ``out`` and ``status``: done (``record`` holds its ``metrics.json``), diverged
    or interrupted (``message`` says where and why)."""

    config: object
    out: Path
    status: str
    record: dict | None = None
    message: str = ""
