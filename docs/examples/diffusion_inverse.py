"""An inverse problem through route 1: learn the diffusion coefficient C.

    u_t = C u_xx - exp(-t) (sin(pi x) - pi^2 sin(pi x)),  x in [-1, 1], t in [0, 1],
    u = exp(-t) sin(pi x) on the boundary and at t = 0,

with u also observed at ten points at t = 1. The true coefficient is C = 1; the
training starts from C = 2. This is DeepXDE's ``diffusion_1d_inverse`` problem,
written as a function of the network: ``train(net)`` is the script's training,
unchanged (the unknown as an external trainable variable), and
``deepxde_lnn.compare`` runs it for every network over seeds, records the learned
C of every run and judges its error like a field's.

    python docs/examples/diffusion_inverse.py
"""

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde

TRUE_C = 1.0
ITERATIONS = 2000


def exact(xt):
    return np.sin(np.pi * xt[:, 0:1]) * np.exp(-xt[:, 1:2])


def diffusion_data(c, points=40, sides=20, start=10, seen=10, test=500):
    """The residual with the coefficient ``c``, the boundary and initial values,
    and u observed at ``seen`` points at t = 1."""

    def pde(xt, u):
        x, t = xt[:, 0:1], xt[:, 1:2]
        u_t = dde.grad.jacobian(u, xt, i=0, j=1)
        u_xx = dde.grad.hessian(u, xt, i=0, j=0)
        source = dde.backend.exp(-t) * (1 - np.pi**2) * dde.backend.sin(np.pi * x)
        return u_t - c * u_xx + source

    domain = dde.geometry.GeometryXTime(
        dde.geometry.Interval(-1, 1), dde.geometry.TimeDomain(0, 1)
    )
    where = np.stack([np.linspace(-1, 1, seen), np.ones(seen)], axis=1)
    conditions = [
        dde.icbc.DirichletBC(domain, exact, lambda _, on: on),
        dde.icbc.IC(domain, exact, lambda _, on: on),
        dde.icbc.PointSetBC(where, exact(where)),
    ]
    return dde.data.TimePDE(
        domain,
        pde,
        conditions,
        num_domain=points,
        num_boundary=sides,
        num_initial=start,
        anchors=where,
        solution=exact,
        num_test=test,
    )


def train(net):
    c = dde.Variable(2.0)  # the unknown, from a wrong first guess
    model = dde.Model(diffusion_data(c), net)
    model.compile("adam", lr=1e-3, external_trainable_variables=c)
    model.train(iterations=ITERATIONS, display_every=500, verbose=0)
    return model


SIZES = [2, 32, 32, 32, 1]
NETS = {
    "fnn": lambda: dde.nn.FNN(SIZES, "tanh", "Glorot uniform"),
    "lnn": lambda: deepxde_lnn.LNN(SIZES, "tanh", "Glorot uniform"),
    # the plain network widened to the LNN's parameter count
    "fnn-matched": lambda: deepxde_lnn.matched(SIZES, "tanh", "Glorot uniform"),
}

if __name__ == "__main__":
    result = deepxde_lnn.compare(
        train=train,
        nets=NETS,
        name="diffusion_inverse",
        true_values={"C": TRUE_C},
        seeds=[0, 1, 2],
        out="runs/diffusion_inverse",
    )
    print(result)
