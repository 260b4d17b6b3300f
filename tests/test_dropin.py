"""A user's DeepXDE script runs unchanged except for the network line.

The script uses float64, two outputs, a hard-constraint output transform, an
``OperatorBC``, ``PDEPointResampler`` and Adam followed by L-BFGS. It is run with
``dde.nn.FNN`` and with ``deepxde_lnn.LNN``; both must reach a small error.

System on [0, 1]:  u'' = -pi^2 sin(pi x),  v' = u,  u(0) = u(1) = 0 (hard), v(0) = 0;
exact u = sin(pi x), v = (1 - cos(pi x)) / pi.
"""

import numpy as np
import pytest
import torch

import deepxde_lnn

# isort: split
import deepxde as dde

pytestmark = pytest.mark.slow  # two full trainings (Adam, then L-BFGS): ~20 s


def user_script(make_net):
    geom = dde.geometry.Interval(0, 1)

    def pde(x, y):
        u = y[:, 0:1]
        return [
            dde.grad.hessian(y, x, component=0) + np.pi**2 * torch.sin(np.pi * x),
            dde.grad.jacobian(y, x, i=1) - u,
        ]

    bc_v = dde.icbc.OperatorBC(
        geom, lambda x, y, _: y[:, 1:2], lambda x, on: on and np.isclose(x[0], 0)
    )
    data = dde.data.PDE(geom, pde, [bc_v], num_domain=40, num_boundary=2)
    net = make_net([1, 24, 24, 2], "tanh", "Glorot normal")
    net.apply_output_transform(
        lambda x, y: torch.cat([x * (1 - x) * y[:, 0:1], y[:, 1:2]], dim=1)
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=3e-3)
    resampler = dde.callbacks.PDEPointResampler(period=50)
    model.train(iterations=300, callbacks=[resampler], display_every=1000, verbose=0)
    model.compile("L-BFGS")
    dde.optimizers.set_LBFGS_options(maxiter=300)
    model.train(verbose=0)

    x = np.linspace(0, 1, 101)[:, None]
    y = model.predict(x)
    exact = np.hstack([np.sin(np.pi * x), (1 - np.cos(np.pi * x)) / np.pi])
    return np.linalg.norm(y - exact, axis=0) / np.linalg.norm(exact, axis=0), y


def test_fnn_to_lnn_swap(float64):
    dde.config.set_random_seed(1)
    err_fnn, _ = user_script(dde.nn.FNN)
    dde.config.set_random_seed(1)
    err_lnn, y = user_script(deepxde_lnn.LNN)
    assert y.dtype == np.float64
    assert np.all(err_fnn < 1e-2), err_fnn
    assert np.all(err_lnn < 1e-2), err_lnn
