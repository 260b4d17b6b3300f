"""The settled profile's CPU cost per case and method, cheapest first.

Each cell (case, method) trains its seeds as one stacked model, as ``deepxde-lnn
compare CASE --profile settled`` does: ``--steps`` steps of that model are timed
after ``--warmup`` (the runner's ``dde.Model`` loop, sampling included; the code of
``stacked_throughput.py``), cells one after another on ``--threads`` torch threads.
Printed per cell: seconds per step and run (the stack's step over its seeds, as
records report it), the profile's steps, the seeds, and the estimated cost s/step
x steps x seeds (seconds of ``--threads`` cores; the final evaluation, the summary
and process start are not counted); then per case, cheapest first, and the total.
Steps are timed on this process's CPU clock (``--clock cpu``, one thread: a
step's own cost, which the machine's other work slows far less than the wall
clock), each cell ``--repeats`` times, interleaved, the fastest kept.

    python benchmarks/settled_cost.py --threads 1
    python benchmarks/settled_cost.py --cases heat,beam --steps 20 --seeds 15
    python benchmarks/settled_cost.py --profile settled-paper
"""

from __future__ import annotations

import argparse
import os
import time

import stacked_throughput
import torch
from stacked_throughput import get_case, time_model

from deepxde_lnn.study.catalog import NAMES
from deepxde_lnn.study.shipped import SETTLED

METHODS = ("lnn", "pinn", "pinn-matched")


def cell(case, method: str, prof, seeds: int, args) -> tuple[float, int]:
    """(s/step per run, runs in one model) of ``method``'s ``seeds`` seeds:
    stacked where the method can be, else one run timed and multiplied."""
    k = seeds if case.stackable(method) else 1
    t = time_model(case, method, prof, list(range(k)), args.steps, args.warmup,
                   "taylor")  # fmt: skip
    return t / k, k


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(NAMES))
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--profile", default=SETTLED[0], choices=SETTLED)
    p.add_argument("--seeds", type=int, default=None, help="default: the profile's")
    p.add_argument("--steps", type=int, default=10, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument(
        "--repeats", type=int, default=3, help="interleaved timings; the fastest"
    )
    p.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="this process's CPU time (default; needs --threads 1) or wall time",
    )
    args = p.parse_args(argv)
    if min(args.steps, args.warmup, args.repeats, args.seeds or 1) < 1:
        p.error("--steps, --warmup, --repeats and --seeds must be >= 1")
    if args.clock == "cpu" and args.threads != 1:
        p.error("--clock cpu needs --threads 1 (CPU time sums over threads)")
    clocks = {"cpu": time.process_time, "wall": time.perf_counter}
    stacked_throughput.NOW["clock"] = clocks[args.clock]
    torch.set_default_device("cpu")
    torch.set_num_threads(args.threads)
    grid = []
    for name in args.cases.split(","):
        case = get_case(name)
        prof = case.profile(args.profile)
        grid += [(name, case, prof, m) for m in args.methods.split(",")]
    times: dict[tuple, list] = {}
    loads = []
    for _ in range(args.repeats):  # interleaved: every cell sees the same load
        loads.append(os.getloadavg()[0])  # step times grow with other work
        for name, case, prof, method in grid:
            seeds = args.seeds or prof.n_seeds
            times.setdefault((name, method), []).append(
                cell(case, method, prof, seeds, args)
            )
    cells = []
    for name, case, prof, method in grid:
        # the fastest repeat: the least disturbed by the machine's other work
        t, k = min(times[name, method])
        seeds = args.seeds or prof.n_seeds
        cost = t * prof.iterations * seeds
        cells.append((cost, name, method, t, prof.iterations, seeds, k))
    print(
        f"profile {args.profile}, {args.threads} thread(s), {args.steps} steps "
        f"timed after {args.warmup} ({args.clock} clock), the fastest of "
        f"{args.repeats} repeats; load "
        f"average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores; "
        "cost = s/step x steps x seeds, cheapest first"
    )
    print(f"{'case':<12} {'method':<13} {'s/step':>8} {'steps':>6} {'seeds':>5} "
          f"{'stack':>5} {'cost s':>8} {'min':>6}")  # fmt: skip
    for cost, name, method, t, steps, seeds, k in sorted(cells):
        print(f"{name:<12} {method:<13} {t:>8.4f} {steps:>6} {seeds:>5} {k:>5} "
              f"{cost:>8.0f} {cost / 60:>6.1f}")  # fmt: skip
    totals: dict[str, float] = {}
    for cost, name, *_ in cells:
        totals[name] = totals.get(name, 0.0) + cost
    print("per case (all methods), cheapest first:")
    for name, cost in sorted(totals.items(), key=lambda kv: kv[1]):
        print(f"  {name:<12} {cost:>8.0f} s {cost / 60:>6.1f} min")
    total = sum(totals.values())
    print(f"total {total:.0f} s = {total / 3600:.2f} h of {args.threads} core(s)")


if __name__ == "__main__":
    main()
