"""Verdicts: the four outcomes, the margin, the seeds-needed estimate, Holm's
adjustment and the sequential rule's error rate (by simulation)."""

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from deepxde_lnn.analysis.sequential import Design, until_decided
from deepxde_lnn.analysis.stats import _p_below_of, failures, holm, p_below, ratio_ci
from deepxde_lnn.analysis.table import ci_text

SEEDS = range(100, 200)


def _pair(log_ratios, base=1e-3):
    """Errors (A, B) with A/B = exp(log_ratios) seed by seed."""
    d = np.asarray(log_ratios, float)
    b = {s: base * (1 + 0.1 * k) for k, s in enumerate(SEEDS[: len(d)])}
    return {s: b[s] * math.exp(x) for s, x in zip(b, d)}, b


def _exact(mean, sd, n):
    """n log ratios with exactly this mean and sample standard deviation."""
    z = np.linspace(-1, 1, n)
    return mean + sd * (z - z.mean()) / z.std(ddof=1)


@pytest.mark.parametrize(
    "mean, sd, n, verdict",
    [
        (-1.0, 0.2, 6, "better"),
        (1.0, 0.2, 6, "worse"),
        (0.1, 0.2, 6, "equivalent within ×2"),
        (0.1, 2.0, 6, "undecided"),
        (0.5, 0.9, 6, "undecided"),  # contains 1 but not both 1/2 and 2
    ],
)
def test_the_four_verdicts(mean, sd, n, verdict):
    ci = ratio_ci(*_pair(_exact(mean, sd, n)))
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    assert ci.paired and ci.n_a == ci.n_b == n
    assert (ci.low, ci.high) == pytest.approx(np.exp([mean - half, mean + half]))
    assert ci.verdict == verdict


def test_the_margin_decides_equivalence():
    errs = _pair(_exact(0.1, 0.35, 6))  # interval 0.75-1.48
    assert ratio_ci(*errs).verdict == "equivalent within ×2"
    assert ratio_ci(*errs, margin=1.4).verdict == "undecided"
    assert ratio_ci(*errs, margin=1.6).verdict == "equivalent within ×1.6"
    with pytest.raises(ValueError, match="margin must be a finite number > 1"):
        ratio_ci(*errs, margin=1)


def test_one_seed_is_undecided_and_says_why():
    ci = ratio_ci({1: 1e-3}, {1: 2e-3})
    assert ci.verdict == "undecided" and ci.seeds_needed is None
    assert ci.verdict_text() == "undecided (one seed: no spread yet)"
    assert "no significant difference" not in ci.describe("lnn", "pinn")


def test_an_error_of_zero_makes_the_ratio_undefined_not_nan():
    # issue 43, item 16: an RMSE of 0 printed "CI nan–nan ... one seed: no
    # spread yet" at n = 2
    for a, b, zero in (
        ({1: 0.0, 2: 1e-3}, {1: 1e-3, 2: 2e-3}, "lnn on 1 of 2 seeds"),
        ({1: 1e-3}, {1: 0.0, 2: 0.0}, "pinn on 2 of 2 seeds"),
    ):
        ci = ratio_ci(a, b)
        text = ci.describe("lnn", "pinn")
        assert "nan" not in text and "one seed" not in text, text
        assert f"ratio undefined: an error of 0 ({zero}) has no logarithm" in text
        assert ci.undefined and ci.verdict == "undecided"
        assert ci.verdict_text() == "undecided (ratio undefined: an error of 0)"
        assert ci_text(ci) == "undefined (an error of 0)"
        assert holm([ci]) == ["undecided"]
    for bad in (-1e-3, math.nan, math.inf):
        with pytest.raises(ValueError, match="^a: the error of seed 2 must"):
            ratio_ci({1: 1e-3, 2: bad}, {1: 1e-3, 2: 1e-3})
    with pytest.raises(ValueError, match="^b: the error of seed 1 must"):
        ratio_ci({1: 1e-3}, {1: -1.0})


@pytest.mark.parametrize("mean, sd", [(0.1, 0.7), (0.6, 0.8), (-0.3, 1.5)])
def test_seeds_needed_decides_with_the_observed_spread(mean, sd):
    """With the same mean and spread, the estimated n decides and n - 1 does not."""
    ci = ratio_ci(*_pair(_exact(mean, sd, 4)))
    assert ci.verdict == "undecided"
    n = ci.seeds_needed
    assert n > 4 and ci.verdict_text() == f"undecided (~{n} seeds)"
    assert ratio_ci(*_pair(_exact(mean, sd, n))).decided
    assert not ratio_ci(*_pair(_exact(mean, sd, n - 1))).decided


def test_pairs_over_common_seeds_else_welch():
    a, b = _pair(_exact(0.2, 0.3, 5))
    b_more = {**b, 999: 5e-2}  # a seed only the baseline ran
    assert ratio_ci(a, b_more) == ratio_ci(a, b)
    welch = ratio_ci({1: 1e-3, 2: 2e-3}, {3: 1e-3, 4: 3e-3, 5: 2e-3})
    assert not welch.paired and (welch.n_a, welch.n_b) == (2, 3)


def test_holm_adjusts_within_the_family():
    """Raw 95 % verdicts against Holm's: the weakest decided one is undone."""
    strong = ratio_ci(*_pair(_exact(-1.0, 0.2, 6)))  # p ~ 1e-5
    weak = ratio_ci(*_pair(_exact(-0.5, 0.45, 6)))  # p ~ 0.04 > 0.05 / 2
    assert weak.verdict == "better" and 0.025 < weak.p_diff < 0.05
    undecided = ratio_ci(*_pair(_exact(0.0, 3.0, 6)))
    # strong's ratio 1 rejected at 0.05 / 3, then weak's fails at 0.05 / 3: stop
    assert holm([undecided, strong, weak, None]) == [
        "undecided", "better", "undecided", None,
    ]  # fmt: skip
    assert holm([weak, strong]) == ["undecided", "better"]  # weak at 0.05 / 2
    # a comparison rejected on both counts (worse, and within the margin) can no
    # longer hold a true hypothesis: the next one is tested at 0.05 / 1
    both = ratio_ci(*_pair(_exact(0.25, 0.05, 6)))
    assert both.p_diff < 0.01 and both.p_equiv < 0.01
    assert holm([weak, both]) == ["better", "worse"]
    assert holm([weak]) == ["better"]  # a family of one: unadjusted


def _simulate(ratio, design, trials, rng):
    """False-decision rate of :func:`until_decided` on synthetic errors: per seed,
    log e_B ~ N(0, 1) (seed effect), log e_A = log e_B + log ratio + N(0, 0.5)."""
    false = 0
    for _ in range(trials):
        base = rng.normal(size=design.max_seeds)
        noise = rng.normal(scale=0.5, size=design.max_seeds)
        seeds = list(range(design.max_seeds))

        def train(methods, new):
            out = {"pinn": {s: math.exp(base[s]) for s in new}}
            if "lnn" in methods:
                out["lnn"] = {s: ratio * math.exp(base[s] + noise[s]) for s in new}
            return out

        v = until_decided(train, ["lnn", "pinn"], seeds, design)["lnn"].verdict
        false += (v in ("better", "worse")) if ratio == 1 else v.startswith("equiv")
    return false / trials


def test_sequential_rule_keeps_the_false_decision_rate():
    """Seeds 3, 6, ..., 15 (five looks): at ratio 1 a 'better'/'worse' verdict is
    false, at ratio = margin an 'equivalent' one is; either stays at most 5 %.
    The same looks at 95 % each (no spreading) exceed it."""
    rng = np.random.default_rng(0)
    design = Design(first=3, batch=3, max_seeds=15)
    assert design.looks == [3, 6, 9, 12, 15]
    assert _simulate(1.0, design, 1500, rng) <= 0.05
    assert _simulate(2.0, design, 1500, rng) <= 0.05
    naive = Design(first=3, batch=3, max_seeds=15, level=1 - 0.05 * 5)
    assert _simulate(1.0, naive, 1500, rng) > 0.05


def test_until_decided_adds_seeds_only_where_undecided():
    asked = []
    logs = {"lnn": 0.0, "pinn-matched": -2.0}

    def train(methods, new):
        asked.append((tuple(methods), tuple(new)))
        base = {s: 1e-3 * (1 + (s % 7)) for s in new}
        out = {"pinn": base}
        for m in methods:
            if m != "pinn":
                jitter = {s: 0.3 * math.sin(s) for s in new}
                out[m] = {s: base[s] * math.exp(logs[m] + jitter[s]) for s in new}
        return out

    seen = []
    design = Design(first=3, batch=2, max_seeds=9)
    res = until_decided(
        train, ["lnn", "pinn-matched", "pinn"], list(range(20)), design,
        on_look=lambda n, cis: seen.append((n, sorted(cis))),
    )  # fmt: skip
    assert asked[0] == (("lnn", "pinn-matched", "pinn"), (0, 1, 2))
    assert asked[1:] == [(("lnn", "pinn"), (3, 4))]  # then lnn decided too
    assert res["pinn-matched"].verdict == "better" and res["pinn-matched"].n_a == 3
    assert res["lnn"].looks == 4 and res["lnn"].n_a == 5
    assert seen == [(3, ["lnn", "pinn-matched"]), (5, ["lnn"])]
    assert [res["lnn"].decided, res["lnn"].verdict] == [True, "equivalent within ×2"]


def test_design_checks_its_numbers():
    with pytest.raises(ValueError, match="max_seeds must be at least"):
        Design(first=6, batch=6, max_seeds=4)
    with pytest.raises(ValueError, match="batch must be an integer >= 1"):
        Design(first=6, batch=0, max_seeds=12)
    assert Design(first=6, batch=6, max_seeds=6).looks == [6]


def test_holm_keeps_the_family_wise_error_by_simulation():
    """A table of five methods against the same baseline runs (6 seeds), all at
    ratio 1: the chance of any 'better'/'worse' in the table stays at most 5 %
    with Holm's adjustment (about 4.4 % here), and is far above it without."""
    rng = np.random.default_rng(1)
    seeds = list(range(6))
    raw = adjusted = 0
    trials = 1000
    for _ in range(trials):
        effect = rng.normal(size=6)  # the seed's points, shared by every method
        base = dict(zip(seeds, np.exp(effect + rng.normal(scale=0.5, size=6))))
        cis = [
            ratio_ci(
                dict(zip(seeds, np.exp(effect + rng.normal(scale=0.5, size=6)))), base
            )
            for _ in range(5)
        ]
        raw += any(ci.verdict in ("better", "worse") for ci in cis)
        adjusted += any(v in ("better", "worse") for v in holm(cis))
    assert adjusted / trials <= 0.05 < 0.15 < raw / trials


def test_a_verdict_between_two_failures_says_so():
    # issue 52, item 2: a ratio of two failures is not a result
    ci = ratio_ci(*_pair(_exact(0.0, 0.1, 6)))
    assert ci.verdict.startswith("equivalent") and ci.verdict_text() == ci.verdict
    both = replace(ci, unconverged=(True, True))
    assert both.verdict_text() == f"{ci.verdict} (neither converged)"
    assert both.describe("lnn", "fnn").endswith(f": {ci.verdict} (neither converged)")
    one = replace(ci, unconverged=(False, True))
    assert one.describe("lnn", "fnn").endswith("(fnn did not converge)")
    assert (
        replace(ci, unconverged=(True, False))
        .verdict_text()
        .endswith("(it did not converge)")
    )


def test_converged_and_failures_use_the_relative_error_level():
    from deepxde_lnn.analysis.stats import CONVERGED_BELOW, converged

    assert converged([0.1, 0.2, 0.9]) and not converged([0.6, 0.7, 0.1])
    assert converged([None, None]) is None  # a zero truth: unknown
    low = CONVERGED_BELOW * 0.99
    assert failures([1.0, 1.0, 1.0], [low, CONVERGED_BELOW, None]) == 1
    assert failures([1.0, 1.0, 1.0], [0.9, 0.9, 0.9]) == 3  # every seed


def test_summary_lines_show_holm_where_it_differs():
    from deepxde_lnn.analysis.verdict_text import verdict_lines

    strong = ratio_ci(*_pair(_exact(-1.0, 0.2, 6)))
    weak = ratio_ci(*_pair(_exact(-0.5, 0.45, 6)))
    undecided = ratio_ci(*_pair(_exact(0.0, 3.0, 6)))
    found = [("lnn", "u", strong), ("lnn", "v", weak), ("lnn", "Avg", undecided)]
    lines = verdict_lines(found)
    assert lines[0].endswith(": lnn better")
    # the verdict that counts leads (issue 52, item 6), the interval's own beside
    assert lines[1].startswith("v RMSE: undecided (Holm over 3; alone: better); ")
    assert lines[2].startswith("Avg RMSE: lnn/pinn error ratio 1 (95% CI ")
    assert lines[2].endswith("undecided (~75 seeds)")


# ------------------------------------------- the robust companions of a verdict


def test_p_below_on_hand_made_samples():
    a, b = {1: 1.0, 2: 2.0, 3: 3.0}, {1: 4.0, 2: 5.0, 3: 6.0}
    assert p_below(a, b).p == 1.0 and (p_below(a, b).low, p_below(a, b).high) == (1, 1)
    assert p_below(b, a).p == 0.0
    assert p_below(a, a).p == 0.5  # identical: as many pairs each way, ties 1/2
    # ties count 1/2: pairs (1,2) (1,3) (2,3) below, (2,2) a tie -> 3.5 / 4
    tied = p_below({1: 1.0, 2: 2.0}, {3: 2.0, 4: 3.0})
    assert tied.p == 0.875 and not tied.paired
    # Mann-Whitney's U of B over n_A n_B, as SciPy computes it
    rng = np.random.default_rng(5)
    x, y = rng.lognormal(size=7), np.round(rng.lognormal(size=9), 1)
    u = stats.mannwhitneyu(y, x).statistic / (7 * 9)
    assert p_below(dict(enumerate(x)), dict(zip(range(10, 19), y))).p == u


def test_p_below_pairs_over_common_seeds_as_the_ratio_does():
    a = {1: 1.0, 2: 5.0, 3: 2.0, 9: 100.0}  # seed 9: not in b, left out when paired
    b = {1: 2.0, 2: 4.0, 3: 3.0}
    pb, ci = p_below(a, b), ratio_ci(a, b)
    assert pb.paired == ci.paired and (pb.n_a, pb.n_b) == (ci.n_a, ci.n_b) == (3, 3)
    assert pb.p == pytest.approx(5.5 / 9)  # 1 < 2,3,4; 2 < 3,4, tie 2; 5 < none


def test_p_below_interval_holds_the_estimate_and_is_reproducible():
    rng = np.random.default_rng(0)
    a = dict(zip(SEEDS, rng.lognormal(-0.5, 1, size=8)))
    b = dict(zip(SEEDS, rng.lognormal(0.0, 1, size=8)))
    pb = p_below(a, b)
    assert pb.paired and pb.low <= pb.p <= pb.high and pb.high - pb.low > 0.1
    _p_below_of.cache_clear()  # computed again: the same interval
    again = p_below(dict(reversed(list(a.items()))), b)
    assert (again.p, again.low, again.high) == (pb.p, pb.low, pb.high)
    assert pb.text() == f"{pb.p:.2f} ({pb.low:.2f}–{pb.high:.2f})"
    one = p_below({1: 1.0}, b)  # one seed: no interval
    assert math.isnan(one.low) and one.text().endswith("(no interval)")


def test_failures_are_seeds_beyond_ten_times_the_median():
    errors = [1.0, 1.2, 0.9, 1.1, 0.8, 1.3, 1.05, 100.0]  # one 100x outlier
    assert failures(errors) == 1
    assert failures(errors[:-1]) == 0
    assert failures([1.0, 9.9, 1.0]) == 0  # below 10x the median: no failure
    assert failures([1.0, 100.0]) == 0  # two seeds: the median is their mean
    assert failures([1.0, 1.0, 100.0]) == 1


def test_a_seed_whose_error_is_not_a_number_fails():
    # reliability item 2: None (a prediction that is not finite) is a failed seed;
    # the median is that of the others
    assert failures([1e-3, None, 1.2e-3, 2e-2]) == 2
    assert failures([None, None]) == 2 and failures([]) == 0


def test_zero_and_huge_errors_warn_nothing():
    # reliability item 16: an interval beyond float64's range is infinite, and a
    # zero error's geometric mean is 0, without a NumPy warning
    from deepxde_lnn.analysis.table import geomean

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wide = ratio_ci({0: 1e-300, 1: 1e300, 2: 1.0}, {0: 1.0, 1: 1.0, 2: 1.0})
        assert wide.high == math.inf and wide.low == 0.0
        assert wide.verdict == "undecided"
        far = ratio_ci({0: 1e300, 1: 1e300}, {0: 1e-300, 1: 1e-300})
        assert far.ratio == math.inf
        assert geomean([0.0, 1.0]) == 0.0 and geomean([1e308, 1e308]) > 0
