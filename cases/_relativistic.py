"""Shared definition of the relativistic viscous-fluid cases B and C (docs/relativistic.md).

Eight outputs q = (v_x, v_y, eps, n, Pi, pi_xx, pi_xy, pi_yy) on [0, 1]^2 through the
output transform v = 0.45 tanh(r), eps, n = 0.05 + softplus(r). Interior: the eight
conservation/relaxation residuals R_k[q] - S_k with sources S_k = R_k[q*] (the same
operator applied to the manufactured state, recomputed on every fresh point set).
Each edge fixes all eight fields to the exact traces. The cases differ only by q*.
"""

import deepxde_lnn  # noqa: F401  (selects DeepXDE's pytorch backend)
from deepxde_lnn.problems import relativistic as rel
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge

LO, HI = (0.0, 0.0), (1.0, 1.0)
SIGMA_MODE = "full"  # covariant contraction over {t, x, y}; see relativistic.py


def make_case(name, title, exact_torch, exact_np) -> Case:
    def dirichlet(x, q):
        # all 8 fields to their exact traces; (N, 8) -> sum of per-field means
        return q - exact_torch(x)

    edges = {"bottom": (1, 0.0), "top": (1, 1.0), "left": (0, 0.0), "right": (0, 1.0)}
    terms = [
        Term(
            "pde",
            Box(LO, HI),
            1000,
            rel.pde(exact_torch, sigma_mode=SIGMA_MODE),
            kind="pde",
            jet=rel.pde_jet(exact_torch, sigma_mode=SIGMA_MODE),
        )
    ]
    terms += [
        Term(edge, Edge(LO, HI, axis=a, value=v), 1000, dirichlet, kind="value")
        for edge, (a, v) in edges.items()
    ]
    return Case(
        name=name,
        title=title,
        inputs=("x", "y"),
        fields=rel.FIELDS,
        terms=terms,
        exact=exact_np,
        grid=Grid(LO, HI, 200),
        output_transform=rel.output_transform,
    )
