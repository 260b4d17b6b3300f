"""What a step costs: measured now (:func:`step_seconds`, for time budgets), and
whether stacking seeds pays here (:func:`stacking_pays`)."""

from __future__ import annotations

import time
from dataclasses import replace

import deepxde as dde
import torch

from ..config import RunConfig
from ..problems.case import Case
from ..problems.problem import Problem
from .controller import sync
from .phases import start
from .stack import build

__all__ = ["stacking_pays", "step_seconds"]


def step_seconds(config: RunConfig, problem: Problem, steps: int = 20) -> float:
    """Training seconds per step of ``config`` on ``problem``, measured now over
    ``steps`` steps after a few warm-up steps (nothing is written), on the path a
    time-budget run takes (``compile_jets="auto"``: the eager jets)."""
    cfg = config.resolved(problem)
    if cfg.compile_jets == "auto":
        cfg = replace(cfg, compile_jets=False)
    stack = build(problem, [cfg], [None])
    start(stack, [None])
    marks = []

    class Clock(dde.callbacks.Callback):
        def on_batch_begin(self):
            sync()
            marks.append(time.perf_counter())

    # step-begin marks: DeepXDE's evaluations before the first and after the
    # last step fall outside the timed interval
    stack.model.train(
        iterations=steps + 5, display_every=steps + 5, callbacks=[Clock()], verbose=0
    )
    return (marks[-1] - marks[4]) / (len(marks) - 5)


def stacking_pays(problem: Problem, profile_name: str) -> bool:
    """Whether stacking seeds is faster here: always on a GPU; on a CPU only for
    small point sets (measured: about 1.3-1.6x for 3-5 seeds at the quick
    profile's ~650 points per step, no gain at the paper's thousands)."""
    if torch.cuda.is_available():
        return True
    assert isinstance(problem, Case)  # only a case's methods stack
    prof = problem.profile(profile_name)
    return sum(t.n for t in problem.make_terms(prof)) <= 2000
