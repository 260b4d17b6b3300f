"""Samplers and the ResampledPDE protocol: counts, fresh points, interior-only PDE."""

import numpy as np
import pytest
import torch

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn.problems.data import ResampledPDE, Term
from deepxde_lnn.problems.sampling import Box, Circle, Disk, Edge


def test_samplers_shapes_ranges_dtype():
    rng = np.random.default_rng(0)
    x = Box((0, -1), (2, 1))(5000, rng)
    assert x.shape == (5000, 2) and x.dtype == np.float32
    assert x[:, 0].min() >= 0 and x[:, 0].max() < 2 and x[:, 1].min() >= -1
    e = Edge((0, 0), (1, 1), axis=0, value=1.0)(100, rng)
    assert np.all(e[:, 0] == 1.0) and e[:, 1].min() >= 0 and e[:, 1].max() < 1
    c = Circle()(1000, rng).astype(float)
    np.testing.assert_allclose(np.hypot(c[:, 0], c[:, 1]), 1, atol=1e-6)


def test_disk_is_area_uniform():
    d = Disk()(200_000, np.random.default_rng(1)).astype(float)
    r2 = (d**2).sum(1)
    assert r2.max() <= 1 + 1e-6
    # area-uniform: P(r < 1/2) = 1/4 and r^2 ~ U(0, 1)
    assert abs(np.mean(r2 < 0.25) - 0.25) < 0.005
    assert abs(r2.mean() - 0.5) < 0.005


def _toy_data(calls, resample=True):
    def pde(x, y):
        calls.append(x.detach().numpy().copy())
        return dde.grad.hessian(y, x, i=0, j=0)

    lo, hi = (0.0, 0.0), (1.0, 1.0)
    terms = [
        Term("pde", Box(lo, hi), 30, pde, kind="pde"),
        Term("left", Edge(lo, hi, 0, 0.0), 10, lambda x, y: y, kind="value"),
        Term(
            "right", Edge(lo, hi, 0, 1.0), 20, lambda x, y: dde.grad.jacobian(y, x, j=0)
        ),
    ]
    return ResampledPDE(terms, seed=3, resample=resample)


def test_counts_fixed_and_points_fresh_every_step():
    calls = []
    data = _toy_data(calls)
    net = deepxde_lnn.LNN([2, 8, 1], "tanh", "Glorot normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    seen = []

    class Grab(dde.callbacks.Callback):
        def on_batch_end(self):
            seen.append(data.train_x.copy())

    model.train(iterations=4, display_every=1000, callbacks=[Grab()], verbose=0)
    assert all(s.shape == (60, 2) for s in seen)
    for a, b in zip(seen[:-1], seen[1:]):
        assert not np.any(np.isclose(a[:30], b[:30]).all(axis=1))  # fresh interior
    assert np.all(data.points(seen[-1], "left")[:, 0] == 0)
    assert np.all(data.points(seen[-1], "right")[:, 0] == 1)
    # the PDE callback only ever sees the interior rows of the batch
    assert all(c.shape == (30, 2) for c in calls)
    step_calls = calls[2:6]  # [0], [1]: DeepXDE's initial _test (train, test batch)
    for c, s in zip(step_calls, seen):
        np.testing.assert_array_equal(c, s[:30])
    assert data.last_losses.shape == (3,)


def test_fixed_pool_keeps_points():
    data = _toy_data([], resample=False)
    a = data.train_next_batch()[0]
    b = data.train_next_batch()[0]
    assert a is b


def test_losses_are_per_term_mean_squares():
    torch.manual_seed(0)
    data = _toy_data([])
    net = deepxde_lnn.LNN([2, 8, 1], "tanh", "torch-default")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    X = data.train_next_batch()[0]
    assert X.shape == (10, 2)  # DeepXDE's batch: only the value term's rows
    x = torch.as_tensor(X, dtype=torch.float32).requires_grad_()
    losses = data.losses_train(None, net(x), None, x, model)
    y_left = net(torch.as_tensor(data.points(data.train_x, "left")))
    torch.testing.assert_close(losses[1], torch.mean(y_left**2))
    xr = torch.as_tensor(data.points(data.train_x, "right")).requires_grad_()
    g = torch.autograd.grad(net(xr).sum(), xr)[0][:, 0]
    torch.testing.assert_close(losses[2], torch.mean(g**2))


def test_dirichlet_bc_values_are_not_stale():
    """DeepXDE caches BC values by id(X); fresh points must give fresh targets."""
    geom = dde.geometry.Rectangle((0, 0), (1, 1))
    bc = dde.icbc.DirichletBC(geom, lambda x: x[:, 1:2], lambda _, on: on)
    term = Term("left", Edge((0, 0), (1, 1), 0, 0.0), 50, bc)
    assert term.kind == "value"
    rng = np.random.default_rng(0)
    for _ in range(3):
        X = term.sampler(50, rng)
        y = torch.zeros(50, 1)
        err = term.residual.error(X, None, y, 0, 50)
        np.testing.assert_allclose(err.numpy(), -X[:, 1:2])
    # the user's BC object keeps DeepXDE's behaviour
    assert bc.func.__code__.co_name == "wrapper_cache"


def test_multichannel_loss_sums_channel_means():
    terms = [
        Term("pde", Box((0,), (1,)), 8, lambda x, y: [y, 2 * y], kind="value"),
        Term(
            "t2",
            Box((0,), (1,)),
            8,
            lambda x, y: torch.cat([y, 2 * y], 1),
            kind="value",
        ),
    ]
    data = ResampledPDE(terms, seed=0)
    y = torch.ones(16, 1)
    losses = data._losses(data.test_x, y, torch.zeros(16, 1), None)
    assert data.test()[0].shape == (16, 1)
    assert [float(v) for v in losses] == [5.0, 5.0]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n=0), "n must be positive"),
        (dict(n=2.5), "n must be an integer"),
        (dict(kind="bogus"), "kind"),
        (dict(sampler=None), "sampler"),
        (dict(name=""), "name"),
    ],
)
def test_term_errors(kwargs, match):
    args = dict(name="a", sampler=Box((0,), (1,)), n=3, residual=lambda x, y: y)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        Term(**args)


def test_duplicate_term_names():
    t = Term("a", Box((0,), (1,)), 3, lambda x, y: y)
    with pytest.raises(ValueError, match="unique"):
        ResampledPDE([t, t])


@pytest.mark.slow  # trains for seconds
def test_fixed_pool_with_lbfgs_reduces_loss():
    """resample=False (one fixed pool) is the mode for L-BFGS."""
    from dataclasses import replace

    from deepxde_lnn.study import registry

    lap = registry.get("laplace")
    terms = [replace(t, n=40) for t in lap.terms]
    data = ResampledPDE(terms, seed=0, resample=False)
    dde.config.set_random_seed(0)
    model = dde.Model(data, deepxde_lnn.LNN([2, 16, 16, 1], "tanh", "Glorot normal"))
    model.compile("L-BFGS")
    dde.optimizers.set_LBFGS_options(maxiter=60)
    history, _ = model.train(verbose=0)
    assert history.loss_train[-1].sum() < 1e-2 * history.loss_train[0].sum()
    x = data.train_x
    model.train(verbose=0)
    assert data.train_x is x  # still the same pool
