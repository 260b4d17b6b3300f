"""Poisson equation in 5-D, PINNacle's "PNd" (PoissonND, dim = 5).

u_x1x1 + ... + u_x5x5 + (pi^2 / 4) sum_i sin(pi x_i / 2) = 0   on (0, 1)^5
u = exact                                                     on the 10 faces
exact: u = sum_i sin(pi x_i / 2)

PINNacle's point counts with mul=4: 32768 PDE points, 8192 boundary points (here
spread over the 10 faces in proportion to their area, i.e. evenly). Scored on the
tensor grid of 8 points per axis, faces included (8^5 = 32768 points); PINNacle
scores on Hypercube.uniform_points(20000, boundary=False), the 8^5 interior grid
k/9, k = 1..8.
"""

import numpy as np
import torch

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, box_boundary

DIM = 5
LO, HI = (0.0,) * DIM, (1.0,) * DIM
geom = dde.geometry.Hypercube(LO, HI)


def source(x):
    return np.pi**2 / 4 * torch.sin(np.pi / 2 * x).sum(dim=1, keepdim=True)


def pde(x, u):
    lap = sum(dde.grad.hessian(u, x, i=i, j=i) for i in range(DIM))
    return lap + source(x)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives
    return taylor.laplacian(net, x)[1] + source(x)


def exact(x):
    return np.sin(np.pi / 2 * x).sum(axis=1, keepdims=True)


boundary = dde.icbc.DirichletBC(geom, exact, lambda x, on: on)
faces = box_boundary(LO, HI)  # each face in proportion to its measure

terms = [
    Term("pde", Box(LO, HI), 32768, pde, kind="pde", jet=pde_jet),
    Term("boundary", faces, 8192, boundary),
]

CASE = Case(
    name="poisson_nd",
    title="PINNacle PNd: Poisson in 5-D, analytic",
    inputs=tuple(f"x{i + 1}" for i in range(DIM)),
    fields=("u",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 8),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
