"""Wave equation in 1-D, PINNacle's "Wave 1d-C" (Wave1D).

u_tt - C^2 u_xx = 0   on x in (0, 1), t in (0, 1),  C = 2
u_t(x, 0) = 0                              (initial velocity)
u(x, 0) = exact(x, 0)                      (initial state)
u(0, t) = exact(0, t) = 0, u(1, t) = exact(1, t) = 0   (Dirichlet)
exact: u = sin(pi x) cos(2 pi t) + 0.5 sin(4 pi x) cos(8 pi t)

As in PINNacle, (x, t) is a stationary rectangle and the conditions at t = 0 are
boundary conditions of its edges. PINNacle draws its 2048 boundary points on the
perimeter, 512 per edge: 512 for each t = 0 condition, 1024 for the two sides
(one term); the 512 on t = 1, where no condition holds, go to no term here.
Scored on a 101^2 grid (10,201 points; PINNacle: 2500).
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge, box_boundary

C = 2.0
A = 4  # the second mode's wave number
LO, HI = (0.0, 0.0), (1.0, 1.0)  # (x, t)
geom = dde.geometry.Rectangle(LO, HI)


def pde(x, u):
    u_xx = dde.grad.hessian(u, x, i=0, j=0)
    u_tt = dde.grad.hessian(u, x, i=1, j=1)
    return u_tt - C**2 * u_xx


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives (one collapsed coefficient)
    return taylor.pure_derivative_combination(net, x, [(1.0, 1, 2), (-(C**2), 0, 2)])[1]


def exact(x):
    x_, t = x[:, 0:1], x[:, 1:2]
    slow = np.sin(np.pi * x_) * np.cos(2 * np.pi * t)
    fast = np.sin(A * np.pi * x_) * np.cos(2 * A * np.pi * t)
    return slow + 0.5 * fast


# PINNacle's NeumannBC on t = 0 (-u_t = 0 with the outward normal) as the plain
# t-derivative: Rectangle.boundary_normal gives edge points within np.isclose of a
# corner a diagonal normal (see cases/laplace.py).
def u_t(x, u, _):
    return dde.grad.jacobian(u, x, i=0, j=1)


def u_t_jet(x, net):
    return taylor.pure_derivatives(net, x, [(1, 1)])[1][0]


initial_velocity = dde.icbc.OperatorBC(geom, u_t, lambda x, on: on)
initial = dde.icbc.DirichletBC(geom, exact, lambda x, on: on)
side = dde.icbc.DirichletBC(geom, exact, lambda x, on: on)

sides = box_boundary(LO, HI, axes=(0,))  # each face in proportion to its measure

terms = [
    Term("pde", Box(LO, HI), 8192, pde, kind="pde", jet=pde_jet),
    Term(
        "ic_t",
        Edge(LO, HI, axis=1, value=0.0),
        512,
        initial_velocity,
        jet=u_t_jet,
    ),
    Term("ic", Edge(LO, HI, axis=1, value=0.0), 512, initial),
    Term("sides", sides, 1024, side),
]

CASE = Case(
    name="wave1d",
    title="PINNacle Wave 1d-C: 1-D wave, two modes, analytic",
    inputs=("x", "t"),
    fields=("u",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 101),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
