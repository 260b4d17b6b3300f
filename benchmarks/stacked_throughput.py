"""Throughput of K seeds trained as one stacked model vs K separate runs.

Separate runs take the reference path (``dde.Model`` + ``ResampledPDE``, as
``runner.run``); K of them in sequence take K times one run's time. The stack
(``deepxde_lnn.training.stacking``, trained by the same ``dde.Model`` loop) trains K
seeds per step. Printed per K: seconds per
step, run-steps per second (K / t), runs per hour at the profile's iteration count
and the speedup ``K * t_single / t_stacked`` over K sequential separate runs.
Timings cover ``--steps`` steps after ``--warmup`` steps (sampling included, the
final evaluation excluded); with ``--repeats`` the measurements are interleaved and
the median is printed.

    python benchmarks/stacked_throughput.py --case laplace --method lnn \\
        --profile paper --steps 20 --threads 4 --device auto
    python benchmarks/stacked_throughput.py --matmul --derivatives autograd
    python benchmarks/stacked_throughput.py --cuda-graph --ks 1,10,30
    python benchmarks/stacked_throughput.py --matrix --cuda-graph --steps 20

``--cuda-graph`` steps every timed model through
:class:`~deepxde_lnn.training.graphed.GraphedStep` (one CUDA graph per step on a
GPU; the capture falls in the warm-up steps). ``--matrix`` times every case and
method of the reproduction matrix at the paper's counts and prints its estimated
training time.

``--matmul`` times variants of the stacked forward's batched linear layer, "vmap"
being the generic rule (the layer's own ``forward`` under ``torch.func.vmap``) that
any stage without a stacked rule takes (Taylor-mode jets use their own, vmapped,
layers: compare with ``--derivatives autograd``).
"""

from __future__ import annotations

import argparse
import time

import deepxde as dde
import numpy as np
import torch

from deepxde_lnn.networks import stacked
from deepxde_lnn.problems.methods import METHODS
from deepxde_lnn.study import registry
from deepxde_lnn.training import stacking
from deepxde_lnn.training.graphed import GraphedStep

MATMULS = {
    "baddbmm": lambda h, w, b: torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2)),
    "bmm+add": lambda h, w, b: torch.bmm(h, w.transpose(1, 2)) + b.unsqueeze(1),
    "matmul+add": lambda h, w, b: torch.matmul(h, w.transpose(1, 2)) + b.unsqueeze(1),
    "einsum+add": lambda h, w, b: torch.einsum("kni,koi->kno", h, w) + b.unsqueeze(1),
    "vmap": None,
}


def linear_rule(fn):
    """A stacked rule for ``Linear`` stages computing ``fn(h, W, b)`` (``None``:
    the generic vmap rule)."""
    if fn is None:
        return stacked._vmapped

    def rule(net, m):
        w, b = net._slot(m, "weight"), net._slot(m, "bias")
        return lambda h: fn(h, net.params[w], net.params[b])

    return rule


def get_case(name: str):
    return registry.get(name)


def sync() -> None:
    if torch.cuda.is_available() and torch.get_default_device().type == "cuda":
        torch.cuda.synchronize()


#: the clock that times steps: wall time, or this process's CPU time (one thread:
#: a step's own cost, whatever else the machine runs; ``settled_cost.py``)
NOW = {"clock": time.perf_counter}


class Clock:
    """Times the steps between tick number ``start`` and tick number ``stop``."""

    def __init__(self, start: int, stop: int):
        self.start, self.stop, self.n, self.t = start, stop, 0, {}

    def tick(self) -> None:
        self.n += 1
        if self.n in (self.start, self.stop):
            sync()
            self.t[self.n] = NOW["clock"]()

    def per_step(self) -> float:
        return (self.t[self.stop] - self.t[self.start]) / (self.stop - self.start)


GRAPH = {"on": False}  # --cuda-graph: every timed model steps through GraphedStep


def time_model(
    case, method, prof, seeds, steps, warmup, derivatives, compile_jets=False, out=None
) -> float:
    """s/step of the runs ``seeds`` trained by one ``dde.Model`` (the runner's
    loop): one run's own data and net, or K seeds stacked. ``out`` (a dict) gets
    ``first``: the seconds of the first step (a compile included)."""
    datas, nets = [], []
    for seed in seeds:
        dde.config.set_random_seed(seed)
        data = case.build_data(method, prof, seed, compile_jets=compile_jets)
        data.derivatives = derivatives
        datas.append(data)
        nets.append(case.build_net(method))
    if len(seeds) == 1:
        model = dde.Model(datas[0], nets[0])
    else:
        model = dde.Model(stacking.StackedData(datas), stacked.StackedNet(nets))
    model.compile("adam", lr=prof.lr, verbose=0)
    if GRAPH["on"]:
        GraphedStep(model).install()
    # ticks at the start of iterations warmup+1 and warmup+steps+1: the last
    # iteration (with DeepXDE's final evaluation) is not timed
    clock = Clock(warmup + 1, warmup + steps + 1)
    first = Clock(1, 2)

    class Tick(dde.callbacks.Callback):
        def on_batch_begin(self):
            clock.tick()
            first.tick()

    iters = warmup + steps + 1
    model.train(iterations=iters, display_every=iters, callbacks=[Tick()], verbose=0)
    if out is not None:
        out["first"] = first.per_step()
    return clock.per_step()


def time_separate(case, method, prof, steps, warmup, derivatives, seed=0) -> float:
    """s/step of one run on the reference path."""
    return time_model(case, method, prof, [seed], steps, warmup, derivatives)


def time_stacked(case, method, prof, k, steps, warmup, derivatives) -> float:
    """s/step of K seeds as one stacked model."""
    return time_model(case, method, prof, list(range(k)), steps, warmup, derivatives)


def throughput_table(args, case, prof) -> None:
    ks = [int(k) for k in args.ks.split(",")]
    single, ens = [], {k: [] for k in ks}
    run = (args.steps, args.warmup, args.derivatives)
    for _ in range(args.repeats):  # interleaved: every setting sees the same load
        single.append(time_separate(case, args.method, prof, *run))
        for k in ks:
            ens[k].append(time_stacked(case, args.method, prof, k, *run))
    t1 = float(np.median(single))
    per_hour = 3600.0 / prof.iterations
    print(f"separate run (dde.Model): {t1:.4f} s/step, {per_hour / t1:.2f} runs/hour")
    print(
        f"{'K':>4} {'s/step':>9} {'run-steps/s':>12} {'runs/hour':>10} {'K*t1/t_K':>9}"
    )
    for k in ks:
        t = float(np.median(ens[k]))
        print(
            f"{k:>4} {t:>9.4f} {k / t:>12.2f} {k * per_hour / t:>10.2f} "
            f"{k * t1 / t:>9.2f}"
        )


def matmul_table(args, case, prof) -> None:
    k = int(args.ks.split(",")[-1])
    times = {name: [] for name in MATMULS}
    run = (args.steps, args.warmup, args.derivatives)
    rules = stacked._STACKED_RULES
    original = rules[torch.nn.Linear]
    try:
        for _ in range(args.repeats):
            for name, fn in MATMULS.items():
                rules[torch.nn.Linear] = linear_rule(fn)
                times[name].append(time_stacked(case, args.method, prof, k, *run))
    finally:
        rules[torch.nn.Linear] = original
    print(f"batched linear layer, K={k} (s/step, min over {args.repeats} repeats)")
    for name, ts in times.items():
        print(f"  {name:<11} {min(ts):.4f}")


MATRIX_METHODS = ("lnn", "pinn", "pinn-matched", "rba", "xpinn")
MATRIX_CASES = ("drift_decay", "laplace", "heat", "beam", "rel_b", "rel_c")


def matrix_table(args) -> None:
    """The reproduction matrix's training time on this device: every case and
    method, ``--seeds`` seeds at the paper's step counts, a method's seeds
    stacked when it can be (else one after another); runs in sequence."""
    k, total = args.seeds, 0.0
    run = (args.steps, args.warmup, args.derivatives)
    print(f"{'case':<12} {'method':<13} {'K':>2} {'s/step':>9} {'steps':>6} {'min':>7}")
    for name in MATRIX_CASES:
        case = get_case(name)
        prof = case.profile("paper")
        for method in MATRIX_METHODS:
            try:
                case.check_method(method)
            except ValueError:  # e.g. no XPINN split for this case
                continue
            stack = case.stackable(method)
            seeds = list(range(k)) if stack else [0]
            t = time_model(case, method, prof, seeds, *run)
            minutes = prof.iterations * t * (1 if stack else k) / 60
            total += minutes
            print(
                f"{name:<12} {method:<13} {len(seeds):>2} {t:>9.4f} "
                f"{prof.iterations:>6} {minutes:>7.1f}"
            )
    print(f"matrix ({k} seeds, paper steps, in sequence): {total:.1f} minutes")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", default="laplace")
    p.add_argument("--method", default="lnn", choices=METHODS)
    p.add_argument("--profile", default="paper", choices=("quick", "paper"))
    p.add_argument("--steps", type=int, default=20, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--ks", default="1,2,3,5,10,30", help="comma-separated K values")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    p.add_argument("--derivatives", default="taylor", choices=("taylor", "autograd"))
    p.add_argument("--matmul", action="store_true", help="compare matmul variants")
    p.add_argument(
        "--cuda-graph",
        action="store_true",
        help="step through GraphedStep (one CUDA graph per step on a GPU)",
    )
    p.add_argument(
        "--matrix",
        action="store_true",
        help="estimate the reproduction matrix (6 cases x 5 methods, --seeds each)",
    )
    p.add_argument("--seeds", type=int, default=3, help="seeds per cell (--matrix)")
    args = p.parse_args(argv)
    GRAPH["on"] = args.cuda_graph
    if args.warmup < 1 or args.steps < 1 or args.repeats < 1:
        p.error("--warmup, --steps and --repeats must be >= 1")

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: CUDA is not available")
    torch.set_default_device(device)  # DeepXDE picks CUDA by itself when present
    if args.threads:
        torch.set_num_threads(args.threads)
    dde.config.set_default_float(args.dtype)
    case = get_case(args.case)
    prof = case.profile(args.profile)
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    print(
        f"{case.name} / {args.method} / {args.profile} profile "
        f"({prof.iterations} iterations), {args.dtype}, {name}, "
        f"{torch.get_num_threads()} threads; {args.steps} steps timed after "
        f"{args.warmup}"
    )
    if args.matrix:
        matrix_table(args)
    else:
        (matmul_table if args.matmul else throughput_table)(args, case, prof)


if __name__ == "__main__":
    main()
