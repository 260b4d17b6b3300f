"""Relativistic viscous fluid, case B (paper Table 6).

Steady 2D relativistic viscous fluid on [0, 1]^2 with the manufactured state q*_b
(see ``deepxde_lnn.problems.relativistic.exact_state_b``); operator, closure, transform,
sources and boundary terms as in ``cases/_relativistic.py``.
"""

import deepxde_lnn  # first: selects DeepXDE's pytorch backend
from deepxde_lnn.cases._relativistic import make_case
from deepxde_lnn.problems import relativistic as rel

CASE = make_case(
    "rel_b",
    "Relativistic viscous fluid, case B",
    rel.exact_state_b,
    rel.exact_state_b_np,
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
