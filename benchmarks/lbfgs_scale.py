"""Why the accurate profile's L-BFGS minimises the loss scaled to 1 at the switch.

torch's L-BFGS keeps a curvature pair ``(s, y)`` only if ``y.s > 1e-10``, an
absolute threshold. This trains one case/method/seed in the accurate profile twice
(the same Adam phase, then L-BFGS on the raw loss, then on the scaled loss of
``accurate.ScaledLBFGS``) and prints, per variant: the share of L-BFGS iterations
whose pair torch compared below the threshold (dropped), the final loss, the grid
RMSE of the first field and the training seconds.

    python benchmarks/lbfgs_scale.py --case drift_decay --method pinn --seed 888890
"""

from __future__ import annotations

import argparse
import tempfile

import torch

from deepxde_lnn.config import RunConfig
from deepxde_lnn.study import registry
from deepxde_lnn.training import accurate, phases, runner

THRESHOLD = 1e-10  # torch.optim.LBFGS's hard-coded curvature test


class _Probe:
    """Records, per ``step()``, the ``y.s`` torch compares with the threshold."""

    def step(self, closure):
        state = self.state.get(self.param_groups[0]["params"][0], {})
        d, t, g0 = (state.get(k) for k in ("d", "t", "prev_flat_grad"))
        d = None if d is None else d.clone()
        g0 = None if g0 is None else g0.clone()
        seen = {}

        def grab():
            loss = closure()
            seen.setdefault("g", self._gather_flat_grad().clone())
            return loss

        out = super().step(grab)
        if d is not None and g0 is not None:
            scale = self.param_groups[0].get("loss_scale") or 1.0
            # g0 is what torch stored (scaled), seen["g"] the raw gradient
            self.ys.append(float((seen["g"] * scale - g0).dot(d * t)))
        return out


class PlainProbe(_Probe, torch.optim.LBFGS):
    ys: list


class ScaledProbe(_Probe, accurate.ScaledLBFGS):
    ys: list


def train(cfg: RunConfig, probe) -> tuple[dict, list]:
    made = []

    def make(params):
        opt = accurate.make_lbfgs(params)
        opt.__class__ = probe
        opt.ys = []
        made.append(opt)
        return opt

    phases.make_lbfgs, saved = make, phases.make_lbfgs
    try:
        with tempfile.TemporaryDirectory() as out:
            rec = runner.run(cfg, out, case=registry.get(cfg.case))
    finally:
        phases.make_lbfgs = saved
    return rec, made[-1].ys


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="drift_decay")
    ap.add_argument("--method", default="pinn")
    ap.add_argument("--seed", type=int, default=888890)
    ap.add_argument("--lbfgs", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    cfg = RunConfig(
        args.case, args.method, seed=args.seed, profile="accurate", lbfgs=args.lbfgs
    )
    print("| L-BFGS on | pairs dropped | final loss | grid RMSE | seconds |")
    print("|---|---|---|---|---|")
    for name, probe in (("raw loss", PlainProbe), ("loss scaled to 1", ScaledProbe)):
        rec, ys = train(cfg, probe)
        dropped = sum(v <= THRESHOLD for v in ys) / max(len(ys), 1)
        rmse = next(iter(rec["metrics"].values()))["RMSE"]
        print(
            f"| {name} | {dropped:.0%} | {rec['final_loss']['total']:.3e} | "
            f"{rmse:.3e} | {rec['train_seconds']:.0f} |"
        )


if __name__ == "__main__":
    main()
