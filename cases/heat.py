"""Steady heating of a circular silicon plate with a convective (Robin) boundary,
paper Table 4, nondimensionalised on the unit disk.

Physical: -k Lap T = Q in r < R,  -k dT/dn = h (T - T_inf) on r = R
(R = 0.15 m, k = 159 W/(m K), h = 50 W/(m^2 K), Q = 2000 W/m^3, T_inf = 800 K).
With x = X/R and theta = (T - T_inf) / 1 K:

    theta_xx + theta_yy + Q_nd = 0        in the unit disk,  Q_nd = Q R^2 / k
    -d theta/dn - h_nd theta = 0          on rho = 1,        h_nd = h R / k
    exact: theta = Q_nd/4 (1 - rho^2) + Q_nd / (2 h_nd)      (3 K + a 0.07 K paraboloid)

DeepXDE's RobinBC imposes d theta/dn = func(x, theta) with the outward normal, so
func = -h_nd theta (same mean square as the paper's residual). In the study
(``deepxde_lnn/study/shipped.py``) the LNN uses the "reduced" layout (blocks
replace the tanh of a 3-hidden-layer MLP, 21,249 parameters); the PINN is the
3-hidden-layer MLP (8,577).

Metrics (docs/heat.md): primary on theta in float64; also absolute T = 800 + theta in
float64 and in the paper's all-float32 mode (comparable with Table 4, whose numbers
sit at float32 resolution of ~803 K), and a cross-check against the FEM reference.
"""

import warnings

import numpy as np
import torch

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn import fem
from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.metrics import field_metrics
from deepxde_lnn.problems.sampling import Circle, Disk

# the physical constants live in fem.HEAT (shared with the FEM reference)
Q_ND = fem.HEAT.q_nd  # Q R^2 / (k T_ref) = 0.2830188679245283
H_ND = fem.HEAT.h_nd  # h R / k = 0.04716981132075472
T_INF = fem.HEAT.T_inf  # K

geom = dde.geometry.Disk([0.0, 0.0], 1.0)


def pde(x, theta):
    lap = dde.grad.hessian(theta, x, i=0, j=0) + dde.grad.hessian(theta, x, i=1, j=1)
    return lap + Q_ND


def pde_jet(x, net):
    # the same residual with Taylor-mode derivatives
    return taylor.laplacian(net, x)[1] + Q_ND


robin = dde.icbc.RobinBC(geom, lambda x, theta: -H_ND * theta, lambda _, on: on)


def robin_jet(x, net):
    # d theta/dn + h_nd theta with n = x / |x|, a per-point jet direction
    n = x / torch.linalg.vector_norm(x, dim=1, keepdim=True)
    theta, dtheta_dn = taylor.directional_derivatives(net, x, n, 1)
    return dtheta_dn + H_ND * theta


def exact(x):
    rho2 = np.sum(x**2, axis=1, keepdims=True)
    return Q_ND / 4 * (1 - rho2) + Q_ND / (2 * H_ND)


def in_disk(p):
    # float64 with a tolerance keeps the 4 on-circle grid points (125,629 points)
    return np.sum(p**2, axis=1) <= 1 + 1e-12


def fem_theta_on(x):
    """The checksum-verified FEM theta at this case's grid points ``x`` (the
    reference stores theta at ``fem.disk_grid()``, the same points in the same
    order)."""
    ref = fem.load_reference()
    if not np.array_equal(ref["points_nd"], x):
        raise fem.InvalidReferenceError(
            "stale FEM reference: its points are not this grid's points"
        )
    return np.asarray(ref["theta"], dtype=np.float64).reshape(-1, 1)


def heat_metrics(x, pred, exact_theta):
    """theta offset statistics, absolute-T metrics (float64 and paper float32) and
    the FEM cross-check."""
    e = pred[:, 0] - exact_theta[:, 0]
    out = {
        "theta_mean_offset": float(np.mean(e)),
        "theta_offset_removed_RMSE": float(np.std(e)),
        "T_float64": field_metrics(T_INF + pred, T_INF + exact_theta),
    }
    # paper-compatible: float32 grid, theta* and T in float32, float32 reductions
    x32 = x.astype(np.float32)
    theta32 = exact(x32.astype(np.float64)).astype(np.float32)
    t_exact32 = np.float32(T_INF) + theta32
    t_pred32 = np.float32(T_INF) + pred.astype(np.float32)
    out["T_paper_float32"] = field_metrics(t_pred32, t_exact32, dtype=np.float32)
    try:
        theta_fem = fem_theta_on(x)
        out["fem_vs_exact_theta"] = field_metrics(theta_fem, exact_theta)
        out["pred_vs_fem_theta"] = field_metrics(pred, theta_fem)
    except (OSError, ImportError, KeyError, ValueError) as err:  # missing or stale
        # the runner prints warnings on stderr and keeps them in metrics.json
        out["fem"] = f"FEM reference not available: {err}"
        warnings.warn(out["fem"] + "; the FEM cross-check is left out")
    return out


terms = [
    Term("pde", Disk(), 3000, pde, kind="pde", jet=pde_jet),
    Term("robin", Circle(), 500, robin, jet=robin_jet),
]

CASE = Case(
    name="heat",
    title="Circular silicon plate heating, Robin boundary (nondimensional)",
    inputs=("x", "y"),
    fields=("theta",),
    terms=terms,
    exact=exact,
    grid=Grid((-1.0, -1.0), (1.0, 1.0), 401, mask=in_disk),
    extra_metrics=heat_metrics,
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
