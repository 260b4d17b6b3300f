"""Compiled jets (``ResampledPDE(compile_jets=True)``) against the eager jets."""

import os
import warnings

import numpy as np
import pytest
import torch

import deepxde as dde
from deepxde_lnn.networks import compiled, taylor
from deepxde_lnn.pinn.data import ResampledPDE, Term
from deepxde_lnn.networks.nn import LNN
from deepxde_lnn.pinn.sampling import Box, Edge

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
#: (everything but the code generation) are checked always
SLOW = "DEEPXDE_LNN_COMPILE_TESTS"


@pytest.mark.parametrize(
    "backend",
    [
        "aot_eager_decomp_partition",
        pytest.param(
            "inductor",
            marks=pytest.mark.skipif(
                not os.environ.get(SLOW),
                reason=f"inductor's C++ compile takes minutes cold: set {SLOW}=1",
            ),
        ),
    ],
)
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
