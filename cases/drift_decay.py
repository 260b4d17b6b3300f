"""Drift-decay (1D advection-reaction), paper Table 2.

    u_t - 1/2 u_x + 1/2 u = 0   on (x, t) in [0, 2] x [0, 1]
    u(x, 0) = 6 exp(-3x),   u(2, t) = 6 exp(-6 - 2t)   (inflow at x = 2)
    exact: u = 6 exp(-3x - 2t)

The authors' code trains the residual r = u_x - 2 u_t - u (the main-text PDE times
-2, hence a 4x larger PDE loss); ``pde`` is that coded form (the main-text form is
``-0.5 * pde(x, u)``). No condition at the outflow x = 0.
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge

LO, HI = (0.0, 0.0), (2.0, 1.0)
geom = dde.geometry.GeometryXTime(
    dde.geometry.Interval(0, 2), dde.geometry.TimeDomain(0, 1)
)


def pde(x, u):
    u_x = dde.grad.jacobian(u, x, i=0, j=0)
    u_t = dde.grad.jacobian(u, x, i=0, j=1)
    return u_x - 2 * u_t - u


def pde_jet(x, net):
    # the same residual with one forward-mode derivative: u_x - 2 u_t is the
    # derivative of u along v = (1, -2)
    u, du = taylor.directional_derivatives(net, x, (1.0, -2.0), 1)
    return du - u


def exact(x):
    return 6 * np.exp(-3 * x[:, 0:1] - 2 * x[:, 1:2])


ic = dde.icbc.IC(geom, lambda x: 6 * np.exp(-3 * x[:, 0:1]), lambda _, on: on)
inflow = dde.icbc.DirichletBC(geom, exact, lambda x, on: on and np.isclose(x[0], 2))

terms = [
    Term("pde", Box(LO, HI), 2000, pde, kind="pde", jet=pde_jet),
    Term("ic", Edge(LO, HI, axis=1, value=0.0), 1000, ic),
    Term("inflow", Edge(LO, HI, axis=0, value=2.0), 1000, inflow),
]

CASE = Case(
    name="drift_decay",
    title="Drift-decay (advection-reaction)",
    inputs=("x", "t"),
    fields=("u",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 200),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
