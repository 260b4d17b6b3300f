"""A run's configuration: what a run is, checked without torch or DeepXDE.

One :class:`RunConfig` is one run (case, method, seed, learning rate, steps,
profile, float type, budget, L-BFGS, schedule) and how it computes (compiled
jets, a CUDA-graph step); :meth:`RunConfig.resolved` checks every field and fills the profile's
defaults, :meth:`RunConfig.identity` is what makes two runs the same run (records
and checkpoints are matched on it; how a run computes is not part of it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from ..checks import (
    SEED_MAX,
    check_bool,
    check_choice,
    check_int,
    check_positive,
    is_number,
)
from ..pinn.problem import DTYPES, Problem

__all__ = ["RunConfig", "TIME_CAP", "stackable_protocol"]

TIME_CAP = 20  # with a time budget, at most this many times the profile's steps


@dataclass(frozen=True)
class RunConfig:
    """One training job. ``None`` fields take the profile's value."""

    case: str
    method: str = "lnn"
    seed: int | None = None
    lr: float | None = None
    iterations: int | None = None
    profile: str = "quick"
    dtype: str | None = None  # None: the profile's (float32; accurate: float64)
    checkpoint_every: int = 1000
    seconds: float | None = None  # a wall-clock budget; iterations is then a cap
    lbfgs: int | None = None  # L-BFGS iterations after the Adam steps
    decay: tuple | None = None  # Adam's learning-rate schedule (DeepXDE's format)
    # the jets through torch.compile: the same math, rounded otherwise; recorded in
    # the run's "derivatives" text, not part of its identity
    compile_jets: bool = False
    # the Adam step as one CUDA graph (training/graphed.py): the same points and
    # math, rounded otherwise; how a run computes, not part of its identity
    cuda_graph: bool = False

    def resolved(self, case: Problem) -> RunConfig:
        """Validate every field (ValueError naming it) and fill profile defaults
        from ``case``, the problem named ``self.case``."""
        prof = case.profile(self.profile)  # ValueError naming the profile
        dtype = prof.dtype if self.dtype is None else self.dtype
        check_choice(dtype, "dtype", DTYPES)
        case.check_method(self.method)  # ValueError naming the method
        lbfgs = prof.lbfgs if self.lbfgs is None else self.lbfgs
        check_int(lbfgs, "lbfgs", 0)
        _check_lbfgs(lbfgs, self.method, self.seconds, case)
        seed = prof.seed if self.seed is None else self.seed
        lr = prof.lr if self.lr is None else self.lr
        iterations = self.iterations
        if iterations is None:
            iterations = prof.iterations * (TIME_CAP if self.seconds else 1)
        if self.seconds is not None:
            check_positive(self.seconds, "seconds")
        check_int(seed, "seed", 0, SEED_MAX)
        check_int(iterations, "iterations", 1)
        check_int(self.checkpoint_every, "checkpoint_every", 1)
        check_bool(self.compile_jets, "compile_jets")
        check_bool(self.cuda_graph, "cuda_graph")
        check_positive(lr, "lr")
        seconds = None if self.seconds is None else float(self.seconds)
        decay = _check_decay(prof.decay if self.decay is None else self.decay)
        return replace(
            self,
            seed=int(seed),
            lr=float(lr),
            iterations=int(iterations),
            dtype=dtype,
            seconds=seconds,
            lbfgs=int(lbfgs),
            decay=decay,
        )

    def identity(self) -> dict:
        """The fields that determine a run's result (not ``checkpoint_every``,
        nor ``compile_jets`` and ``cuda_graph``: the same iterates up to
        rounding)."""
        out = asdict(self)
        del out["checkpoint_every"], out["compile_jets"], out["cuda_graph"]
        if out["seconds"] is None:  # step budget: as records before time budgets
            del out["seconds"]
        if not out["lbfgs"]:  # Adam only: as records before the accurate profile
            del out["lbfgs"]
        if out["decay"] is None:  # constant lr: as records before schedules
            del out["decay"]
        else:  # as JSON reads it back
            out["decay"] = list(out["decay"])
        return out

    @property
    def total_steps(self) -> int:
        """Adam steps plus L-BFGS iterations (of a resolved configuration)."""
        return self.iterations + (self.lbfgs or 0)


def _check_decay(decay) -> tuple | None:
    """``decay`` as a tuple ``(name, *numbers)`` (DeepXDE's format), or None."""
    if decay is None:
        return None
    ok = isinstance(decay, (tuple, list)) and decay and isinstance(decay[0], str)
    if not ok or not all(is_number(v) for v in decay[1:]):
        raise ValueError(f"decay must be (name, numbers...) or None; got {decay!r}")
    return tuple(decay)


def _check_lbfgs(lbfgs: int, method: str, seconds, case: Problem) -> None:
    if not lbfgs:
        return
    if seconds is not None:
        raise ValueError(
            "seconds: a time budget cannot be combined with L-BFGS (lbfgs > 0); "
            "pass lbfgs=0 (--lbfgs 0) or no time budget"
        )
    if not case.deterministic(method):
        raise ValueError(
            f"method {method!r}: its training loss is random (dropout), which "
            "L-BFGS's line search cannot use; pass lbfgs=0 (--lbfgs 0)"
        )


def stackable_protocol(profile, cfg) -> bool:
    """Whether the training protocol allows stacking seeds: the stacked Adam
    (with the profile's learning-rate schedule, one for all runs) redraws points
    every step; L-BFGS's line search would couple the seeds."""
    return profile.resample and not cfg.lbfgs
