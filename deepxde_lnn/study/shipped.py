"""The shipped cases' profiles and network settings (:data:`SHIPPED`, one
:class:`Shipped` each): the paper's cases, PINNacle's problems
(:data:`PINNACLE`), and yours (a case you register that is neither:
:class:`Shipped`'s default ``study``, with a paper case's profiles).

Per case (``cases/*.py`` declares its physics only): ``paper``, the paper's
protocol (its steps, learning rate and seed, the case's point counts); ``quick``,
small counts and few steps; its network settings (:class:`~deepxde_lnn.problems.methods.Trunk`:
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

``strong`` is the accurate profile as a practitioner would push it (Rathore et
al.'s Adam, then L-BFGS, then NNCG): Adam's learning rate decays to
``SETTLED_FLOOR`` of its start at the switch, as the settled profile's does, so
that L-BFGS starts from a settled iterate; then L-BFGS as above; then
``NNCG_STEPS`` NNCG iterations (:mod:`deepxde_lnn.training.nncg`; an L-BFGS that
converges early hands its steps over); ``SETTLED_SEEDS`` seeds. An NNCG iteration
costs 100 to 120 L-BFGS iterations on a CPU (``docs/protocol.md``): a GPU's profile.

``settled``, derived from the quick profile by :func:`settled`, is the quick
profile's point counts, steps, learning rate and seed with Adam's learning rate
decaying exponentially to ``SETTLED_FLOOR`` (1 %) of its start at the last step
(:func:`exponential_to`), ``SETTLED_SEEDS`` (8) seeds, points redrawn every step
(so the seeds train as one stacked model). It exists because at the paper's
protocol (a constant rate, the final iterate) one method's per-seed errors span
10-1000x and no number of seeds decides a comparison: the decay lets every run
end settled (``docs/protocol.md``, The settled profile). ``settled-paper`` is
the same recipe at the paper profile's point counts and steps, the heat case's
steps capped at :attr:`Shipped.settled_steps` (the paper's 50,000 are out of a
CPU's reach for 3 methods x 8 seeds).

PINNacle's problems (``study="pinnacle"``) have three profiles: ``pinnacle``, its
published protocol (its network of 5 hidden layers of 100, Adam at 1e-3 for
20,000 steps on one fixed set of its point counts; a GPU's job); ``quick``, the
short CPU profile: ``PINNACLE_CPU_SHARE`` of its points per term (a fixed
observation set whole), redrawn every step so that seeds stack,
``PINNACLE_CPU_STEPS`` steps with the settled profile's decay, so that every seed
ends settled, and ``PINNACLE_CPU_SEEDS`` seeds; and ``accurate``, the strong CPU
profile (:func:`pinnacle_accurate`): ``PINNACLE_ACCURATE_SHARE`` of its points
per term, at most ``PINNACLE_ACCURATE_CAP`` (a fixed observation set whole), one
fixed set, Adam for ``PINNACLE_ACCURATE_STEPS`` steps with the accurate profile's
inverse-time decay, then L-BFGS for at most ``PINNACLE_ACCURATE_LBFGS``
iterations, float32, ``PINNACLE_CPU_SEEDS`` seeds: about 10 core-minutes a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..problems.methods import Trunk
from ..problems.problem import Profile

__all__ = [
    "PROFILES",
    "Shipped",
    "SHIPPED",
    "accurate",
    "strong",
    "pinnacle_accurate",
    "exponential_to",
    "settled",
    "profiles",
    "ADAM_STEPS",
    "LBFGS_STEPS",
    "NNCG_STEPS",
    "POOL_FRACTION",
    "SETTLED",
    "SETTLED_FLOOR",
    "SETTLED_SEEDS",
    "STUDIES",
    "STRENGTHS",
    "ALL_PROFILES",
    "PINNACLE",
    "names_of",
    "published_profile",
]

SETTLED = ("settled", "settled-paper")  # the settled profiles, the quick one first
# a paper case's profiles
PROFILES = ("quick", "paper", "accurate", "strong", *SETTLED)
#: each study's profiles, its published profile named as the study; a case
#: registered as yours (neither the paper's nor PINNacle's) has a paper case's,
#: its ``paper`` profile its own full training
STUDIES = {
    "paper": PROFILES,
    "pinnacle": ("quick", "accurate", "pinnacle"),
    "yours": PROFILES,
}
ALL_PROFILES = tuple(dict.fromkeys(p for ps in STUDIES.values() for p in ps))
#: the two training strengths the answer is given for, and each shipped study's
#: profile of each: short (Adam alone) and strong (Adam, then L-BFGS)
STRENGTHS = {
    "short": {"paper": "settled", "pinnacle": "quick"},
    "strong": {"paper": "accurate", "pinnacle": "accurate"},
}

ADAM_STEPS = 2000
LR = 1e-3
DECAY_STEPS, DECAY_RATE = 1000, 0.5  # lr 1e-3 -> 5e-4 at step 2000
DECAY = ("inverse time", DECAY_STEPS, DECAY_RATE)
LBFGS_STEPS = 3000
NNCG_STEPS = 500
POOL_FRACTION = 0.25
SETTLED_FLOOR = 0.01  # settled: Adam's lr at the last step, a share of its start
SETTLED_SEEDS = 8


def exponential_to(iterations: int, floor: float = SETTLED_FLOOR) -> tuple:
    """DeepXDE's ``("exponential", g)`` decay that takes Adam's learning rate
    from its start to ``floor`` times it over ``iterations`` steps."""
    return ("exponential", floor ** (1 / iterations))


def published_profile(study: str) -> str:
    """The name of ``study``'s published profile, the study's own (``paper``,
    ``pinnacle``); ``paper`` for yours (the case's own full training)."""
    return study if study in STUDIES[study] else "paper"


@dataclass(frozen=True)
class Shipped:
    """What makes a case shipped: its ``published`` profile (the paper's
    protocol, or for another ``study`` that study's: the profile is named as the
    study, :func:`published_profile`), its ``quick`` profile and network
    settings; ``settled_steps``: the ``settled-paper`` profile's steps where they
    are fewer than the paper's (None: the paper's). ``study``: a key of
    :data:`STUDIES`; a case of the package that is neither the paper's nor
    PINNacle's is ``yours``, never in the paper's report rows."""

    published: Profile
    quick: Profile
    trunk: Trunk = Trunk()
    settled_steps: int | None = None
    study: str = "yours"

    def __post_init__(self):
        if self.study not in STUDIES:
            raise ValueError(
                f"study must be one of {', '.join(STUDIES)}; got {self.study!r}"
            )


_MID = Trunk(xpinn_cuts=((0.5,), (0.5,)))  # XPINN: 2 x 2 at the mid-lines
_EDGES = ("bottom", "top", "left", "right")


def _relativistic() -> Shipped:
    return Shipped(
        published=Profile(iterations=8000, lr=1e-3, seed=888888),
        quick=Profile(
            iterations=600,
            lr=1e-3,
            seed=888888,
            counts={"pde": 200, **dict.fromkeys(_EDGES, 100)},
        ),
        trunk=_MID,
        study="paper",
    )


PINNACLE_STEPS, PINNACLE_LR = 20_000, 1e-3
PINNACLE_TRUNK = Trunk(hidden=(100,) * 5)  # [d] + [100] * 5 + [k]
PINNACLE_CPU_SHARE = 1 / 32  # the CPU profile's share of each term's points
PINNACLE_CPU_STEPS = 2000
PINNACLE_CPU_SEEDS = 5
PINNACLE_ACCURATE_SHARE = 1 / 8  # the strong CPU profile's share of each term's points
PINNACLE_ACCURATE_CAP = 1024  # ... and its most points per term
PINNACLE_ACCURATE_STEPS = 5000
PINNACLE_ACCURATE_LBFGS = 2000


def _pinnacle(**trunk) -> Shipped:
    """A PINNacle problem's profiles (its point counts are its case's)."""
    return Shipped(
        published=Profile(
            iterations=PINNACLE_STEPS,
            lr=PINNACLE_LR,
            seed=0,
            n_seeds=PINNACLE_CPU_SEEDS,
            resample=False,
        ),
        quick=Profile(
            iterations=PINNACLE_CPU_STEPS,
            lr=PINNACLE_LR,
            seed=0,
            n_seeds=PINNACLE_CPU_SEEDS,
            decay=exponential_to(PINNACLE_CPU_STEPS),
        ),
        trunk=replace(PINNACLE_TRUNK, **trunk),
        study="pinnacle",
    )


#: PINNacle's problems shipped as cases (``cases/<name>.py``), in its order
PINNACLE = (
    "burgers1d",
    "poisson2d_classic",
    "poisson_boltzmann2d",
    "heat2d_multiscale",
    "heat2d_longtime",
    "ns2d_lid_driven",
    "ns2d_back_step",
    "wave1d",
    "poisson_nd",
    "heat_nd",
    "poisson_inv",
    "heat_inv",
)

SHIPPED: Mapping[str, Shipped] = {
    "drift_decay": Shipped(
        published=Profile(iterations=8000, lr=1e-3, seed=888888),
        quick=Profile(
            iterations=1500,
            lr=1e-3,
            seed=888888,
            counts={"pde": 500, "ic": 250, "inflow": 250},
            decay=exponential_to(1500),
        ),
        trunk=Trunk(xpinn_cuts=((1.0,), (0.5,))),  # XPINN: 2 x 2 at x = 1, t = 0.5
        study="paper",
    ),
    "laplace": Shipped(
        published=Profile(iterations=8000, lr=1e-3, seed=888888),
        # the main comparison (`deepxde-lnn compare laplace`): 8 seeds x 3000
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
        trunk=_MID,
        study="paper",
    ),
    "heat": Shipped(
        published=Profile(iterations=50_000, lr=1e-3, seed=0),
        quick=Profile(
            iterations=1500, lr=1e-3, seed=0, counts={"pde": 500, "robin": 100}
        ),
        # the paper's heat networks: 3 hidden layers, the LNN's blocks replacing
        # the tanh (21,249 parameters; the PINN 8,577); XPINN: the disk's quadrants
        trunk=Trunk(
            hidden=(64, 64, 64), lnn_layout="reduced", xpinn_cuts=((0.0,), (0.0,))
        ),
        settled_steps=8000,  # settled-paper: the other cases' paper steps at most
        study="paper",
    ),
    "beam": Shipped(
        published=Profile(iterations=5000, lr=3e-4, seed=888888),
        quick=Profile(
            iterations=800,
            lr=1e-3,
            seed=888888,
            counts={
                "pde": 200,
                **dict.fromkeys(("bottom_uyy", "top_uyy", *_EDGES), 100),
            },
        ),
        trunk=_MID,
        study="paper",
    ),
    "rel_b": _relativistic(),
    "rel_c": _relativistic(),
    **{name: _pinnacle() for name in PINNACLE},
}


def names_of(study: str) -> tuple[str, ...]:
    """The cases of ``study`` (a key of :data:`STUDIES`), in the package's order."""
    return tuple(n for n, p in SHIPPED.items() if p.study == study)


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


def pinnacle_accurate(quick: Profile, terms) -> Profile:
    """PINNacle's strong CPU profile from its ``quick`` one and the problem's
    ``terms``: ``PINNACLE_ACCURATE_SHARE`` of each term's points, at most
    ``PINNACLE_ACCURATE_CAP`` (a fixed observation set whole), one fixed set;
    Adam for ``PINNACLE_ACCURATE_STEPS`` steps with ``DECAY``, then L-BFGS for
    at most ``PINNACLE_ACCURATE_LBFGS`` iterations (as :func:`accurate`'s)."""
    counts = {
        t.name: (
            t.n
            if t.fixed
            else min(
                PINNACLE_ACCURATE_CAP, max(1, round(PINNACLE_ACCURATE_SHARE * t.n))
            )
        )
        for t in terms
    }
    return replace(
        quick,
        counts=counts,
        iterations=PINNACLE_ACCURATE_STEPS,
        decay=DECAY,
        resample=False,
        lbfgs=PINNACLE_ACCURATE_LBFGS,
    )


def strong(accurate: Profile) -> Profile:
    """The strong profile: the ``accurate`` profile with the settled decay of
    Adam's learning rate, ``NNCG_STEPS`` NNCG iterations after L-BFGS and
    ``SETTLED_SEEDS`` seeds."""
    assert accurate.iterations is not None  # a case's profile: its steps
    return replace(
        accurate,
        decay=exponential_to(accurate.iterations),
        nncg=NNCG_STEPS,
        n_seeds=SETTLED_SEEDS,
    )


def settled(base: Profile, iterations: int | None = None) -> Profile:
    """The settled profile of ``base`` (a case's quick or paper profile): its
    point counts, learning rate, seed and evaluation grid, ``iterations`` steps
    (None: its own) with Adam's learning rate decaying exponentially to
    ``SETTLED_FLOOR`` of its start at the last one, ``SETTLED_SEEDS`` seeds."""
    steps = iterations or base.iterations
    assert steps is not None  # a case's profile: its steps
    return replace(
        base, iterations=steps, n_seeds=SETTLED_SEEDS, decay=exponential_to(steps)
    )


def profiles(case, shipped: Shipped) -> dict[str, Profile]:
    """The profiles of ``case`` as ``shipped``: :data:`PROFILES` for the
    paper's cases and yours, :data:`STUDIES` ``["pinnacle"]`` for PINNacle's."""
    if shipped.study == "pinnacle":
        cpu = {
            t.name: t.n if t.fixed else max(1, round(PINNACLE_CPU_SHARE * t.n))
            for t in case.terms
        }
        return {
            "quick": replace(shipped.quick, counts=cpu),
            "accurate": pinnacle_accurate(shipped.quick, case.terms),
            "pinnacle": shipped.published,
        }
    counts = {t.name: t.n for t in case.make_terms(shipped.published)}
    return {
        "quick": shipped.quick,
        "paper": shipped.published,
        "accurate": accurate(shipped.published, counts),
        "strong": strong(accurate(shipped.published, counts)),
        "settled": settled(shipped.quick),
        "settled-paper": settled(shipped.published, shipped.settled_steps),
    }
