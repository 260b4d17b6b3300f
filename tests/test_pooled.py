"""The pooled verdict over several problems (deepxde_lnn.analysis.pooled)."""

import math

import numpy as np
import pytest
from scipy.stats import chi2

from deepxde_lnn.analysis.pooled import FEWER, Errors, pool

# three problems paired over common seeds (p1's seed 3 is A's alone, left out of
# the pairs) and one unpaired (no common seed): heterogeneous, p2 goes the other way
HAND = {
    "p1": Errors(
        {0: 0.010, 1: 0.020, 2: 0.015, 3: 0.5}, {0: 0.050, 1: 0.040, 2: 0.060}
    ),
    "p2": Errors({0: 0.2, 1: 0.3, 2: 0.25}, {0: 0.1, 1: 0.12, 2: 0.11}),
    "p3": Errors({0: 1e-3, 1: 2e-3, 2: 1.5e-3}, {0: 1.1e-3, 1: 1.9e-3, 2: 1.4e-3}),
    "p4": Errors({0: 0.01, 1: 0.02, 2: 0.03}, {10: 0.02, 11: 0.03}),
}


def _mean(xs):
    return sum(xs) / len(xs)


def _var(xs):  # ddof 1
    m = _mean(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def _by_hand(problems):
    """y_p, se_p and P(A < B) of each problem, plain arithmetic."""
    y, se2, p = [], [], []
    for errs in problems.values():
        common = sorted(set(errs.a) & set(errs.b))
        if len(common) >= 2:
            xa = [errs.a[s] for s in common]
            xb = [errs.b[s] for s in common]
            d = [math.log(u) - math.log(v) for u, v in zip(xa, xb)]
            y.append(_mean(d))
            se2.append(_var(d) / len(d))
        else:
            xa, xb = list(errs.a.values()), list(errs.b.values())
            la, lb = [math.log(u) for u in xa], [math.log(v) for v in xb]
            y.append(_mean(la) - _mean(lb))
            se2.append(_var(la) / len(la) + _var(lb) / len(lb))
        wins = [1.0 if u < v else 0.5 if u == v else 0.0 for u in xa for v in xb]
        p.append(_mean(wins))
    return y, se2, p


def test_pooled_estimates_equal_the_hand_computed_ones():
    y, se2, p = _by_hand(HAND)
    got = pool(HAND, "lnn", "pinn", n_resamples=200)
    assert list(got.problems) == ["p1", "p2", "p3", "p4"]
    assert [ci.log_mean for ci in got.problems.values()] == pytest.approx(y)
    assert [ci.paired for ci in got.problems.values()] == [True, True, True, False]
    assert got.ratio == pytest.approx(math.exp(_mean(y)))
    tau2 = max(0.0, _var(y) - _mean(se2))
    assert tau2 > 0  # the fixture is heterogeneous
    assert got.tau2 == pytest.approx(tau2)
    assert got.tau_factor == pytest.approx(math.exp(math.sqrt(tau2)))
    assert got.i2 == pytest.approx(tau2 / (tau2 + _mean(se2)))
    w = [1 / s for s in se2]
    fixed = sum(wi * yi for wi, yi in zip(w, y)) / sum(w)
    q = sum(wi * (yi - fixed) ** 2 for wi, yi in zip(w, y))
    assert got.q_p == pytest.approx(chi2.sf(q, len(y) - 1))
    assert got.q_note == ""
    assert got.p_improve == pytest.approx(_mean(p))
    # p3 leans the other way too (ratio 1.008), but its own verdict does not say so
    assert got.opposite == ("p2", "p3") and got.decided_opposite == ("p2",)
    assert not got.excluded


def test_intervals_contain_the_estimate_and_problems_widen_them():
    got = pool(HAND, "lnn", "pinn", n_resamples=1000)
    (lo, hi), (slo, shi) = got.interval, got.seeds_interval
    assert lo <= got.ratio <= hi and slo <= got.ratio <= shi
    assert got.p_interval[0] <= got.p_improve <= got.p_interval[1]
    assert math.log(hi / lo) >= math.log(shi / slo)
    assert got.verdict == "undecided"


def test_identical_problems_give_about_the_same_two_intervals():
    one = Errors(
        {s: 0.01 * (1 + 0.3 * s) for s in range(5)}, {s: 0.02 for s in range(5)}
    )
    got = pool({f"p{i}": one for i in range(4)}, n_resamples=4000)
    assert got.tau2 == 0 and got.i2 == 0 and got.opposite == ()
    (lo, hi), (slo, shi) = np.log(got.interval), np.log(got.seeds_interval)
    width = shi - slo
    assert abs(lo - slo) < 0.1 * width and abs(hi - shi) < 0.1 * width


def _noisy(ratio, seeds=6, spread=0.1, seed=0):
    rng = np.random.default_rng(seed)
    b = {s: float(np.exp(rng.normal(-3, 1))) for s in range(seeds)}
    a = {s: v * ratio * float(np.exp(rng.normal(0, spread))) for s, v in b.items()}
    return Errors(a, b)


def test_the_verdict_follows_the_data():
    better = pool({f"p{i}": _noisy(0.2, seed=i) for i in range(4)}, n_resamples=500)
    assert better.verdict == better.seeds_verdict == "better"
    assert better.opposite == ()
    same = pool({f"p{i}": _noisy(1.0, seed=i) for i in range(4)}, n_resamples=500)
    assert same.verdict == "equivalent within ×2"
    split = pool({"heat": _noisy(0.1), "wave": _noisy(5.0, seed=1)}, "lnn", "pinn")
    assert split.verdict == "undecided"
    assert split.ratio < 1  # 0.1 outweighs 5: wave goes the other way, decided
    assert split.opposite == split.decided_opposite == ("wave",)
    assert split.problems["heat"].verdict == "better"
    assert "the other way: wave (decided)" in split.text()


def test_failed_problems_are_listed_apart_and_never_pooled():
    good = {f"p{i}": _noisy(0.5, seed=i) for i in range(3)}
    failed = {
        "fa": Errors(*_noisy(1.0)[:2], False, True),
        "fb": Errors(*_noisy(1.0)[:2], True, False),
        "fab": Errors(*_noisy(1.0)[:2], False, False),
        "zero": Errors({0: 0.0, 1: 0.1}, {0: 0.1, 1: 0.2}),
        "one": Errors({0: 0.1}, {0: 0.2, 1: 0.3}),
    }
    unknown = {"unknown": Errors(*_noisy(0.5, seed=9)[:2], None, None)}
    got = pool({**good, **failed, **unknown}, "lnn", "pinn", n_resamples=200)
    assert got.excluded == {
        "fa": "lnn did not converge",
        "fab": "neither converged",
        "fb": "pinn did not converge",
        "one": "fewer than 2 seeds (lnn 1, pinn 2)",
        "zero": "ratio undefined: an error of 0",
    }
    assert set(got.problems) == {*good, "unknown"}  # None: taken as converged
    alone = pool({**good, **unknown}, "lnn", "pinn", n_resamples=200)
    assert got.ratio == alone.ratio and got.interval == alone.interval
    assert (
        "not pooled: fa (lnn did not converge), fab (neither converged)" in got.text()
    )


def test_fewer_than_two_problems_is_undecided():
    problems = {
        "heat": _noisy(0.2),
        "rel_b": Errors(*_noisy(0.2)[:2], False, False),
    }
    got = pool(problems, "lnn", "pinn", n_resamples=50)
    assert got.ratio is None and got.interval is None and got.p_improve is None
    assert got.verdict == got.seeds_verdict == "undecided"
    assert got.text() == (
        f"lnn/pinn over 1 problem: undecided ({FEWER}); "
        "not pooled: rel_b (neither converged)"
    )
    assert (
        pool({}, n_resamples=50).text() == f"A/B over 0 problems: undecided ({FEWER})"
    )


def test_a_tie_neither_collapses_the_pool_nor_the_q_test():
    tie = Errors(
        {s: 0.1 * (s + 1) for s in range(3)}, {s: 0.1 * (s + 1) for s in range(3)}
    )
    others = {"p1": _noisy(0.3), "p2": _noisy(0.5, seed=1)}
    got = pool({**others, "tie": tie}, n_resamples=300)
    assert got.problems["tie"].se == 0 and got.problems["tie"].log_mean == 0
    y = [ci.log_mean for ci in got.problems.values()]
    assert got.ratio == pytest.approx(math.exp(sum(y) / 3)) and got.ratio < 0.7
    assert got.seeds_interval[1] < 1  # not collapsed to 1
    assert got.interval[0] < got.interval[1]
    assert got.q_p is None and "tie: no spread between seeds, se 0" in got.q_note
    assert "no Q test (tie" in got.text()


def test_ragged_seeds():
    problems = {
        "p3": _noisy(0.5, seeds=3),
        "p8": _noisy(0.5, seeds=8, seed=1),
        "unpaired": Errors({0: 0.01, 1: 0.02}, {5: 0.03, 6: 0.02, 7: 0.04, 8: 0.05}),
    }
    got = pool(problems, n_resamples=300)
    cis = got.problems
    assert (cis["p3"].n_a, cis["p8"].n_a) == (3, 8)
    assert not cis["unpaired"].paired and (
        cis["unpaired"].n_a,
        cis["unpaired"].n_b,
    ) == (2, 4)
    assert got.interval[0] <= got.ratio <= got.interval[1]


def test_the_same_input_gives_the_same_text():
    first = pool(HAND, "lnn", "pinn", n_resamples=300).text()
    assert pool(HAND, "lnn", "pinn", n_resamples=300).text() == first
    backwards = dict(reversed(HAND.items()))
    assert pool(backwards, "lnn", "pinn", n_resamples=300).text() == first
    assert first.startswith("lnn/pinn over 4 problems: ")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"level": 1.0}, "level must be in (0, 1); got 1.0"),
        ({"n_resamples": 0}, "n_resamples must be an integer >= 1"),
        ({"margin": 1}, "margin must be a finite number > 1"),
        ({"seed": -1}, "seed must be an integer >= 0"),
    ],
)
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(
        ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        pool(HAND, **kwargs)


def test_bad_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"problems\['p'\]\.a: the error of seed 1"):
        pool({"p": Errors({0: 0.1, 1: -1.0}, {0: 0.1, 1: 0.2})})
    with pytest.raises(ValueError, match=r"problems\['p'\]\.converged_b must be"):
        pool({"p": Errors({0: 0.1, 1: 0.2}, {0: 0.1, 1: 0.2}, True, 1)})
    with pytest.raises(ValueError, match=r"problems\['p'\] needs at least one error"):
        pool({"p": Errors({}, {0: 0.1})})
