"""Relativistic viscous fluid, case C (paper Table 7).

Steady 2D relativistic viscous fluid on [0, 1]^2 with the manufactured state q*_c
(see ``deepxde_lnn.relativistic.exact_state_c``); operator, closure, transform,
sources and boundary terms as in ``cases/_relativistic.py``.
"""

import deepxde_lnn  # noqa: F401  (selects DeepXDE's pytorch backend)
import deepxde as dde
from deepxde_lnn import relativistic as rel
from deepxde_lnn.cases._relativistic import make_case

CASE = make_case(
    "rel_c",
    "Relativistic viscous fluid, case C",
    rel.exact_state_c,
    rel.exact_state_c_np,
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
