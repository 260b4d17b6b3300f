"""The drop-in on a sin network: DeepXDE's 2-D Helmholtz setup with FNN and LNN.

    -u_xx - u_yy - k0^2 u = k0^2 sin(k0 x) sin(k0 y)   on (0, 1)^2,  u = 0 on the edges
    exact: u = sin(k0 x) sin(k0 y),  k0 = 2 pi n,  n = 2

set up as DeepXDE's ``Helmholtz_Dirichlet_2d`` example does it (``dde.data.PDE``
with 10 points per wavelength, a hard Dirichlet constraint through an output
transform, 3 x 150 sin layers, Glorot uniform, Adam 1e-3). Networks: ``dde.nn.FNN``,
``deepxde_lnn.LNN`` with its default blocks (the network's own sin) and with the
paper's tanh blocks (``block_activation="tanh"``, the default before). Prints the
test relative L2 error per seed and the seconds per step.

    python benchmarks/helmholtz_dropin.py --seeds 0 --iterations 5000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde
import torch

N_WAVES = 2
K0 = 2 * np.pi * N_WAVES


def pde(x, u):
    u_xx = dde.grad.hessian(u, x, i=0, j=0)
    u_yy = dde.grad.hessian(u, x, i=1, j=1)
    f = K0**2 * torch.sin(K0 * x[:, 0:1]) * torch.sin(K0 * x[:, 1:2])
    return -u_xx - u_yy - K0**2 * u - f


def exact(x):
    return np.sin(K0 * x[:, 0:1]) * np.sin(K0 * x[:, 1:2])


def zero_on_edges(x, u):
    return x[:, 0:1] * (1 - x[:, 0:1]) * x[:, 1:2] * (1 - x[:, 1:2]) * u


NETS = {
    "FNN (sin)": lambda s: dde.nn.FNN(s, "sin", "Glorot uniform"),
    "LNN, default blocks": lambda s: deepxde_lnn.LNN(s, "sin", "Glorot uniform"),
    "LNN, tanh blocks": lambda s: deepxde_lnn.LNN(
        s, "sin", "Glorot uniform", block_activation="tanh"
    ),
}


def train(make, seed: int, args) -> tuple[float, float]:
    dde.config.set_random_seed(seed)
    per_side = int(N_WAVES * args.points_per_wavelength)
    data = dde.data.PDE(
        dde.geometry.Rectangle([0, 0], [1, 1]),
        pde,
        [],
        num_domain=per_side**2,
        num_boundary=4 * per_side,
        solution=exact,
        num_test=(3 * per_side) ** 2,
    )
    net = make([2] + [args.width] * 3 + [1])
    net.apply_output_transform(zero_on_edges)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, metrics=["l2 relative error"], verbose=0)
    t = time.perf_counter()
    _, state = model.train(
        iterations=args.iterations, display_every=args.iterations, verbose=0
    )
    per_step = (time.perf_counter() - t) / args.iterations
    return float(np.asarray(state.best_metrics).ravel()[0]), per_step


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0")
    p.add_argument("--iterations", type=int, default=5000)
    p.add_argument("--width", type=int, default=150)
    p.add_argument("--points-per-wavelength", type=int, default=10)
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(
        f"Helmholtz, n = {N_WAVES}, width {args.width} x 3, Adam 1e-3, "
        f"{args.iterations} steps; test relative L2 error"
    )
    print(f"{'network':<22} {'relL2 per seed':<30} {'s/step':>8}")
    for name, make in NETS.items():
        res = [train(make, s, args) for s in seeds]
        shown = " ".join(f"{e:.2e}" for e, _ in res)
        per = float(np.median([t for _, t in res]))
        print(f"{name:<22} {shown:<30} {per:>8.4f}", flush=True)


if __name__ == "__main__":
    main()
