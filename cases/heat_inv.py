"""Inverse heat problem, PINNacle's "HInv" (HeatInv): find the conductivity a(x, y).

u_t - div(a grad u) - f = 0   on (-1, 1)^2 x (0, 1), with u and a the network's
                              two outputs
f = e^-t [(4 pi^2 - 1) sin(pi x) sin(pi y)
          + pi^2 (2 sin^2(pi x) sin^2(pi y) - cos^2(pi x) sin^2(pi y)
                  - sin^2(pi x) cos^2(pi y))]
u = u_ref + noise             at PINNacle's 2500 points (x, y, t) (observations,
                              reference/pinnacle/heatinv_points.dat.gz)
a = a_ref                     on the spatial boundary, all t
u_ref = e^-t sin(pi x) sin(pi y),   a_ref = 2 + sin(pi x) sin(pi y)

No initial condition: u is known only through the observations. The noise is
N(0, 0.1^2), drawn once from np.random.default_rng(NOISE_SEED) in the file's row
order. PINNacle's point counts with mul=4: 32768 PDE points, 8192 on the spatial
boundary x time (spread over the 4 sides by length); the observations are fixed.
Scored on both fields, also pooled (PINNacle's L2RE: ``joint``).
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
from deepxde_lnn.problems.reference_data import Observations, ShippedTable
from deepxde_lnn.problems.sampling import Box, Points, box_boundary

NOISE_SEED = 2306  # the noise on the observations
NOISE_STD = 0.1
LO, HI = (-1.0, -1.0, 0.0), (1.0, 1.0, 1.0)  # (x, y, t)
geom = dde.geometry.GeometryXTime(
    dde.geometry.Rectangle(LO[:2], HI[:2]), dde.geometry.TimeDomain(0, 1)
)


def u_ref(x):
    return np.exp(-x[:, 2:3]) * np.sin(np.pi * x[:, 0:1]) * np.sin(np.pi * x[:, 1:2])


def a_ref(x):
    return 2 + np.sin(np.pi * x[:, 0:1]) * np.sin(np.pi * x[:, 1:2])


def source(x):
    # f = u_ref_t - div(a_ref grad u_ref), on tensors
    sx, cx = torch.sin(np.pi * x[:, 0:1]), torch.cos(np.pi * x[:, 0:1])
    sy, cy = torch.sin(np.pi * x[:, 1:2]), torch.cos(np.pi * x[:, 1:2])
    return torch.exp(-x[:, 2:3]) * (
        (4 * np.pi**2 - 1) * sx * sy
        + np.pi**2 * (2 * sx**2 * sy**2 - cx**2 * sy**2 - sx**2 * cy**2)
    )


def pde(x, ua):
    a = ua[:, 1:2]  # u is component 0 of ua
    u_x = dde.grad.jacobian(ua, x, i=0, j=0)
    u_y = dde.grad.jacobian(ua, x, i=0, j=1)
    u_t = dde.grad.jacobian(ua, x, i=0, j=2)
    div = dde.grad.jacobian(a * u_x, x, i=0, j=0) + dde.grad.jacobian(
        a * u_y, x, i=0, j=1
    )
    return u_t - div - source(x)


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives: div(a grad u) = a Lap u +
    # grad a . grad u, every partial of (u, a) from one pass
    ua, (d_x, d_y, d_t, d_xx, d_yy) = taylor.pure_derivatives(
        net, x, [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2)]
    )
    a = ua[:, 1:2]
    grads = d_x[:, 1:2] * d_x[:, 0:1] + d_y[:, 1:2] * d_y[:, 0:1]
    div = a * (d_xx[:, 0:1] + d_yy[:, 0:1]) + grads
    return d_t[:, 0:1] - div - source(x)


def exact(x):
    return np.hstack([u_ref(x), a_ref(x)])


# observations: u at PINNacle's 2500 points, plus noise drawn once
OBS_X = ShippedTable(("pinnacle", "heatinv_points.dat.gz"), 3, 0)()[0]
OBS_U = u_ref(OBS_X) + np.random.default_rng(NOISE_SEED).normal(
    0.0, NOISE_STD, (len(OBS_X), 1)
)
observed = Observations(OBS_X, OBS_U)  # each observation point's value


data = dde.icbc.DirichletBC(geom, observed, lambda x, on: on, component=0)
a_wall = dde.icbc.DirichletBC(geom, a_ref, lambda x, on: on, component=1)
sides = box_boundary(LO, HI, axes=(0, 1))  # each face in proportion to its measure

terms = [
    Term("pde", Box(LO, HI), 32768, pde, kind="pde", jet=pde_jet),
    Term("data", Points(tuple(map(tuple, OBS_X))), len(OBS_X), data, fixed=True),
    Term("bc_a", sides, 8192, a_wall),
]

CASE = Case(
    name="heat_inv",
    title="PINNacle HInv: inverse heat, conductivity from noisy data, analytic",
    inputs=("x", "y", "t"),
    fields=("u", "a"),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 37),
    extra_metrics=joint_metrics,
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
