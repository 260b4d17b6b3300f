"""The steady incompressible Navier–Stokes residual shared by PINNacle's NS cases
(``ns2d_lid_driven``, ``ns2d_back_step``): fields (u, v, p), inputs (x, y).

u u_x + v u_y + p_x - nu (u_xx + u_yy) = 0
u v_x + v v_y + p_y - nu (v_xx + v_yy) = 0
u_x + v_y = 0
"""

import deepxde_lnn  # noqa: F401  (selects DeepXDE's pytorch backend)

# isort: split
import deepxde as dde
import torch

from deepxde_lnn.networks import taylor


def steady(nu: float):
    """The residual ``pde(x, y)`` (momentum x, momentum y, continuity) at
    viscosity ``nu``."""

    def pde(x, y):
        u, v = y[:, 0:1], y[:, 1:2]
        u_x = dde.grad.jacobian(y, x, i=0, j=0)
        u_y = dde.grad.jacobian(y, x, i=0, j=1)
        v_x = dde.grad.jacobian(y, x, i=1, j=0)
        v_y = dde.grad.jacobian(y, x, i=1, j=1)
        p_x = dde.grad.jacobian(y, x, i=2, j=0)
        p_y = dde.grad.jacobian(y, x, i=2, j=1)
        u_xx = dde.grad.hessian(y, x, component=0, i=0, j=0)
        u_yy = dde.grad.hessian(y, x, component=0, i=1, j=1)
        v_xx = dde.grad.hessian(y, x, component=1, i=0, j=0)
        v_yy = dde.grad.hessian(y, x, component=1, i=1, j=1)
        momentum_x = u * u_x + v * u_y + p_x - nu * (u_xx + u_yy)
        momentum_y = u * v_x + v * v_y + p_y - nu * (v_xx + v_yy)
        return [momentum_x, momentum_y, u_x + v_y]

    return pde


def steady_jet(nu: float):
    """:func:`steady`'s residual with Taylor-mode derivatives, ``jet(x, net)`` ->
    (N, 3): every field's first and pure second partials in one pass."""

    def jet(x, net):
        y, (d_x, d_y, d_xx, d_yy) = taylor.pure_derivatives(
            net, x, [(0, 1), (1, 1), (0, 2), (1, 2)]
        )
        u, v = y[:, 0:1], y[:, 1:2]
        grad_p = torch.cat([d_x[:, 2:3], d_y[:, 2:3]], dim=1)
        momentum = u * d_x[:, :2] + v * d_y[:, :2] + grad_p
        momentum = momentum - nu * (d_xx[:, :2] + d_yy[:, :2])
        return torch.cat([momentum, d_x[:, 0:1] + d_y[:, 1:2]], dim=1)

    return jet
