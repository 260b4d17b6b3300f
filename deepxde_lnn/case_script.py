"""What a case file needs to run as a script, the way a DeepXDE example does.

A case file ends with ``deepxde_lnn.main(CASE)`` under ``if __name__ ==
"__main__":`` (:func:`main`), so ``python cases/laplace.py --method pinn
--iterations 2000`` trains with DeepXDE's own ``Model.compile``/``Model.train``
(its loss table included) and then prints the errors on the case's evaluation
grid. The flags mean what they mean in
``deepxde-lnn run``: ``--method``, ``--seed`` and the training options that a
script honours (``script=True`` in :mod:`deepxde_lnn.config`: ``--profile``,
``--iterations``, ``--lr``, ``--decay``, ``--loss-weights``, ``--dtype``,
``--lbfgs``, ...; the others are refused, never ignored); defaults come from the
profile (``quick`` unless asked). With L-BFGS (the ``accurate`` profile) a script
continues the DeepXDE way, ``model.compile("L-BFGS"); model.train()`` (DeepXDE's
own loop, whose iteration cap ``parse_args`` sets).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import deepxde as dde
import numpy as np

from .config import RunConfig, Training, option_fields
from .flags import Parser, add_options, chosen_options, parse_seed
from .networks import compiled
from .problems.build import build_data, build_net
from .problems.case import Case, Profile
from .problems.data import ResampledPDE
from .problems.methods import METHODS
from .problems.metrics import all_fields, errors_line
from .study import registry
from .training.accurate import unit_scale
from .training.graphed import GraphedStep
from .training.nncg import nncg_options

if TYPE_CHECKING:
    import torch

__all__ = ["ExampleArgs", "main", "parse_args", "print_errors"]

# a script trains with DeepXDE's own loop: the training options it does not
# honour (no time budget, no checkpoints, ...) are refused (argparse's
# "unrecognized arguments"), as the options declare (``script``)
SCRIPT_REFUSES = tuple(
    name for name, f in option_fields(Training).items() if not f.metadata["script"]
)


@dataclass(frozen=True)
class ExampleArgs:
    """Validated script settings: the run's configuration (the profile's values
    with any command-line overrides) and the profile it was resolved from."""

    config: RunConfig
    profile: Profile

    def __getattr__(self, name: str) -> Any:  # args.lr, args.iterations, ...
        return getattr(self.config, name)

    def data(self, case: Case) -> ResampledPDE:
        """The method's training data: the case's terms with the profile's counts
        (changed as the method needs, e.g. XPINN interface terms), seeded."""
        cfg = self.config
        prof = replace(self.profile, iterations=cfg.iterations, lr=cfg.lr)
        compile_jets = compiled.wanted(cfg.compile_jets, cfg.total_steps)
        return build_data(cfg.method, case, prof, cfg.seed, compile_jets=compile_jets)

    def net(self, case: Case) -> torch.nn.Module:
        """The method's network, initialised under ``dde.config.set_random_seed``."""
        dde.config.set_random_seed(self.config.seed)
        return build_net(self.config.method, case)


def main(case: Case, argv: Sequence[str] | None = None) -> dict:
    """Train ``case`` as a DeepXDE example does: ``dde.Model``, Adam, then L-BFGS
    on the loss scaled to 1 where the profile has it; print and return the errors
    on the case's evaluation grid (:func:`print_errors`).

    Args:
        case: the case file's ``CASE``.
        argv: the flags (default: the command line; :func:`parse_args`); a bad
            value exits with one ``error:`` line.

    Returns:
        Per field, its errors (RMSE, MSE, MAE, relL2, MaxErr).
    """
    case = registry.as_script(case, sys.argv[0])  # a paper case: its profiles
    args = parse_args(case, argv)  # --method --profile --iterations --seed --lr ...
    model = dde.Model(args.data(case), args.net(case))
    model.compile(
        "adam", lr=args.lr, decay=args.decay, loss_weights=_weights(args.loss_weights)
    )
    if args.cuda_graph:
        GraphedStep(model).install()
    model.train(iterations=args.iterations, display_every=args.profile.display_every)
    if args.lbfgs:
        weights = unit_loss_weights(model, args.loss_weights)
        model.compile("L-BFGS", loss_weights=weights)
        model.train(display_every=args.profile.display_every)
    if args.nncg:
        dde.optimizers.set_NNCG_options(**nncg_options())
        model.compile("NNCG", loss_weights=_weights(args.loss_weights))
        model.train(iterations=args.nncg, display_every=args.profile.display_every)
    return print_errors(case, model)


def _weights(weights: tuple | None) -> list | None:
    """``loss_weights`` as DeepXDE's ``Model.compile`` takes them."""
    return None if weights is None else list(weights)


def parse_args(case: Case, argv: Sequence[str] | None = None) -> ExampleArgs:
    """Parse the script's flags (same names and checks as the CLI's ``run``) and
    set DeepXDE's float type; a bad value exits with one ``error:`` line."""
    prog = f"python {Path(sys.argv[0]).as_posix()}"  # the case file, as it was run
    parser = Parser(prog=prog, description=case.title)
    parser.add_argument("--method", default="lnn", help=f"one of {', '.join(METHODS)}")
    parser.add_argument("--seed", type=parse_seed, help="default: the profile's seed")
    add_options(parser, Training, exclude=SCRIPT_REFUSES)
    args = parser.parse_args(argv)
    try:
        cfg = RunConfig(
            case.name, args.method, args.seed, **chosen_options(args, Training)
        ).resolved(case)
        case.check()  # its functions tried once, before anything trains
    except ValueError as err:
        parser.error(str(err))
    dde.config.set_default_float(cfg.dtype)
    if cfg.lbfgs:
        _lbfgs_cap(cfg.lbfgs)
    assert cfg.profile is not None  # resolved: set
    return ExampleArgs(cfg, case.profile(cfg.profile))


def _lbfgs_cap(maxiter: int) -> None:
    """DeepXDE's L-BFGS options for about ``maxiter`` iterations: its PyTorch loop
    runs up to ``iter_per_step`` iterations per call (set when DeepXDE is
    imported, so it is set here too) while fewer than ``maxiter`` are done, and so
    may overrun the cap by less than one call."""
    dde.optimizers.set_LBFGS_options(maxiter=maxiter)
    o = dde.optimizers.config.LBFGS_options
    o["iter_per_step"] = min(1000, maxiter)
    o["fun_per_step"] = o["maxfun"] * o["iter_per_step"] // maxiter


def unit_loss_weights(
    model: dde.Model, weights: Sequence[float] | None = None
) -> list[float]:
    """Loss weights ``w/L`` for every term (``w``: its weight in ``weights``, else
    1), ``L`` the model's last total training loss (weighted as the terms are),
    so that L-BFGS starts at loss 1 (its printed losses are then relative).
    torch's L-BFGS drops curvature pairs with ``y.s <= 1e-10``, an absolute
    threshold that freezes its memory at PINN losses of ~1e-7; the scaled loss
    has the same minimiser (docs/protocol.md)."""
    losses = np.asarray(model.train_state.loss_train, dtype=np.float64)
    scale = unit_scale(float(losses.sum()))
    return [scale * w for w in (weights or [1.0] * len(losses))]


def print_errors(case: Case, model: "dde.Model") -> dict:
    """Predict on the case's evaluation points (its grid, or its reference's
    points) and print RMSE, relL2 and MaxErr per field (float64 metrics); returns
    the metrics."""
    ev = case.evaluation(case.profile(case.default_profile))
    x = ev.x
    pred = np.asarray(model.predict(x.astype(dde.config.real(np))), np.float64)
    metrics = all_fields(pred, ev.exact, case.fields)
    print(f"Errors on the {len(x)} evaluation points:")
    for name, m in metrics.items():
        print(errors_line(name, m))
    return metrics
