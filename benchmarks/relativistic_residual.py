"""Time the relativistic residual operator: fast path vs per-column reference.

One "step" = forward of a 2 -> 64x4 -> 8 tanh MLP (with the case's output
transform) on N points, the eight residuals R_k[q] - S_k, the loss
sum_k mean((R_k - S_k)^2), and its backward w.r.t. the network parameters. The
sources are precomputed once; the cost of one ``sources`` call (needed once per
training step on the redrawn points) is timed separately.

Variants:
  reference  one torch.autograd.grad per flux column (14 reverse passes)
  fast       deepxde_lnn.problems.relativistic.residuals (field Jacobian by the
             double-backward trick, 3 reverse passes, then the chain rule)
  forward    field Jacobian by forward mode through the network
             (torch.func.jvp, vmapped over the two tangents), then
             residuals_from_jacobian

Rounds are interleaved (ABCABC...) so that background load hits every variant
alike; the median and minimum seconds per step are printed with the ratios.

    python benchmarks/relativistic_residual.py [--n 1000] [--repeats 30]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from deepxde_lnn import _backend

_backend.ensure_pytorch_backend()

from deepxde_lnn.problems import relativistic as rel  # noqa: E402


def make_net(width: int = 64, depth: int = 4) -> torch.nn.Module:
    layers: list[torch.nn.Module] = [torch.nn.Linear(2, width), torch.nn.Tanh()]
    for _ in range(depth - 1):
        layers += [torch.nn.Linear(width, width), torch.nn.Tanh()]
    layers.append(torch.nn.Linear(width, 8))
    return torch.nn.Sequential(*layers)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="collocation points")
    ap.add_argument("--repeats", type=int, default=30, help="timed rounds")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: keep)")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    ap.add_argument("--case", choices=["b", "c"], default="b")
    ap.add_argument("--sigma-mode", choices=rel.SIGMA_MODES, default="full")
    args = ap.parse_args()

    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    net = make_net().to(device=device, dtype=dtype)
    params = list(net.parameters())

    def model(x: torch.Tensor) -> torch.Tensor:
        return rel.output_transform(x, net(x))

    x0 = torch.rand(args.n, 2, dtype=dtype, device=device)
    constants = rel.FluidConstants()
    mode = args.sigma_mode

    t = time.perf_counter()
    S = rel.sources(x0, args.case, constants, mode)
    sync()
    t_src = time.perf_counter() - t

    def loss_of(r: list[torch.Tensor]) -> torch.Tensor:
        return sum(((rk - S[:, k : k + 1]) ** 2).mean() for k, rk in enumerate(r))

    def step_reference() -> list[torch.Tensor]:
        x = x0.clone().requires_grad_(True)
        q = model(x)
        loss = loss_of(rel.residuals_reference(x, q, constants, mode))
        return torch.autograd.grad(loss, params)

    def step_fast() -> list[torch.Tensor]:
        x = x0.clone().requires_grad_(True)
        q = model(x)
        loss = loss_of(rel.residuals(x, q, constants, mode))
        return torch.autograd.grad(loss, params)

    tangents = (
        torch.eye(2, dtype=dtype, device=device).unsqueeze(1).expand(2, args.n, 2)
    )

    def step_forward() -> list[torch.Tensor]:
        def jvp(t: torch.Tensor):
            return torch.func.jvp(model, (x0,), (t,))

        qs, dqs = torch.func.vmap(jvp)(tangents)  # (2, N, 8) each
        q, dq = qs[0], dqs.permute(1, 2, 0)
        loss = loss_of(rel.residuals_from_jacobian(q, dq, constants, mode))
        return torch.autograd.grad(loss, params)

    variants = {
        "reference": step_reference,
        "fast": step_fast,
        "forward": step_forward,
    }

    def step_sources() -> torch.Tensor:
        return rel.sources(x0, args.case, constants, mode)

    # Correctness: parameter gradients of every variant against the reference.
    g_ref = step_reference()
    for name, fn in variants.items():
        g = fn()
        err = max(
            ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()
            for a, b in zip(g, g_ref)
        )
        print(f"{name:>9}: max rel. difference of parameter gradients {err:.2e}")

    for _ in range(args.warmup):
        for fn in variants.values():
            fn()
    timed = dict(variants, sources=step_sources)
    times: dict[str, list[float]] = {k: [] for k in timed}
    for _ in range(args.repeats):
        for name, fn in timed.items():
            sync()
            t = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - t)

    print(
        f"\nN={args.n}, {args.dtype}, {device}, case {args.case}, sigma_mode={mode}, "
        f"torch threads={torch.get_num_threads()}, rounds={args.repeats}"
    )
    print(f"sources, first call: {t_src:.4f} s")
    med = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    print(f"{'variant':>9}  {'median s/step':>13}  {'min s/step':>10}  ref/variant")
    for name in variants:
        print(
            f"{name:>9}  {med[name]:13.4f}  {best[name]:10.4f}  "
            f"{med['reference'] / med[name]:5.2f}x (median), "
            f"{best['reference'] / best[name]:5.2f}x (min)"
        )
    print(
        f"{'sources':>9}  {med['sources']:13.4f}  {best['sources']:10.4f}  "
        "(per call, no graph; needed once per training step)"
    )


if __name__ == "__main__":
    main()
