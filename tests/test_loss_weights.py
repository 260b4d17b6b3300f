"""loss_weights, an option like any other: DeepXDE's per-term weights reach the
loss of a single run, of stacked runs (each run as if alone) and the record;
``loss.csv`` keeps logging each term unweighted."""

import numpy as np
import pytest
from helpers import tiny_case

import deepxde_lnn
from deepxde_lnn.config import RunConfig
from deepxde_lnn.training.runner import run, run_stacked

W = (2.0, 0.5, 1.0, 3.0, 1.0)  # laplace: pde, bottom, top, left, right


def _cfg(seed=3, **kw):
    return RunConfig("laplace", "lnn", seed, iterations=4, dtype="float64", **kw)


def _loss(path):
    return np.loadtxt(path / "loss.csv", delimiter=",", skiprows=1)


def test_the_weights_scale_each_term_and_enter_the_identity(tmp_path):
    case = tiny_case()
    plain = run(_cfg(), tmp_path / "plain", problem=case)
    weighted = run(_cfg(loss_weights=W), tmp_path / "w", problem=case)
    a, b = _loss(tmp_path / "plain"), _loss(tmp_path / "w")
    # loss.csv logs each term unweighted: the first row is the same network on the
    # same points; the optimizer minimises the weighted sum, so the runs part
    np.testing.assert_allclose(b[0], a[0], rtol=1e-12)
    assert not np.allclose(a[1:, 2:], b[1:, 2:], rtol=1e-6)
    # with weights 1 the run is the unweighted one, step for step
    ones = run(_cfg(loss_weights=(1.0,) * 5), tmp_path / "ones", problem=case)
    np.testing.assert_allclose(_loss(tmp_path / "ones"), a, rtol=1e-12)
    assert ones["metrics"] == plain["metrics"]
    assert weighted["loss_weights"] == list(W) and "loss_weights" not in plain


def test_stacked_runs_with_weights_equal_separate_runs(tmp_path):
    case, seeds = tiny_case(), (3, 4)
    for s in seeds:
        run(_cfg(s, loss_weights=W), tmp_path / f"s{s}", problem=case)
    outs = [tmp_path / f"k{s}" for s in seeds]
    cfgs = [_cfg(s, loss_weights=W) for s in seeds]
    assert [o.status for o in run_stacked(cfgs, outs, problem=case)] == [
        "done",
        "done",
    ]
    for s, out in zip(seeds, outs):
        np.testing.assert_allclose(_loss(out), _loss(tmp_path / f"s{s}"), rtol=1e-10)


def test_a_weight_per_term_or_one_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match=r"^loss_weights: 2 weights for 5 loss terms"):
        run(_cfg(loss_weights=(1.0, 2.0)), tmp_path / "o", problem=tiny_case())
    with pytest.raises(ValueError, match=r"^loss_weights"):
        deepxde_lnn.compare("laplace", loss_weights="x", out=tmp_path / "c")
    with pytest.raises(ValueError, match=r"^loss_weights: 1 weights for 5 loss"):
        deepxde_lnn.compare("laplace", loss_weights=[1.0], out=tmp_path / "d")
    assert not (tmp_path / "o").exists() and not (tmp_path / "c").exists()
    assert not (tmp_path / "d").exists()  # checked before anything is written
