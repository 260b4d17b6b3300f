"""The staged Adam step (``cuda_graph=True``, training/graphed.py): one CUDA graph
per step on a GPU, the same staged step run eagerly elsewhere; either way it
trains as DeepXDE's eager step does. On a CUDA machine the runner-level tests
below exercise the captured step (and its re-capture after a run leaves a stack);
the last tests need CUDA."""

import contextlib
from dataclasses import replace

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import tiny_case
from test_stacked_runs import COSINE, _AtStep, _poison_run_1, _sigint
from torch.utils._python_dispatch import TorchDispatchMode

from deepxde_lnn.config import RunConfig
from deepxde_lnn.training import graphed
from deepxde_lnn.training.graphed import (
    GraphedStep,
    capture_obstacle,
    plain_adam_state,
)
from deepxde_lnn.training.runner import run, run_stacked

needs_cuda = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="CUDA graphs need a CUDA device"
)
SEEDS = (3, 4, 5)


def _loss(path):
    return np.loadtxt(path / "loss.csv", delimiter=",", skiprows=1)


def _params(path):
    return torch.load(path / "model.pt", weights_only=True)


def _close(a, b, rtol=1e-10):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


def _same_run(a, b, rtol=1e-10):
    """Loss histories equal to ``rtol``; each parameter tensor to ``rtol`` of its
    largest entry (a stack rounds otherwise than a single net)."""
    _close(_loss(a), _loss(b), rtol)
    pa, pb = _params(a), _params(b)
    assert pa.keys() == pb.keys()
    for k in pa:
        x, y = pa[k].cpu().numpy(), pb[k].cpu().numpy()
        assert np.abs(x - y).max() <= rtol * np.abs(y).max(), k


@pytest.mark.parametrize("name", ["laplace", "heat", "beam", "drift_decay"])
def test_a_staged_run_trains_as_an_eager_run(name, tmp_path):
    """Every kind of condition the cases use: Dirichlet and operator conditions
    (laplace), Robin with staged normals (heat), 4th-order jets with the exact
    solution's values staged (beam), an initial condition (drift_decay)."""
    case = tiny_case(name)
    cfg = RunConfig(name, seed=3, iterations=20, dtype="float64")
    ref = run(cfg, tmp_path / "eager", problem=case)
    staged = replace(cfg, cuda_graph=True)
    got = run(staged, tmp_path / "staged", problem=case)
    assert "step" not in ref
    want = "one CUDA graph" if torch.cuda.is_available() else "eager, staged"
    assert got["step"].startswith(want)
    assert {k: v for k, v in got.items() if k != "step"}.keys() == ref.keys()
    _same_run(tmp_path / "staged", tmp_path / "eager")


def _separate(tmp_path, cfgs):
    case = tiny_case()
    for c in cfgs:
        run(c, tmp_path / f"s{c.seed}", problem=case)
    return [tmp_path / f"s{c.seed}" for c in cfgs]


def _cfgs(**kw):
    return [
        RunConfig("laplace", "lnn", seed=s, iterations=30, dtype="float64", **kw)
        for s in SEEDS
    ]


def _staged_stack_with_a_diverging_run(tmp_path) -> None:
    """Three seeds staged, run 1 poisoned at step 11: it leaves, the others
    train on as their separate eager runs."""
    refs = _separate(tmp_path, _cfgs())
    outs = [tmp_path / f"b{s}" for s in SEEDS]
    res = run_stacked(
        _cfgs(checkpoint_every=10, cuda_graph=True),
        outs,
        problem=tiny_case(),
        callbacks=[_AtStep(11, _poison_run_1)],
    )
    assert [o.status for o in res] == ["done", "diverged", "done"]
    assert "non-finite loss at step 11" in res[1].message
    for k in (0, 2):
        _same_run(outs[k], refs[k])


@pytest.mark.slow  # trains for seconds
def test_a_staged_stack_drops_a_diverging_run_and_trains_the_others_on(tmp_path):
    _staged_stack_with_a_diverging_run(tmp_path)


@pytest.mark.slow  # trains for seconds
def test_an_interrupted_staged_stack_with_a_schedule_resumes_exactly(tmp_path):
    """Interrupted at step 10, resumed once staged and once eagerly (the
    checkpoint is the eager format): both equal the uninterrupted eager runs."""
    refs = _separate(tmp_path, _cfgs(decay=COSINE))
    for engine in (True, False):
        outs = [tmp_path / f"{engine}{s}" for s in SEEDS]
        first = _cfgs(checkpoint_every=1000, decay=COSINE, cuda_graph=True)
        res = run_stacked(
            first,
            outs,
            problem=tiny_case(),
            callbacks=[_AtStep(10, _sigint)],
        )
        assert [o.status for o in res] == ["interrupted"] * 3
        again = _cfgs(decay=COSINE, cuda_graph=engine)
        res = run_stacked(again, outs, problem=tiny_case())
        assert all(o.status == "done" and o.record["resumed"] for o in res)
        for out, ref in zip(outs, refs):
            _same_run(out, ref)


def _model(name="beam", seed=0):
    case = tiny_case(name)
    data = case.build_data("lnn", case.profile("quick"), seed)
    model = dde.Model(data, case.build_net("lnn"))
    model.compile("adam", lr=1e-3, verbose=0)
    return model


def test_the_staged_losses_read_points_and_values_from_the_staged_tensors(float64):
    """Staged, the losses equal the eager ones; shifting one staged tensor moves
    exactly the losses that read it: DeepXDE's inputs the value terms, the points
    the terms with their own forward, a condition's values that condition."""
    model = _model("beam")
    data = model.data
    inputs = data.train_next_batch()[0]
    ref = model.outputs_losses_train(inputs, None, None)[1].detach()
    arrays = data.host_arrays()
    assert len(arrays) == 2 + 4  # inputs, points, the four edges' exact values
    with torch.device("meta"):  # as DeepXDE's default device on a GPU
        assert all(a.device.type == "cpu" for a in data.host_arrays())

    def moved(k):
        shifted = list(arrays)
        shifted[k] = arrays[k] + 0.25
        with data.staged(shifted):
            got = model.outputs_losses_train(shifted[0], None, None)[1].detach()
        return {data.names[i] for i in torch.nonzero(got != ref).flatten().tolist()}

    with data.staged(arrays):
        same = model.outputs_losses_train(arrays[0], None, None)[1].detach()
    assert torch.equal(same, ref)
    value_terms = {t.name for t in data.terms if t.kind == "value"}
    assert moved(0) == value_terms == {"bottom", "top", "left", "right"}
    assert moved(1) == set(data.names) - value_terms
    assert [moved(k) for k in range(2, 6)] == [{"bottom"}, {"top"}, {"left"}, {"right"}]
    unstaged = model.outputs_losses_train(inputs, None, None)[1].detach()
    assert torch.equal(unstaged, ref)  # leaving the context unstages everything
    with pytest.raises(ValueError, match="tensors: expected 6, got 5"):
        with data.staged(arrays[:5]):
            pass


def test_the_graphed_step_says_how_it_steps_and_why_it_does_not_capture():
    model = _model("laplace")
    step = GraphedStep(model, capture=False)
    assert not step.capture and step.engine == "eager, staged (capture switched off)"
    if not torch.cuda.is_available():
        assert capture_obstacle(model) == "CUDA graphs need a CUDA device"
    geom = dde.geometry.Interval(0, 1)
    user = dde.Model(dde.data.Function(geom, np.sin, 4, 4), model.net)
    user.compile("adam", lr=1e-3, verbose=0)
    own = user.train_step
    step = GraphedStep(user).install()
    assert user.train_step is own and not step.capture
    assert step.engine == "eager, DeepXDE's step (the data cannot stage a step)"


@pytest.fixture
def stand_in_cuda(monkeypatch):
    """CUDA's part of a capture replaced on a CPU: recording a step records
    nothing and its replay runs the step (so the warm-up must be undone exactly,
    and the losses logged must come from the replay). Counts the captures."""
    captures = []

    def record(step):
        captures.append(step)
        return step

    monkeypatch.setattr(graphed, "capture_obstacle", lambda model: None)
    monkeypatch.setattr(graphed, "_record", record)
    monkeypatch.setattr(graphed, "_side_stream", contextlib.nullcontext)
    monkeypatch.setattr(graphed, "_pinned", lambda a: a.clone())
    monkeypatch.setattr(graphed, "_recorded_event", lambda: None)
    monkeypatch.setattr(graphed, "_make_capturable", lambda model: None)
    return captures


@pytest.mark.slow
def test_the_capture_path_with_a_stand_in_for_cuda(stand_in_cuda, tmp_path):
    """One run under a schedule (one capture after three warm-up steps that are
    undone), then a stack that loses a run at step 11 (captured again for the two
    left): each run equals its eager twin."""
    case = tiny_case()
    cfg = RunConfig("laplace", seed=3, iterations=20, dtype="float64", decay=COSINE)
    run(cfg, tmp_path / "eager", problem=case)
    got = run(replace(cfg, cuda_graph=True), tmp_path / "graph", problem=case)
    assert got["step"].startswith("one CUDA graph") and len(stand_in_cuda) == 1
    _same_run(tmp_path / "graph", tmp_path / "eager")

    _staged_stack_with_a_diverging_run(tmp_path)
    assert len(stand_in_cuda) == 3


class _FromHostNumbers(TorchDispatchMode):
    """Records the operations that make a tensor from Python or NumPy numbers
    (on a GPU a copy from host memory, which a CUDA graph cannot replay)."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.__name__.startswith("lift_fresh"):
            self.seen.append(func.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    "name", ["drift_decay", "laplace", "heat", "beam", "rel_b", "rel_c"]
)
def test_after_its_first_step_a_staged_step_makes_no_tensor_from_host_numbers(name):
    """What a captured step must not do, checked on any machine: after a first
    (warm-up) step, the losses and backward of every case's LNN read only
    tensors (jet directions are made once per device, axes picked without an
    index list). Adam is left out: the captured one is ``capturable``."""
    model = _model(name)
    step, data = GraphedStep(model, capture=False), model.data
    for k in range(2):
        data.train_next_batch()
        step._load(data.host_arrays())
        with _FromHostNumbers() as probe, data.staged(step.static):
            losses = model.outputs_losses_train(step.static[0], None, None)[1]
            torch.sum(losses).backward()
    assert probe.seen == []


def test_checkpoints_hold_an_eager_adam_state():
    """A captured step's Adam state (device step counters, a tensor lr, the
    capturable flag) is saved as an eager Adam's, which continues it exactly."""
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net(torch.ones(4, 3)).sum().backward()
    opt.step()
    state = opt.state_dict()
    captured = {
        "state": state["state"],
        "param_groups": [
            dict(g, lr=torch.tensor(g["lr"], dtype=torch.float64), capturable=True)
            for g in state["param_groups"]
        ],
    }
    plain = plain_adam_state(captured)
    assert plain["param_groups"] == state["param_groups"]
    fresh = torch.optim.Adam(net.parameters(), lr=5.0)
    fresh.load_state_dict(plain)
    assert fresh.param_groups[0]["lr"] == 1e-3 and not fresh.defaults["capturable"]
    net(torch.ones(4, 3)).sum().backward()
    fresh.step()  # an eager step from it works


# --- on a CUDA device --------------------------------------------------------------


def _train_pair(capture_flags, steps=25, decay=None):
    """Equal models (same seed) trained ``steps`` steps, each staged with its
    capture flag; their GraphedSteps and parameters."""
    out = []
    for capture in capture_flags:
        dde.config.set_random_seed(7)
        model = _model("laplace", seed=7)
        model.compile("adam", lr=1e-3, decay=decay, verbose=0)
        step = GraphedStep(model, capture=capture).install()
        model.train(iterations=steps, display_every=steps, verbose=0)
        out.append((step, [p.detach().cpu().clone() for p in model.net.parameters()]))
    return out


@needs_cuda
@pytest.mark.parametrize("decay", [None, ("inverse time", 10, 0.5)])
def test_a_captured_step_trains_as_the_staged_eager_step(float64, decay):
    (graph, got), (eager, want) = _train_pair([None, False], decay=decay)
    assert graph.replay is not None and graph.engine.startswith("one CUDA graph")
    assert eager.replay is None
    for a, b in zip(got, want):
        _close(a.numpy(), b.numpy())
