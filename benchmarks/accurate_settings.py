"""How the accurate profile's settings were chosen: grid RMSE along training for
pool sizes (fractions of the paper's point counts), Adam steps and L-BFGS caps.

    python benchmarks/accurate_settings.py --cases laplace,drift_decay \\
        --fractions 1,0.25 --adam 2000 --lbfgs 3000 --every 500

Each (case, fraction) trains one run of the accurate profile (float64, fixed pool,
Adam with the profile's decay, then L-BFGS) through the package's runner and
prints the RMSE of every field on the case's evaluation grid every ``--every``
steps, at the Adam -> L-BFGS switch and at the end, with the seconds spent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("DDE_BACKEND", "pytorch")

import deepxde as dde  # noqa: E402
import torch  # noqa: E402

from deepxde_lnn.config import RunConfig
from deepxde_lnn.problems.metrics import all_fields  # noqa: E402
from deepxde_lnn.study import registry  # noqa: E402
from deepxde_lnn.training.runner import predict, run  # noqa: E402


class ErrorCurve(dde.callbacks.Callback):
    """Grid RMSE per field every ``every`` steps and at ``marks``."""

    def __init__(self, case, every, marks):
        super().__init__()
        self.case, self.every, self.marks = case, every, set(marks)
        self.x, _ = case.grid.points()
        self.exact = case.exact(self.x)
        self.step, self.rows, self.t0 = 0, [], time.perf_counter()

    def on_batch_end(self):
        self.step += 1
        if self.step % self.every and self.step not in self.marks:
            return
        pred = predict(self.model.net, self.x)
        self.model.net.train()
        m = all_fields(pred, self.exact, self.case.fields)
        rmse = {f: m[f]["RMSE"] for f in self.case.fields}
        self.rows.append((self.step, time.perf_counter() - self.t0, rmse))


def one(name, fraction, method, seed, adam, lbfgs, every, out):
    case = registry.get(name)
    acc = case.profile("accurate")
    paper = case.make_terms(case.profile("paper"))
    counts = {t.name: max(1, round(fraction * t.n)) for t in paper}
    quick = replace(acc, counts=counts)
    trial = replace(case, profiles={**case.profiles, "quick": quick})
    cfg = RunConfig(name, method, seed=seed, iterations=adam, lbfgs=lbfgs)
    curve = ErrorCurve(case, every, [adam])
    folder = Path(out) / f"{name}-{method}-f{fraction:g}-a{adam}-l{lbfgs}-s{seed}"
    rec = run(cfg, folder, case=trial, callbacks=[curve], overwrite=True)
    return {
        "case": name,
        "method": method,
        "fraction": fraction,
        "points": sum(counts.values()),
        "adam": adam,
        "lbfgs_cap": lbfgs,
        "lbfgs_iterations": rec["lbfgs_iterations"],
        "lbfgs_stop": rec["lbfgs_stop"],
        "seconds": rec["train_seconds"],
        "rmse": {f: rec["metrics"][f]["RMSE"] for f in case.fields},
        "curve": curve.rows,
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="laplace,drift_decay")
    p.add_argument("--fractions", default="1,0.25")
    p.add_argument("--method", default="pinn")
    p.add_argument("--seed", type=int, default=888888)
    p.add_argument("--adam", type=int, default=2000)
    p.add_argument("--lbfgs", type=int, default=3000)
    p.add_argument("--every", type=int, default=500)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--out", default="runs/accurate-settings")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    results = []
    for name in args.cases.split(","):
        for fraction in map(float, args.fractions.split(",")):
            r = one(
                name,
                fraction,
                args.method,
                args.seed,
                args.adam,
                args.lbfgs,
                args.every,
                args.out,
            )
            results.append(r)
            print(json.dumps(r), flush=True)
    print(
        "\n| case | pool | points | step | seconds | RMSE |\n|---|---|---|---|---|---|"
    )
    for r in results:
        for step, sec, rmse in r["curve"]:
            err = ", ".join(f"{f} {v:.3e}" for f, v in rmse.items())
            print(
                f"| {r['case']} | {r['fraction']:g} | {r['points']} | {step} | "
                f"{sec:.0f} | {err} |"
            )
        print(
            f"| {r['case']} | {r['fraction']:g} | {r['points']} | end "
            f"({r['lbfgs_iterations']} L-BFGS, {r['lbfgs_stop']}) | "
            f"{r['seconds']:.0f} | "
            + ", ".join(f"{f} {v:.3e}" for f, v in r["rmse"].items())
            + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
