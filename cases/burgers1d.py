"""Burgers' equation in 1-D, PINNacle's "Burgers 1d-C".

u_t + u u_x - nu u_xx = 0   on x in (-1, 1), t in (0, 1),  nu = 0.01 / pi
u(x, 0) = -sin(pi x)                      (initial condition)
u(-1, t) = u(1, t) = 0                    (Dirichlet)
reference: PINNacle's COMSOL solution on 101 nodes x 11 times
(reference/pinnacle/burgers1d.dat.gz, MIT licence beside it)
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.reference_data import ShippedTable
from deepxde_lnn.problems.sampling import Box, Edge

NU = 0.01 / np.pi
LO, HI = (-1.0, 0.0), (1.0, 1.0)  # (x, t)
geom = dde.geometry.GeometryXTime(
    dde.geometry.Interval(-1, 1), dde.geometry.TimeDomain(0, 1)
)


def pde(x, u):
    u_x = dde.grad.jacobian(u, x, i=0, j=0)
    u_t = dde.grad.jacobian(u, x, i=0, j=1)
    u_xx = dde.grad.hessian(u, x, i=0, j=0)
    return u_t + u * u_x - NU * u_xx


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives: a 2-jet along x and a 1-jet
    # along t in one pass
    u, (u_x, u_t, u_xx) = taylor.pure_derivatives(net, x, [(0, 1), (1, 1), (0, 2)])
    return u_t + u * u_x - NU * u_xx


initial = dde.icbc.IC(geom, lambda x: -np.sin(np.pi * x[:, 0:1]), lambda x, on: on)
wall = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on: on)


terms = [
    Term("pde", Box(LO, HI), 8192, pde, kind="pde", jet=pde_jet),
    Term("ic", Edge(LO, HI, axis=1, value=0.0), 2048, initial),
    Term("left", Edge(LO, HI, axis=0, value=-1.0), 1024, wall),
    Term("right", Edge(LO, HI, axis=0, value=1.0), 1024, wall),
]

CASE = Case(
    name="burgers1d",
    title="PINNacle Burgers 1d-C: viscous Burgers, sine initial state",
    inputs=("x", "t"),
    fields=("u",),
    terms=terms,
    exact=None,
    reference=ShippedTable(("pinnacle", "burgers1d.dat.gz"), 2, 1, time_stacked=True),
    grid=Grid(LO, HI, 101),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
