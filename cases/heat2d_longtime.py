"""Nonlinear heat equation over a long time in 2-D, PINNacle's "Heat 2d-LT"
(Heat2D_LongTime).

u_t - 0.001 (u_xx + u_yy) = 5 sin(u^2) (1 + 2 sin(pi t / 4)) sin(4 pi x) sin(2 pi y)
                          on (x, y) in (0, 1)^2, t in (0, 100)
u(x, y, 0) = sin(4 pi x) sin(3 pi y)      (initial condition)
u = 0 on the four sides x = 0, 1 and y = 0, 1   (Dirichlet)
reference: PINNacle's COMSOL solution on 192 nodes x 501 times (t = 0, 0.2, ...,
100), 96,192 points (reference/pinnacle/heat_longtime.dat.gz, MIT licence beside
it)

PINNacle's point counts with its factor 4: 32768 in the domain, 8192 at t = 0 and
8192 on the sides (one term, the four faces drawn in proportion to their areas,
all equal). Inputs are fed unscaled (t up to 100), as in PINNacle.
"""

import numpy as np
import torch

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.reference_data import ShippedTable
from deepxde_lnn.problems.sampling import Box, Edge, box_boundary

DIFFUSION = 0.001
K, M1, M2 = 1.0, 4, 2  # source: 5 sin(K u^2) ... sin(M1 pi x) sin(M2 pi y)
LO, HI = (0.0, 0.0, 0.0), (1.0, 1.0, 100.0)  # (x, y, t)
geom = dde.geometry.GeometryXTime(
    dde.geometry.Rectangle(LO[:2], HI[:2]), dde.geometry.TimeDomain(LO[2], HI[2])
)


def source(x, u):
    pulse = 1 + 2 * torch.sin(np.pi / 4 * x[:, 2:3])
    shape = torch.sin(M1 * np.pi * x[:, 0:1]) * torch.sin(M2 * np.pi * x[:, 1:2])
    return 5 * torch.sin(K * u**2) * pulse * shape


def pde(x, u):
    u_t = dde.grad.jacobian(u, x, i=0, j=2)
    u_xx = dde.grad.hessian(u, x, i=0, j=0)
    u_yy = dde.grad.hessian(u, x, i=1, j=1)
    return u_t - DIFFUSION * (u_xx + u_yy) - source(x, u)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives (one collapsed coefficient)
    terms = [(1.0, 2, 1), (-DIFFUSION, 0, 2), (-DIFFUSION, 1, 2)]
    u, op = taylor.pure_derivative_combination(net, x, terms)
    return op - source(x, u)


def initial_state(x):
    return np.sin(4 * np.pi * x[:, 0:1]) * np.sin(3 * np.pi * x[:, 1:2])


initial = dde.icbc.IC(geom, initial_state, lambda x, on: on)
wall = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on: on)

sides = box_boundary(LO, HI, axes=(0, 1))  # each face in proportion to its measure

terms = [
    Term("pde", Box(LO, HI), 32768, pde, kind="pde", jet=pde_jet),
    Term("ic", Edge(LO, HI, axis=2, value=0.0), 8192, initial),
    Term("wall", sides, 8192, wall),
]

CASE = Case(
    name="heat2d_longtime",
    title="PINNacle Heat 2d-LT: nonlinear heat over a long time, COMSOL reference",
    inputs=("x", "y", "t"),
    fields=("u",),
    terms=terms,
    exact=None,
    reference=ShippedTable(
        ("pinnacle", "heat_longtime.dat.gz"), 3, 1, time_stacked=True
    ),
    grid=Grid(LO, HI, 37),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
