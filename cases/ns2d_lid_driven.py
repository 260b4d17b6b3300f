"""Lid-driven cavity, PINNacle's "NS 2d-C" (NS2D_LidDriven).

Steady incompressible Navier-Stokes, nu = 1/100 (Re 100), on (0, 1)^2:
u u_x + v u_y + p_x - nu (u_xx + u_yy) = 0      (momentum x)
u v_x + v v_y + p_y - nu (v_xx + v_yy) = 0      (momentum y)
u_x + v_y = 0                                   (continuity)
u(x, 1) = a x (1 - x),  v(x, 1) = 0,  a = 4     (moving lid)
u = v = 0 on the other three walls              (no slip)
p(0, 0) = 0                                     (pressure anchor)
reference: PINNacle's COMSOL solution on 101 x 101 nodes
(reference/pinnacle/lid_driven_a4.dat.gz, MIT licence beside it)
"""

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.cases._navier_stokes import steady, steady_jet
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.metrics import joint_metrics
from deepxde_lnn.problems.reference_data import ShippedTable
from deepxde_lnn.problems.sampling import Box, Edge, Points, Union

NU = 1 / 100
A = 4.0  # lid speed profile a x (1 - x)
LO, HI = (0.0, 0.0), (1.0, 1.0)
geom = dde.geometry.Rectangle(LO, HI)


pde = steady(NU)  # cases/_navier_stokes.py
pde_jet = steady_jet(NU)


# Both velocity components on the same points, one loss term per wall group
# (PINNacle's separate u and v conditions share their points too).
def lid(x, y):
    s = x[:, 0:1]
    return [y[:, 0:1] - A * s * (1 - s), y[:, 1:2]]


def no_slip(x, y):
    return [y[:, 0:1], y[:, 1:2]]


anchor = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on: on, component=2)

# PINNacle's 2048 boundary points by length: lid 1 of 4, the other walls 3 of 4
walls = Union(
    (
        Edge(LO, HI, axis=0, value=0.0),
        Edge(LO, HI, axis=1, value=0.0),
        Edge(LO, HI, axis=0, value=1.0),
    ),
    (1.0, 1.0, 1.0),
)

terms = [
    Term("pde", Box(LO, HI), 8192, pde, kind="pde", jet=pde_jet),
    Term("lid", Edge(LO, HI, axis=1, value=1.0), 512, lid, kind="value"),
    Term("walls", walls, 1536, no_slip, kind="value"),
    Term("anchor", Points(((0.0, 0.0),)), 1, anchor),
]

CASE = Case(
    name="ns2d_lid_driven",
    title="PINNacle NS 2d-C: lid-driven cavity, Re 100",
    inputs=("x", "y"),
    fields=("u", "v", "p"),
    terms=terms,
    exact=None,
    reference=ShippedTable(("pinnacle", "lid_driven_a4.dat.gz"), 2, 3),
    grid=Grid(LO, HI, 101),
    extra_metrics=joint_metrics,
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
