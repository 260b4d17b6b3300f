"""A wave equation with its boundary values built into the network (a
hard-constraint output transform) and loss weights:

    u_tt = c^2 u_xx,   x in [0, 1], t in [0, 1],   c = 1,
    u(0, t) = u(1, t) = 0,   u(x, 0) = sin(pi x) + sin(3 pi x) / 2,   u_t(x, 0) = 0,
    exact: u = sin(pi x) cos(c pi t) + sin(3 pi x) cos(3 c pi t) / 2.

The transform ``u = x (1 - x) N(x, t)`` makes every network satisfy the
boundary values exactly; the initial conditions stay losses, weighted 100
against the residual's 1. The transform is applied inside ``train`` (as a
DeepXDE script applies it after building the network), so every network of
``NETS`` gets it.

    python docs/examples/wave_hard.py
"""

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde

C = 1.0
ITERATIONS = 5000
POINTS, START, TEST = 1000, 100, 1000


def exact(xt):
    x, t = xt[:, 0:1], xt[:, 1:2]
    return np.sin(np.pi * x) * np.cos(C * np.pi * t) + 0.5 * np.sin(
        3 * np.pi * x
    ) * np.cos(3 * C * np.pi * t)


def pde(xt, u):
    return dde.grad.hessian(u, xt, i=1, j=1) - C**2 * dde.grad.hessian(u, xt, i=0, j=0)


def train(net):
    domain = dde.geometry.GeometryXTime(
        dde.geometry.Interval(0, 1), dde.geometry.TimeDomain(0, 1)
    )
    conditions = [
        dde.icbc.IC(domain, exact, lambda _, on_initial: on_initial),
        dde.icbc.OperatorBC(  # u_t = 0 at t = 0
            domain,
            lambda xt, u, _: dde.grad.jacobian(u, xt, i=0, j=1),
            lambda xt, _: dde.utils.isclose(xt[1], 0),
        ),
    ]
    data = dde.data.TimePDE(
        domain,
        pde,
        conditions,
        num_domain=POINTS,
        num_initial=START,
        solution=exact,
        num_test=TEST,
    )
    net.apply_output_transform(lambda xt, n: xt[:, 0:1] * (1 - xt[:, 0:1]) * n)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, loss_weights=[1, 100, 100])
    model.train(iterations=ITERATIONS, display_every=1000, verbose=0)
    return model


SIZES = [2, 40, 40, 40, 1]
NETS = {
    "fnn": lambda: dde.nn.FNN(SIZES, "tanh", "Glorot uniform"),
    "lnn": lambda: deepxde_lnn.LNN(SIZES, "tanh", "Glorot uniform"),
}

if __name__ == "__main__":
    result = deepxde_lnn.compare(
        train=train,
        nets=NETS,
        name="wave_hard",
        inputs=["x", "t"],
        seeds=[0, 1, 2],
        out="runs/wave_hard",
    )
    print(result)
