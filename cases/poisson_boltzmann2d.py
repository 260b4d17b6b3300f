"""A Poisson-Boltzmann (Helmholtz-type) equation on a square with four holes of
different sizes, PINNacle's "Poisson 2d-CG".

-(u_xx + u_yy) + k^2 u = f     on Omega = [-1, 1]^2 minus four disks
f = A (mu1^2 + x^2 + mu2^2 + y^2) sin(mu1 pi x) sin(mu2 pi y),
k = 8, A = 10, (mu1, mu2) = (1, 4)
disks (centre; radius): (0.5, 0.5; 0.2), (0.4, -0.4; 0.4), (-0.2, -0.7; 0.1),
(-0.6, 0.5; 0.3), disjoint and inside the square
u = 0.2             on the outer square (Dirichlet)
u = 1               on the four circles (Dirichlet)
reference: PINNacle's COMSOL solution on 3236 mesh nodes
(reference/pinnacle/poisson_boltzmann2d.dat.gz, MIT licence beside it)

Points as PINNacle's defaults: 8192 in the domain and 2048 on the boundary, split
between the square and the circles by their lengths (8 : 2 pi).
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
from deepxde_lnn.problems.sampling import Circle, Inside, Union, box_boundary

K = 8.0
A = 10.0
MU1, MU2 = 1.0, 4.0
LO, HI = (-1.0, -1.0), (1.0, 1.0)
HOLES = (((0.5, 0.5), 0.2), ((0.4, -0.4), 0.4), ((-0.2, -0.7), 0.1), ((-0.6, 0.5), 0.3))

geom = dde.geometry.Rectangle(LO, HI)
for c, r in HOLES:
    geom = geom - dde.geometry.Disk(c, r)


def source(x):
    x, y = x[:, 0:1], x[:, 1:2]
    return (
        A
        * (MU1**2 + x**2 + MU2**2 + y**2)
        * torch.sin(MU1 * torch.pi * x)
        * torch.sin(MU2 * torch.pi * y)
    )


def pde(x, u):
    lap = dde.grad.hessian(u, x, i=0, j=0) + dde.grad.hessian(u, x, i=1, j=1)
    return -lap + K**2 * u - source(x)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives
    u, lap = taylor.laplacian(net, x)
    return -lap + K**2 * u - source(x)


square = dde.icbc.DirichletBC(geom, lambda x: 0.2, lambda x, on: on)
circles = dde.icbc.DirichletBC(geom, lambda x: 1, lambda x, on: on)

# the circles uniform in angle (weights: their radii)
rings = tuple(Circle(r, c) for c, r in HOLES)
radii = tuple(r for _, r in HOLES)

# 2048 boundary points split by length: 8 / (8 + 2 pi) -> 1147 square, 901 circles
N_BOUNDARY = 2048
SQUARE_LENGTH = 2 * ((HI[0] - LO[0]) + (HI[1] - LO[1]))
CIRCLES_LENGTH = 2 * np.pi * sum(radii)
N_SQUARE = round(N_BOUNDARY * SQUARE_LENGTH / (SQUARE_LENGTH + CIRCLES_LENGTH))

terms = [
    Term("pde", Inside(LO, HI, geom.inside), 8192, pde, kind="pde", jet=pde_jet),
    Term("square", box_boundary(LO, HI), N_SQUARE, square),
    Term("circles", Union(rings, radii), N_BOUNDARY - N_SQUARE, circles),
]

CASE = Case(
    name="poisson_boltzmann2d",
    title="PINNacle Poisson 2d-CG: Poisson-Boltzmann on a square with four holes",
    inputs=("x", "y"),
    fields=("u",),
    terms=terms,
    exact=None,
    reference=ShippedTable(("pinnacle", "poisson_boltzmann2d.dat.gz"), 2, 1),
    grid=Grid(LO, HI, 101, mask=geom.inside),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
