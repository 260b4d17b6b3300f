"""Relativistic viscous fluid, case B (paper Table 6).

Steady 2D relativistic viscous fluid on [0, 1]^2 with the manufactured state q*_b
(see ``deepxde_lnn.relativistic.exact_state_b``); operator, closure, transform,
sources and boundary terms as in ``cases/_relativistic.py``.
"""

import deepxde_lnn  # noqa: F401  (selects DeepXDE's pytorch backend)
import deepxde as dde
from deepxde_lnn import relativistic as rel
from deepxde_lnn.cases._relativistic import make_case

CASE = make_case(
    "rel_b",
    "Relativistic viscous fluid, case B",
    rel.exact_state_b,
    rel.exact_state_b_np,
)


if __name__ == "__main__":
    from deepxde_lnn import example

    args = example.parse_args(CASE)  # --method --profile --iterations --seed --lr
    data = args.data(CASE)  # the terms (as --method needs them), sampled per step
    model = dde.Model(data, args.net(CASE))
    model.compile("adam", lr=args.lr, decay=args.decay)
    model.train(iterations=args.iterations, display_every=args.profile.display_every)
    if args.lbfgs:  # the accurate profile: then L-BFGS on the loss scaled to 1
        model.compile("L-BFGS", loss_weights=example.unit_loss_weights(model))
        model.train(display_every=args.profile.display_every)
    example.print_errors(CASE, model)
