"""The study's training protocols and network settings for the paper's cases.

Per case (``cases/*.py`` declares its physics only): ``paper``, the paper's
protocol (its steps, learning rate and seed, the case's point counts); ``quick``,
small counts and few steps; its network settings (:class:`~deepxde_lnn.problems.methods.Nets`:
the heat case's 3-hidden-layer trunk and reduced LNN layout, the XPINN cuts); and
``accurate``, derived from the paper profile by :func:`accurate`, one setting for
every case (``docs/protocol.md`` gives the measurements behind it):

* float64 throughout;
* one fixed collocation pool per term, drawn once, ``POOL_FRACTION`` of the
  paper's point count per term;
* Adam for ``ADAM_STEPS`` steps from ``LR`` with DeepXDE's inverse-time decay
  ``lr_k = LR / (1 + DECAY_RATE * k / DECAY_STEPS)``;
* then L-BFGS on the loss scaled to 1 at the switch for at most ``LBFGS_STEPS``
  iterations (:mod:`deepxde_lnn.training.accurate`), stopping earlier when it
  converges;
* the final iterate is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..problems.methods import Nets
from ..problems.problem import Profile

__all__ = [
    "PROFILES",
    "Protocol",
    "PROTOCOLS",
    "accurate",
    "profiles",
    "ADAM_STEPS",
    "LBFGS_STEPS",
    "POOL_FRACTION",
]

PROFILES = ("quick", "paper", "accurate")  # a paper case's profiles

ADAM_STEPS = 2000
LR = 1e-3
DECAY_STEPS, DECAY_RATE = 1000, 0.5  # lr 1e-3 -> 5e-4 at step 2000
DECAY = ("inverse time", DECAY_STEPS, DECAY_RATE)
LBFGS_STEPS = 3000
POOL_FRACTION = 0.25


@dataclass(frozen=True)
class Protocol:
    """A paper case's ``paper`` and ``quick`` profiles and network settings."""

    paper: Profile
    quick: Profile
    nets: Nets = Nets()


_MID = Nets(xpinn_cuts=((0.5,), (0.5,)))  # XPINN: 2 x 2 at the mid-lines
_EDGES = ("bottom", "top", "left", "right")


def _relativistic() -> Protocol:
    return Protocol(
        paper=Profile(iterations=8000, lr=1e-3, seed=888888),
        quick=Profile(
            iterations=600,
            lr=1e-3,
            seed=888888,
            counts={"pde": 200, **dict.fromkeys(_EDGES, 100)},
        ),
        nets=_MID,
    )


PROTOCOLS: Mapping[str, Protocol] = {
    "drift_decay": Protocol(
        paper=Profile(iterations=8000, lr=1e-3, seed=888888),
        quick=Profile(
            iterations=1500,
            lr=1e-3,
            seed=888888,
            counts={"pde": 500, "ic": 250, "inflow": 250},
            decay=("exponential", 0.01 ** (1 / 1500)),
        ),
        nets=Nets(xpinn_cuts=((1.0,), (0.5,))),  # XPINN: 2 x 2 at x = 1, t = 0.5
    ),
    "laplace": Protocol(
        paper=Profile(iterations=8000, lr=1e-3, seed=888888),
        # the default main job (`deepxde-lnn compare laplace`): 8 seeds x 3000
        # steps, stacked, Adam's lr decaying exponentially to 1e-5 at the last
        # step, so the reported final iterate is a settled one (docs/protocol.md)
        quick=Profile(
            iterations=3000,
            lr=1e-3,
            seed=888888,
            counts={"pde": 250, **dict.fromkeys(_EDGES, 100)},
            n_seeds=8,
            decay=("exponential", 0.01 ** (1 / 3000)),
        ),
        nets=_MID,
    ),
    "heat": Protocol(
        paper=Profile(iterations=50_000, lr=1e-3, seed=0),
        quick=Profile(
            iterations=1500, lr=1e-3, seed=0, counts={"pde": 500, "robin": 100}
        ),
        # the paper's heat networks: 3 hidden layers, the LNN's blocks replacing
        # the tanh (21,249 parameters; the PINN 8,577); XPINN: the disk's quadrants
        nets=Nets(
            hidden=(64, 64, 64), lnn_layout="reduced", xpinn_cuts=((0.0,), (0.0,))
        ),
    ),
    "beam": Protocol(
        paper=Profile(iterations=5000, lr=3e-4, seed=888888),
        quick=Profile(
            iterations=800,
            lr=1e-3,
            seed=888888,
            counts={
                "pde": 200,
                **dict.fromkeys(("bottom_uyy", "top_uyy", *_EDGES), 100),
            },
        ),
        nets=_MID,
    ),
    "rel_b": _relativistic(),
    "rel_c": _relativistic(),
}


def accurate(paper: Profile, counts: Mapping[str, int]) -> Profile:
    """The accurate profile: the paper profile's seed and evaluation grid,
    ``POOL_FRACTION`` of its point ``counts`` per term (what its terms hold under
    it), this module's training."""
    return replace(
        paper,
        counts={k: max(1, round(POOL_FRACTION * n)) for k, n in counts.items()},
        iterations=ADAM_STEPS,
        lr=LR,
        n_seeds=3,
        dtype="float64",
        resample=False,
        decay=DECAY,
        lbfgs=LBFGS_STEPS,
    )


def profiles(case, protocol: Protocol) -> dict[str, Profile]:
    """The profiles :data:`PROFILES` of ``case`` under ``protocol``."""
    counts = {t.name: t.n for t in case.make_terms(protocol.paper)}
    out = {"quick": protocol.quick, "paper": protocol.paper}
    return {**out, "accurate": accurate(protocol.paper, counts)}
