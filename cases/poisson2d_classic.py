"""Laplace's equation on a square with four holes, PINNacle's "Poisson 2d-C".

u_xx + u_yy = 0     on Omega = [-0.5, 0.5]^2 minus four disks of radius 0.1
                    centred at (+-0.3, +-0.3)
u = 1               on the outer square (Dirichlet)
u = 0               on the four circles (Dirichlet)
reference: PINNacle's COMSOL solution on 1246 mesh nodes
(reference/pinnacle/poisson1_cg_data.dat.gz, MIT licence beside it)

Points as PINNacle's defaults: 8192 in the domain and 2048 on the boundary, split
between the square and the circles by their lengths (4 : 0.8 pi).
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.reference_data import ShippedTable
from deepxde_lnn.problems.sampling import Circle, Inside, Union, box_boundary

LO, HI = (-0.5, -0.5), (0.5, 0.5)
CENTERS = ((0.3, 0.3), (-0.3, 0.3), (0.3, -0.3), (-0.3, -0.3))
RADIUS = 0.1

geom = dde.geometry.Rectangle(LO, HI)
for c in CENTERS:
    geom = geom - dde.geometry.Disk(c, RADIUS)


def pde(x, u):
    return dde.grad.hessian(u, x, i=0, j=0) + dde.grad.hessian(u, x, i=1, j=1)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives
    return taylor.laplacian(net, x)[1]


square = dde.icbc.DirichletBC(geom, lambda x: 1, lambda x, on: on)
circles = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on: on)

rings = tuple(Circle(RADIUS, c) for c in CENTERS)

# 2048 boundary points split by length: 4 / (4 + 0.8 pi) -> 1258 square, 790 circles
N_BOUNDARY = 2048
SQUARE_LENGTH = 2 * ((HI[0] - LO[0]) + (HI[1] - LO[1]))
CIRCLES_LENGTH = 2 * np.pi * RADIUS * len(CENTERS)
N_SQUARE = round(N_BOUNDARY * SQUARE_LENGTH / (SQUARE_LENGTH + CIRCLES_LENGTH))

terms = [
    Term("pde", Inside(LO, HI, geom.inside), 8192, pde, kind="pde", jet=pde_jet),
    Term("square", box_boundary(LO, HI), N_SQUARE, square),
    Term("circles", Union(rings, (1.0,) * len(rings)), N_BOUNDARY - N_SQUARE, circles),
]

CASE = Case(
    name="poisson2d_classic",
    title="PINNacle Poisson 2d-C: Laplace on a square with four holes",
    inputs=("x", "y"),
    fields=("u",),
    terms=terms,
    exact=None,
    reference=ShippedTable(("pinnacle", "poisson1_cg_data.dat.gz"), 2, 1),
    grid=Grid(LO, HI, 101, mask=geom.inside),
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
