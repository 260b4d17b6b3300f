"""Time PDE-residual training steps: Taylor-mode jets vs nested reverse mode.

One "step" = forward of the network on N points, the PDE residual, the loss
``mean(residual^2)`` and its gradient w.r.t. the network parameters. Problems:

  beam       u_xx - u_yyyy - (2 - x^2) exp(-y)   (cases/beam.py)
  laplacian  u_xx + u_yy                          (laplace / heat operators)

Variants, per problem:

  dde        DeepXDE's dde.grad.hessian composition (u_yyyy = hessian of hessian),
             its cache cleared after every step as the training loop does
  naive      hand-written nested torch.autograd.grad (create_graph=True), one
             call per derivative order, the way the paper's authors write it
  jet        deepxde_lnn.networks.taylor, one forward Taylor-mode propagation of the stacked
             axis directions. Beam: "jet" = pure_derivatives (x truncated at
             order 2, y to order 4), "jet-stacked" = both axes to order 4,
             "jet-combo" = pure_derivative_combination (only the weighted sum of
             the two top coefficients is carried). Laplacian: "jet" = laplacian
             (collapsed: only the sum of the second coefficients is carried),
             "jet-separate" = pure_derivatives u_xx + u_yy

Networks: the paper's [2, 64, 64, 64, 64, 1] tanh LNN (standard layout) and MLP.
Rounds are interleaved (ABCABC...) so that background load hits every variant
alike; the median and minimum seconds per step are printed with the ratios.

    python benchmarks/taylor_derivatives.py [--points 1000] [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import deepxde_lnn  # noqa: F401  (selects DeepXDE's pytorch backend)

# isort: split
import deepxde as dde

from deepxde_lnn import LNN, MLP
from deepxde_lnn.networks import taylor

SIZES = [2, 64, 64, 64, 64, 1]


def _d(f: torch.Tensor, x: torch.Tensor, i: int) -> torch.Tensor:
    g = torch.autograd.grad(f, x, torch.ones_like(f), create_graph=True)[0]
    return g[:, i : i + 1]


def beam_source(x: torch.Tensor) -> torch.Tensor:
    return (2 - x[:, 0:1] ** 2) * torch.exp(-x[:, 1:2])


def beam_steps(net, x0: torch.Tensor) -> dict:
    """Residual functions ``x0 -> residual`` for the beam, per variant."""
    f = beam_source(x0)

    def dde_res():
        x = x0.clone().requires_grad_(True)
        u = net(x)
        u_xx = dde.grad.hessian(u, x, i=0, j=0)
        u_yy = dde.grad.hessian(u, x, i=1, j=1)
        res = u_xx - dde.grad.hessian(u_yy, x, i=1, j=1) - f
        dde.grad.clear()
        return res

    def naive_res():
        x = x0.clone().requires_grad_(True)
        u = net(x)
        u_x, u_y = _d(u, x, 0), _d(u, x, 1)
        u_yyyy = _d(_d(_d(u_y, x, 1), x, 1), x, 1)
        return _d(u_x, x, 0) - u_yyyy - f

    def jet_res(strategy):
        def res():
            _, (u_xx, u_yyyy) = taylor.pure_derivatives(
                net, x0, [(0, 2), (1, 4)], strategy=strategy
            )
            return u_xx - u_yyyy - f

        return res

    def combination_res():
        _, lu = taylor.pure_derivative_combination(net, x0, [(1, 0, 2), (-1, 1, 4)])
        return lu - f

    return {
        "dde": dde_res,
        "naive": naive_res,
        "jet": jet_res("truncated"),
        "jet-stacked": jet_res("stacked"),
        "jet-combo": combination_res,
    }


def laplacian_steps(net, x0: torch.Tensor) -> dict:
    """Residual functions for the Laplacian ``u_xx + u_yy``, per variant."""

    def dde_res():
        x = x0.clone().requires_grad_(True)
        u = net(x)
        res = dde.grad.hessian(u, x, i=0, j=0) + dde.grad.hessian(u, x, i=1, j=1)
        dde.grad.clear()
        return res

    def naive_res():
        x = x0.clone().requires_grad_(True)
        u = net(x)
        return _d(_d(u, x, 0), x, 0) + _d(_d(u, x, 1), x, 1)

    def jet_res():
        return taylor.laplacian(net, x0)[1]

    def uncollapsed_res():
        _, (u_xx, u_yy) = taylor.pure_derivatives(net, x0, [(0, 2), (1, 2)])
        return u_xx + u_yy

    return {
        "dde": dde_res,
        "naive": naive_res,
        "jet": jet_res,
        "jet-separate": uncollapsed_res,
    }


def make_step(residual, params):
    def step():
        loss = (residual() ** 2).mean()
        return torch.autograd.grad(loss, params, allow_unused=True)

    return step


def check(steps: dict, params) -> None:
    """Max relative difference of residuals and parameter gradients vs ``dde``."""
    r_ref = steps["dde"]().detach()
    g_ref = make_step(steps["dde"], params)()
    for name, res in steps.items():
        r_err = ((res().detach() - r_ref).norm() / r_ref.norm()).item()
        g_err = max(
            ((a - b).norm() / b.norm()).item()
            for a, b in zip(make_step(res, params)(), g_ref)
            if b is not None
        )
        print(f"  {name:>12}: rel. diff residual {r_err:.1e}, gradients {g_err:.1e}")


def time_steps(steps: dict, params, args, sync) -> dict:
    fns = {name: make_step(res, params) for name, res in steps.items()}
    for _ in range(args.warmup):
        for fn in fns.values():
            fn()
    times: dict = {name: [] for name in fns}
    for _ in range(args.repeats):
        for name, fn in fns.items():
            sync()
            t = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - t)
    return times


def report(times: dict) -> None:
    med = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    print(
        f"  {'variant':>12}  {'median s':>9}  {'min s':>9}  "
        "/naive (median, min)  /dde (median, min)"
    )
    for name in times:
        print(
            f"  {name:>12}  {med[name]:9.4f}  {best[name]:9.4f}  "
            f"{med[name] / med['naive']:8.3f} {best[name] / best['naive']:6.3f}  "
            f"{med[name] / med['dde']:11.3f} {best[name] / best['dde']:6.3f}"
        )


def make_net(kind: str, dtype, device) -> torch.nn.Module:
    if kind == "lnn":
        net = LNN(SIZES, "tanh", "Glorot normal", layout="standard")
    else:
        net = MLP(SIZES, "tanh", "Glorot normal")
    return net.to(device=device, dtype=dtype)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=int, default=1000, help="collocation points")
    ap.add_argument("--repeats", type=int, default=20, help="timed rounds")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: keep)")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    ap.add_argument("--nets", nargs="+", choices=["lnn", "mlp"], default=["lnn", "mlp"])
    ap.add_argument(
        "--problems",
        nargs="+",
        choices=["beam", "laplacian"],
        default=["beam", "laplacian"],
    )
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    dtype, device = getattr(torch, args.dtype), torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    x0 = torch.rand(args.points, 2, dtype=dtype, device=device)
    print(
        f"N={args.points}, {args.dtype}, {device}, torch threads="
        f"{torch.get_num_threads()}, rounds={args.repeats}, sizes={SIZES}, tanh"
    )
    builders = {"beam": beam_steps, "laplacian": laplacian_steps}
    for kind in args.nets:
        net = make_net(kind, dtype, device)
        params = list(net.parameters())
        for problem in args.problems:
            print(f"\n{kind.upper()} {problem}")
            steps = builders[problem](net, x0)
            check(steps, params)
            report(time_steps(steps, params, args, sync))


if __name__ == "__main__":
    main()
