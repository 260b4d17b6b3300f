"""Burgers' equation with a reference from the Cole–Hopf solution, the points
resampled during training:

    u_t + u u_x = nu u_xx,   x in [-1, 1], t in [0, 1],   nu = 0.01 / pi,
    u(x, 0) = -sin(pi x),   u(-1, t) = u(1, t) = 0.

DeepXDE's data holds no solution here (its example reads one from a file): the
runs are scored against ``reference``, a function of the model's test points
that evaluates the exact solution by the Cole–Hopf transform,

    u = -int sin(pi (x - s)) f(x - s) G(s) ds / int f(x - s) G(s) ds,
    f(y) = exp(-cos(pi y) / (2 pi nu)),   G(s) = exp(-s^2 / (4 nu t)),

by Gauss–Hermite quadrature. ``PDEPointResampler`` redraws the residual points
every ``RESAMPLE`` steps; Adam then L-BFGS, as DeepXDE's example trains it.

    python docs/examples/burgers.py
"""

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde

NU = 0.01 / np.pi
ADAM, LBFGS = 5000, 2000
POINTS, SIDES, START, TEST = 2540, 80, 160, 2000
RESAMPLE = 100


def cole_hopf(xt: np.ndarray, nodes: int = 200) -> np.ndarray:
    """The exact u at the points ``xt`` (n, 2) (Gauss–Hermite in s)."""
    z, w = np.polynomial.hermite.hermgauss(nodes)
    x, t = xt[:, 0:1], np.maximum(xt[:, 1:2], 1e-12)
    y = x - np.sqrt(4 * NU * t) * z  # (n, nodes)
    log_f = -np.cos(np.pi * y) / (2 * np.pi * NU)
    f = w * np.exp(log_f - log_f.max(axis=1, keepdims=True))  # scaled: no overflow
    u = -(np.sin(np.pi * y) * f).sum(1) / f.sum(1)
    return np.where(xt[:, 1] > 0, u, -np.sin(np.pi * xt[:, 0]))[:, None]


def pde(xt, u):
    u_x = dde.grad.jacobian(u, xt, i=0, j=0)
    u_t = dde.grad.jacobian(u, xt, i=0, j=1)
    u_xx = dde.grad.hessian(u, xt, i=0, j=0)
    return u_t + u * u_x - NU * u_xx


def train(net):
    domain = dde.geometry.GeometryXTime(
        dde.geometry.Interval(-1, 1), dde.geometry.TimeDomain(0, 1)
    )
    conditions = [
        dde.icbc.DirichletBC(domain, lambda x: 0, lambda _, on: on),
        dde.icbc.IC(domain, lambda x: -np.sin(np.pi * x[:, 0:1]), lambda _, on: on),
    ]
    data = dde.data.TimePDE(
        domain,
        pde,
        conditions,
        num_domain=POINTS,
        num_boundary=SIDES,
        num_initial=START,
        num_test=TEST,
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    resampler = dde.callbacks.PDEPointResampler(period=RESAMPLE)
    model.train(iterations=ADAM, display_every=1000, callbacks=[resampler], verbose=0)
    if LBFGS:
        # DeepXDE fixes L-BFGS's iterations per step (1000) when it is imported,
        # and set_LBFGS_options leaves them: set both, or maxiter < 1000 still
        # runs 1000 iterations
        dde.optimizers.config.set_LBFGS_options(maxiter=LBFGS)
        per_step = min(1000, LBFGS)
        dde.optimizers.config.LBFGS_options.update(
            iter_per_step=per_step, fun_per_step=int(1.25 * per_step)
        )
        model.compile("L-BFGS")
        model.train(verbose=0)
    return model


SIZES = [2, 20, 20, 20, 1]
NETS = {
    "fnn": lambda: dde.nn.FNN(SIZES, "tanh", "Glorot normal"),
    "lnn": lambda: deepxde_lnn.LNN(SIZES, "tanh", "Glorot normal"),
    "fnn-matched": lambda: deepxde_lnn.matched(SIZES, "tanh", "Glorot normal"),
}

if __name__ == "__main__":
    result = deepxde_lnn.compare(
        train=train,
        nets=NETS,
        name="burgers",
        reference=cole_hopf,
        inputs=["x", "t"],
        baseline=["fnn", "fnn-matched"],
        seeds=[0, 1, 2],
        out="runs/burgers",
    )
    print(result)
