"""Laplace equation with mixed boundary conditions, paper Table 3.

phi_xx + phi_yy = 0   on (0, 1)^2
phi(x, 0) = 0,  phi(x, 1) = 1           (Dirichlet, bottom/top)
phi_x(0, y) = 0,  phi_x(1, y) = 0       (Neumann, left/right)
exact: phi = y
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge

LO, HI = (0.0, 0.0), (1.0, 1.0)
geom = dde.geometry.Rectangle(LO, HI)


def pde(x, phi):
    return dde.grad.hessian(phi, x, i=0, j=0) + dde.grad.hessian(phi, x, i=1, j=1)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives (one batched jet per axis)
    return taylor.laplacian(net, x)[1]


def exact(x):
    return x[:, 1:2].copy()


def on_edge(axis, value):
    return lambda x, on: on and np.isclose(x[axis], value)


bottom = dde.icbc.DirichletBC(geom, lambda x: 0, on_edge(1, 0))
top = dde.icbc.DirichletBC(geom, lambda x: 1, on_edge(1, 1))


# The plain x-derivative (target 0, so the normal's sign is irrelevant). Not
# NeumannBC: Rectangle.boundary_normal tests edges with np.isclose (rtol 1e-5), so
# edge points with y > 1 - 1e-5 would count as corners and get a diagonal normal.
def phi_x(x, phi, _):
    return dde.grad.jacobian(phi, x, i=0, j=0)


def phi_x_jet(x, net):
    return taylor.pure_derivatives(net, x, [(0, 1)])[1][0]


left = dde.icbc.OperatorBC(geom, phi_x, on_edge(0, 0))
right = dde.icbc.OperatorBC(geom, phi_x, on_edge(0, 1))

terms = [
    Term("pde", Box(LO, HI), 1000, pde, kind="pde", jet=pde_jet),
    Term("bottom", Edge(LO, HI, axis=1, value=0.0), 1000, bottom),
    Term("top", Edge(LO, HI, axis=1, value=1.0), 1000, top),
    Term("left", Edge(LO, HI, axis=0, value=0.0), 1000, left, jet=phi_x_jet),
    Term("right", Edge(LO, HI, axis=0, value=1.0), 1000, right, jet=phi_x_jet),
]

CASE = Case(
    name="laplace",
    title="Laplace with mixed Dirichlet/Neumann BCs",
    inputs=("x", "y"),
    fields=("phi",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 200),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
