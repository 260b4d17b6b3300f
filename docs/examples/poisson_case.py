"""A case file of your own: DeepXDE's 1-D Poisson problem, declared like the
package's cases (``cases/laplace.py``).

    -u''(x) = pi^2 sin(pi x)   on (-1, 1),   u(-1) = u(1) = 0
    exact: u = sin(pi x)

    deepxde-lnn compare docs/examples/poisson_case.py --seeds 0,1,2
    deepxde-lnn run docs/examples/poisson_case.py --method pinn

or from Python: ``deepxde_lnn.compare("docs/examples/poisson_case.py", ...)``.
"""

import numpy as np

import deepxde_lnn  # first: selects DeepXDE's pytorch backend

# isort: split
import deepxde as dde

from deepxde_lnn.problems.case import Case, Grid, Profile, Trunk
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge

LO, HI = (-1.0,), (1.0,)
geom = dde.geometry.Interval(-1, 1)


def pde(x, u):
    # the residual -u'' - pi^2 sin(pi x), by DeepXDE's nested autograd
    return -dde.grad.hessian(u, x) - np.pi**2 * dde.backend.sin(np.pi * x)


def exact(x):
    return np.sin(np.pi * x[:, 0:1])


ends = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on: on)

terms = [
    Term("pde", Box(LO, HI), 64, pde, kind="pde"),  # fresh points every step
    Term("left", Edge(LO, HI, axis=0, value=-1.0), 1, ends),
    Term("right", Edge(LO, HI, axis=0, value=1.0), 1, ends),
]

CASE = Case(
    name="poisson_1d",  # names the result folders: letters, digits, _ and -
    title="Poisson in 1-D with Dirichlet ends (DeepXDE's example)",
    inputs=("x",),
    fields=("u",),
    terms=terms,
    exact=exact,
    grid=Grid(LO, HI, 201),  # where the errors are measured
    # optional: the networks' hidden layers (default 4 x 64)
    trunk=Trunk(hidden=(50, 50, 50)),
    # optional: training profiles by name (default: {"quick": 1000 Adam steps at
    # lr 1e-3 on one fixed point set}); `quick` is what commands train by default
    profiles={"quick": Profile(iterations=2000, lr=1e-3, seed=0, n_seeds=3)},
)


if __name__ == "__main__":
    deepxde_lnn.main(CASE)  # flags as for `deepxde-lnn run`: see deepxde_lnn.case_script
