"""NNCG after L-BFGS (``nncg``): DeepXDE's NNCG as the last phase, recorded,
resumable exactly from a checkpoint taken in it, refused where it cannot run."""

import copy

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import SignalAt
from test_accurate import ADAM, LBFGS, _cfg, _loss, tiny_accurate

from deepxde_lnn.config import RunConfig, stackable_training
from deepxde_lnn.training.nncg import NNCG_SETTINGS, ResumableNNCG, compile_nncg
from deepxde_lnn.training.phases import phases
from deepxde_lnn.training.runner import RunInterrupted, run

NNCG = 6


def _nncg_cfg(method="pinn", **kw):
    return _cfg(method, **{"nncg": NNCG, **kw})


def test_the_phases_follow_each_other():
    case = tiny_accurate()
    cfg = _nncg_cfg().resolved(case)
    assert phases(cfg) == [
        ("adam", ADAM),
        ("lbfgs", ADAM + LBFGS),
        ("nncg", ADAM + LBFGS + NNCG),
    ]
    assert phases(_nncg_cfg(lbfgs=0).resolved(case))[1] == ("nncg", ADAM + NNCG)
    assert cfg.total_steps == ADAM + LBFGS + NNCG and cfg.identity()["nncg"] == NNCG
    assert "nncg" not in _cfg().resolved(case).identity()  # 0: as before it existed


@pytest.mark.slow
def test_a_run_ends_with_nncg_and_says_so(tmp_path):
    rec = run(_nncg_cfg(), tmp_path / "r", problem=tiny_accurate())
    assert rec["steps"] == ADAM + LBFGS + NNCG and rec["nncg"] == NNCG
    assert (
        "then LBFGS" in rec["optimizer"]
        and ", then NNCG(lr=1.0, rank=50" in rec["optimizer"]
    )
    assert rec["lbfgs_iterations"] == LBFGS
    loss = _loss(tmp_path / "r")
    assert loss[:, 0].tolist() == list(range(1, ADAM + LBFGS + NNCG + 1))
    assert loss[-1, 1] <= loss[ADAM + LBFGS - 1, 1]  # Armijo: never worse


@pytest.mark.slow  # NNCG steps on a CPU: seconds each
@pytest.mark.parametrize("cut", [ADAM + LBFGS, ADAM + LBFGS + 3])  # at, in NNCG
def test_resume_in_nncg_is_exact(tmp_path, cut):
    case = tiny_accurate()
    full = run(_nncg_cfg(), tmp_path / "full", problem=case)
    with pytest.raises(RunInterrupted):
        run(_nncg_cfg(), tmp_path / "cut", problem=case, callbacks=[SignalAt(cut)])
    resumed = run(_nncg_cfg(), tmp_path / "cut", problem=case, resume=True)
    assert resumed["resumed"] and resumed["metrics"] == full["metrics"]
    np.testing.assert_array_equal(_loss(tmp_path / "full"), _loss(tmp_path / "cut"))


@pytest.fixture
def float64():
    """torch's default float is float64 (NNCG draws its sketch in it), as in a
    float64 run."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def test_its_state_dict_holds_the_preconditioner(float64):
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.tensor([3.0, -2.0, 0.5], dtype=torch.float64))

    def closure():
        return ((w - 1.0) ** 4).sum() + (w**2).sum()

    def fresh():
        return ResumableNNCG([w], **{**NNCG_SETTINGS, "rank": 2, "update_freq": 3})

    opt = fresh()
    for _ in range(4):
        opt.step(closure)
    saved = copy.deepcopy(opt.state_dict())  # as a checkpoint holds it
    assert {"U", "S", "rho", "old_dir", "n_iters"} <= set(saved["state"][0])
    rng, start = torch.get_rng_state(), w.detach().clone()
    opt.step(closure)
    opt.step(closure)
    after = w.detach().clone()
    with torch.no_grad():
        w.copy_(start)
    torch.set_rng_state(rng)
    again = fresh()
    again.load_state_dict(saved)
    again.step(closure)
    again.step(closure)
    assert torch.equal(w.detach(), after)


def test_compiling_leaves_deepxdes_options_as_they_were():
    data = dde.data.PDE(
        dde.geometry.Interval(0, 1),
        lambda x, u: dde.grad.hessian(u, x) + 1,
        [],
        num_domain=8,
    )
    model = dde.Model(data, dde.nn.FNN([1, 4, 1], "tanh", "Glorot uniform"))
    before = dict(dde.optimizers.config.NNCG_options)
    opt = compile_nncg(model, None)
    assert dde.optimizers.config.NNCG_options == before
    assert model.opt is opt and model.opt_name == "NNCG"


def test_bad_combinations_are_refused_up_front():
    case = tiny_accurate()
    with pytest.raises(ValueError, match="^seconds: .*NNCG"):
        _nncg_cfg(lbfgs=0, seconds=5.0).resolved(case)
    with pytest.raises(ValueError, match="method 'ra-gated'.*dropout.*NNCG"):
        _nncg_cfg("ra-gated", lbfgs=0).resolved(case)
    with pytest.raises(ValueError, match=r"^nncg must be an integer"):
        _nncg_cfg(nncg=-1).resolved(case)
    quick = RunConfig("laplace", "lnn", profile="quick", nncg=3).resolved(case)
    assert not stackable_training(case.profile("quick"), quick)
