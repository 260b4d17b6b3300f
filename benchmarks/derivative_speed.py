"""Step time of every case's ``lnn`` and ``pinn``: Taylor-mode jets (today's path)
against DeepXDE's nested autograd.

For every case, profile (those of ``--profiles`` the case declares: the paper's
cases have quick, settled and accurate, PINNacle's quick and pinnacle) and
method, both paths train the same model with the runner's loop (``dde.Model``
on the case's data at the profile's point counts and dtype, sampling included)
for ``--steps`` timed Adam steps after ``--warmup`` (the first step compiles
compiled jets). ``--compile-jets auto`` (the default) compiles the jets where the
runner's ``compile_jets="auto"`` would for a study run of the profile (its
steps of every phase x its seeds: :func:`deepxde_lnn.networks.compiled.wanted`);
``on`` and ``off`` force either. The two paths alternate, ``--repeats`` times each, in this one
process on one torch thread; the medians are printed, this process's CPU time
beside wall time, and the ratio autograd / jets of the CPU times. The last lines
give, per method and profile, the smallest ratio and the geometric mean over the
cases. An L-BFGS phase (the accurate profile's) is not timed.

    python benchmarks/derivative_speed.py                  # every case (hours)
    python benchmarks/derivative_speed.py --quick          # a smoke test
    python benchmarks/derivative_speed.py --profiles quick --steps 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import deepxde as dde
import numpy as np
import torch

from deepxde_lnn.networks import compiled
from deepxde_lnn.study import registry
from deepxde_lnn.training.phases import multi_tensor
from deepxde_lnn.training.stack import kept_float, quiet_float

PATHS = ("taylor", "autograd")  # ResampledPDE's derivatives: jets, nested autograd


def step_times(case, method, prof, derivatives, args) -> tuple:
    """(CPU s, wall s) per Adam step of one run on the ``derivatives`` path and
    the record's ``derivatives``."""
    quiet_float(prof.dtype)
    dde.config.set_random_seed(0)
    setting = {"on": True, "off": False}.get(args.compile_jets, "auto")
    fused = compiled.wanted(setting, prof.total_steps, prof.n_seeds)
    data = case.build_data(method, prof, 0, compile_jets=fused)
    data.derivatives = derivatives
    model = dde.Model(data, case.build_net(method))
    model.compile("adam", lr=prof.lr, verbose=0)
    multi_tensor(model.opt)  # as the runner's Adam
    ticks = []

    class Tick(dde.callbacks.Callback):
        def on_batch_begin(self):
            ticks.append((time.process_time(), time.perf_counter()))

    # ticks at the start of every iteration: the last one (with DeepXDE's final
    # evaluation) is not timed
    steps, warmup = args.steps, args.warmup
    iters = warmup + steps + 1
    model.train(iterations=iters, display_every=iters, callbacks=[Tick()], verbose=0)
    (c0, w0), (c1, w1) = ticks[warmup], ticks[warmup + steps]
    return (c1 - c0) / steps, (w1 - w0) / steps, data.describe_derivatives(model.net)


def cell(case, method, prof, args) -> dict:
    """Median (CPU, wall) s/step per path, the paths alternated."""
    got: dict = {p: [] for p in PATHS}
    how = {}
    for _ in range(args.repeats):
        for path in PATHS:
            cpu, wall, how[path] = step_times(case, method, prof, path, args)
            got[path].append((cpu, wall))
    out = {
        p: tuple(statistics.median(t[i] for t in got[p]) for i in (0, 1)) for p in PATHS
    }
    out["how"] = how["taylor"]
    return out


def row(name, prof_name, method, c) -> str:
    (jc, jw), (ac, aw) = c["taylor"], c["autograd"]
    ms = [f"{1e3 * t:.1f}" for t in (jc, jw, ac, aw)]
    jets = "compiled" if "compiled" in c["how"] else "eager"
    return (
        f"| {name} | {prof_name} | {method} | {jets} | "
        + " | ".join(ms)
        + f" | {ac / jc:.2f} |"
    )


def summary(ratios: dict) -> list[str]:
    lines = ["", "| method | profile | cases | smallest ratio | geometric mean |"]
    lines.append("|---|---|---|---|---|")
    for (method, prof), rs in sorted(ratios.items()):
        worst = min(rs, key=rs.get)
        geo = float(np.exp(np.mean(np.log(list(rs.values())))))
        lines.append(
            f"| {method} | {prof} | {len(rs)} | {rs[worst]:.2f} ({worst}) | {geo:.2f} |"
        )
    return lines


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(registry.NAMES))
    p.add_argument("--methods", default="lnn,pinn")
    p.add_argument("--profiles", default="quick,settled,accurate,pinnacle")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--compile-jets", choices=("auto", "on", "off"), default="auto")
    p.add_argument(
        "--quick",
        action="store_true",
        help="a smoke test: drift_decay and burgers1d, quick profile, 2 eager steps",
    )
    args = p.parse_args(argv)
    if args.quick:
        args.cases, args.profiles = "drift_decay,burgers1d", "quick"
        args.steps, args.warmup, args.repeats = 2, 1, 1
        args.compile_jets = "off"
    if args.warmup < 1:
        p.error("--warmup must be at least 1 (the first step compiles)")
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread; {args.steps} steps after")
    print(f"{args.warmup}, median of {args.repeats}; compile-jets {args.compile_jets};")
    print("ms per step\n")
    print(
        "| case | profile | method | jets | jets CPU | jets wall | autograd CPU |",
        end="",
    )
    print(" autograd wall | autograd / jets (CPU) |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios: dict = {}
    hows = {}
    with kept_float():
        for name in args.cases.split(","):
            case = registry.get(name)
            for prof_name in args.profiles.split(","):
                if prof_name not in case.profiles:
                    continue
                prof = case.profile(prof_name)
                for method in args.methods.split(","):
                    c = cell(case, method, prof, args)
                    hows[name] = c["how"]
                    print(row(name, prof_name, method, c), flush=True)
                    jc, ac = c["taylor"][0], c["autograd"][0]
                    ratios.setdefault((method, prof_name), {})[name] = ac / jc
    print("\n".join(summary(ratios)))
    print("\nThe jets' record (`derivatives`), per case (its last profile's):\n")
    for name, how in hows.items():
        print(f"- {name}: {how}")


if __name__ == "__main__":
    main()
