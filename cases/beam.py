"""Anisotropic Poisson-beam equation (APBE), paper Table 5.

    u_xx - u_yyyy = (2 - x^2) exp(-y)      on (0, 1)^2
    u_yy(x, 0) = x^2,  u_yy(x, 1) = x^2 / e
    u(x, 0) = x^2,  u(x, 1) = x^2 / e,  u(0, y) = 0,  u(1, y) = exp(-y)
    exact: u = x^2 exp(-y)

Seven terms of 1000 fresh points each; the 4th derivative u_yyyy (hessian of the
hessian) is taken on the 1000 interior points only.
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde
import torch

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge

LO, HI = (0.0, 0.0), (1.0, 1.0)
geom = dde.geometry.Rectangle(LO, HI)


def source(x):
    return (2 - x[:, 0:1] ** 2) * torch.exp(-x[:, 1:2])


def pde(x, u):
    u_xx = dde.grad.hessian(u, x, i=0, j=0)
    u_yy = dde.grad.hessian(u, x, i=1, j=1)
    u_yyyy = dde.grad.hessian(u_yy, x, i=1, j=1)
    return u_xx - u_yyyy - source(x)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives: a 2-jet along x and a 4-jet
    # along y in one batched pass (no hessian of the hessian)
    _, op = taylor.pure_derivative_combination(net, x, [(1.0, 0, 2), (-1.0, 1, 4)])
    return op - source(x)


def u_yy_jet(x, net):
    u_yy = taylor.pure_derivatives(net, x, [(1, 2)])[1][0]
    return u_yy - x[:, 0:1] ** 2 * torch.exp(-x[:, 1:2])


def exact(x):
    return x[:, 0:1] ** 2 * np.exp(-x[:, 1:2])


def u_yy_equals_exact(x, u, _):
    # u*_yy = x^2 exp(-y) = u*
    return dde.grad.hessian(u, x, i=1, j=1) - x[:, 0:1] ** 2 * torch.exp(-x[:, 1:2])


def on_edge(axis, value):
    return lambda x, on: on and np.isclose(x[axis], value)


def edge(axis, value):
    return Edge(LO, HI, axis=axis, value=value)


terms = [
    Term("pde", Box(LO, HI), 1000, pde, kind="pde", jet=pde_jet),
    Term(
        "bottom_uyy",
        edge(1, 0.0),
        1000,
        dde.icbc.OperatorBC(geom, u_yy_equals_exact, on_edge(1, 0)),
        jet=u_yy_jet,
    ),
    Term(
        "top_uyy",
        edge(1, 1.0),
        1000,
        dde.icbc.OperatorBC(geom, u_yy_equals_exact, on_edge(1, 1)),
        jet=u_yy_jet,
    ),
    Term(
        "bottom", edge(1, 0.0), 1000, dde.icbc.DirichletBC(geom, exact, on_edge(1, 0))
    ),
    Term("top", edge(1, 1.0), 1000, dde.icbc.DirichletBC(geom, exact, on_edge(1, 1))),
    Term("left", edge(0, 0.0), 1000, dde.icbc.DirichletBC(geom, exact, on_edge(0, 0))),
    Term("right", edge(0, 1.0), 1000, dde.icbc.DirichletBC(geom, exact, on_edge(0, 1))),
]

CASE = Case(
    name="beam",
    title="Anisotropic Poisson-beam equation (4th order in y)",
    inputs=("x", "y"),
    fields=("u",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 200),
    # the paper evaluated its PINN/RA-PINN/XPINN rows on 150 x 150
    extra_grids={"150x150": 150},
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
