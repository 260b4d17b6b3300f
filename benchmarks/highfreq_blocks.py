"""When the drop-in is not safe: a high-frequency problem with sin activations.

    -u'' = (k pi)^2 sin(k pi x)  on (0, 1),   u(0) = u(1) = 0,   u = sin(k pi x)

solved the way a DeepXDE user would (``dde.data.PDE`` with a small fixed set of
collocation points, sin activations, wide layers, Adam), with ``dde.nn.FNN``,
``deepxde_lnn.LNN`` with the paper's tanh blocks (``block_activation="tanh"``), and
``LNN`` whose blocks follow the network's activation (the default, ``"same"``). Prints the relative L2
error on 1000 points and the seconds per step, per seed.

    python benchmarks/highfreq_blocks.py --seeds 0,1,2 --iterations 3000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde
import torch

K = 4  # sin(k pi x), k = 4 by default (--k)


def pde(x, u):
    return -dde.grad.hessian(u, x) - (K * np.pi) ** 2 * torch.sin(K * np.pi * x)


def exact(x):
    return np.sin(K * np.pi * x)


def nets(width: int, depth: int) -> dict:
    sizes = [1] + [width] * depth + [1]
    return {
        "FNN (sin)": lambda: dde.nn.FNN(sizes, "sin", "Glorot uniform"),
        "LNN, tanh blocks": lambda: deepxde_lnn.LNN(
            sizes, "sin", "Glorot uniform", block_activation="tanh"
        ),
        "LNN, sin blocks": lambda: deepxde_lnn.LNN(sizes, "sin", "Glorot uniform"),
    }


def train(make, seed: int, args) -> tuple[float, float]:
    dde.config.set_random_seed(seed)
    geom = dde.geometry.Interval(0, 1)
    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda _, on: on)
    data = dde.data.PDE(geom, pde, bc, args.points, 2, solution=exact, num_test=1000)
    model = dde.Model(data, make())
    model.compile("adam", lr=args.lr, metrics=["l2 relative error"], verbose=0)
    t = time.perf_counter()
    model.train(iterations=args.iterations, display_every=args.iterations, verbose=0)
    per_step = (time.perf_counter() - t) / args.iterations
    x = np.linspace(0, 1, 1000)[:, None].astype(dde.config.real(np))
    err = np.linalg.norm(model.predict(x) - exact(x)) / np.linalg.norm(exact(x))
    return float(err), per_step


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--iterations", type=int, default=3000)
    p.add_argument("--points", type=int, default=64, help="fixed collocation points")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--k", type=int, default=K, help="frequency: u = sin(k pi x)")
    args = p.parse_args(argv)
    globals()["K"] = args.k
    if args.threads:
        torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(
        f"-u'' = f, u = sin({K} pi x); {args.points} fixed points, width "
        f"{args.width} x {args.depth}, Adam lr {args.lr}, {args.iterations} steps"
    )
    print(f"{'network':<18} {'relL2 per seed':<36} {'geo-mean':>9} {'s/step':>8}")
    for name, make in nets(args.width, args.depth).items():
        res = [train(make, s, args) for s in seeds]
        errs = [e for e, _ in res]
        gm = float(np.exp(np.mean(np.log(errs))))
        per = float(np.median([t for _, t in res]))
        shown = " ".join(f"{e:.2e}" for e in errs)
        print(f"{name:<18} {shown:<36} {gm:>9.2e} {per:>8.4f}")


if __name__ == "__main__":
    main()
