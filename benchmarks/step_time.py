"""Seconds per training step: our DeepXDE path vs a minimal hand-written PyTorch loop.

Both sides train the same network (same initialisation seed) on the paper protocol's
point counts with the same derivatives; the hand-written loop draws its points with
``torch.rand`` on the device and runs PyTorch's own ``torch.tanh``, as the
authors' scripts do. Each measurement is repeated, interleaved (ours, hand, ours,
hand, ...) and the median is reported, so both sides see the same machine load.
Printed: s/step and the ratio ours/hand.

    python benchmarks/step_time.py                       # all landed cases
    python benchmarks/step_time.py --cases laplace --steps 100 --repeats 5
    python benchmarks/step_time.py --threads 1 --clock cpu  # on a loaded machine
    python benchmarks/step_time.py --compile    # compiled jets for every case

Ours is timed twice: with eager jets, and on the runner's default path for one
run at the paper's step count (``default``: compiled jets where
``compile_jets="auto"`` compiles such a run, ``deepxde_lnn.networks.compiled.wanted``;
``--compile``: compiled for every case). A cold compile falls in the warm-up steps.
"""

from __future__ import annotations

import argparse
import time

import deepxde as dde
import numpy as np
import torch

from deepxde_lnn.networks import compiled
from deepxde_lnn.problems.build import build_net
from deepxde_lnn.problems.data import ResampledPDE
from deepxde_lnn.study import registry
from deepxde_lnn.training.controller import Controller, Signals

grad = torch.autograd.grad


def d(u, x, j):
    """du/dx_j (create_graph: the loss is differentiated again)."""
    return grad(u.sum(), x, create_graph=True)[0][:, j : j + 1]


def rand(n, lo, hi, dev, fix=None):
    lo_t, hi_t = torch.tensor(lo, device=dev), torch.tensor(hi, device=dev)
    x = lo_t + (hi_t - lo_t) * torch.rand(n, len(lo), device=dev)
    if fix is not None:
        x[:, fix[0]] = fix[1]
    return x.requires_grad_()


def hand_laplace(net, c, dev):
    lo, hi = (0.0, 0.0), (1.0, 1.0)
    x = rand(c["pde"], lo, hi, dev)
    u = net(x)
    g = grad(u.sum(), x, create_graph=True)[0]
    lap = d(g[:, 0:1], x, 0) + d(g[:, 1:2], x, 1)
    loss = lap.square().mean()
    loss = loss + net(rand(c["bottom"], lo, hi, dev, (1, 0.0))).square().mean()
    loss = loss + (net(rand(c["top"], lo, hi, dev, (1, 1.0))) - 1).square().mean()
    for name, v in (("left", 0.0), ("right", 1.0)):
        xb = rand(c[name], lo, hi, dev, (0, v))
        loss = loss + d(net(xb), xb, 0).square().mean()
    return loss


def hand_drift_decay(net, c, dev):
    lo, hi = (0.0, 0.0), (2.0, 1.0)
    x = rand(c["pde"], lo, hi, dev)
    u = net(x)
    g = grad(u.sum(), x, create_graph=True)[0]
    loss = (g[:, 0:1] - 2 * g[:, 1:2] - u).square().mean()
    xi = rand(c["ic"], lo, hi, dev, (1, 0.0))
    loss = loss + (net(xi) - 6 * torch.exp(-3 * xi[:, 0:1])).square().mean()
    xb = rand(c["inflow"], lo, hi, dev, (0, 2.0))
    loss = loss + (net(xb) - 6 * torch.exp(-6 - 2 * xb[:, 1:2])).square().mean()
    return loss


def hand_beam(net, c, dev):
    lo, hi = (0.0, 0.0), (1.0, 1.0)
    x = rand(c["pde"], lo, hi, dev)
    u = net(x)
    g = grad(u.sum(), x, create_graph=True)[0]
    u_xx = d(g[:, 0:1], x, 0)
    u_yy = d(g[:, 1:2], x, 1)
    u_yyyy = d(d(u_yy, x, 1), x, 1)
    f = (2 - x[:, 0:1] ** 2) * torch.exp(-x[:, 1:2])
    loss = (u_xx - u_yyyy - f).square().mean()

    def exact(z):
        return z[:, 0:1] ** 2 * torch.exp(-z[:, 1:2])

    for name, fix in (("bottom_uyy", (1, 0.0)), ("top_uyy", (1, 1.0))):
        xb = rand(c[name], lo, hi, dev, fix)
        ub = net(xb)
        u_yy_b = d(d(ub, xb, 1), xb, 1)
        loss = loss + (u_yy_b - exact(xb)).square().mean()
    for name, fix in (
        ("bottom", (1, 0.0)),
        ("top", (1, 1.0)),
        ("left", (0, 0.0)),
        ("right", (0, 1.0)),
    ):
        xb = rand(c[name], lo, hi, dev, fix)
        loss = loss + (net(xb) - exact(xb)).square().mean()
    return loss


def hand_heat(net, c, dev):
    q_nd, h_nd = 0.2830188679245283, 0.04716981132075472
    xi = torch.rand(c["pde"], 2, device=dev)
    r, phi = xi[:, 0:1].sqrt(), 2 * torch.pi * xi[:, 1:2]
    x = torch.cat([r * torch.cos(phi), r * torch.sin(phi)], 1).requires_grad_()
    g = grad(net(x).sum(), x, create_graph=True)[0]
    loss = (d(g[:, 0:1], x, 0) + d(g[:, 1:2], x, 1) + q_nd).square().mean()
    phi = 2 * torch.pi * torch.rand(c["robin"], 1, device=dev)
    xb = torch.cat([torch.cos(phi), torch.sin(phi)], 1).requires_grad_()
    ub = net(xb)
    gb = grad(ub.sum(), xb, create_graph=True)[0]
    loss = loss + ((gb * xb).sum(1, keepdim=True) + h_nd * ub).square().mean()
    return loss


HAND = {
    "laplace": hand_laplace,
    "drift_decay": hand_drift_decay,
    "beam": hand_beam,
    "heat": hand_heat,
}


WARMUP = 5
#: wall time, or this process's CPU time (``--clock cpu``, one thread: a step's own
#: time on a machine shared with others)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter


class _Clock(dde.callbacks.Callback):
    """Timestamps at the end of every step (after the optimizer update)."""

    def __init__(self):
        super().__init__()
        self.t = []

    def on_batch_end(self):
        _sync()
        self.t.append(clock())


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def default_compiles(case) -> bool:
    """Whether the runner compiles the jets of one run at the paper's steps."""
    return compiled.wanted("auto", case.profile("paper").total_steps)


def time_ours(case, method, steps, compile_jets=False):
    """Steady-state s/step of the runner's path (ResampledPDE + dde.Model + the
    runner's per-step controller), from the end of step WARMUP to the end of step
    steps - 1: DeepXDE's evaluation on the last step (and every display_every
    steps, 0.1 % of a paper run at display_every = 1000) is left out."""
    dde.config.set_random_seed(0)
    kwargs = {"compile_jets": True} if compile_jets else {}
    data = ResampledPDE(case.make_terms(case.profile("paper")), seed=0, **kwargs)
    net = build_net(method, case)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-4, verbose=0)
    ctl = Controller(data, 0, steps, 10**9, None, Signals(), None)
    clock = _Clock()
    model.train(
        iterations=steps, display_every=10**9, callbacks=[ctl, clock], verbose=0
    )
    t = clock.t
    return (t[-2] - t[WARMUP - 1]) / (len(t) - 1 - WARMUP)


def hand_step(case, method):
    """One step of the hand-written loop (the authors' way), as a callable."""
    dde.config.set_random_seed(0)
    net = build_net(method, case)
    dev = next(net.parameters()).device
    counts = {t.name: t.n for t in case.make_terms(case.profile("paper"))}
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    loss = HAND[case.name]

    def step():
        opt.zero_grad()
        loss(net, counts, dev).backward()
        opt.step()

    return step


def time_hand(case, method, steps):
    step = hand_step(case, method)
    t = []
    for _ in range(steps - 1):
        step()
        _sync()
        t.append(clock())
    return (t[-1] - t[WARMUP - 1]) / (len(t) - WARMUP)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--cases", default=",".join(c for c in registry.available() if c in HAND)
    )
    p.add_argument("--methods", default="lnn,pinn")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    p.add_argument(
        "--compile", action="store_true", help="also time ours with compiled jets"
    )
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.clock == "cpu" and torch.get_num_threads() != 1:
        p.error("--clock cpu needs --threads 1 (CPU time sums over threads)")
    globals()["clock"] = CLOCKS[args.clock]
    dev = (
        "cuda"
        if torch.cuda.is_available()
        else f"cpu ({torch.get_num_threads()} threads)"
    )
    print(
        f"device: {dev}; {args.steps} steps x {args.repeats} repeats, median s/step "
        f"({args.clock} clock)"
    )
    head = f"{'case':12s} {'method':8s} {'eager':>10s} {'hand':>10s} {'ratio':>7s}"
    print(head + f" {'default':>10s} {'path':>8s} {'ratio':>7s}")
    for name in args.cases.split(","):
        case = registry.get(name)
        both = args.compile or default_compiles(case)
        for method in args.methods.split(","):
            eager, hand, comp = [], [], []
            for _ in range(args.repeats):  # interleaved: the same load for each
                eager.append(time_ours(case, method, args.steps))
                if name in HAND:
                    hand.append(time_hand(case, method, args.steps))
                if both:
                    comp.append(time_ours(case, method, args.steps, True))
            e = float(np.median(eager))
            h = float(np.median(hand)) if hand else None
            row = f"{e:10.4f} " + (f"{h:10.4f}" if h else f"{'-':>10s}")
            row += " " + _ratio(e, h)
            d = float(np.median(comp)) if both else e
            path = "compiled" if both else "eager"
            row += f" {d:10.4f} {path:>8s} " + _ratio(d, h)
            print(f"{name:12s} {method:8s} {row}", flush=True)


def _ratio(ours: float, hand: float | None) -> str:
    # relativistic: no hand loop, see benchmarks/relativistic_residual.py
    return f"{'-':>7s}" if hand is None else f"{ours / hand:7.2f}"


if __name__ == "__main__":
    main()
