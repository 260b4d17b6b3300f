r"""Steady 2D relativistic viscous fluid: the operator shared by cases B and C.

Conventions (docs/relativistic.md; paper Eqs. relB_system / relB_constitutive)
-------------------------------------------------------------------------
Metric :math:`g = \mathrm{diag}(-1, +1, +1, +1)`, coordinates (t, x, y, z), steady
(:math:`\partial_t \equiv 0`) and planar (:math:`\partial_z \equiv 0`). The state is

    q = (v_x, v_y, eps, n, Pi, pi_xx, pi_xy, pi_yy)          (FIELDS)

and the closure, with the stabiliser delta = 1e-12, reads

    gamma = (1 - v_x^2 - v_y^2 + delta)^(-1/2)
    u^mu  = gamma (1, v_x, v_y, 0),  a = gamma v_x,  b = gamma v_y
    u_mu  = (-gamma, a, b, 0)                                 (lowered)
    p     = (Gamma_ad - 1)(eps - m n),   W = eps + p + Pi,   P = p + Pi
    N^mu  = n u^mu
    T^{mu nu} = W u^mu u^nu + P g^{mu nu} + pi^{mu nu}   (pi^{0 mu} = pi^{zz} = 0)
    theta = d_x a + d_y b,    D = a d_x + b d_y.

The eight interior operators (residual of channel k = R_k[q] - S_k) are

    R_E  = d_x(W gamma^2 v_x)             + d_y(W gamma^2 v_y)
    R_Mx = d_x(W gamma^2 v_x^2 + P + pi_xx) + d_y(W gamma^2 v_x v_y + pi_xy)
    R_My = d_x(W gamma^2 v_x v_y + pi_xy)   + d_y(W gamma^2 v_y^2 + P + pi_yy)
    R_n  = d_x(n gamma v_x)               + d_y(n gamma v_y)
    R_Pi = tau_Pi D Pi + Pi + zeta theta
    R_ij = tau_pi D pi_ij + pi_ij - 2 eta sigma^{ij},   ij in {xx, xy, yy}.

Shear tensor (``sigma_mode``), with 3x3 matrices over {t, x, y} (z terms vanish)::

    Delta^{ab} = g^{ab} + u^a u^b
    K_ab       = (d_a u_b + d_b u_a) / 2     (u lowered; K_tt = 0,
                                              K_tx = -d_x gamma / 2, K_ty = -d_y gamma / 2,
                                              K_xx = d_x a, K_yy = d_y b,
                                              K_xy = (d_x b + d_y a) / 2)
    sigma      = Delta K Delta - theta Delta / 3.

* ``"full"`` (default): exactly the above (covariant contraction over {t, x, y}).
* ``"spatial"``: contract over {x, y} only. Because K_tt = 0 this equals ``"full"``
  with K_tx = K_ty = 0.
* ``"unlowered"``: ``"full"`` with the sign of K_tx, K_ty flipped (the time
  component of u taken unlowered, +gamma).

The 3+1 traceless factor 1/3 is kept although the flow is 2D; in ``"full"`` mode the
4D tensor (with sigma^{zz} = -theta/3) is traceless and transverse to u.

Implementation (the training hot path)
--------------------------------------
Every operator needs only first derivatives of pointwise functions of q, so the
field Jacobian ``dq[n, k, j] = d q_k / d x_j`` (shape (N, 8, 2)) is computed once
(:func:`field_jacobian`, three reverse passes through the network by the
double-backward trick, instead of one reverse pass per flux column) and the chain
rule through the closure is written out by hand. With ``u_s = (a, b)`` the
conservation laws are rewritten with the product rule
``div(f u_s) = D f + f theta``:

    R_E  = D(W gamma) + W gamma theta
    R_Mx = D(W a) + W a theta + d_x(P + pi_xx) + d_y pi_xy
    R_My = D(W b) + W b theta + d_x pi_xy + d_y(P + pi_yy)
    R_n  = D n + n theta

(identical to the flux form up to round-off). :func:`residuals_reference` is the
straightforward per-flux-column autograd version used as the test oracle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, NamedTuple, TypeVar, Union

import numpy as np
import torch

from ..networks import taylor

__all__ = [
    "FIELDS",
    "RESIDUALS",
    "SIGMA_MODES",
    "FluidConstants",
    "DEFAULT_CONSTANTS",
    "Closure",
    "output_transform",
    "exact_state_b",
    "exact_state_c",
    "exact_state_b_np",
    "exact_state_c_np",
    "EXACT_STATES",
    "get_exact_state",
    "closure",
    "projector",
    "field_jacobian",
    "exact_jacobian",
    "shear_tensor",
    "residuals_from_jacobian",
    "residuals",
    "residuals_reference",
    "sources",
    "pde",
    "pde_jet",
]

FIELDS = ("v_x", "v_y", "eps", "n", "Pi", "pi_xx", "pi_xy", "pi_yy")
RESIDUALS = ("E", "Mx", "My", "n", "Pi", "pi_xx", "pi_xy", "pi_yy")
SIGMA_MODES = ("full", "spatial", "unlowered")

# Coefficient of d_j gamma in K_tj for each sigma_mode (K_tt = 0 in every mode).
_K_TIME_COEF = {"full": -0.5, "spatial": 0.0, "unlowered": 0.5}

ArrayLike = Union[torch.Tensor, np.ndarray]
_Array = TypeVar("_Array", torch.Tensor, np.ndarray)  # what comes in goes out


@dataclass(frozen=True)
class FluidConstants:
    """Physical constants of cases B and C (docs/relativistic.md) and the stabiliser delta."""

    gamma_ad: float = 1.4
    m: float = 0.8
    eta: float = 0.06
    zeta: float = 0.04
    tau_pi: float = 0.25
    tau_Pi: float = 0.22
    delta: float = 1e-12


DEFAULT_CONSTANTS = FluidConstants()


def _check_sigma_mode(sigma_mode: str) -> None:
    if sigma_mode not in SIGMA_MODES:
        raise ValueError(
            f"sigma_mode must be one of {SIGMA_MODES}, got sigma_mode={sigma_mode!r}"
        )


# --------------------------------------------------------------------------------------
# Output transform and exact states
# --------------------------------------------------------------------------------------


def output_transform(x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """Map raw network outputs r (N, 8) to the physical state q (N, 8).

    v_x, v_y = 0.45 tanh(r1, r2); eps, n = 0.05 + softplus(r3, r4) (beta = 1);
    Pi, pi_xx, pi_xy, pi_yy = r5..r8. ``x`` is unused; the signature matches
    DeepXDE's ``net.apply_output_transform`` callback ``(inputs, outputs)``.
    Guarantees |v| <= 0.45 * sqrt(2) < 1 and eps, n > 0.05.
    """
    del x
    v = 0.45 * torch.tanh(r[:, 0:2])
    en = 0.05 + torch.nn.functional.softplus(r[:, 2:4])
    return torch.cat([v, en, r[:, 4:8]], dim=1)


def _trig(x: ArrayLike):
    if isinstance(x, torch.Tensor):
        return torch.sin, torch.cos, (lambda cols: torch.cat(cols, dim=1))
    return np.sin, np.cos, (lambda cols: np.concatenate(cols, axis=1))


def exact_state_b(x: _Array) -> _Array:
    """Manufactured state of case B (docs/relativistic.md) at points x (N, 2) -> (N, 8).

    Accepts a torch tensor (differentiable, any dtype/device) or a numpy array
    (returns numpy in the input's float dtype).
    """
    s, c, cat = _trig(x)
    pi = np.pi
    X, Y = x[:, 0:1], x[:, 1:2]
    sx, sy, cx, cy = s(pi * X), s(pi * Y), c(pi * X), c(pi * Y)
    s2x, s2y, c2x, c2y = s(2 * pi * X), s(2 * pi * Y), c(2 * pi * X), c(2 * pi * Y)
    vx = 0.14 * sx * sy * (1 + 0.25 * cx)
    vy = 0.12 * sx * sy * (1 - 0.25 * cy)
    eps = 2.35 + 0.18 * c2x * sy + 0.12 * sx * c2y
    n = 1.55 + 0.10 * s2x * sy + 0.08 * cx * s2y
    Pi = 0.045 * (sx * c2y + 0.30 * c2x * sy)
    pxx = 0.038 * (c2x * sy + 0.25 * sx * s2y)
    pxy = 0.028 * (s2x * s2y + 0.20 * cx * sy)
    pyy = 0.032 * (sx * c2y - 0.20 * c2x * sy)
    return cat([vx, vy, eps, n, Pi, pxx, pxy, pyy])


def exact_state_c(x: _Array) -> _Array:
    """Manufactured state of case C (docs/relativistic.md) at points x (N, 2) -> (N, 8).

    Accepts a torch tensor or a numpy array, like :func:`exact_state_b`.
    """
    s, c, cat = _trig(x)
    pi = np.pi
    X, Y = x[:, 0:1], x[:, 1:2]
    sx, sy, cx, cy = s(pi * X), s(pi * Y), c(pi * X), c(pi * Y)
    s2x, s2y, c2x, c2y = s(2 * pi * X), s(2 * pi * Y), c(2 * pi * X), c(2 * pi * Y)
    vx = 0.085 * s2x * sy + 0.045 * sx * s2y
    vy = 0.075 * sx * s2y - 0.040 * s2x * sy
    eps = 2.42 + 0.17 * c2x * cy + 0.11 * sx * s2y
    n = 1.58 + 0.095 * sx * sy + 0.070 * c2x * s2y
    Pi = 0.032 * cx * s2y + 0.018 * s2x * cy
    pxx = 0.030 * s2x * cy + 0.014 * cx * s2y
    pxy = 0.026 * sx * sy + 0.012 * s2x * s2y
    pyy = 0.028 * c2x * sy - 0.013 * sx * c2y
    return cat([vx, vy, eps, n, Pi, pxx, pxy, pyy])


def exact_state_b_np(x: np.ndarray) -> np.ndarray:
    """Numpy wrapper of :func:`exact_state_b` (converts array-likes)."""
    return exact_state_b(np.asarray(x))


def exact_state_c_np(x: np.ndarray) -> np.ndarray:
    """Numpy wrapper of :func:`exact_state_c` (converts array-likes)."""
    return exact_state_c(np.asarray(x))


EXACT_STATES = {"b": exact_state_b, "c": exact_state_c}


def get_exact_state(case: Union[str, Callable]) -> Callable:
    """Return the exact-state function for ``case`` ("b", "rel_b", "c", "rel_c").

    A callable is returned unchanged.
    """
    if callable(case):
        return case
    key = str(case).lower().removeprefix("rel_").removeprefix("rel")
    if key not in EXACT_STATES:
        raise ValueError(f"unknown relativistic case={case!r}; expected 'b' or 'c'")
    return EXACT_STATES[key]


# --------------------------------------------------------------------------------------
# Closure and shear tensor
# --------------------------------------------------------------------------------------


class Closure(NamedTuple):
    """Pointwise closure quantities, each (N, 1) except the four-velocities (N, 3).

    ``u_upper`` = (u^t, u^x, u^y) = gamma (1, v_x, v_y); ``u_lower`` = (-gamma, a, b).
    """

    gamma: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    p: torch.Tensor
    W: torch.Tensor
    P: torch.Tensor
    u_upper: torch.Tensor
    u_lower: torch.Tensor


def closure(q: torch.Tensor, constants: FluidConstants = DEFAULT_CONSTANTS) -> Closure:
    """Evaluate the closure (gamma, a, b, p, W, P, u^mu, u_mu) for states q (N, 8)."""
    vx, vy, eps, n, Pi = (q[:, k : k + 1] for k in range(5))
    gamma = torch.rsqrt(1.0 - vx * vx - vy * vy + constants.delta)
    a, b = gamma * vx, gamma * vy
    p = (constants.gamma_ad - 1.0) * (eps - constants.m * n)
    P = p + Pi
    W = eps + P
    return Closure(
        gamma=gamma,
        a=a,
        b=b,
        p=p,
        W=W,
        P=P,
        u_upper=torch.cat([gamma, a, b], dim=1),
        u_lower=torch.cat([-gamma, a, b], dim=1),
    )


def _projector(gamma: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Delta^{mu nu} = g^{mu nu} + u^mu u^nu over {t, x, y} as (N, 3, 3)."""
    tt = gamma * gamma - 1.0
    tx, ty = gamma * a, gamma * b
    xx, xy, yy = 1.0 + a * a, a * b, 1.0 + b * b
    rows = [tt, tx, ty, tx, xx, xy, ty, xy, yy]
    return torch.cat(rows, dim=1).view(-1, 3, 3)


def projector(
    q: torch.Tensor, constants: FluidConstants = DEFAULT_CONSTANTS
) -> torch.Tensor:
    """Spatial projector Delta^{mu nu} over {t, x, y}, shape (N, 3, 3)."""
    cl = closure(q, constants)
    return _projector(cl.gamma, cl.a, cl.b)


def _shear(
    gamma: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    dgamma: torch.Tensor,
    da: torch.Tensor,
    db: torch.Tensor,
    theta: torch.Tensor,
    sigma_mode: str,
) -> torch.Tensor:
    """sigma^{mu nu} over {t, x, y} (N, 3, 3) from the closure and its gradients.

    ``dgamma``, ``da``, ``db`` are (N, 2) spatial gradients, ``theta`` is (N, 1).
    """
    kt = _K_TIME_COEF[sigma_mode] * dgamma  # (K_tx, K_ty)
    ktx, kty = kt[:, 0:1], kt[:, 1:2]
    kxx, kyy = da[:, 0:1], db[:, 1:2]
    kxy = 0.5 * (db[:, 0:1] + da[:, 1:2])
    zero = torch.zeros_like(kxx)
    K = torch.cat([zero, ktx, kty, ktx, kxx, kxy, kty, kxy, kyy], dim=1).view(-1, 3, 3)
    Delta = _projector(gamma, a, b)
    return Delta @ K @ Delta - (theta / 3.0).unsqueeze(-1) * Delta


def _kinematics(q: torch.Tensor, dq: torch.Tensor, constants: FluidConstants):
    """gamma, a, b (N,1) and their gradients (N,2), and theta (N,1)."""
    vx, vy = q[:, 0:1], q[:, 1:2]
    gvx, gvy = dq[:, 0, :], dq[:, 1, :]
    gamma = torch.rsqrt(1.0 - vx * vx - vy * vy + constants.delta)
    a, b = gamma * vx, gamma * vy
    # d gamma = gamma^3 (v_x d v_x + v_y d v_y)
    dgamma = gamma * gamma * gamma * (vx * gvx + vy * gvy)
    da = vx * dgamma + gamma * gvx
    db = vy * dgamma + gamma * gvy
    theta = da[:, 0:1] + db[:, 1:2]
    return gamma, a, b, dgamma, da, db, theta


def shear_tensor(
    q: torch.Tensor,
    dq: torch.Tensor,
    constants: FluidConstants = DEFAULT_CONSTANTS,
    sigma_mode: str = "full",
    include_z: bool = False,
) -> torch.Tensor:
    """Shear tensor sigma^{mu nu} from states q (N, 8) and Jacobians dq (N, 8, 2).

    Returns (N, 3, 3) over {t, x, y}; with ``include_z=True`` (N, 4, 4) over
    {t, x, y, z}, where sigma^{zz} = -theta Delta^{zz} / 3 = -theta / 3 and
    sigma^{z mu} = 0 otherwise (needed for the 4D trace g_{mu nu} sigma^{mu nu}).
    Only the x, y derivatives of q enter (steady, planar flow).
    """
    _check_sigma_mode(sigma_mode)
    gamma, a, b, dgamma, da, db, theta = _kinematics(q, dq, constants)
    sigma = _shear(gamma, a, b, dgamma, da, db, theta, sigma_mode)
    if not include_z:
        return sigma
    out = sigma.new_zeros(sigma.shape[0], 4, 4)
    out[:, :3, :3] = sigma
    out[:, 3, 3] = -theta[:, 0] / 3.0
    return out


# --------------------------------------------------------------------------------------
# Derivatives
# --------------------------------------------------------------------------------------


def field_jacobian(
    x: torch.Tensor, q: torch.Tensor, create_graph: bool = True
) -> torch.Tensor:
    """Jacobian dq[n, k, j] = d q_k / d x_j (N, K, d) of a row-wise map x -> q.

    Uses the double-backward trick: with a dummy cotangent v (N, K),
    g = v^T J is one reverse pass (kept differentiable), and d g_j / d v = J e_j
    is one more reverse pass per input dimension, i.e. d + 1 = 3 passes instead
    of one per output column. Assumes row n of q depends only on row n of x (true
    for point-wise networks; the per-column ``sum()`` trick makes the same
    assumption). ``create_graph=True`` keeps the result differentiable (training).
    """
    if not x.requires_grad or q.grad_fn is None:
        raise ValueError("q must be computed from x with x.requires_grad=True")
    v = torch.zeros_like(q, requires_grad=True)
    (g,) = torch.autograd.grad(q, x, grad_outputs=v, create_graph=True)
    cols = []
    for j in range(x.shape[1]):
        (jj,) = torch.autograd.grad(
            g[:, j].sum(),
            v,
            create_graph=create_graph,
            retain_graph=True,
            allow_unused=True,
            materialize_grads=True,
        )
        cols.append(jj)
    return torch.stack(cols, dim=2)


# --------------------------------------------------------------------------------------
# Residual operators
# --------------------------------------------------------------------------------------


def residuals_from_jacobian(
    q: torch.Tensor,
    dq: torch.Tensor,
    constants: FluidConstants = DEFAULT_CONSTANTS,
    sigma_mode: str = "full",
) -> List[torch.Tensor]:
    """R_k[q] (without sources) from states q (N, 8) and Jacobians dq (N, 8, 2).

    ``dq[:, k, j]`` = d q_k / d x_j with j = 0 -> x, 1 -> y. Returns 8 tensors of
    shape (N, 1) in the order of ``RESIDUALS``. Pure point-wise tensor algebra:
    differentiable w.r.t. q and dq, so dq may come from any source (reverse mode
    via :func:`field_jacobian`, forward mode through the network, closed forms).
    """
    _check_sigma_mode(sigma_mode)
    c = constants
    gamma, a, b, dgamma, da, db, theta = _kinematics(q, dq, c)
    us = torch.cat([a, b], dim=1)  # spatial u^i, (N, 2)

    # Advective derivative D = a d_x + b d_y of every field at once: (N, 8).
    Dq = (dq * us.unsqueeze(1)).sum(dim=2)
    eps, n, Pi = q[:, 2:3], q[:, 3:4], q[:, 4:5]
    pis = q[:, 5:8]
    c1 = c.gamma_ad - 1.0
    p = c1 * (eps - c.m * n)
    P = p + Pi
    W = eps + P
    # Gradients / advective derivatives of the closure (chain rule by hand).
    dP = c1 * (dq[:, 2, :] - c.m * dq[:, 3, :]) + dq[:, 4, :]  # (N, 2)
    DW = (1.0 + c1) * Dq[:, 2:3] - c1 * c.m * Dq[:, 3:4] + Dq[:, 4:5]
    Dgamma = (dgamma * us).sum(dim=1, keepdim=True)
    Da = (da * us).sum(dim=1, keepdim=True)
    Db = (db * us).sum(dim=1, keepdim=True)
    gpxx, gpxy, gpyy = dq[:, 5, :], dq[:, 6, :], dq[:, 7, :]

    r_e = gamma * DW + W * Dgamma + W * gamma * theta
    r_mx = a * DW + W * Da + W * a * theta + dP[:, 0:1] + gpxx[:, 0:1] + gpxy[:, 1:2]
    r_my = b * DW + W * Db + W * b * theta + dP[:, 1:2] + gpxy[:, 0:1] + gpyy[:, 1:2]
    r_n = Dq[:, 3:4] + n * theta
    r_Pi = c.tau_Pi * Dq[:, 4:5] + Pi + c.zeta * theta

    sigma = _shear(gamma, a, b, dgamma, da, db, theta, sigma_mode)
    sig = torch.stack([sigma[:, 1, 1], sigma[:, 1, 2], sigma[:, 2, 2]], dim=1)
    r_pi = c.tau_pi * Dq[:, 5:8] + pis - (2.0 * c.eta) * sig  # (N, 3)
    return [r_e, r_mx, r_my, r_n, r_Pi, r_pi[:, 0:1], r_pi[:, 1:2], r_pi[:, 2:3]]


def residuals(
    x: torch.Tensor,
    q: torch.Tensor,
    constants: FluidConstants = DEFAULT_CONSTANTS,
    sigma_mode: str = "full",
    create_graph: bool = True,
) -> List[torch.Tensor]:
    """R_k[q] (no sources) for q (N, 8) computed from x (N, 2) with autograd.

    The fast path: :func:`field_jacobian` (3 reverse passes) followed by
    :func:`residuals_from_jacobian`. Returns a list of 8 (N, 1) tensors,
    differentiable w.r.t. everything q depends on when ``create_graph=True``.
    """
    _check_sigma_mode(sigma_mode)
    dq = field_jacobian(x, q, create_graph=create_graph)
    return residuals_from_jacobian(q, dq, constants, sigma_mode)


def _reference_flux(q: torch.Tensor, c: FluidConstants):
    """The 14 columns differentiated by :func:`residuals_reference`, and gamma,
    a = gamma v_x, b = gamma v_y."""
    vx, vy, eps, n, Pi, pxx, pxy, pyy = (q[:, k : k + 1] for k in range(8))
    gamma = (1.0 - vx**2 - vy**2 + c.delta) ** (-0.5)
    a, b = gamma * vx, gamma * vy
    p = (c.gamma_ad - 1.0) * (eps - c.m * n)
    W, P = eps + p + Pi, p + Pi
    g2 = W * gamma**2
    flux = [
        g2 * vx,
        g2 * vy,
        g2 * vx * vx + P + pxx,
        g2 * vx * vy + pxy,
        g2 * vy * vy + P + pyy,
        n * gamma * vx,
        n * gamma * vy,
        a,
        b,
        gamma,
        Pi,
        pxx,
        pxy,
        pyy,
    ]
    return flux, gamma, a, b


def residuals_reference(
    x: torch.Tensor,
    q: torch.Tensor,
    constants: FluidConstants = DEFAULT_CONSTANTS,
    sigma_mode: str = "full",
    create_graph: bool = True,
) -> List[torch.Tensor]:
    """Straightforward reference of :func:`residuals` (test oracle, benchmark).

    The literal recipe (docs/relativistic.md, reference path): build the flux
    columns W gamma^2 v_x, W gamma^2 v_y, W gamma^2 v_x^2 + P + pi_xx, W gamma^2 v_x v_y + pi_xy, W gamma^2 v_y^2 + P +
    pi_yy, n gamma v_x, n gamma v_y, a, b, gamma and the fields Pi, pi_ij, take one
    ``torch.autograd.grad`` per column (14 reverse passes), and contract sigma
    with explicit index sums.
    """
    _check_sigma_mode(sigma_mode)
    c = constants
    vx, vy, eps, n, Pi, pxx, pxy, pyy = (q[:, k : k + 1] for k in range(8))
    flux, gamma, a, b = _reference_flux(q, c)
    grads = [
        torch.autograd.grad(f.sum(), x, create_graph=create_graph, retain_graph=True)[0]
        for f in flux
    ]

    def dx(k: int) -> torch.Tensor:
        return grads[k][:, 0:1]

    def dy(k: int) -> torch.Tensor:
        return grads[k][:, 1:2]

    r_e = dx(0) + dy(1)
    r_mx = dx(2) + dy(3)
    r_my = dx(3) + dy(4)
    r_n = dx(5) + dy(6)
    theta = dx(7) + dy(8)

    def D(k: int) -> torch.Tensor:
        return a * dx(k) + b * dy(k)

    r_Pi = c.tau_Pi * D(10) + Pi + c.zeta * theta

    kt = _K_TIME_COEF[sigma_mode]
    zero = torch.zeros_like(vx)
    K = [
        [zero, kt * dx(9), kt * dy(9)],
        [kt * dx(9), dx(7), 0.5 * (dx(8) + dy(7))],
        [kt * dy(9), 0.5 * (dx(8) + dy(7)), dy(8)],
    ]
    Delta = [
        [gamma**2 - 1.0, gamma * a, gamma * b],
        [gamma * a, 1.0 + a**2, a * b],
        [gamma * b, a * b, 1.0 + b**2],
    ]

    def sigma(mu: int, nu: int) -> torch.Tensor:
        total = -theta * Delta[mu][nu] / 3.0
        for al in range(3):
            for be in range(3):
                total = total + Delta[mu][al] * Delta[nu][be] * K[al][be]
        return total

    r_xx = c.tau_pi * D(11) + pxx - 2.0 * c.eta * sigma(1, 1)
    r_xy = c.tau_pi * D(12) + pxy - 2.0 * c.eta * sigma(1, 2)
    r_yy = c.tau_pi * D(13) + pyy - 2.0 * c.eta * sigma(2, 2)
    return [r_e, r_mx, r_my, r_n, r_Pi, r_xx, r_xy, r_yy]


# --------------------------------------------------------------------------------------
# Sources and the DeepXDE pde callback
# --------------------------------------------------------------------------------------


def sources(
    x: torch.Tensor,
    exact_fn: Union[str, Callable[[torch.Tensor], torch.Tensor]],
    constants: FluidConstants = DEFAULT_CONSTANTS,
    sigma_mode: str = "full",
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Manufactured sources S_k = R_k[q*] at points x, as a detached (N, 8) tensor.

    The raw exact fields q* (no output transform) and their Jacobian are
    evaluated at a detached copy of x (cast to ``dtype`` if given, e.g. float64
    for accurate sources in float32 training; the result is cast back to x's
    dtype) and the same operator is applied (same gamma with delta, same
    ``sigma_mode``). The Jacobian by reverse mode (:func:`field_jacobian`), or,
    inside a ``torch.func`` transform (the stacked runs' vmapped jets) or a
    compiled jet, where that cannot run, by forward mode (:func:`exact_jacobian`: slower on a CPU,
    PyTorch's forward mode being slow on the many scalar products of q*). No graph is kept and x is not touched. ``exact_fn`` may be a
    callable or a case name ("b", "c").
    """
    _check_sigma_mode(sigma_mode)
    fn = get_exact_state(exact_fn)
    xs = x.detach().to(dtype or x.dtype)
    if torch.compiler.is_compiling() or _functorch_wrapped(xs):
        qs, dqs = exact_jacobian(fn, xs)
    else:
        with torch.enable_grad():
            xs = xs.clone().requires_grad_(True)
            qs = fn(xs)
            dqs = field_jacobian(xs, qs, create_graph=False)
    r = residuals_from_jacobian(qs, dqs, constants, sigma_mode)
    return torch.cat(r, dim=1).detach().to(x.dtype)


def _functorch_wrapped(x: torch.Tensor) -> bool:
    """Whether ``x`` is inside a ``torch.func`` transform (reverse mode cannot
    run there)."""
    return torch._C._functorch.is_functorch_wrapped_tensor(x)


def exact_jacobian(fn: Callable, x: torch.Tensor) -> tuple:
    """``(q, dq)`` of a row-wise map ``q = fn(x)``, ``dq[n, k, j] = d q_k / d
    x_j`` (N, K, d), by forward mode: one ``torch.func.jvp`` per input axis."""
    eye = torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
    cols = [torch.func.jvp(fn, (x,), (e.expand_as(x),)) for e in eye]
    return cols[0][0], torch.stack([col[1] for col in cols], dim=2)


def pde(
    case: Union[str, Callable[[torch.Tensor], torch.Tensor]],
    constants: FluidConstants = DEFAULT_CONSTANTS,
    sigma_mode: str = "full",
    source_dtype: torch.dtype | None = None,
) -> Callable[[torch.Tensor, torch.Tensor], List[torch.Tensor]]:
    """DeepXDE-style ``pde(x, y)`` callback for case "b"/"c" (or an exact-state fn).

    The callback returns a LIST of 8 (N, 1) tensors R_k[y] - S_k(x) (a single
    (N, 8) tensor would be averaged over channels by DeepXDE). ``y`` must be the
    transformed network output computed from ``x`` (``x.requires_grad``).
    Sources are recomputed from x on every call (points are redrawn every step).
    """
    _check_sigma_mode(sigma_mode)
    fn = get_exact_state(case)

    def _pde(x: torch.Tensor, y: torch.Tensor) -> List[torch.Tensor]:
        s = sources(x, fn, constants, sigma_mode, dtype=source_dtype)
        r = residuals(x, y, constants, sigma_mode)
        return [rk - s[:, k : k + 1] for k, rk in enumerate(r)]

    return _pde


def pde_jet(
    case: Union[str, Callable[[torch.Tensor], torch.Tensor]],
    constants: FluidConstants = DEFAULT_CONSTANTS,
    sigma_mode: str = "full",
    source_dtype: torch.dtype | None = None,
) -> Callable[[torch.Tensor, torch.nn.Module], torch.Tensor]:
    """The residual of :func:`pde` with Taylor-mode derivatives: ``jet(x, net)``,
    an (N, 8) tensor ``R_k[q] - S_k`` whose columns are :func:`pde`'s list.

    The field Jacobian ``dq[:, k, j] = d q_k / d x_j`` comes from one forward-mode
    pass along the two axes (:func:`~deepxde_lnn.networks.taylor.pure_derivatives`,
    through the network's output transform), not from reverse passes.
    """
    _check_sigma_mode(sigma_mode)
    fn = get_exact_state(case)

    def _jet(x: torch.Tensor, net: torch.nn.Module) -> torch.Tensor:
        q, grads = taylor.pure_derivatives(net, x, [(0, 1), (1, 1)])
        r = residuals_from_jacobian(q, torch.stack(grads, 2), constants, sigma_mode)
        s = sources(x, fn, constants, sigma_mode, dtype=source_dtype)
        return torch.cat(r, dim=1) - s

    return _jet
