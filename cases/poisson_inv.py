"""Inverse Poisson problem, PINNacle's "PInv" (PoissonInv): find the coefficient a.

div(a grad u) + f = 0   on (0, 1)^2, with u and a the network's two outputs
u = u_ref + noise       at the 50 x 50 grid linspace(0, 1, 50)^2 (observations)
a = a_ref               on the boundary
u_ref = sin(pi x) sin(pi y),   a_ref = 1 / (1 + x^2 + y^2 + (x - 1)^2 + (y - 1)^2)

f = -div(a_ref grad u_ref)
  = 2 pi^2 a_ref u_ref
    + 2 pi a_ref^2 [(2x - 1) cos(pi x) sin(pi y) + (2y - 1) sin(pi x) cos(pi y)],
derived here (checked with sympy). PINNacle's code writes (2x + 1) and (2y + 1):
its f exceeds this one by 4 pi a_ref^2 sin(pi (x + y)), so its u_ref, a_ref do not
solve its equation; we use the consistent f.

The noise is N(0, 0.1^2), drawn once from np.random.default_rng(NOISE_SEED) in
the grid's order (x fastest). PINNacle's point counts (default): 8192 PDE points,
2048 on the boundary (spread over the 4 edges by length); the 2500 observations
are fixed. Scored on both fields, also pooled (PINNacle's L2RE: ``joint``).
"""

import numpy as np
import torch

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.metrics import joint_metrics
from deepxde_lnn.problems.reference_data import Observations
from deepxde_lnn.problems.sampling import Box, Points, box_boundary

NOISE_SEED = 2306  # the noise on the observations
NOISE_STD = 0.1
LO, HI = (0.0, 0.0), (1.0, 1.0)
geom = dde.geometry.Rectangle(LO, HI)


def u_ref(x):
    return np.sin(np.pi * x[:, 0:1]) * np.sin(np.pi * x[:, 1:2])


def a_ref(x):
    x, y = x[:, 0:1], x[:, 1:2]
    return 1 / (1 + x**2 + y**2 + (x - 1) ** 2 + (y - 1) ** 2)


def source(x):
    # f = -div(a_ref grad u_ref), on tensors
    x, y = x[:, 0:1], x[:, 1:2]
    a = 1 / (1 + x**2 + y**2 + (x - 1) ** 2 + (y - 1) ** 2)
    sx, cx = torch.sin(np.pi * x), torch.cos(np.pi * x)
    sy, cy = torch.sin(np.pi * y), torch.cos(np.pi * y)
    return 2 * np.pi**2 * a * sx * sy + 2 * np.pi * a**2 * (
        (2 * x - 1) * cx * sy + (2 * y - 1) * sx * cy
    )


def pde(x, ua):
    a = ua[:, 1:2]  # u is component 0 of ua
    u_x = dde.grad.jacobian(ua, x, i=0, j=0)
    u_y = dde.grad.jacobian(ua, x, i=0, j=1)
    div = dde.grad.jacobian(a * u_x, x, i=0, j=0) + dde.grad.jacobian(
        a * u_y, x, i=0, j=1
    )
    return div + source(x)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives: div(a grad u) = a Lap u +
    # grad a . grad u, every partial of (u, a) from one pass
    ua, (d_x, d_y, d_xx, d_yy) = taylor.pure_derivatives(
        net, x, [(0, 1), (1, 1), (0, 2), (1, 2)]
    )
    a = ua[:, 1:2]
    grads = d_x[:, 1:2] * d_x[:, 0:1] + d_y[:, 1:2] * d_y[:, 0:1]
    return a * (d_xx[:, 0:1] + d_yy[:, 0:1]) + grads + source(x)


def exact(x):
    return np.hstack([u_ref(x), a_ref(x)])


# observations: u on the 50 x 50 grid, plus noise drawn once
_s = np.linspace(0.0, 1.0, 50)
OBS_X = np.column_stack([m.ravel() for m in np.meshgrid(_s, _s)])
OBS_U = u_ref(OBS_X) + np.random.default_rng(NOISE_SEED).normal(
    0.0, NOISE_STD, (len(OBS_X), 1)
)
observed = Observations(OBS_X, OBS_U)  # each observation point's value


data = dde.icbc.DirichletBC(geom, observed, lambda x, on: on, component=0)
a_wall = dde.icbc.DirichletBC(geom, a_ref, lambda x, on: on, component=1)
edges = box_boundary(LO, HI)  # each face in proportion to its measure

terms = [
    Term("pde", Box(LO, HI), 8192, pde, kind="pde", jet=pde_jet),
    Term("data", Points(tuple(map(tuple, OBS_X))), len(OBS_X), data, fixed=True),
    Term("bc_a", edges, 2048, a_wall),
]

CASE = Case(
    name="poisson_inv",
    title="PINNacle PInv: inverse Poisson, coefficient from noisy data, analytic",
    inputs=("x", "y"),
    fields=("u", "a"),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 101),
    extra_metrics=joint_metrics,
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
