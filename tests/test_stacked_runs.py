"""Seeds trained as one stacked model write the same run folders as separate runs."""

import json
import os
import signal

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import tiny_case

from deepxde_lnn.config import RunConfig
from deepxde_lnn.runs.checkpoint import load_checkpoint
from deepxde_lnn.training.runner import run, run_stacked

SEEDS = (3, 4, 5)


def _cfgs(**kw):
    return [
        RunConfig("laplace", "lnn", seed=s, iterations=30, dtype="float64", **kw)
        for s in SEEDS
    ]


@pytest.fixture(scope="module")
def separate(tmp_path_factory):
    """Three separate runs (the reference path) and their folders."""
    root, case = tmp_path_factory.mktemp("sep"), tiny_case()
    recs = [run(c, root / f"s{c.seed}", case=case) for c in _cfgs()]
    for r in recs:
        r["_dir"] = root / f"s{r['seed']}"
    return recs


def _loss(path):
    return np.loadtxt(path / "loss.csv", delimiter=",", skiprows=1)


def _close(a, b, rtol=1e-10):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


def test_batch_equals_separate_runs(separate, tmp_path):
    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(_cfgs(), outs, case=tiny_case())
    assert [o.status for o in res] == ["done"] * 3
    for ref, out in zip(separate, outs):
        rec = json.loads((out / "metrics.json").read_text())
        assert rec["stacked_runs"] == 3 and rec["seed"] == ref["seed"]
        for m in ("RMSE", "MaxErr"):
            _close(rec["metrics"]["phi"][m], ref["metrics"]["phi"][m])
        assert set(rec) - {"stacked_runs", "stack_wall_seconds"} == set(ref) - {"_dir"}
        _close(_loss(out), _loss(ref["_dir"]))
        assert not (out / "checkpoint.pt").exists()


class _AtStep(dde.callbacks.Callback):
    """Calls ``action(model)`` as training step ``step`` begins."""

    def __init__(self, step, action):
        super().__init__()
        self.n, self.step, self.action = 0, step, action

    def on_batch_begin(self):
        self.n += 1
        if self.n == self.step:
            self.action(self.model)


def _poison_run_1(model):
    with torch.no_grad():
        for p in model.net.parameters():
            p[1] = float("nan")  # run 1 only


def _sigint(model):  # a real SIGINT
    os.kill(os.getpid(), signal.SIGINT)


def test_one_diverging_run_does_not_stop_the_others(separate, tmp_path):
    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(
        _cfgs(checkpoint_every=10),
        outs,
        case=tiny_case(),
        callbacks=[_AtStep(11, _poison_run_1)],
    )
    assert [o.status for o in res] == ["done", "diverged", "done"]
    assert "non-finite loss at step 11" in res[1].message
    assert load_checkpoint(outs[1] / "checkpoint.pt")["step"] == 10
    assert not (outs[1] / "metrics.json").exists() and len(_loss(outs[1])) == 10
    for k in (0, 2):
        _close(_loss(outs[k]), _loss(separate[k]["_dir"]))
        rec = json.loads((outs[k] / "metrics.json").read_text())
        _close(rec["metrics"]["phi"]["RMSE"], separate[k]["metrics"]["phi"]["RMSE"])


def test_interrupted_batch_resumes_exactly(separate, tmp_path):
    cfgs = _cfgs(checkpoint_every=1000)
    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(cfgs, outs, case=tiny_case(), callbacks=[_AtStep(10, _sigint)])
    assert [o.status for o in res] == ["interrupted"] * 3
    assert load_checkpoint(outs[0] / "checkpoint.pt")["step"] == 10
    res = run_stacked(cfgs, outs, case=tiny_case())
    assert [o.status for o in res] == ["done"] * 3
    for o, ref, out in zip(res, separate, outs):
        assert o.record["resumed"]
        _close(o.record["metrics"]["phi"]["RMSE"], ref["metrics"]["phi"]["RMSE"])
        _close(_loss(out), _loss(ref["_dir"]))


COSINE = ("cosine", 30, 1e-5)


@pytest.mark.slow  # trains for seconds
def test_batch_with_a_schedule_resumes_and_equals_separate_runs(separate, tmp_path):
    """A decaying lr (one schedule for the stack, Adam elementwise): the batch,
    interrupted after 10 steps and resumed from its checkpoints, equals separate
    runs with that schedule, which differ from runs with the profile's schedule."""
    case, cfgs = tiny_case(), _cfgs(checkpoint_every=10, decay=COSINE)
    refs = [run(c, tmp_path / f"s{c.seed}", case=case) for c in cfgs]
    assert refs[0]["decay"] == list(COSINE)
    assert "lr decay ('cosine', 30, 1e-05)" in refs[0]["optimizer"]
    const = separate[0]["metrics"]["phi"]["RMSE"]
    assert abs(refs[0]["metrics"]["phi"]["RMSE"] / const - 1) > 1e-3

    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(cfgs, outs, case=case, callbacks=[_AtStep(10, _sigint)])
    assert [o.status for o in res] == ["interrupted"] * 3
    assert load_checkpoint(outs[0] / "checkpoint.pt")["scheduler"]["last_epoch"] == 10
    res = run_stacked(cfgs, outs, case=case)
    for o, ref, out in zip(res, refs, outs):
        assert o.status == "done" and o.record["resumed"]
        assert o.record["optimizer"] == ref["optimizer"]
        _close(o.record["metrics"]["phi"]["RMSE"], ref["metrics"]["phi"]["RMSE"])
        _close(_loss(out), _loss(tmp_path / f"s{ref['seed']}"))
