"""Compiled jets (``ResampledPDE(compile_jets=True)``) against the eager jets, for
single and stacked runs, and ``compile_jets`` as a run option (RunConfig, the API,
the command line, case scripts)."""

import json
import os
import warnings
from dataclasses import replace
from pathlib import Path

import deepxde as dde
import numpy as np
import pytest
import torch

import deepxde_lnn
from deepxde_lnn import case_script as example
from deepxde_lnn import cli
from deepxde_lnn.config import RunConfig
from deepxde_lnn.networks import compiled, taylor
from deepxde_lnn.networks.pytorch import LNN
from deepxde_lnn.networks.stacked import StackedNet
from deepxde_lnn.problems.build import build_net
from deepxde_lnn.problems.data import ResampledPDE, Term
from deepxde_lnn.problems.sampling import Box, Edge
from deepxde_lnn.study import registry
from deepxde_lnn.training import runner, stack
from deepxde_lnn.training.stacking import StackedData

LO, HI = (0.0, 0.0), (1.0, 1.0)


def laplacian_jet(x, net):
    return taylor.laplacian(net, x)[1]


def phi_x_jet(x, net):
    return taylor.pure_derivatives(net, x, [(0, 1)])[1][0]


def _terms():
    def unused(x, y):  # jets replace the autograd residuals on an LNN
        raise AssertionError("the jet residual should be used")

    top = dde.icbc.DirichletBC(
        dde.geometry.Rectangle(LO, HI), lambda x: 1, lambda _, on: on
    )
    return [
        Term("pde", Box(LO, HI), 24, unused, kind="pde", jet=laplacian_jet),
        Term("top", Edge(LO, HI, axis=1, value=1.0), 8, top),
        Term("left", Edge(LO, HI, axis=0, value=0.0), 8, unused, jet=phi_x_jet),
        Term("right", Edge(LO, HI, axis=0, value=1.0), 8, unused, jet=phi_x_jet),
    ]


def _train(compile_jets, steps=4):
    dde.config.set_random_seed(0)
    data = ResampledPDE(_terms(), seed=1, compile_jets=compile_jets)
    net = LNN([2, 6, 6, 1], "tanh", "torch-default")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-2)
    losses = []
    for _ in range(steps):
        model.train_step(*data.train_next_batch())
        losses.append(data.last_losses.cpu().numpy())
    params = [p.detach().cpu().numpy() for p in net.parameters()]
    return np.array(losses), params, data, net


def _assert_same_training(a, b, tol):
    np.testing.assert_allclose(a[0], b[0], rtol=tol, atol=0)
    for p, q in zip(a[1], b[1]):
        np.testing.assert_allclose(p, q, rtol=tol, atol=tol)


#: the real backend compiles C++ kernels: minutes on a cold cache and a loaded
#: machine, so it runs on request; the traced, decomposed and partitioned graphs
#: (everything but the code generation) are checked in every full run (slow: seconds
#: of tracing, so not in the quick `-m "not slow"` selection)
SLOW = "DEEPXDE_LNN_COMPILE_TESTS"
# a fast compiler backend always; inductor (a cold C++ compile of minutes) on request
BACKENDS = [
    "aot_eager_decomp_partition",
    pytest.param(
        "inductor",
        marks=pytest.mark.skipif(
            not os.environ.get(SLOW),
            reason=f"inductor's C++ compile takes minutes cold: set {SLOW}=1",
        ),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_jets_train_as_the_eager_jets(float64, monkeypatch, backend):
    """torch.compile fuses the jets' arithmetic: the same losses and Adam iterates
    as the eager jets, to rounding (float64)."""
    monkeypatch.setitem(compiled.OPTIONS, "backend", backend)
    eager = _train(False)
    fast = _train(True)
    assert not fast[2]._compiled[laplacian_jet].fallback
    assert len(fast[2]._compiled) == 2  # one compiled function per jet
    _assert_same_training(fast, eager, 1e-10)
    assert np.abs(eager[0][0] - eager[0][-1]).max() > 1e-3  # it did train
    with torch.no_grad():  # an evaluation uses the eager jets: no compile for it
        assert fast[2]._jet_function(laplacian_jet) is laplacian_jet
    assert fast[2]._jet_function(laplacian_jet) is fast[2]._compiled[laplacian_jet]
    record = fast[2].describe_derivatives(fast[3])
    assert record.startswith("Taylor-mode jets compiled with torch.compile (pde,")
    assert "compiled" not in eager[2].describe_derivatives(eager[3])


@pytest.mark.slow  # trains for seconds
def test_compile_failure_falls_back_to_eager(float64, monkeypatch):
    def broken_backend(gm, example_inputs):
        raise RuntimeError("no compiler here")

    monkeypatch.setitem(compiled.OPTIONS, "backend", broken_backend)
    monkeypatch.setattr(compiled, "mode_for", lambda device: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fast = _train(True, steps=2)
    messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert len(messages) == 2  # once per jet function, not once per call
    assert all("using the eager jets" in m for m in messages)
    _assert_same_training(fast, _train(False, steps=2), 0)
    record = fast[2].describe_derivatives(fast[3])
    assert record.startswith("Taylor-mode jets (pde,")


def test_a_compiled_jet_that_differs_from_the_eager_one_is_not_used(float64):
    # issue 55, item 8: a damaged compile cache gave other losses, said nothing
    from deepxde_lnn.networks import compiled as c

    net = torch.nn.Linear(2, 1).double()
    x = torch.rand(5, 2, dtype=torch.float64)

    def jet(x, net):
        return net(x) * 2

    wrong = c.compiled(jet)
    real_compile = torch.compile
    try:
        torch.compile = lambda fn, **kw: lambda x, net: fn(x, net) + 1e-3
        with pytest.warns(RuntimeWarning, match="differs from the eager one"):
            got = wrong(x, net)
        right = c.compiled(jet)
        torch.compile = lambda fn, **kw: lambda x, net: fn(x, net) * (1 + 1e-14)
        close = right(x, net)
    finally:
        torch.compile = real_compile
    torch.testing.assert_close(got, jet(x, net), rtol=0, atol=0)  # the eager jet
    assert wrong.fallback and wrong(x, net).equal(jet(x, net))
    assert not right.fallback and close.allclose(jet(x, net))


def test_a_jet_that_differentiates_itself_keeps_the_eager_jet(float64, monkeypatch):
    """A jet that takes reverse-mode derivatives of a compiled piece of itself
    (across a graph break; the relativistic sources once did) needs a double
    backward, which compiled graphs refuse: it warns and stays eager."""
    monkeypatch.setitem(compiled.OPTIONS, "backend", "aot_eager")
    monkeypatch.setattr(compiled, "mode_for", lambda device: "default")
    net = torch.nn.Linear(2, 1).double()
    x = torch.rand(5, 2, dtype=torch.float64)

    def jet(x, net):  # u times the Laplacian of a known function, by reverse mode
        with torch.enable_grad():
            xs = x.detach().clone().requires_grad_(True)
            q = torch.sin(xs).prod(dim=1, keepdim=True)
            torch._dynamo.graph_break()
            (g,) = torch.autograd.grad(q.sum(), xs, create_graph=True)
            (h,) = torch.autograd.grad(g.sum(), xs)
        return net(x) * h.sum(dim=1, keepdim=True)

    fn = compiled.compiled(jet)
    with pytest.warns(RuntimeWarning, match="using the eager jets"):
        got = fn(x, net)
    got.sum().backward()
    assert fn.fallback and got.equal(jet(x, net))

    def wrong(x, net):  # an error of the jet itself is not hidden
        raise RuntimeError("the jet's own error")

    with pytest.raises(RuntimeError, match="the jet's own error"):
        with pytest.warns(RuntimeWarning):
            compiled.compiled(wrong)(x, net)


@pytest.mark.slow  # traces the relativistic jets: seconds
@pytest.mark.parametrize("name", ["rel_b", "heat"])
def test_a_case_s_compiled_jets_train_as_its_eager_jets(float64, monkeypatch, name):
    """A shipped case's jets compile as one graph (the relativistic sources by
    forward mode there) and train as the eager jets, to rounding."""
    monkeypatch.setitem(compiled.OPTIONS, "backend", "aot_eager_decomp_partition")
    case = registry.get(name)
    prof = replace(case.profile("quick"), counts={t.name: 6 for t in case.terms})
    runs = []
    for compile_jets in (False, True):
        dde.config.set_random_seed(0)
        data = case.build_data("lnn", prof, 0, compile_jets=compile_jets)
        net = case.build_net("lnn")
        model = dde.Model(data, net)
        model.compile("adam", lr=1e-3)
        losses = []
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no fallback
            for _ in range(2):
                model.train_step(*data.train_next_batch())
                losses.append(data.last_losses.detach().numpy())
        runs.append((losses, [p.detach().numpy() for p in net.parameters()], data))
    assert (
        runs[1][2]
        .describe_derivatives(net)
        .startswith("Taylor-mode jets compiled with torch.compile")
    )
    _assert_same_training(runs[1][:2], runs[0][:2], 1e-10)


def test_compile_jets_must_be_a_bool():
    with pytest.raises(ValueError, match="compile_jets must be True or False"):
        ResampledPDE(_terms(), compile_jets="yes")


@pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="needs CUDA: only there do compiled jets run as CUDA graphs "
    "(mode='reduce-overhead')",
)
def test_compiled_jets_as_cuda_graphs_train_as_eager(float64):
    # DeepXDE makes CUDA the default device when there is one
    eager = _train(False, steps=6)
    fast = _train(True, steps=6)
    assert fast[3].linears[0].weight.device.type == "cuda"
    assert compiled.mode_for(torch.device("cuda")) == "reduce-overhead"
    assert not fast[2]._compiled[laplacian_jet].fallback
    _assert_same_training(fast, eager, 1e-9)


# --- stacked runs: the per-run-vmapped jet, compiled ---------------------------------

STACKED_SEEDS = (3, 4, 5)


def _train_stacked(name: str, compile_jets: bool, steps: int = 4):
    """Three seeds of ``name``'s LNN (16 points per term) as one stacked model:
    the (steps, K, T) training losses, the stacked parameters and the data."""
    case = registry.get(name)
    prof = replace(case.profile("quick"), counts={t.name: 16 for t in case.terms})
    datas, nets = [], []
    for seed in STACKED_SEEDS:
        dde.config.set_random_seed(seed)
        terms = case.make_terms(prof)
        datas.append(ResampledPDE(terms, seed=seed, compile_jets=compile_jets))
        nets.append(build_net("lnn", case))
    data, net = StackedData(datas), StackedNet(nets)
    model = dde.Model(data, net)
    model.compile("adam", lr=prof.lr)
    losses = []
    for _ in range(steps):
        model.train_step(*data.train_next_batch())
        losses.append(data.last_losses.cpu().numpy())
    return np.array(losses), [p.detach().cpu().numpy() for p in net.parameters()], data


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_stacked_runs_compile_the_vmapped_jet(float64, monkeypatch, backend):
    """K seeds in one model compile each jet vmapped over the runs: the same
    losses and Adam iterates as the eager stacked jets, to rounding (float64)."""
    monkeypatch.setitem(compiled.OPTIONS, "backend", backend)
    eager = _train_stacked("laplace", False)
    fast = _train_stacked("laplace", True)
    own = fast[2].runs[0]._compiled  # the runs' losses are runs[0]'s code
    jets = {t.jet for t in registry.get("laplace").terms if t.jet is not None}
    assert len(own) == len(jets) == 2  # one compiled function per jet
    assert not any(f.fallback for f in own.values())
    _assert_same_training(fast, eager, 1e-10)
    assert np.abs(eager[0][0] - eager[0][-1]).max() > 1e-3  # it did train
    assert eager[0].shape[1] == len(STACKED_SEEDS)
    assert not np.allclose(eager[0][:, 0], eager[0][:, 1])  # runs of their own
    net = StackedNet([build_net("lnn", registry.get("laplace"))])
    text = fast[2].describe_derivatives(net)
    assert text.startswith("Taylor-mode jets compiled with torch.compile (pde")


# --- the run option ------------------------------------------------------------------


@pytest.fixture
def fake_compile(monkeypatch):
    """``compiled.compiled`` replaced by a recorder that returns the eager jet
    (what it was asked to compile, in order): no compile is paid."""
    asked = []

    def fake(jet):
        asked.append(jet)

        def call(x, net):
            return jet(x, net)

        call.fallback = []
        return call

    monkeypatch.setattr(compiled, "compiled", fake)
    return asked


QUIET = dict(progress=False, verbose=False)


def _record(folder) -> dict:
    return json.loads((Path(folder) / "metrics.json").read_text())


def test_compile_jets_is_not_part_of_a_runs_identity():
    plain = RunConfig("laplace").resolved(registry.get("laplace"))
    fast = RunConfig("laplace", compile_jets=True).resolved(registry.get("laplace"))
    assert fast.compile_jets is True and plain.compile_jets == "auto"
    assert fast.identity() == plain.identity()
    assert "compile_jets" not in fast.identity()


def test_the_runner_builds_compiled_data_and_records_it(tmp_path, fake_compile):
    cfg = RunConfig("laplace", iterations=2, compile_jets=True).resolved(
        registry.get("laplace")
    )
    case = registry.get("laplace")
    assert stack.build(case, [cfg], [None]).data.compile_jets is True
    rec = runner.run(cfg, tmp_path / "fast", problem=case, progress=None)
    assert rec["derivatives"].startswith(
        "Taylor-mode jets compiled with torch.compile (pde, "
    )
    assert "compile_jets" not in rec
    jets = {t.jet for t in registry.get("laplace").terms if t.jet is not None}
    assert set(fake_compile) == jets  # each jet compiled once, in the one run
    plain = runner.run(
        replace(cfg, compile_jets=False), tmp_path / "plain", problem=case
    )
    assert plain["derivatives"].startswith("Taylor-mode jets (pde, ")
    assert len(fake_compile) == len(jets)  # the eager run compiled nothing


@pytest.mark.slow  # trains for seconds
def test_the_api_keyword_reaches_single_and_stacked_runs(tmp_path, fake_compile):
    res = deepxde_lnn.run(
        "laplace", iterations=2, compile_jets=True, out=tmp_path / "one", **QUIET
    )
    assert "compiled with torch.compile" in res.record["derivatives"]
    n = len(fake_compile)
    cmp = deepxde_lnn.compare(
        "laplace",
        methods=["lnn"],
        seeds=[1, 2],
        iterations=2,
        stack="on",
        compile_jets=True,
        out=tmp_path / "cmp",
        workers=1,
        **QUIET,
    )
    recs = [r.record for r in cmp.runs]
    assert [r["stacked_runs"] for r in recs] == [2, 2]  # one stacked model
    assert all("compiled with torch.compile" in r["derivatives"] for r in recs)
    assert len(fake_compile) == 2 * n  # the vmapped jets, compiled once each
    assert all(f.__name__ == "per_run" for f in fake_compile[n:])


@pytest.mark.parametrize("command", ["run", "compare", "sweep", "ablate"])
def test_every_command_takes_compile_jets(command):
    argv = [command, "laplace"] + (["--lrs", "1e-3"] if command == "sweep" else [])
    parser = cli.build_parser()
    on = cli._settings(parser.parse_args([*argv, "--compile-jets", "on"]))
    off = cli._settings(parser.parse_args([*argv, "--compile-jets", "off"]))
    auto = cli._settings(parser.parse_args(argv))
    assert on["compile_jets"] is True and off["compile_jets"] is False
    assert auto.get("compile_jets", "auto") == "auto"
    assert "compile_jets:" in getattr(deepxde_lnn, command).__doc__  # an option


def test_a_case_script_takes_compile_jets():
    case = registry.get("laplace")
    on = ["--compile-jets", "on"]
    assert example.parse_args(case, on).data(case).compile_jets
    assert not example.parse_args(case, ["--iterations", "20"]).data(case).compile_jets


def test_auto_compiles_where_the_compile_pays():
    """``"auto"``: runs of PAYS_FROM run-steps or more compile (when a compiler is
    there), shorter ones do not; True and False are as asked."""
    assert compiled.wanted(True, 1) and not compiled.wanted(False, 10**9)
    assert not compiled.wanted("auto", compiled.PAYS_FROM - 1)
    assert compiled.wanted("auto", compiled.PAYS_FROM) == compiled._can_compile()
    case = registry.get("laplace")
    for iterations, k in ((10, 2), (compiled.PAYS_FROM // 2, 2)):
        cfgs = [
            RunConfig("laplace", iterations=iterations, seed=s).resolved(case)
            for s in range(k)
        ]
        built = stack.build(case, cfgs, [None] * k)
        expected = iterations * k >= compiled.PAYS_FROM and compiled._can_compile()
        assert built.runs[0].data.compile_jets is expected
    # every phase counts: Adam's steps below the mark, L-BFGS's above it
    half = compiled.PAYS_FROM // 2
    for lbfgs in (0, half):
        cfg = RunConfig("laplace", iterations=half, lbfgs=lbfgs).resolved(case)
        built = stack.build(case, [cfg], [None])
        expected = bool(lbfgs) and compiled._can_compile()
        assert built.runs[0].data.compile_jets is expected
    # a time budget would pay for the compile: eager on auto, however long
    timed = RunConfig("laplace", iterations=10**6, seconds=1.0).resolved(case)
    assert stack.build(case, [timed], [None]).runs[0].data.compile_jets is False


def test_bad_compile_jets_is_refused_naming_it(tmp_path, capsys):
    with pytest.raises(
        ValueError, match=r"^compile_jets must be True, False or 'auto', got 'yes'"
    ):
        deepxde_lnn.run("laplace", compile_jets="yes", out=tmp_path / "a", **QUIET)
    assert not (tmp_path / "a").exists()
    with pytest.raises(
        ValueError, match="^compile_jets must be True, False or 'auto', got 1"
    ):
        RunConfig("laplace", compile_jets=1).resolved(registry.get("laplace"))
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "laplace", "--compile-jets=yes", "--out", str(tmp_path / "b")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and not (tmp_path / "b").exists()
    assert err.count("\n") == 1 and err.startswith("error: argument --compile-jets")


def test_an_unusable_compile_cache_leaves_no_folder_and_warns_once(
    tmp_path, monkeypatch
):
    # each process (each worker) warned, and left an empty temporary folder
    monkeypatch.setattr(compiled.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "a-file"))
    compiled.usable_cache.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="default folder") as said:
            compiled.usable_cache()
            compiled.usable_cache()  # once per process
        assert len(said) == 1 and "unset in this process" in str(said[0].message)
        # unset: the workers started from here inherit nothing to warn about
        assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ
        assert not any((tmp_path / "tmp").iterdir())  # nothing made
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compiled.usable_cache.__wrapped__()
    finally:
        compiled.usable_cache.cache_clear()
