"""The accurate profile: float64, fixed pool, Adam with decay, then L-BFGS, with
exact resume across the switch."""

import types
from dataclasses import replace

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import SignalAt

from deepxde_lnn import cli
from deepxde_lnn.config import RunConfig
from deepxde_lnn.experiments.jobs import _units
from deepxde_lnn.study import registry, shipped
from deepxde_lnn.training import accurate
from deepxde_lnn.training.runner import RunInterrupted, run

ADAM, LBFGS = 12, 12


def tiny_accurate(name="laplace", n=16):
    """``name`` whose accurate profile has about ``n`` points per term and a small
    grid."""
    case = registry.get(name)
    n = round(n / shipped.POOL_FRACTION)
    counts = {t.name: n for t in case.terms}
    paper = replace(case.profile("paper"), counts=counts, grid_n=21)
    entry = replace(shipped.SHIPPED[name], published=paper)
    return replace(case, profiles=shipped.profiles(case, entry))


def _cfg(method="pinn", seed=3, **kw):
    kw = {"iterations": ADAM, "lbfgs": LBFGS, "checkpoint_every": 5, **kw}
    return RunConfig("laplace", method, seed=seed, profile="accurate", **kw)


def _loss(path):
    return np.loadtxt(path / "loss.csv", delimiter=",", skiprows=1)


@pytest.mark.parametrize("name", shipped.names_of("paper"))
def test_profile_is_one_setting_for_every_case(name):
    case = registry.get(name)
    prof = case.profile("accurate")
    assert (prof.dtype, prof.resample, prof.decay) == (
        "float64",
        False,
        shipped.DECAY,
    )
    assert (prof.iterations, prof.lbfgs) == (
        shipped.ADAM_STEPS,
        shipped.LBFGS_STEPS,
    )
    paper = {t.name: t.n for t in case.make_terms(case.profile("paper"))}
    want = {k: max(1, round(shipped.POOL_FRACTION * n)) for k, n in paper.items()}
    assert dict(prof.counts) == want and prof.seed == case.profile("paper").seed
    cfg = RunConfig(name, "lnn", profile="accurate").resolved(case)
    assert (cfg.dtype, cfg.lbfgs) == ("float64", shipped.LBFGS_STEPS)
    assert cfg.identity()["lbfgs"] == shipped.LBFGS_STEPS
    old = RunConfig(name, "lnn", profile="paper").resolved(case)
    assert (old.dtype, old.lbfgs) == ("float32", 0) and "lbfgs" not in old.identity()


def test_adam_then_lbfgs_float64_record(tmp_path):
    case = tiny_accurate()
    rec = run(_cfg(), tmp_path / "r", problem=case)
    assert rec["dtype"] == "float64" and rec["steps"] == ADAM + LBFGS
    assert rec["lbfgs_iterations"] == LBFGS and rec["lbfgs_stop"] == "iteration cap"
    assert "inverse time" in rec["optimizer"] and "then LBFGS" in rec["optimizer"]
    assert rec["resampling"] == "one fixed point set per term"
    state = torch.load(tmp_path / "r" / "model.pt", weights_only=True)
    assert all(v.dtype == torch.float64 for v in state.values())
    loss = _loss(tmp_path / "r")
    assert loss[:, 0].tolist() == list(range(1, ADAM + LBFGS + 1))
    # L-BFGS with a line search on a fixed pool: the loss never goes up
    assert np.all(np.diff(loss[ADAM:, 1]) <= 1e-12)
    assert loss[-1, 1] < loss[ADAM - 1, 1]


@pytest.mark.parametrize(
    "cut", [7, ADAM, ADAM + 8]
)  # in Adam, at the switch, in L-BFGS
def test_resume_across_the_switch_is_exact(tmp_path, cut):
    case = tiny_accurate()
    full = run(_cfg(), tmp_path / "full", problem=case)
    with pytest.raises(RunInterrupted):
        run(_cfg(), tmp_path / "cut", problem=case, callbacks=[SignalAt(cut)])
    resumed = run(_cfg(), tmp_path / "cut", problem=case, resume=True)
    assert resumed["resumed"] and resumed["metrics"] == full["metrics"]
    assert resumed["lbfgs_iterations"] == full["lbfgs_iterations"] == LBFGS
    np.testing.assert_array_equal(_loss(tmp_path / "full"), _loss(tmp_path / "cut"))


def test_rba_multipliers_are_frozen_during_lbfgs(tmp_path):
    seen = []

    class Grab(dde.callbacks.Callback):
        def on_batch_end(self):
            lam = self.model.data.weights.state_dict()["lam"]
            seen.append([t.clone() for t in lam.values()])

    case = tiny_accurate()
    run(_cfg("rba"), tmp_path / "r", problem=case, callbacks=[Grab()])
    changed = [not torch.equal(a[0], b[0]) for a, b in zip(seen, seen[1:])]
    assert all(changed[: ADAM - 1]) and not any(changed[ADAM - 1 :])


def _watched_lbfgs():
    """Two float64 parameters, their L-BFGS and its convergence callback, wired
    to a stand-in model as DeepXDE wires them."""
    p = torch.nn.Parameter(torch.tensor([3.0, -2.0], dtype=torch.float64))
    model = types.SimpleNamespace(stop_training=False, opt=accurate.make_lbfgs([p]))
    stop = accurate.LBFGSConverged()
    stop.model = model
    return p, model.opt, stop, model


def test_lbfgs_stops_when_converged():
    p, opt, stop, model = _watched_lbfgs()

    def closure():
        opt.zero_grad()
        loss = ((p - 1.0) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(50):
        stop.on_batch_begin()
        opt.step(closure)
        stop.on_batch_end()
        if model.stop_training:
            break
    assert stop.converged and accurate.iterations_done(opt) < 50
    np.testing.assert_allclose(p.detach().numpy(), [1.0, 1.0], atol=1e-8)


def test_lbfgs_stops_on_a_zero_line_search_step():
    """An iteration whose line search returned t = 0 (parameters unchanged) stops
    training even though the iteration counter advanced."""
    p, opt, stop, model = _watched_lbfgs()

    def closure():
        opt.zero_grad()
        loss = ((p - 1.0) ** 2).sum() + (p**4).sum()
        loss.backward()
        return loss

    stop.on_batch_begin()
    opt.step(closure)
    stop.on_batch_end()
    assert not stop.converged and accurate.iterations_done(opt) == 1
    stop.on_batch_begin()
    opt.step(closure)
    opt.state[p]["t"] = 0.0  # what the line search leaves when no step decreases
    stop.on_batch_end()
    assert accurate.iterations_done(opt) == 2
    assert stop.converged and model.stop_training


def _small_quadratic(opt_class, steps=40):
    """``steps`` iterations on ``1e-7 * sum(k_i (p_i - 1)^2)``, curvatures
    1..1000, from ``p - 1 ~ 1e-3``: a loss as small as a well-trained PINN's."""
    torch.manual_seed(0)
    p = torch.nn.Parameter(1 + 1e-3 * torch.randn(20, dtype=torch.float64))
    k = torch.logspace(0, 3, 20, dtype=torch.float64)
    opt = opt_class([p], **{**accurate.make_lbfgs([p]).defaults, "max_iter": 1})

    def closure():
        opt.zero_grad()
        loss = 1e-7 * (k * (p - 1.0) ** 2).sum()
        loss.backward()
        return loss

    first = float(closure())
    for _ in range(steps):
        opt.step(closure)
    return float(closure()) / first, opt


def test_scaled_lbfgs_keeps_its_memory_at_small_losses():
    # torch's L-BFGS drops every curvature pair here (y.s < 1e-10) and stalls
    # at the absolute gradient tolerance; on the scaled loss it keeps them
    plain, opt = _small_quadratic(torch.optim.LBFGS)
    assert not opt.state[opt.param_groups[0]["params"][0]]["old_dirs"]
    scaled, opt = _small_quadratic(accurate.ScaledLBFGS)
    assert len(opt.state[opt.param_groups[0]["params"][0]]["old_dirs"]) > 20
    assert scaled < 1e-6 < 1e-2 < plain
    c = opt.param_groups[0]["loss_scale"]
    again = accurate.make_lbfgs(opt.param_groups[0]["params"])
    again.load_state_dict(opt.state_dict())  # a checkpoint keeps the scale
    assert again.param_groups[0]["loss_scale"] == c > 1e6


def test_bad_combinations_are_refused_up_front():
    case = tiny_accurate()
    with pytest.raises(ValueError, match="method 'ra-gated'.*dropout"):
        _cfg("ra-gated").resolved(case)
    with pytest.raises(ValueError, match="^seconds: .*L-BFGS"):
        _cfg(seconds=5.0).resolved(case)
    with pytest.raises(
        ValueError, match=r"^lbfgs must be an integer in \[0, 1000000000000000\]"
    ):
        _cfg(lbfgs=-1).resolved(case)
    assert _cfg("ra-gated", lbfgs=0).resolved(case).lbfgs == 0
    with pytest.raises(SystemExit):
        cli.main(["run", "laplace", "--profile", "accurate", "--lbfgs", "-2"])


def test_seeds_are_not_stacked_with_lbfgs_or_a_fixed_pool():
    case = registry.get("laplace")
    jobs = [(_cfg(seed=s).resolved(case), f"o{s}") for s in (1, 2, 3)]
    assert [len(u) for u in _units(jobs, stack=True, problem=case)] == [1, 1, 1]
    paper = [(RunConfig("laplace", "pinn", seed=s, profile="paper"), s) for s in (1, 2)]
    assert [len(u) for u in _units(paper, stack=True, problem=case)] == [2]


def test_case_scripts_scale_the_lbfgs_loss_to_one():
    from types import SimpleNamespace

    from deepxde_lnn import case_script as example

    model = SimpleNamespace(train_state=SimpleNamespace(loss_train=[3e-7, 1e-7]))
    np.testing.assert_allclose(example.unit_loss_weights(model), [2.5e6, 2.5e6])
    model.train_state.loss_train = [0.0, 0.0]  # nothing to scale by
    assert example.unit_loss_weights(model) == [1.0, 1.0]
