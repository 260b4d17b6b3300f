"""Flow over a backward-facing step, PINNacle's "NS 2d-CG" (NS2D_BackStep).

Steady incompressible Navier-Stokes, nu = 1/100, on the L-shaped channel
Omega = (0, 4) x (0, 2) minus the step [0, 2] x [1, 2]:
u u_x + v u_y + p_x - nu (u_xx + u_yy) = 0      (momentum x)
u v_x + v v_y + p_y - nu (v_xx + v_yy) = 0      (momentum y)
u_x + v_y = 0                                   (continuity)
u(0, y) = 4 y (1 - y),  v(0, y) = 0             (inlet, 0 < y < 1)
p(4, y) = 0                                     (outlet)
u = v = 0 on the other walls                    (no slip: bottom, top, the step)
reference: PINNacle's COMSOL solution on 12910 nodes, no obstacles
(reference/pinnacle/ns_0_obstacle.dat.gz, MIT licence beside it)
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.cases._navier_stokes import steady, steady_jet
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.metrics import joint_metrics
from deepxde_lnn.problems.reference_data import ShippedTable
from deepxde_lnn.problems.sampling import Edge, Inside, Union

NU = 1 / 100
LO, HI = (0.0, 0.0), (4.0, 2.0)
STEP = (2.0, 1.0)  # the step's corner: solid where x < 2 and y > 1
geom = dde.geometry.csg.CSGDifference(
    dde.geometry.Rectangle(LO, HI),
    dde.geometry.Rectangle((LO[0] - 1e-5, STEP[1]), (STEP[0], HI[1] + 1e-5)),
)


def in_channel(x):
    return (x[:, 0] >= STEP[0]) | (x[:, 1] <= STEP[1])


pde = steady(NU)  # cases/_navier_stokes.py
pde_jet = steady_jet(NU)


# Both velocity components on the same points, one loss term per wall group
# (PINNacle's separate u and v conditions share their points too).
def inflow(x, y):
    s = x[:, 1:2]
    return [y[:, 0:1] - 4 * s * (1 - s), y[:, 1:2]]


def no_slip(x, y):
    return [y[:, 0:1], y[:, 1:2]]


outlet = dde.icbc.DirichletBC(
    geom, lambda x: 0, lambda x, on: on and np.isclose(x[0], HI[0]), component=2
)

# The no-slip walls: bottom (length 4), top (2), the step's top (2) and face (1)
walls = Union(
    (
        Edge(LO, HI, axis=1, value=LO[1]),
        Edge((STEP[0], LO[1]), HI, axis=1, value=HI[1]),
        Edge(LO, (STEP[0], HI[1]), axis=1, value=STEP[1]),
        Edge((LO[0], STEP[1]), HI, axis=0, value=STEP[0]),
    ),
    (4.0, 2.0, 2.0, 1.0),
)

# PINNacle's 2048 boundary points by length (12 in all): inlet 1, outlet 2, walls 9
terms = [
    Term("pde", Inside(LO, HI, in_channel), 8192, pde, kind="pde", jet=pde_jet),
    Term(
        "inlet",
        Edge(LO, (HI[0], STEP[1]), axis=0, value=LO[0]),
        171,
        inflow,
        kind="value",
    ),
    Term("outlet", Edge(LO, HI, axis=0, value=HI[0]), 341, outlet),
    Term("walls", walls, 1536, no_slip, kind="value"),
]

CASE = Case(
    name="ns2d_back_step",
    title="PINNacle NS 2d-CG: backward-facing step, Re 100",
    inputs=("x", "y"),
    fields=("u", "v", "p"),
    terms=terms,
    exact=None,
    reference=ShippedTable(("pinnacle", "ns_0_obstacle.dat.gz"), 2, 3),
    grid=Grid(LO, HI, 101, mask=in_channel),
    extra_metrics=joint_metrics,
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
