"""Milliseconds per run-step on the six cases: each method alone and 8 seeds stacked.

Every cell trains ``--steps`` timed steps (after ``--warmup``) of the runner's loop
(``dde.Model`` with the case's data, sampling included; the code of
``stacked_throughput.py``) at the ``--profile``'s point counts, one torch thread,
timed on this process's CPU clock (``--clock``). A stacked cell's time is the
stack's step over its seeds (a run-step). Cells are interleaved over
``--repeats`` (every cell sees the same load) and the median is printed, with
``lnn``'s ratio to ``pinn-matched`` (the plain network of its parameter count).

Each cell is timed with eager jets and, where the runner's default
(``compile_jets="auto"``) compiles a model of the profile's steps and K seeds, on
that default path as well: its run-step time and its first step's seconds (the
compile, cold or from PyTorch's cache). The last lines total the profile's
training over the cases for K = ``--seeds`` stacked seeds per method: run-step
time x steps x seeds, eager and by default (the compiles counted).

    python benchmarks/case_table.py
    python benchmarks/case_table.py --cases beam,heat --repeats 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from stacked_throughput import NOW, get_case, time_model

from deepxde_lnn.networks import compiled
from deepxde_lnn.study.catalog import NAMES

METHODS = ("lnn", "pinn", "pinn-matched")


def cell(case, method, prof, k, args, compile_jets=False) -> tuple[float, float]:
    """(s per run-step, first step's seconds) of ``k`` seeds in one model."""
    k = k if case.stackable(method) else 1
    out: dict = {}
    t = time_model(case, method, prof, list(range(k)), args.steps, args.warmup,
                   "taylor", compile_jets, out)  # fmt: skip
    return t / k, out["first"]


def row(case, prof, k, args) -> dict:
    """Per method: (eager s/run-step, default s/run-step, compile seconds)."""
    methods = args.methods.split(",")
    auto = compiled.wanted("auto", prof.total_steps, k)
    eager = {m: [] for m in methods}
    comp = {m: [] for m in methods}
    for _ in range(args.repeats):
        for m in methods:
            eager[m].append(cell(case, m, prof, k, args)[0])
            if auto:
                comp[m].append(cell(case, m, prof, k, args, True))
    out = {}
    for m in methods:
        e = float(np.median(eager[m]))
        if auto:
            c = float(np.median([t for t, _ in comp[m]]))
            out[m] = (e, c, max(f for _, f in comp[m]))  # the cold one, if any
        else:
            out[m] = (e, e, 0.0)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(NAMES))
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--profile", default="settled")
    p.add_argument("--ks", default="1,8", help="seeds per model")
    p.add_argument("--seeds", type=int, default=8, help="seeds per method in totals")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    NOW["clock"] = time.process_time if args.clock == "cpu" else time.perf_counter
    ks = [int(k) for k in args.ks.split(",")]
    print(
        f"profile {args.profile}; {args.steps} steps after {args.warmup}, median of "
        f"{args.repeats}, one thread, {args.clock} clock; ms per run-step, eager "
        "jets / the default path (c: compiled, its first step's seconds)"
    )
    print(f"{'case':12s} {'K':>2s}  " + "  ".join(f"{m:>24s}" for m in
          args.methods.split(",")) + f"  {'lnn/matched':>11s}")  # fmt: skip
    totals = [0.0, 0.0]
    for name in args.cases.split(","):
        case = get_case(name)
        prof = case.profile(args.profile)
        for k in ks:
            cells = row(case, prof, k, args)
            text = f"{name:12s} {k:>2d}  "
            for e, d, first in cells.values():
                shown = f"{1e3 * d:.2f} (c, {first:.0f} s)" if first else "-"
                text += f"{1e3 * e:9.2f} / {shown:>12s}  "
            if "lnn" in cells and "pinn-matched" in cells:
                text += f"{cells['lnn'][0] / cells['pinn-matched'][0]:11.2f}"
            print(text, flush=True)
            if k == args.seeds:
                steps = (prof.iterations or 0) * k
                totals[0] += sum(e * steps for e, _, _ in cells.values())
                totals[1] += sum(d * steps + f for _, d, f in cells.values())
    if args.seeds in ks:
        print(
            f"training {args.profile} ({args.seeds} seeds stacked per method): "
            f"eager {totals[0] / 60:.1f} min, by default {totals[1] / 60:.1f} min "
            "(CPU time, one thread)"
        )


if __name__ == "__main__":
    main()
