"""GatedResidualAttention ("ra-gated"): counts, maths, dropout, DeepXDE use, errors."""

import deepxde as dde
import numpy as np
import pytest
import torch

import deepxde_lnn
from deepxde_lnn import GatedResidualAttention
from deepxde_lnn.networks.gated import GatedBlock


def p_gated(d, m, w=64, blocks=4, b=8):
    block = 2 * (w * w + w) + (w * b + b) + (b * w + w) + w
    return (d + 1) * w + blocks * block + (w + 1) * m


@pytest.mark.parametrize("m, count", [(1, 38177), (8, 38632)])
def test_parameter_counts(m, count):
    assert p_gated(2, m) == count
    net = GatedResidualAttention(2, m)
    assert net.num_trainable_parameters() == count
    assert sum(p.numel() for p in GatedBlock(64).parameters()) == 9480
    assert net.regularizer is None


def test_exported_from_package():
    assert deepxde_lnn.GatedResidualAttention is GatedResidualAttention
    assert "GatedResidualAttention" in deepxde_lnn.__all__


def _manual_forward(net, x, rho=0.12, tau=0.55):
    """The architecture written out, dropout off."""

    def lin(layer, h):
        return h @ layer.weight.T + layer.bias

    z = torch.tanh(lin(net.input, x))
    for blk in net.blocks:
        f = torch.tanh(lin(blk.f2, torch.tanh(lin(blk.f1, z))))
        g = torch.sigmoid(tau * lin(blk.g2, torch.tanh(lin(blk.g1, z))) + blk.beta)
        z = z + rho * g * f
    return lin(net.output, z)


def test_forward_matches_hand_written_in_eval_mode():
    torch.manual_seed(0)
    net = GatedResidualAttention(3, 2, width=16, blocks=3, bottleneck=4).eval()
    with torch.no_grad():  # move beta off its initial value: a per-channel vector
        for blk in net.blocks:
            blk.beta.uniform_(-3.0, 1.0)
    x = torch.randn(9, 3)
    y = net(x)
    assert y.shape == (9, 2)
    torch.testing.assert_close(y, _manual_forward(net, x))
    # other rho / tau reach the formula
    torch.manual_seed(0)
    other = GatedResidualAttention(3, 2, 16, 3, 4, rho=0.7, tau=2.0).eval()
    torch.testing.assert_close(other(x), _manual_forward(other, x, rho=0.7, tau=2.0))
    assert not torch.allclose(other(x), _manual_forward(other, x))


def test_initial_gate_nearly_closed():
    torch.manual_seed(1)
    net = GatedResidualAttention(2, 1).eval()
    assert all(torch.all(blk.beta == -1.8) for blk in net.blocks)
    x = 2 * torch.rand(256, 2) - 1
    with torch.no_grad():
        z = torch.tanh(net.input(x))
        for blk in net.blocks:
            g = blk.gate(z)
            assert 0.05 <= g.mean().item() <= 0.3
            z = blk(z)
        # the four branches together move the features by a few percent at most
        z0 = torch.tanh(net.input(x))
        assert (z - z0).norm() / z0.norm() < 0.1


def test_dropout_train_random_eval_deterministic():
    torch.manual_seed(2)
    net = GatedResidualAttention(2, 1)
    x = torch.rand(64, 2)
    net.train()
    a, b = net(x), net(x)
    assert not torch.equal(a, b)
    net.eval()
    c, d = net(x), net(x)
    assert torch.equal(c, d)
    torch.testing.assert_close(c, _manual_forward(net, x))
    # without dropout, training mode is deterministic and equal to eval mode
    off = GatedResidualAttention(2, 1, dropout=0.0).train()
    torch.testing.assert_close(off(x), off.eval()(x))


def test_float64(float64):
    net = GatedResidualAttention(2, 3, width=8, blocks=2, bottleneck=2).eval()
    assert all(p.dtype == torch.float64 for p in net.parameters())
    x = torch.rand(5, 2, dtype=torch.float64)
    assert net(x).dtype == torch.float64
    torch.testing.assert_close(net(x), _manual_forward(net, x))


def test_input_derivatives(float64):
    torch.manual_seed(3)
    net = GatedResidualAttention(2, 1, width=16, blocks=2, bottleneck=4).eval()
    x = torch.rand(6, 2, dtype=torch.float64, requires_grad=True)
    y = net(x)
    dde.grad.clear()
    u_x = dde.grad.jacobian(y, x, i=0, j=0)
    u_xx = dde.grad.hessian(y, x, i=0, j=0)
    dde.grad.clear()
    assert torch.isfinite(u_x).all() and torch.isfinite(u_xx).all()
    eps = 1e-6
    e = torch.tensor([eps, 0.0], dtype=torch.float64)
    with torch.no_grad():
        fd = (net(x + e) - net(x - e)) / (2 * eps)
    torch.testing.assert_close(u_x, fd, rtol=1e-7, atol=1e-9)
    assert u_xx.abs().max() > 0


def test_transforms():
    net = GatedResidualAttention(2, 2, width=8, blocks=2, bottleneck=2).eval()
    x = torch.rand(4, 2)
    net.apply_feature_transform(lambda z: torch.zeros_like(z))
    y0 = net(x)
    assert torch.allclose(y0, y0[:1].expand_as(y0))  # features no longer depend on x
    net.apply_output_transform(lambda z, y: z[:, :1] * (1 - z[:, :1]) * y)
    torch.testing.assert_close(net(x), x[:, :1] * (1 - x[:, :1]) * y0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(n_in=0), "n_in"),
        (dict(n_out=1.5), "n_out"),
        (dict(width=-4), "width"),
        (dict(blocks=0), "blocks"),
        (dict(bottleneck=True), "bottleneck"),
        (dict(rho=float("nan")), "rho"),
        (dict(tau="x"), "tau"),
        (dict(gate_bias=float("inf")), "gate_bias"),
        (dict(dropout=1.0), "dropout"),
        (dict(dropout=-0.1), "dropout"),
    ],
)
def test_bad_arguments(kwargs, name):
    args = dict(n_in=2, n_out=1)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        GatedResidualAttention(**args)


@pytest.mark.slow  # trains for seconds
def test_trains_poisson():
    """-u'' = pi^2 sin(pi x) on [-1, 1], u(+-1) = 0: 200 Adam steps lower the loss."""
    dde.config.set_random_seed(0)
    geom = dde.geometry.Interval(-1, 1)

    def pde(x, y):
        return -dde.grad.hessian(y, x) - np.pi**2 * torch.sin(np.pi * x)

    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda _, on: on)
    data = dde.data.PDE(geom, pde, bc, 32, 2, solution=lambda x: np.sin(np.pi * x))
    model = dde.Model(data, GatedResidualAttention(1, 1))
    model.compile("adam", lr=3e-3)
    history, _ = model.train(iterations=200, display_every=200, verbose=0)
    first, last = (
        np.sum(loss) for loss in (history.loss_test[0], history.loss_test[-1])
    )
    assert last < 0.01 * first
    x = np.linspace(-1, 1, 11, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(model.predict(x), model.predict(x))  # eval mode
