"""Seeds trained as one stacked model write the same run folders as separate runs."""

import json
import os
import signal

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import tiny_case

import deepxde_lnn
from deepxde_lnn.config import RunConfig
from deepxde_lnn.runs.checkpoint import load_checkpoint
from deepxde_lnn.training import runner
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
    recs = [run(c, root / f"s{c.seed}", problem=case) for c in _cfgs()]
    for r in recs:
        r["_dir"] = root / f"s{r['seed']}"
    return recs


def _loss(path):
    return np.loadtxt(path / "loss.csv", delimiter=",", skiprows=1)


def _close(a, b, rtol=1e-10):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


def test_batch_equals_separate_runs(separate, tmp_path):
    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(_cfgs(), outs, problem=tiny_case())
    assert [o.status for o in res] == ["done"] * 3
    for ref, out in zip(separate, outs):
        rec = json.loads((out / "metrics.json").read_text())
        assert rec["stacked_runs"] == 3 and rec["seed"] == ref["seed"]
        for m in ("RMSE", "MaxErr"):
            _close(rec["metrics"]["phi"][m], ref["metrics"]["phi"][m])
        stacked = {"stacked_runs", "stack_wall_seconds", "stack_cpu_seconds"}
        stacked |= {"stack_sizes"}
        assert set(rec) - stacked == set(ref) - {"_dir"}
        assert rec["stack_sizes"] == [[0, 3]]
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
        problem=tiny_case(),
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
        # the others went on as a stack of 2 after the step run 1 was taken out at
        assert rec["stack_sizes"] == [[0, 3], [20, 2]]


def test_interrupted_batch_resumes_exactly(separate, tmp_path):
    cfgs = _cfgs(checkpoint_every=1000)
    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(cfgs, outs, problem=tiny_case(), callbacks=[_AtStep(10, _sigint)])
    assert [o.status for o in res] == ["interrupted"] * 3
    assert load_checkpoint(outs[0] / "checkpoint.pt")["step"] == 10
    res = run_stacked(cfgs, outs, problem=tiny_case())
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
    refs = [run(c, tmp_path / f"s{c.seed}", problem=case) for c in cfgs]
    assert refs[0]["decay"] == list(COSINE)
    assert "lr decay ('cosine', 30, 1e-05)" in refs[0]["optimizer"]
    const = separate[0]["metrics"]["phi"]["RMSE"]
    assert abs(refs[0]["metrics"]["phi"]["RMSE"] / const - 1) > 1e-3

    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(cfgs, outs, problem=case, callbacks=[_AtStep(10, _sigint)])
    assert [o.status for o in res] == ["interrupted"] * 3
    assert load_checkpoint(outs[0] / "checkpoint.pt")["scheduler"]["last_epoch"] == 10
    res = run_stacked(cfgs, outs, problem=case)
    for o, ref, out in zip(res, refs, outs):
        assert o.status == "done" and o.record["resumed"]
        assert o.record["optimizer"] == ref["optimizer"]
        _close(o.record["metrics"]["phi"]["RMSE"], ref["metrics"]["phi"]["RMSE"])
        _close(_loss(out), _loss(tmp_path / f"s{ref['seed']}"))


class _Killed(BaseException):
    """The process dies here (as by SIGKILL: nothing more is written)."""


def _die_after_writing(monkeypatch, n: int) -> None:
    """The process dies once the runner has written ``n`` runs' results."""
    real, written = runner.write_run, []

    def write_run(*args):
        real(*args)
        written.append(args)
        if len(written) == n:
            raise _Killed

    monkeypatch.setattr(runner, "write_run", write_run)


def _float32_cfgs(seeds=(1, 2)):
    return [
        RunConfig("laplace", "pinn", seed=s, iterations=30, checkpoint_every=10)
        for s in seeds
    ]


def test_a_stack_cut_while_writing_its_runs_resumes_as_that_stack(
    tmp_path, monkeypatch
):
    """Issue 43: a stack killed after writing its first run resumed the others
    alone from their last checkpoint, and alone they round otherwise than in a
    stack (float32): their loss.csv left the uninterrupted run's there. The
    finished run rides along (trained again, not written), so they are equal."""
    case, cfgs = tiny_case(), _float32_cfgs()
    ref = [tmp_path / f"r{c.seed}" for c in cfgs]
    run_stacked(cfgs, ref, problem=case)
    outs = [tmp_path / f"o{c.seed}" for c in cfgs]
    with monkeypatch.context() as m:
        _die_after_writing(m, 1)
        with pytest.raises(_Killed):
            run_stacked(cfgs, outs, problem=case)
    assert not (outs[1] / "metrics.json").exists()
    first = (outs[0] / "metrics.json").read_bytes()
    res = run_stacked(cfgs, outs, problem=case)
    for a, b in zip(ref, outs):
        assert (b / "loss.csv").read_bytes() == (a / "loss.csv").read_bytes()
        assert not (b / "checkpoint.pt").exists()
    assert [o.status for o in res] == ["done", "done"]
    assert (outs[0] / "metrics.json").read_bytes() == first  # not written again
    rec = json.loads((outs[1] / "metrics.json").read_text())
    assert rec["resumed"] and rec["stacked_runs"] == 2
    assert rec["stack_sizes"] == [[0, 2]]  # as the run that was not cut
    want = json.loads((ref[1] / "metrics.json").read_text())
    assert rec["metrics"] == want["metrics"]


def test_a_run_resumed_out_of_its_stack_says_so(tmp_path, monkeypatch):
    """Where the stack cannot be formed again (here: the unfinished seed resumed
    alone), the run's steps after its checkpoint round as a single run's: its
    record says which steps trained in which stack (``stack_sizes``)."""
    case, cfgs = tiny_case(), _float32_cfgs()
    ref = [tmp_path / f"r{c.seed}" for c in cfgs]
    whole = run_stacked(cfgs, ref, problem=case)
    assert [o.record["stack_sizes"] for o in whole] == [[[0, 2]]] * 2
    outs = [tmp_path / f"o{c.seed}" for c in cfgs]
    with monkeypatch.context() as m:
        _die_after_writing(m, 1)
        with pytest.raises(_Killed):
            run_stacked(cfgs, outs, problem=case)
    alone = run(cfgs[1], outs[1], problem=case, resume=True)
    assert alone["stack_sizes"] == [[0, 2], [20, 1]]
    assert "stacked_runs" not in alone
    got, want = _loss(outs[1]), _loss(ref[1])
    assert (got[:20] == want[:20]).all() and not (got[20:] == want[20:]).all()
    assert "stack_sizes" not in run(cfgs[0], tmp_path / "single", problem=case)


def test_a_compare_cut_while_writing_a_stack_resumes_it_whole(tmp_path, monkeypatch):
    """The same through ``compare``: its rerun reuses the finished seed, which
    still goes to the stack of the unfinished one to ride along."""
    kw = dict(methods=["pinn"], seeds=[1, 2], iterations=30, checkpoint_every=10)
    kw.update(stack="on", workers=1, progress=False, verbose=False)
    deepxde_lnn.compare(tiny_case(), out=tmp_path / "ref", **kw)
    with monkeypatch.context() as m:
        _die_after_writing(m, 1)
        with pytest.raises(_Killed):
            deepxde_lnn.compare(tiny_case(), out=tmp_path / "cut", **kw)
    res = deepxde_lnn.compare(tiny_case(), out=tmp_path / "cut", **kw)
    for seed in (1, 2):
        run = f"pinn/seed-{seed}"
        want = (tmp_path / "ref" / run / "loss.csv").read_bytes()
        assert (tmp_path / "cut" / run / "loss.csv").read_bytes() == want
        assert not (tmp_path / "cut" / run / "checkpoint.pt").exists()
    assert sorted((r.seed, r.status) for r in res.runs) == [(1, "reused"), (2, "done")]
