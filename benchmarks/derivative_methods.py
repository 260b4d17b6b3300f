"""One residual's forward and backward by three exact methods: Taylor-mode jets,
``torch.func`` and DeepXDE's nested autograd.

The residual's sum of squares and its parameter gradient on ``--points`` random
points, one torch thread, this process's CPU time, median of ``--repeats`` after
3 untimed calls, in ms. Laplace (a Laplacian: ``taylor.laplacian``;
``vmap(jacfwd(jacrev(u)))``; ``jvp`` of ``grad`` per axis; ``dde.grad.hessian``)
and drift-decay (a first derivative along (1, -2): a 1-jet; ``torch.func.jvp``;
``dde.grad.jacobian``), on the cases' LNN and PINN.

    python benchmarks/derivative_methods.py
"""

from __future__ import annotations

import argparse
import statistics
import time

import deepxde as dde
import torch

from deepxde_lnn.networks import taylor
from deepxde_lnn.study import registry


def timed(fn, repeats: int) -> float:
    for _ in range(3):
        fn()
    ts = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return 1e3 * statistics.median(ts)


def backward(r, params) -> None:
    torch.autograd.grad((r**2).sum(), params, allow_unused=True)


def laplacians(net, x, params) -> dict:
    def u(xi):  # one point (d,) -> a scalar
        return net(xi.unsqueeze(0))[0, 0]

    def by_hessian(xi):
        return torch.func.jacfwd(torch.func.jacrev(u))(xi).diagonal().sum()

    eye = torch.eye(x.shape[1])

    def by_jvp_of_grad(xi):
        g = torch.func.grad(u)
        return sum(torch.func.jvp(g, (xi,), (e,))[1][i] for i, e in enumerate(eye))

    def nested():
        xx = x.clone().requires_grad_()
        y = net(xx)
        r = dde.grad.hessian(y, xx, i=0, j=0) + dde.grad.hessian(y, xx, i=1, j=1)
        backward(r, params)
        dde.grad.clear()

    return {
        "jets": lambda: backward(taylor.laplacian(net, x)[1], params),
        "func jacfwd(jacrev)": lambda: backward(torch.func.vmap(by_hessian)(x), params),
        "func jvp(grad)": lambda: backward(torch.func.vmap(by_jvp_of_grad)(x), params),
        "nested autograd": nested,
    }


def first_derivatives(net, x, params) -> dict:
    v = torch.tensor([1.0, -2.0])

    def jets():
        u, du = taylor.directional_derivatives(net, x, v, 1)
        backward(du - u, params)

    def func():
        u, du = torch.func.jvp(net, (x,), (v.expand_as(x),))
        backward(du - u, params)

    def nested():
        xx = x.clone().requires_grad_()
        u = net(xx)
        u_x = dde.grad.jacobian(u, xx, i=0, j=0)
        backward(u_x - 2 * dde.grad.jacobian(u, xx, i=0, j=1) - u, params)
        dde.grad.clear()

    return {"jets": jets, "func jvp": func, "nested autograd": nested}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--points", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=15)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x = torch.rand(args.points, 2)
    for name, methods in (("laplace", laplacians), ("drift_decay", first_derivatives)):
        for method in ("lnn", "pinn"):
            net = registry.get(name).build_net(method)
            params = [q for q in net.parameters() if q.requires_grad]
            cells = methods(net, x, params)
            ms = ", ".join(
                f"{k} {timed(f, args.repeats):.1f}" for k, f in cells.items()
            )
            print(f"{name} {method} (ms): {ms}", flush=True)


if __name__ == "__main__":
    main()
