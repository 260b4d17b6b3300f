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

``settled``, derived from the quick profile by :func:`settled`, is the quick
profile's point counts, steps, learning rate and seed with Adam's learning rate
decaying exponentially to ``SETTLED_FLOOR`` (1 %) of its start at the last step
(:func:`exponential_to`), ``SETTLED_SEEDS`` (8) seeds, points redrawn every step
(so the seeds train as one stacked model). It exists because at the paper's
protocol (a constant rate, the final iterate) one method's per-seed errors span
10-1000x and no number of seeds decides a comparison: the decay lets every run
end settled (``docs/protocol.md``, The settled profile). ``settled-paper`` is
the same recipe at the paper profile's point counts and steps, the heat case's
steps capped at :attr:`Protocol.settled_steps` (the paper's 50,000 are out of a
CPU's reach for 3 methods x 8 seeds).
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
    "exponential_to",
    "settled",
    "profiles",
    "ADAM_STEPS",
    "LBFGS_STEPS",
    "POOL_FRACTION",
    "SETTLED",
    "SETTLED_FLOOR",
    "SETTLED_SEEDS",
]

SETTLED = ("settled", "settled-paper")  # the settled profiles, the quick one first
PROFILES = ("quick", "paper", "accurate", *SETTLED)  # a paper case's profiles

ADAM_STEPS = 2000
LR = 1e-3
DECAY_STEPS, DECAY_RATE = 1000, 0.5  # lr 1e-3 -> 5e-4 at step 2000
DECAY = ("inverse time", DECAY_STEPS, DECAY_RATE)
LBFGS_STEPS = 3000
POOL_FRACTION = 0.25
SETTLED_FLOOR = 0.01  # settled: Adam's lr at the last step, a share of its start
SETTLED_SEEDS = 8


def exponential_to(iterations: int, floor: float = SETTLED_FLOOR) -> tuple:
    """DeepXDE's ``("exponential", g)`` decay that takes Adam's learning rate
    from its start to ``floor`` times it over ``iterations`` steps."""
    return ("exponential", floor ** (1 / iterations))


@dataclass(frozen=True)
class Protocol:
    """A paper case's ``paper`` and ``quick`` profiles and network settings;
    ``settled_steps``: the ``settled-paper`` profile's steps where they are fewer
    than the paper's (None: the paper's)."""

    paper: Profile
    quick: Profile
    nets: Nets = Nets()
    settled_steps: int | None = None


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
            decay=exponential_to(1500),
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
            decay=exponential_to(3000),
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
        settled_steps=8000,  # settled-paper: the other cases' paper steps at most
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


def settled(base: Profile, iterations: int | None = None) -> Profile:
    """The settled profile of ``base`` (a case's quick or paper profile): its
    point counts, learning rate, seed and evaluation grid, ``iterations`` steps
    (None: its own) with Adam's learning rate decaying exponentially to
    ``SETTLED_FLOOR`` of its start at the last one, ``SETTLED_SEEDS`` seeds."""
    steps = iterations or base.iterations
    return replace(
        base, iterations=steps, n_seeds=SETTLED_SEEDS, decay=exponential_to(steps)
    )


def profiles(case, protocol: Protocol) -> dict[str, Profile]:
    """The profiles :data:`PROFILES` of ``case`` under ``protocol``."""
    counts = {t.name: t.n for t in case.make_terms(protocol.paper)}
    return {
        "quick": protocol.quick,
        "paper": protocol.paper,
        "accurate": accurate(protocol.paper, counts),
        "settled": settled(protocol.quick),
        "settled-paper": settled(protocol.paper, protocol.settled_steps),
    }
