"""Tests of the relativistic viscous-fluid operator (docs/relativistic.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from deepxde_lnn import _backend

_backend.ensure_pytorch_backend()

from deepxde_lnn.problems import relativistic as rel  # noqa: E402

F64 = torch.float64
CONST = rel.FluidConstants()

# Regression values of the exact states on the 200x200 grid (docs/relativistic.md).
FIELD_RMS = {
    "b": [0.07019, 0.06016, 2.35385, 1.55131, 0.02462, 0.01958, 0.01421, 0.01575],
    "c": [0.04785, 0.04229, 2.42144, 1.61874, 0.02329, 0.02059, 0.01425, 0.01435],
}
# max|v|, min eps, min n on the 200-grid (docs/relativistic.md).
FIELD_BOUNDS = {"b": (0.187, 2.050, 1.411), "c": (0.104, 2.25, 1.51)}


def grid200() -> np.ndarray:
    g = np.linspace(0.0, 1.0, 200)
    X, Y = np.meshgrid(g, g, indexing="ij")
    return np.stack([X.ravel(), Y.ravel()], axis=1)


def rand_points(n: int = 300, seed: int = 0, dtype=F64) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(n, 2, generator=gen, dtype=dtype).requires_grad_(True)


def make_mlp(seed: int = 0, dtype=F64) -> torch.nn.Module:
    torch.manual_seed(seed)
    layers: list[torch.nn.Module] = [torch.nn.Linear(2, 32), torch.nn.Tanh()]
    layers += [torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 8)]
    return torch.nn.Sequential(*layers).to(dtype)


def stack(r: list[torch.Tensor]) -> torch.Tensor:
    assert len(r) == 8 and all(t.shape[1:] == (1,) for t in r)
    return torch.cat(r, dim=1)


# --------------------------------------------------------------------------------------
# Exact states and sources: regression values (docs/relativistic.md)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["b", "c"])
def test_exact_field_rms_and_bounds(case):
    pts = grid200()
    q_np = rel.EXACT_STATES[case](pts)
    assert isinstance(q_np, np.ndarray) and q_np.shape == (40000, 8)
    wrapper = {"b": rel.exact_state_b_np, "c": rel.exact_state_c_np}[case]
    np.testing.assert_array_equal(wrapper(pts.tolist()), q_np)
    q_t = rel.EXACT_STATES[case](torch.tensor(pts))
    np.testing.assert_allclose(q_t.numpy(), q_np, rtol=0, atol=1e-15)

    rms = np.sqrt(np.mean(q_np**2, axis=0))
    np.testing.assert_allclose(rms, FIELD_RMS[case], rtol=0, atol=5.01e-6)
    vmax, emin, nmin = FIELD_BOUNDS[case]
    assert np.hypot(q_np[:, 0], q_np[:, 1]).max() == pytest.approx(vmax, abs=5e-4)
    assert q_np[:, 2].min() == pytest.approx(emin, abs=5e-3)
    assert q_np[:, 3].min() == pytest.approx(nmin, abs=5e-3)


def test_source_magnitudes_case_b():
    S = rel.sources(torch.tensor(grid200()), "b").numpy()
    rms = np.sqrt(np.mean(S**2, axis=0))
    np.testing.assert_allclose(rms[:4], [0.79, 0.47, 0.48, 0.47], rtol=0.05)
    assert np.all((rms[4:] >= 0.02) & (rms[4:] <= 0.03)), rms[4:]


@pytest.mark.parametrize("case,bound", [("b", 2e-3), ("c", 6e-4)])
def test_sigma_modes_change_only_pi_sources(case, bound):
    x = torch.tensor(grid200()[::7])
    full = rel.sources(x, case, sigma_mode="full")
    for mode in ("spatial", "unlowered"):
        diff = (rel.sources(x, case, sigma_mode=mode) - full).abs().amax(dim=0)
        assert torch.all(diff[:5] == 0)
        assert 1e-5 < diff[5:].max() <= bound


# --------------------------------------------------------------------------------------
# Residuals of the exact state
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", rel.SIGMA_MODES)
@pytest.mark.parametrize("case", ["b", "c"])
def test_exact_state_has_zero_residual(case, mode):
    x = rand_points(400, seed=1)
    fn = rel.EXACT_STATES[case]
    r = rel.pde(case, sigma_mode=mode)(x, fn(x))
    assert isinstance(r, list) and len(r) == 8
    assert all(t.shape == (400, 1) for t in r)
    assert stack(r).abs().max().item() < 1e-13
    # The reference path gives the same sources to round-off.
    ref = stack(rel.residuals_reference(x, fn(x), sigma_mode=mode))
    assert (ref - rel.sources(x, case, sigma_mode=mode)).abs().max() < 1e-13
    # A different sigma_mode for the sources does not cancel the pi channels.
    other = "spatial" if mode != "spatial" else "full"
    s_other = rel.sources(x, case, sigma_mode=other)
    resid = stack(rel.residuals(x, fn(x), sigma_mode=mode)) - s_other
    assert resid[:, 5:].abs().max() > 1e-5


def test_exact_state_float32_roundoff():
    x = rand_points(1000, seed=2, dtype=torch.float32)
    r = stack(rel.pde("b")(x, rel.exact_state_b(x)))
    assert r.dtype == torch.float32
    assert r.abs().max().item() < 1e-5


# --------------------------------------------------------------------------------------
# Fast path vs the per-column reference
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", rel.SIGMA_MODES)
def test_fast_path_matches_reference_on_network(mode):
    net = make_mlp(seed=3)
    x = rand_points(200, seed=4)
    q = rel.output_transform(x, 1.5 * net(x))
    fast = stack(rel.residuals(x, q, sigma_mode=mode))
    ref = stack(rel.residuals_reference(x, q, sigma_mode=mode))
    assert (fast - ref).abs().max().item() < 1e-12
    assert fast.abs().max().item() > 1e-2  # non-trivial values

    # Parameter gradients of a loss agree as well (create_graph works).
    params = list(net.parameters())
    g_fast = torch.autograd.grad((fast**2).mean(), params, retain_graph=True)
    g_ref = torch.autograd.grad((ref**2).mean(), params)
    for a, b in zip(g_fast, g_ref):
        assert (a - b).abs().max().item() <= 1e-11 * (1 + b.abs().max().item())


def test_field_jacobian_matches_per_column_autograd():
    net = make_mlp(seed=5)
    x = rand_points(150, seed=6)
    q = net(x)
    dq = rel.field_jacobian(x, q)
    cols = [
        torch.autograd.grad(q[:, k].sum(), x, retain_graph=True)[0] for k in range(8)
    ]
    ref = torch.stack(cols, dim=1)
    assert dq.shape == (150, 8, 2)
    assert (dq - ref).abs().max().item() < 1e-14
    assert dq.requires_grad
    with pytest.raises(ValueError):
        rel.field_jacobian(x.detach(), q.detach())


# --------------------------------------------------------------------------------------
# Independent physics checks
# --------------------------------------------------------------------------------------


def test_closure_gamma_and_normalisation():
    gen = torch.Generator().manual_seed(7)
    q = torch.rand(500, 8, generator=gen, dtype=F64)
    ang = 2 * math.pi * q[:, 0]
    speed = 0.95 * q[:, 1]
    q[:, 0], q[:, 1] = speed * torch.cos(ang), speed * torch.sin(ang)
    cl = rel.closure(q)
    expect = 1.0 / torch.sqrt(1.0 - speed**2)
    torch.testing.assert_close(cl.gamma[:, 0], expect, rtol=1e-10, atol=0)
    norm = (cl.u_upper * cl.u_lower).sum(dim=1)  # u^mu u_mu
    torch.testing.assert_close(norm, -torch.ones_like(norm), rtol=0, atol=1e-10)
    Delta = rel.projector(q)
    Du = (Delta @ cl.u_lower.unsqueeze(-1)).squeeze(-1)  # Delta^{mu nu} u_nu
    assert Du.abs().max().item() < 1e-10
    # Delta^mu_mu = g_{mu nu} Delta^{mu nu} = 3 with z (Delta^zz = 1): 2 over t, x, y
    g = torch.diag(torch.tensor([-1.0, 1.0, 1.0], dtype=F64))
    trace = torch.einsum("mn,bmn->b", g, Delta)
    torch.testing.assert_close(trace, 2 * torch.ones_like(trace))
    p = 0.4 * (q[:, 2] - 0.8 * q[:, 3])
    torch.testing.assert_close(cl.p[:, 0], p)
    torch.testing.assert_close(cl.W[:, 0], q[:, 2] + p + q[:, 4])


def random_state_and_gradients(n: int = 400, seed: int = 8):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n, 8, generator=gen, dtype=F64)
    q[:, :2] = 0.4 * torch.tanh(q[:, :2])
    dq = torch.randn(n, 8, 2, generator=gen, dtype=F64)
    return q, dq


def test_shear_full_is_symmetric_traceless_transverse():
    q, dq = random_state_and_gradients()
    sigma = rel.shear_tensor(q, dq, sigma_mode="full", include_z=True)
    assert sigma.shape == (400, 4, 4)
    assert sigma.abs().max().item() > 0.1
    torch.testing.assert_close(sigma, sigma.transpose(1, 2), rtol=0, atol=1e-14)
    g = torch.diag(torch.tensor([-1.0, 1.0, 1.0, 1.0], dtype=F64))
    trace = torch.einsum("mn,bmn->b", g, sigma)  # g_{mu nu} sigma^{mu nu}
    assert trace.abs().max().item() < 1e-11
    cl = rel.closure(q)
    u_low = torch.cat([cl.u_lower, torch.zeros_like(cl.gamma)], dim=1)
    transverse = torch.einsum("bmn,bn->bm", sigma, u_low)  # sigma^{mu nu} u_nu
    assert transverse.abs().max().item() < 1e-11
    # The 3x3 block over {t, x, y} is what include_z=False returns.
    torch.testing.assert_close(rel.shear_tensor(q, dq), sigma[:, :3, :3])

    # The alternative contractions stay transverse (Delta u = 0 on both sides) but
    # are not traceless (Delta^{ab} K_ab = theta needs the lowered u_t = -gamma).
    for mode in ("spatial", "unlowered"):
        s = rel.shear_tensor(q, dq, sigma_mode=mode, include_z=True)
        assert torch.einsum("bmn,bn->bm", s, u_low).abs().max().item() < 1e-11
        assert torch.einsum("mn,bmn->b", g, s).abs().max().item() > 1e-2


def test_shear_tensor_agrees_with_residual_pi_channels():
    q, dq = random_state_and_gradients(seed=9)
    for mode in rel.SIGMA_MODES:
        sigma = rel.shear_tensor(q, dq, sigma_mode=mode)
        r = stack(rel.residuals_from_jacobian(q, dq, sigma_mode=mode))
        cl = rel.closure(q)
        D = cl.a * dq[:, 5:8, 0] + cl.b * dq[:, 5:8, 1]
        sig = torch.stack([sigma[:, 1, 1], sigma[:, 1, 2], sigma[:, 2, 2]], dim=1)
        expect = CONST.tau_pi * D + q[:, 5:8] - 2 * CONST.eta * sig
        torch.testing.assert_close(r[:, 5:], expect, rtol=1e-12, atol=1e-13)


def test_uniform_boosted_state():
    x = rand_points(100, seed=10)
    const = torch.tensor([0.3, -0.4, 2.2, 1.3, 0.07, -0.05, 0.02, 0.03], dtype=F64)
    q = const + 0.0 * x[:, :1]  # constant state, still in x's graph
    for mode in rel.SIGMA_MODES:
        for fn in (rel.residuals, rel.residuals_reference):
            r = stack(fn(x, q, sigma_mode=mode))
            assert r[:, :4].abs().max().item() < 1e-14
            torch.testing.assert_close(r[:, 4:], q[:, 4:], rtol=0, atol=1e-14)


def test_static_state_closed_form():
    """v = 0 everywhere: R_E = R_n = 0, R_Mx = d_x(p + Pi + pi_xx) + d_y pi_xy, ..."""
    x = rand_points(300, seed=11)
    X, Y = x[:, 0:1], x[:, 1:2]
    zero = 0.0 * X
    eps = 2.0 + 0.3 * torch.sin(X) * torch.cos(2 * Y)
    n = 1.5 + 0.2 * torch.cos(X) * torch.sin(Y)
    Pi = 0.05 * torch.sin(X + Y)
    pxx = 0.03 * torch.cos(X * Y)
    pxy = 0.02 * torch.sin(X) * Y
    pyy = 0.01 * X**2 * Y
    q = torch.cat([zero, zero, eps, n, Pi, pxx, pxy, pyy], dim=1)
    with torch.no_grad():
        X, Y = X.detach(), Y.detach()
        deps_x = 0.3 * torch.cos(X) * torch.cos(2 * Y)
        deps_y = -0.6 * torch.sin(X) * torch.sin(2 * Y)
        dn_x = -0.2 * torch.sin(X) * torch.sin(Y)
        dn_y = 0.2 * torch.cos(X) * torch.cos(Y)
        dp_x = 0.4 * (deps_x - 0.8 * dn_x)
        dp_y = 0.4 * (deps_y - 0.8 * dn_y)
        dPi = 0.05 * torch.cos(X + Y)  # same for x and y
        mx = dp_x + dPi - 0.03 * Y * torch.sin(X * Y) + 0.02 * torch.sin(X)
        my = dp_y + dPi + 0.02 * torch.cos(X) * Y + 0.01 * X**2
    for mode in rel.SIGMA_MODES:
        for fn in (rel.residuals, rel.residuals_reference):
            r = stack(fn(x, q, sigma_mode=mode)).detach()
            assert r[:, [0, 3]].abs().max().item() < 1e-14
            torch.testing.assert_close(r[:, 1:2], mx, rtol=1e-12, atol=1e-14)
            torch.testing.assert_close(r[:, 2:3], my, rtol=1e-12, atol=1e-14)
            torch.testing.assert_close(r[:, 4:], q[:, 4:].detach())


def test_one_dimensional_expansion_closed_form():
    """v_x = c x, v_y = 0, uniform eps, n, Pi, pi = 0: hand-derived residuals."""
    c = 0.8
    x = rand_points(300, seed=12)
    X = x[:, 0:1]
    eps0, n0, Pi0 = 2.2, 1.3, 0.05
    base = torch.tensor([0.0, 0.0, eps0, n0, Pi0, 0.0, 0.0, 0.0], dtype=F64)
    q = base + torch.cat([c * X, 0.0 * X.expand(-1, 7)], dim=1)
    Xd = X.detach()
    W = eps0 + 0.4 * (eps0 - 0.8 * n0) + Pi0
    one_m = 1.0 - (c * Xd) ** 2
    gam = one_m**-0.5
    theta = c * gam**3
    sigma_xx = {
        "full": 2.0 / 3.0 * c * gam**5,
        "spatial": c * gam**5 * (gam**2 - 1.0 / 3.0),
        "unlowered": c * gam**7 * (1.0 + (c * Xd) ** 2) - c * gam**5 / 3.0,
    }
    for mode in rel.SIGMA_MODES:
        expect = torch.cat(
            [
                W * c * (1.0 + (c * Xd) ** 2) / one_m**2,  # d_x(W gamma^2 v_x)
                W * c**2 * 2.0 * Xd / one_m**2,  # d_x(W gamma^2 v_x^2 + P)
                0.0 * Xd,
                n0 * theta,  # d_x(n gamma v_x)
                Pi0 + CONST.zeta * theta,
                -2.0 * CONST.eta * sigma_xx[mode],
                0.0 * Xd,
                2.0 * CONST.eta * theta / 3.0,  # sigma^yy = -theta / 3
            ],
            dim=1,
        )
        for fn in (rel.residuals, rel.residuals_reference):
            r = stack(fn(x, q, sigma_mode=mode)).detach()
            torch.testing.assert_close(r, expect, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------
# Output transform, arguments, sources hygiene
# --------------------------------------------------------------------------------------


def test_output_transform_ranges():
    gen = torch.Generator().manual_seed(13)
    r = 20.0 * torch.randn(5000, 8, generator=gen, dtype=F64)
    r[:10] = torch.tensor([-50.0, 50.0, -50.0, -50.0, 0, 0, 0, 0], dtype=F64)
    q = rel.output_transform(None, r)
    assert q.shape == r.shape
    assert q[:, :2].abs().max().item() <= 0.45
    assert q[:, :2].abs().max().item() > 0.44
    assert q[:, 2:4].min().item() >= 0.05
    assert torch.all(q[:, 2:4] > 0.05 - 1e-15)
    assert torch.equal(q[:, 4:], r[:, 4:])
    torch.testing.assert_close(q[10:, 0], 0.45 * torch.tanh(r[10:, 0]))
    # torch softplus (beta = 1) is log(1 + e^r), and r itself above threshold 20
    sp = torch.where(r[:, 3] > 20, r[:, 3], torch.log1p(torch.exp(r[:, 3])))
    torch.testing.assert_close(q[:, 3], 0.05 + sp, rtol=1e-12, atol=1e-12)
    assert (q[:, 0] ** 2 + q[:, 1] ** 2).max().item() < 1.0


def test_output_transform_as_deepxde_callback():
    import deepxde as dde

    net = dde.nn.FNN([2, 16, 8], "tanh", "Glorot normal")
    net.apply_output_transform(rel.output_transform)
    x = torch.rand(50, 2)
    q = net(x)
    assert q.shape == (50, 8)
    assert q[:, :2].abs().max().item() <= 0.45
    assert q[:, 2:4].min().item() > 0.05


def test_invalid_sigma_mode_raises():
    x = rand_points(10)
    q = rel.exact_state_b(x)
    q0, dq0 = random_state_and_gradients(5)
    calls = [
        lambda: rel.residuals(x, q, sigma_mode="bogus"),
        lambda: rel.residuals_reference(x, q, sigma_mode="bogus"),
        lambda: rel.residuals_from_jacobian(q0, dq0, sigma_mode="bogus"),
        lambda: rel.shear_tensor(q0, dq0, sigma_mode="bogus"),
        lambda: rel.sources(x, "b", sigma_mode="bogus"),
        lambda: rel.pde("b", sigma_mode="bogus"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="sigma_mode"):
            call()
    with pytest.raises(ValueError, match="case"):
        rel.pde("d")


def test_sources_are_detached_and_leave_x_alone():
    net = make_mlp(seed=14, dtype=torch.float32)
    x = torch.rand(64, 2).requires_grad_(True)
    s = rel.sources(x, rel.exact_state_c)
    assert s.shape == (64, 8) and s.dtype == torch.float32
    assert not s.requires_grad and s.grad_fn is None
    assert x.grad is None
    # The pde callback's graph reaches the network parameters only through y.
    r = rel.pde("c")(x, rel.output_transform(x, net(x)))
    sum(((t**2).mean() for t in r)).backward()
    assert all(p.grad is not None for p in net.parameters())
    # float64 sources for float32 points agree with the float32 ones.
    s64 = rel.sources(x, "c", dtype=F64)
    assert s64.dtype == torch.float32
    torch.testing.assert_close(s64, s, rtol=0, atol=1e-5)
    exact = rel.sources(x.detach().double(), "c").float()
    assert (s64 - exact).abs().max() <= (s - exact).abs().max()
