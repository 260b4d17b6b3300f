"""Multiscale heat equation in 2-D, PINNacle's "Heat 2d-MS" (Heat2D_Multiscale).

u_t - c_x u_xx - c_y u_yy = 0   on (x, y) in (0, 1)^2, t in (0, 5),
                                c_x = 1 / (500 pi)^2,  c_y = 1 / pi^2
u(x, y, 0) = sin(20 pi x) sin(pi y)       (initial condition)
u = 0 on the four sides x = 0, 1 and y = 0, 1   (Dirichlet)
exact: u = sin(20 pi x) sin(pi y) exp(-lam t),
       lam = c_x (20 pi)^2 + c_y pi^2 = 1 + 400 / 500^2 = 1.0016

Ten periods in x against half a period in y: the multiscale part. PINNacle's
point counts with its factor 4: 32768 in the domain, 8192 at t = 0 and 8192 on
the sides (one term, the four faces drawn in proportion to their areas, all
equal). Scored on a 37^3 grid (50,653 points; PINNacle: 20,000).
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge, box_boundary

C_X, C_Y = 1 / (500 * np.pi) ** 2, 1 / np.pi**2
K_X, K_Y = 20 * np.pi, np.pi  # wave numbers of the initial state
DECAY = C_X * K_X**2 + C_Y * K_Y**2  # 1.0016
LO, HI = (0.0, 0.0, 0.0), (1.0, 1.0, 5.0)  # (x, y, t)
geom = dde.geometry.GeometryXTime(
    dde.geometry.Rectangle(LO[:2], HI[:2]), dde.geometry.TimeDomain(LO[2], HI[2])
)


def pde(x, u):
    u_t = dde.grad.jacobian(u, x, i=0, j=2)
    u_xx = dde.grad.hessian(u, x, i=0, j=0)
    u_yy = dde.grad.hessian(u, x, i=1, j=1)
    return u_t - C_X * u_xx - C_Y * u_yy


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives (the operator's sum carried
    # as one collapsed coefficient)
    terms = [(1.0, 2, 1), (-C_X, 0, 2), (-C_Y, 1, 2)]
    return taylor.pure_derivative_combination(net, x, terms)[1]


def exact(x):
    space = np.sin(K_X * x[:, 0:1]) * np.sin(K_Y * x[:, 1:2])
    return space * np.exp(-DECAY * x[:, 2:3])


initial = dde.icbc.IC(geom, exact, lambda x, on: on)
wall = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on: on)

sides = box_boundary(LO, HI, axes=(0, 1))  # each face in proportion to its measure

terms = [
    Term("pde", Box(LO, HI), 32768, pde, kind="pde", jet=pde_jet),
    Term("ic", Edge(LO, HI, axis=2, value=0.0), 8192, initial),
    Term("wall", sides, 8192, wall),
]

CASE = Case(
    name="heat2d_multiscale",
    title="PINNacle Heat 2d-MS: multiscale heat, analytic",
    inputs=("x", "y", "t"),
    fields=("u",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 37),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
