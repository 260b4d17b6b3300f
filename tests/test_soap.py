"""SOAP as the first phase's optimizer (``first_optimizer="soap"``, heavyball's):
recorded, resumed exactly from its checkpoints, never stacked, refused cleanly
where its package is missing."""

import importlib.util
from dataclasses import replace

import numpy as np
import pytest
from helpers import SignalAt, tiny_case

import deepxde_lnn
from deepxde_lnn.config import RunConfig, stackable_training
from deepxde_lnn.experiments.jobs import _units
from deepxde_lnn.training.runner import RunInterrupted, run

SOAP = dict(first_optimizer="soap", iterations=12, checkpoint_every=2)


def test_a_soap_run_resumes_exactly_and_says_what_trained_it(tmp_path):
    case = tiny_case()
    cfg = RunConfig("laplace", "lnn", seed=3, **SOAP)
    full = run(cfg, tmp_path / "full", problem=case)
    assert full["first_optimizer"] == "soap"
    assert (
        full["optimizer"].startswith("SOAP(")
        and "weight_decay=0.0" in full["optimizer"]
    )
    losses = np.loadtxt(tmp_path / "full" / "loss.csv", delimiter=",", skiprows=1)
    assert losses[-1, 1] < losses[0, 1]  # it trains
    with pytest.raises(RunInterrupted):
        run(cfg, tmp_path / "cut", problem=case, callbacks=[SignalAt(7)])
    resumed = run(cfg, tmp_path / "cut", problem=case, resume=True)
    assert resumed["resumed"] and resumed["metrics"] == full["metrics"]
    cut = np.loadtxt(tmp_path / "cut" / "loss.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(losses, cut)
    # an Adam run is another configuration: never pooled, never resumed from it
    adam = run(replace(cfg, first_optimizer="adam"), tmp_path / "adam", problem=case)
    assert "first_optimizer" not in adam and adam["metrics"] != full["metrics"]


def test_soap_seeds_train_one_by_one():
    """SOAP's preconditioner over a stacked tensor would mix the seeds: even with
    stacking on, each SOAP run is a unit of its own (Adam's stack)."""
    case = tiny_case()
    quick = case.profile("quick")
    soap = RunConfig("laplace", "lnn", first_optimizer="soap").resolved(case)
    assert stackable_training(quick, RunConfig("laplace", "lnn").resolved(case))
    assert not stackable_training(quick, soap)
    jobs = [(replace(soap, seed=s), f"o{s}") for s in (1, 2, 3)]
    assert [len(u) for u in _units(jobs, stack=True, problem=case)] == [1, 1, 1]
    adam = [(replace(soap, first_optimizer="adam", seed=s), s) for s in (1, 2)]
    assert [len(u) for u in _units(adam, stack=True, problem=case)] == [2]


def test_soap_without_its_package_or_a_bad_name_is_one_error(tmp_path, monkeypatch):
    case = tiny_case()
    with pytest.raises(ValueError, match="first_optimizer must be one of adam, soap"):
        RunConfig("laplace", "lnn", first_optimizer="sgd")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "heavyball" else real(name, *a),
    )
    with pytest.raises(ValueError, match=r"first_optimizer: 'soap' needs .*\[soap\]"):
        deepxde_lnn.run(case, first_optimizer="soap", out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_a_float64_soap_run_keeps_its_state_in_float64(tmp_path):
    # heavyball's float32 state met float64 gradients at the first eigenbasis refresh
    cfg = RunConfig("laplace", "pinn", seed=0, dtype="float64", **SOAP)
    out = run(cfg, tmp_path / "run", problem=tiny_case())
    assert out["dtype"] == "float64" and out["first_optimizer"] == "soap"
    losses = np.loadtxt(tmp_path / "run" / "loss.csv", delimiter=",", skiprows=1)
    assert np.isfinite(losses).all() and losses[-1, 1] < losses[0, 1]
