"""Milliseconds per run-step on the six cases: each method alone and 8 seeds stacked.

Every cell trains ``--steps`` timed steps (after ``--warmup``) of the runner's loop
(``dde.Model`` with the case's data, sampling included; the code of
``stacked_throughput.py``) at the ``--profile``'s point counts, one torch thread,
timed on this process's CPU clock with the wall clock beside it (``--clock``). A
stacked cell's time is the stack's step over its seeds (a run-step). Cells are
interleaved over ``--repeats`` (every cell sees the same load) and the median is
printed, with ``lnn``'s ratio to ``pinn-matched`` (the plain network of its
parameter count). ``--compiled`` adds the Taylor-mode residuals through
``torch.compile``: their run-step time, the first step's seconds (the compile,
cold or from PyTorch's cache) and the steps after which the compile has paid
for itself.

    python benchmarks/case_table.py
    python benchmarks/case_table.py --cases beam,heat --compiled --repeats 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from stacked_throughput import NOW, get_case, time_model

from deepxde_lnn.study.catalog import NAMES

METHODS = ("lnn", "pinn", "pinn-matched")


def cell(case, method, prof, k, args, compile_jets=False) -> tuple[float, float]:
    """(s per run-step, first step's seconds) of ``k`` seeds in one model."""
    k = k if case.stackable(method) else 1
    out: dict = {}
    t = time_model(case, method, prof, list(range(k)), args.steps, args.warmup,
                   "taylor", compile_jets, out)  # fmt: skip
    return t / k, out["first"]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(NAMES))
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--profile", default="settled")
    p.add_argument("--ks", default="1,8", help="seeds per model")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    p.add_argument("--compiled", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    NOW["clock"] = time.process_time if args.clock == "cpu" else time.perf_counter
    ks = [int(k) for k in args.ks.split(",")]
    print(
        f"profile {args.profile}; {args.steps} steps after {args.warmup}, median of "
        f"{args.repeats}, one thread, {args.clock} clock; ms per run-step"
    )
    head = f"{'case':12s} {'K':>2s} " + " ".join(f"{m:>12s}" for m in METHODS)
    print(
        head
        + f" {'lnn/matched':>11s}"
        + (
            "  compiled lnn, pinn; first-step s; pays after (steps)"
            if args.compiled
            else ""
        )
    )
    for name in args.cases.split(","):
        case = get_case(name)
        prof = case.profile(args.profile)
        for k in ks:
            times = {m: [] for m in args.methods.split(",")}
            comp = {m: [] for m in ("lnn", "pinn")} if args.compiled else {}
            for _ in range(args.repeats):
                for m in times:
                    times[m].append(cell(case, m, prof, k, args)[0])
                for m in comp:
                    comp[m].append(cell(case, m, prof, k, args, True))
            ms = {m: 1e3 * float(np.median(v)) for m, v in times.items()}
            row = f"{name:12s} {k:>2d} " + " ".join(f"{ms[m]:12.2f}" for m in ms)
            if "lnn" in ms and "pinn-matched" in ms:
                row += f" {ms['lnn'] / ms['pinn-matched']:11.2f}"
            for m, v in comp.items():
                c = 1e3 * float(np.median([t for t, _ in v]))
                first = max(f for _, f in v)  # the cold one, if any
                gain = (ms[m] - c) * k / 1e3  # seconds saved per step of the model
                pays = f"{first / gain:.0f}" if gain > 0 else "never"
                row += f"  {m} {c:.2f} ({first:.0f} s, {pays})"
            print(row, flush=True)


if __name__ == "__main__":
    main()
