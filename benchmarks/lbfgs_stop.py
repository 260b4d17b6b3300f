"""Where the accurate profile's L-BFGS stops, and what the seeds' spread follows.

Reads the run records below a folder (default ``docs/results/accurate``: Adam with
decay, then L-BFGS on the loss scaled to 1 at the switch) and prints, per case:
the runs, how their L-BFGS phase ended (``lbfgs_stop``: converged, or the
iteration cap), the spread of the summary field's relL2 over all runs (max / min),
that of the final training loss, and Spearman's rank correlation of the relL2
with the loss at the switch (1 / ``lbfgs_loss_scale``) and with the final loss.
A phase that stops early at a high loss (a stalled line search) would show as
``converged`` with a large final loss; a phase cut by its cap shows as ``cap``,
its seeds spread as far as their final losses.

    python benchmarks/lbfgs_stop.py
    python benchmarks/lbfgs_stop.py docs/results/accurate
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
from scipy.stats import spearmanr

from deepxde_lnn.config import record_problem
from deepxde_lnn.problems.metrics import summary_field
from deepxde_lnn.runs.records import load_runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="docs/results/accurate")
    args = parser.parse_args()
    by_case: dict = {}
    for r in load_runs(args.folder, options=record_problem):
        if r.get("lbfgs_loss_scale"):
            by_case.setdefault(r["case"], []).append(r)
    print("| case | runs | L-BFGS stops | relL2 max/min | final loss max/min "
          "| rho(switch loss, relL2) | rho(final loss, relL2) |")  # fmt: skip
    print("|---" * 7 + "|")
    for case, runs in by_case.items():
        field = summary_field(list(runs[0]["metrics"]))
        rel = np.array([r["metrics"][field]["relL2"] for r in runs])
        switch = np.array([1 / r["lbfgs_loss_scale"] for r in runs])
        final = np.array([r["final_loss"]["total"] for r in runs])
        stops = Counter(r.get("lbfgs_stop", "?") for r in runs)
        print(
            f"| {case} | {len(runs)} | "
            + ", ".join(f"{k} {n}" for k, n in stops.items())
            + f" | {rel.max() / rel.min():.1f} | {final.max() / final.min():.1f} "
            f"| {spearmanr(switch, rel).statistic:.2f} "
            f"| {spearmanr(final, rel).statistic:.2f} |"
        )


if __name__ == "__main__":
    main()
