"""The optimizer's share of a step: torch's Adam one tensor after another (its
default on a CPU) against all tensors at once (``foreach``, what the runner sets:
:func:`deepxde_lnn.training.phases.multi_tensor`), on the shipped cases' LNNs.

The two alternate ``--repeats`` times in this one process, one torch thread, each
timing ``--steps`` Adam steps on fixed random gradients (CPU time: this process's;
the minimum of the repeats). The last column checks that both reach the same
parameters bit for bit after those steps in float64.

    python benchmarks/adam_step.py
    python benchmarks/adam_step.py --cases laplace --steps 100 --repeats 2
"""

from __future__ import annotations

import argparse
import copy
import time

import torch

from deepxde_lnn.study import registry
from deepxde_lnn.training.phases import multi_tensor


def adam(net: torch.nn.Module, at_once: bool) -> torch.optim.Adam:
    """Adam over ``net``'s parameters, one tensor after another or all at once,
    each with a fixed random gradient."""
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, foreach=False)
    if at_once:
        for group in opt.param_groups:
            group["foreach"] = None
        multi_tensor(opt)
    gen = torch.Generator().manual_seed(0)
    for p in net.parameters():
        p.grad = torch.randn(p.shape, generator=gen, dtype=p.dtype)
    return opt


def ms_per_step(net: torch.nn.Module, at_once: bool, steps: int) -> float:
    opt = adam(copy.deepcopy(net), at_once)
    opt.step()  # the moments allocated
    start = time.process_time()
    for _ in range(steps):
        opt.step()
    return (time.process_time() - start) / steps * 1e3


def same_numbers(net: torch.nn.Module, steps: int) -> bool:
    """Both ways reach the same float64 parameters bit for bit."""
    ends = []
    for at_once in (False, True):
        twin = copy.deepcopy(net).double()
        opt = adam(twin, at_once)
        for _ in range(steps):
            opt.step()
        ends.append(torch.cat([p.detach().flatten() for p in twin.parameters()]))
    return torch.equal(*ends)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="drift_decay,laplace,beam,ns2d_lid_driven")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread; {args.steps} Adam steps,")
    print(f"minimum of {args.repeats}, CPU ms per step\n")
    print(
        "| case | network | parameters | tensors | one at a time | all at once |",
        end="",
    )
    print(" ratio | same numbers |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.cases.split(","):
        net = registry.get(name).build_net("lnn")
        got: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.repeats):
            for at_once in (False, True):
                got[at_once].append(ms_per_step(net, at_once, args.steps))
        one, many = min(got[False]), min(got[True])
        params = list(net.parameters())
        print(
            f"| {name} | lnn | {sum(q.numel() for q in params):,} | {len(params)} "
            f"| {one:.3f} | {many:.3f} | {one / many:.2f} "
            f"| {'yes' if same_numbers(net, 20) else 'NO'} |"
        )


if __name__ == "__main__":
    main()
