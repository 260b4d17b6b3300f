"""Does the liquid block help on DeepXDE's 1-D Poisson problem? Plain DeepXDE,
compared over seeds with ``deepxde_lnn.compare(data=..., nets=...)``.

    -u''(x) = pi^2 sin(pi x)   on [-1, 1],   u(-1) = u(1) = 0
    exact: u = sin(pi x)

    python docs/examples/poisson_1d.py --iterations 2000 --out runs/poisson_1d
"""

import argparse

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde


def poisson_1d():
    """DeepXDE's data: 16 interior and 2 boundary training points, 100 test
    points, and the exact solution to score against."""
    line = dde.geometry.Interval(-1, 1)

    def residual(x, u):
        return -dde.grad.hessian(u, x) - np.pi**2 * dde.backend.sin(np.pi * x)

    ends = dde.icbc.DirichletBC(line, lambda x: 0, lambda x, on: on)
    return dde.data.PDE(
        line,
        residual,
        ends,
        num_domain=16,
        num_boundary=2,
        solution=lambda x: np.sin(np.pi * x),
        num_test=100,
    )


SIZES = [1, 50, 50, 50, 1]
NETS = {
    "lnn": lambda: deepxde_lnn.LNN(SIZES, "tanh", "Glorot uniform"),
    "fnn": lambda: dde.nn.FNN(SIZES, "tanh", "Glorot uniform"),
}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", default="runs/poisson_1d")
    args = parser.parse_args()
    result = deepxde_lnn.compare(
        data=poisson_1d,
        nets=NETS,
        baseline="fnn",  # judge the LNN against the plain network
        seeds=[int(s) for s in args.seeds.split(",")],
        iterations=args.iterations,
        lr=1e-3,
        out=args.out,
    )
    print(result)
