"""What an NNCG iteration costs against an L-BFGS iteration, on a paper case.

For each method, one run of the accurate profile cut to 2 Adam steps and
``--lbfgs`` L-BFGS iterations, then the same run followed by ``--nncg`` NNCG
iterations, then the first again (alternated, so a change of load shows as a
difference between the two plain runs). An NNCG iteration's seconds are the
difference over ``--nncg``; an L-BFGS iteration's, the plain run's over
``--lbfgs`` (its two Adam steps and set-up included: an upper bound). Wall and
CPU seconds, one torch thread.

    python benchmarks/finisher_cost.py beam --methods lnn,pinn
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("DDE_BACKEND", "pytorch")

import torch  # noqa: E402

from deepxde_lnn.config import RunConfig  # noqa: E402
from deepxde_lnn.study import registry  # noqa: E402
from deepxde_lnn.training.runner import run  # noqa: E402


def seconds(case, method: str, lbfgs: int, nncg: int, out: str) -> tuple:
    """(wall, CPU) training seconds of one run."""
    cfg = RunConfig(
        case.name,
        method,
        profile="accurate",
        iterations=2,
        lbfgs=lbfgs,
        nncg=nncg,
        checkpoint_every=10**6,
    )
    rec = run(cfg, out, problem=case, overwrite=True)
    return rec["train_seconds"], rec["cpu_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case")
    parser.add_argument("--methods", default="lnn,pinn")
    parser.add_argument("--lbfgs", type=int, default=10)
    parser.add_argument("--nncg", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    case = registry.get(args.case)
    scratch = tempfile.mkdtemp()
    print(f"{args.case}: seconds per iteration, wall (CPU), one thread")
    for method in args.methods.split(","):
        plain = [seconds(case, method, args.lbfgs, 0, f"{scratch}/a")]
        both = seconds(case, method, args.lbfgs, args.nncg, f"{scratch}/b")
        plain.append(seconds(case, method, args.lbfgs, 0, f"{scratch}/c"))
        base = [sum(p[i] for p in plain) / 2 for i in (0, 1)]
        lbfgs = [b / args.lbfgs for b in base]
        nncg = [(both[i] - base[i]) / args.nncg for i in (0, 1)]
        print(
            f"  {method}: L-BFGS {lbfgs[0]:.3f} ({lbfgs[1]:.3f}), NNCG {nncg[0]:.2f} "
            f"({nncg[1]:.2f}): {nncg[0] / lbfgs[0]:.0f}x; plain runs "
            f"{plain[0][0]:.2f} and {plain[1][0]:.2f} s"
        )


if __name__ == "__main__":
    main()
