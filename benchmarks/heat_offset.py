"""Where heat's error lies: its constant level or its shape, per ablation variant.

Heat's temperature is 3 K plus a 0.07 K paraboloid; the Laplacian fixes the shape,
only the Robin boundary (h_nd = 0.047) fixes the level. Each run's record holds the
mean offset of theta over the grid and the RMSE with that offset removed
(``extra_metrics``). Printed per variant of an ablation folder (its ``steps/``
records, read as JSON): the geometric means over seeds of the RMSE, |mean offset|
and offset-removed RMSE, and the offset-removed RMSE's ratio to ``pinn`` with its
95 % interval and verdict (paired by seed, as the report judges the RMSE; one
family, Holm's adjustment in brackets where it changes a verdict).

    python benchmarks/heat_offset.py docs/results/ablate-settled-heat
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from deepxde_lnn.analysis.stats import holm, ratio_ci
from deepxde_lnn.config import record_problem
from deepxde_lnn.runs.records import load_runs


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help="an ablate folder of the heat case")
    args = p.parse_args(argv)
    runs = load_runs(args.folder / "steps", options=record_problem)
    by: dict[str, dict[int, dict]] = {}
    for r in runs:
        by.setdefault(r["method"], {})[r["seed"]] = r

    def shape(m):
        return {s: r["extra_metrics"]["theta_offset_removed_RMSE"] for s, r in
                by[m].items()}  # fmt: skip

    names = sorted(by)
    cis = [None if m == "pinn" else ratio_ci(shape(m), shape("pinn")) for m in names]
    adjusted = holm(cis)
    print(f"{'variant':28s} {'RMSE':>9s} {'|offset|':>9s} {'shape':>9s}  shape vs pinn")
    for m, ci, adj in zip(names, cis, adjusted):
        runs_m = by[m].values()
        rmse = geomean(r["metrics"]["theta"]["RMSE"] for r in runs_m)
        off = geomean(abs(r["extra_metrics"]["theta_mean_offset"]) for r in runs_m)
        shp = geomean(shape(m).values())
        if ci is None:
            verdict = "baseline"
        else:
            verdict = f"{ci.ratio:.3g} ({ci.low:.3g}-{ci.high:.3g}) {ci.verdict}"
            verdict += f" (Holm: {adj})" if adj and adj != ci.verdict else ""
        print(f"{m:28s} {rmse:9.2e} {off:9.2e} {shp:9.2e}  {verdict}")


if __name__ == "__main__":
    main()
