"""Heat equation in the 5-D unit ball, PINNacle's "HNd" (HeatND, dim = 5, T = 1).

u_t = (1/d) Lap u + f,   f = -(1/d) |x|^2 exp(|x|^2 / 2 + t)   in |x| < 1, t in (0, 1)
du/dn = exp(|x|^2 / 2 + t)                                     on |x| = 1 (Neumann)
u(x, 0) = exp(|x|^2 / 2)                                       (initial condition)
exact: u = exp(|x|^2 / 2 + t)                                  (d = 5)

On the sphere du/dn = x . grad u = |x|^2 u = u: the Neumann data is the exact flux.
PINNacle's point counts with mul=4: 32768 PDE points (uniform in ball x time),
8192 on the sphere x time, 8192 at t = 0. Scored on the tensor grid of 6 points per
axis over [-1, 1]^5 x [0, 1] (46656 points) masked to the closed ball: 512 of the
7776 spatial grid points per time, 3072 in all; PINNacle scores on 20000 random
points of ball x time.
"""

import numpy as np
import torch

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Ball, Sphere, WithTime

DIM = 5
LO, HI = (-1.0,) * DIM + (0.0,), (1.0,) * DIM + (1.0,)  # (x1..x5, t)
geom = dde.geometry.GeometryXTime(
    dde.geometry.Hypersphere([0.0] * DIM, 1.0), dde.geometry.TimeDomain(0, 1)
)


def source(x):
    r2 = (x[:, :DIM] ** 2).sum(dim=1, keepdim=True)
    return -r2 / DIM * torch.exp(r2 / 2 + x[:, DIM:])


def pde(x, u):
    lap = sum(dde.grad.hessian(u, x, i=i, j=i) for i in range(DIM))
    u_t = dde.grad.jacobian(u, x, i=0, j=DIM)
    return lap / DIM + source(x) - u_t


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives (one collapsed coefficient)
    terms = [(1.0 / DIM, i, 2) for i in range(DIM)] + [(-1.0, DIM, 1)]
    return taylor.pure_derivative_combination(net, x, terms)[1] + source(x)


def sphere_jet(x, net):
    # du/dn - u* on the sphere, n = (x / |x|, 0): a per-point jet direction
    space = x[:, :DIM]
    n = space / torch.linalg.vector_norm(space, dim=1, keepdim=True)
    n = torch.nn.functional.pad(n, (0, 1))
    _, du_dn = taylor.directional_derivatives(net, x, n, 1)
    r2 = (space**2).sum(dim=1, keepdim=True)
    return du_dn - torch.exp(r2 / 2 + x[:, DIM:])


def exact(x):
    r2 = (x[:, :DIM] ** 2).sum(axis=1, keepdims=True)
    return np.exp(r2 / 2 + x[:, DIM:])


def in_ball(x):
    return (x[:, :DIM] ** 2).sum(axis=1) <= 1 + 1e-9


sphere = dde.icbc.NeumannBC(geom, exact, lambda x, on: on)  # du/dn = u there
initial = dde.icbc.IC(geom, exact, lambda x, on: on)

terms = [
    Term("pde", WithTime(Ball(DIM), 0.0, 1.0), 32768, pde, kind="pde", jet=pde_jet),
    Term("sphere", WithTime(Sphere(DIM), 0.0, 1.0), 8192, sphere, jet=sphere_jet),
    Term("ic", WithTime(Ball(DIM), 0.0, 0.0), 8192, initial),
]

CASE = Case(
    name="heat_nd",
    title="PINNacle HNd: heat in the 5-D unit ball, analytic",
    inputs=tuple(f"x{i + 1}" for i in range(DIM)) + ("t",),
    fields=("u",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 6, mask=in_ball),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
