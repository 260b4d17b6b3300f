"""What the drop-in costs per step: DeepXDE's Euler-beam example with FNN and LNN.

    u'''' = -1 on (0, 1),  u(0) = u'(0) = 0,  u''(1) = u'''(1) = 0
    exact: u = -x^4/24 + x^3/6 - x^2/4

set up as DeepXDE's ``euler_beam`` example does it: ``dde.data.PDE`` with 10
domain and 2 boundary points, the fourth derivative through ``dde.grad.hessian``
twice, Adam 1e-3, ``[1, w, w, w, 1]`` tanh networks, Glorot uniform. Networks:
``dde.nn.FNN`` and ``deepxde_lnn.LNN`` (the blocks' arithmetic is what differs;
DeepXDE's autograd derivatives go through them). Each network's steps are timed
on this process's CPU clock with one torch thread (a step's own cost, which other
work on the machine slows far less than the wall clock), wall clock beside it;
the networks alternate, ``--repeats`` times, and the median is printed with the
ratio LNN / FNN and the parameter ratio.

    python benchmarks/dropin_cost.py
    python benchmarks/dropin_cost.py --widths 20,64 --steps 300 --repeats 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde
import torch


def ddy(x, y):
    return dde.grad.hessian(y, x)


def dddy(x, y):
    return dde.grad.jacobian(ddy(x, y), x)


def pde(x, y):
    return dde.grad.hessian(ddy(x, y), x) + 1


def exact(x):
    return -(x**4) / 24 + x**3 / 6 - x**2 / 4


def data() -> dde.data.PDE:
    geom = dde.geometry.Interval(0, 1)

    def left(x, on):
        return on and dde.utils.isclose(x[0], 0)

    def right(x, on):
        return on and dde.utils.isclose(x[0], 1)

    bcs = [
        dde.icbc.DirichletBC(geom, lambda x: 0, left),
        dde.icbc.NeumannBC(geom, lambda x: 0, left),
        dde.icbc.OperatorBC(geom, lambda x, y, _: ddy(x, y), right),
        dde.icbc.OperatorBC(geom, lambda x, y, _: dddy(x, y), right),
    ]
    return dde.data.PDE(
        geom, pde, bcs, num_domain=10, num_boundary=2, solution=exact, num_test=100
    )


NETS = {
    "FNN": lambda s: dde.nn.FNN(s, "tanh", "Glorot uniform"),
    "LNN": lambda s: deepxde_lnn.LNN(s, "tanh", "Glorot uniform"),
}


def time_net(make, width: int, steps: int, warmup: int) -> tuple[float, float, int]:
    """(CPU s/step, wall s/step, parameters) of ``steps`` Adam steps after
    ``warmup`` untimed ones."""
    dde.config.set_random_seed(0)
    net = make([1] + [width] * 3 + [1])
    model = dde.Model(data(), net)
    model.compile("adam", lr=1e-3, verbose=0)
    model.train(iterations=warmup, display_every=10**9, verbose=0)
    cpu, wall = time.process_time(), time.perf_counter()
    model.train(iterations=steps, display_every=10**9, verbose=0)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    params = sum(p.numel() for p in net.parameters() if p.requires_grad)
    return cpu / steps, wall / steps, params


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--widths", default="20,64")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    print(
        f"Euler beam (DeepXDE's example), {args.steps} steps x {args.repeats} "
        "repeats alternated, median ms/step, one thread"
    )
    print(
        f"{'width':>5} {'network':<5} {'params':>7} {'CPU ms':>8} {'wall ms':>8} "
        f"{'CPU ratio':>9} {'param ratio':>11}"
    )
    for width in map(int, args.widths.split(",")):
        times = {name: [] for name in NETS}
        params = {}
        for _ in range(args.repeats):
            for name, make in NETS.items():
                cpu, wall, params[name] = time_net(
                    make, width, args.steps, args.warmup
                )
                times[name].append((cpu, wall))
        med = {n: np.median(np.array(t), axis=0) * 1e3 for n, t in times.items()}
        for name in NETS:
            cpu, wall = med[name]
            ratio = cpu / med["FNN"][0]
            pr = params[name] / params["FNN"]
            print(
                f"{width:>5} {name:<5} {params[name]:>7,} {cpu:>8.3f} {wall:>8.3f} "
                f"{ratio:>9.2f} {pr:>11.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
