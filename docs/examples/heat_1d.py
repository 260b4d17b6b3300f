"""A time-dependent forward problem through route 1: the heat equation

    u_t = a u_xx   on x in [0, 1], t in [0, 1],   a = 0.4 / pi^2,
    u(0, t) = u(1, t) = 0,   u(x, 0) = sin(pi x),
    exact: u = exp(-pi^2 a t) sin(pi x),

trained as a DeepXDE script does (Adam with an inverse-time decay, then L-BFGS),
for a plain network, the liquid one of the same layer sizes, and the plain one of
the liquid one's parameter count.

    python docs/examples/heat_1d.py
"""

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde

A = 0.4 / np.pi**2
ADAM, LBFGS = 2000, 500


def exact(xt):
    return np.exp(-(np.pi**2) * A * xt[:, 1:2]) * np.sin(np.pi * xt[:, 0:1])


def pde(xt, u):
    return dde.grad.jacobian(u, xt, i=0, j=1) - A * dde.grad.hessian(u, xt, i=0, j=0)


def train(net):
    domain = dde.geometry.GeometryXTime(
        dde.geometry.Interval(0, 1), dde.geometry.TimeDomain(0, 1)
    )
    ends = dde.icbc.DirichletBC(domain, lambda _: 0, lambda _, on: on)
    start = dde.icbc.IC(domain, exact, lambda _, on: on)
    data = dde.data.TimePDE(
        domain,
        pde,
        [ends, start],
        num_domain=200,
        num_boundary=40,
        num_initial=40,
        solution=exact,
        num_test=1000,
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, decay=("inverse time", 1000, 0.5))
    model.train(iterations=ADAM, display_every=500)
    dde.optimizers.set_LBFGS_options(maxiter=LBFGS)
    model.compile("L-BFGS")
    model.train(display_every=500)
    return model


SIZES = [2, 32, 32, 32, 1]
NETS = {
    "fnn": lambda: dde.nn.FNN(SIZES, "tanh", "Glorot normal"),
    "lnn": lambda: deepxde_lnn.LNN(SIZES, "tanh", "Glorot normal"),
    "fnn-matched": lambda: deepxde_lnn.matched(SIZES, "tanh", "Glorot normal"),
}

if __name__ == "__main__":
    result = deepxde_lnn.compare(
        train=train, nets=NETS, name="heat_1d", seeds=[0, 1, 2], out="runs/heat_1d"
    )
    print(result)
