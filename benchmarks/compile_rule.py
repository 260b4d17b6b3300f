"""Does compiling the jets pay in float64 and in L-BFGS? The measurements behind
``compile_jets="auto"`` (:func:`deepxde_lnn.networks.compiled.wanted`).

For every case and method, one run at ``--profile``'s point counts and dtype (the
accurate profile: float64, one fixed point set, Adam then L-BFGS) trains on eager
jets and on compiled jets, the two alternated ``--repeats`` times in this process
on one torch thread, timed on this process's CPU clock: the first Adam step (on the
compiled path: the compile, cold in a fresh cache folder with ``--cold``), then
``--adam`` Adam steps and ``--lbfgs`` L-BFGS iterations (DeepXDE's, as the runner
runs them). Printed per cell: ms per Adam step and per L-BFGS iteration, eager
then compiled, their ratios, the compile's seconds, and the run-steps after which
the compile has paid for itself (its seconds over the time saved per step, the
L-BFGS iteration's saving where it is the smaller).

    python benchmarks/compile_rule.py --cold
    python benchmarks/compile_rule.py --cases beam --methods lnn --adam 10 --lbfgs 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import deepxde as dde
import torch

from deepxde_lnn.study import registry
from deepxde_lnn.training.stack import kept_float, quiet_float


def phases(case, method, prof, compile_jets: bool, args) -> tuple:
    """(first step s, s per Adam step, s per L-BFGS iteration), CPU clock."""
    quiet_float(prof.dtype)
    dde.config.set_random_seed(0)
    data = case.build_data(method, prof, 0, compile_jets=compile_jets)
    model = dde.Model(data, case.build_net(method))
    model.compile("adam", lr=prof.lr, verbose=0)
    clock = time.process_time
    t0 = clock()
    model.train(iterations=1, display_every=10**6, verbose=0)
    t1 = clock()
    model.train(iterations=args.adam, display_every=10**6, verbose=0)
    t2 = clock()
    dde.optimizers.set_LBFGS_options(maxiter=args.lbfgs)
    model.compile("L-BFGS", verbose=0)
    before = model.train_state.step
    t3 = clock()
    model.train(display_every=10**6, verbose=0)
    t4 = clock()
    done = max(1, model.train_state.step - before)
    return t1 - t0, (t2 - t1) / args.adam, (t4 - t3) / done


def cell(case, method, prof, args) -> dict:
    """Per path (False: eager, True: compiled) of :func:`phases`: the first
    step's longest (the cold compile), the medians of the others."""
    got: dict = {False: [], True: []}
    for _ in range(args.repeats):
        for path in got:
            got[path].append(phases(case, method, prof, path, args))
    return {
        p: [max(t[0] for t in v)] + [statistics.median(t[i] for t in v) for i in (1, 2)]
        for p, v in got.items()
    }


def line(name, method, c) -> str:
    (_, ea, el), (first, ca, cl) = c[False], c[True]
    saved = min(ea - ca, el - cl)
    pays = f"{first / saved:.0f}" if saved > 0 else "never"
    ms = " | ".join(f"{1e3 * t:.1f}" for t in (ea, ca, el, cl))
    return (
        f"| {name} | {method} | {ms} | {ea / ca:.2f} | {el / cl:.2f} | "
        f"{first:.1f} | {pays} |"
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="drift_decay,laplace,heat,beam,rel_b,rel_c")
    p.add_argument("--methods", default="lnn,pinn")
    p.add_argument("--profile", default="accurate")
    p.add_argument("--adam", type=int, default=20)
    p.add_argument("--lbfgs", type=int, default=20)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--cold", action="store_true", help="a fresh compile cache")
    args = p.parse_args(argv)
    if args.cold:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor.")
    torch.set_num_threads(1)
    print(
        f"torch {torch.__version__}, 1 thread, CPU clock; profile {args.profile}; "
        f"{args.adam} Adam steps and {args.lbfgs} L-BFGS iterations after a first "
        f"step, median of {args.repeats}; compile cache "
        f"{'cold' if args.cold else 'as found'}\n"
    )
    print("| case | method | Adam eager | Adam compiled | L-BFGS eager | ", end="")
    print("L-BFGS compiled | Adam ratio | L-BFGS ratio | compile s | pays after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with kept_float():
        for name in args.cases.split(","):
            case = registry.get(name)
            prof = case.profile(args.profile)
            for method in args.methods.split(","):
                torch._dynamo.reset()  # each cell's compile counted in full
                print(line(name, method, cell(case, method, prof, args)), flush=True)


if __name__ == "__main__":
    main()
