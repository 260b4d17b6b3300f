"""Do liquid blocks help a physics-informed DeepONet? It learns the solution
operator f -> u of a 1-D Poisson problem from the equation alone (no solution data):

    -u''(x) = f(x)   on [0, 1],   u(0) = u(1) = 0
    f(x) = a0 + a1 x + a2 x^2 + a3 x^3,   a_k ~ U(-1, 1)   (dde.data.PowerSeries)
    exact: u(x) = sum_k a_k (x - x^(k+2)) / ((k+1)(k+2))

The branch sees f at 10 sensors, the trunk a point x; their 32 features are
dotted. ``train(net)`` is a DeepXDE script as a function of the network (Adam,
then L-BFGS); ``NETS`` holds the networks compared: DeepXDE's DeepONet, the same
with a liquid branch, with liquid branch and trunk, and the plain DeepONet whose
branch and trunk are widened to the liquid ones' parameter counts. Each is
scored against the exact solution for 100 sources it never saw (``reference``).

    python docs/examples/poisson_operator.py --adam 500 --lbfgs 500 --seeds 0,1,2
"""

import argparse
import functools

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde

DEGREE = 3  # cubic sources
SENSORS = 10  # where the branch reads f
FEATURES = 32  # width of the branch's and the trunk's last layer
BRANCH = [SENSORS, 32, FEATURES]
TRUNK = [1, 32, FEATURES]
ADAM, LBFGS = 500, 500  # default training steps of each phase

line = dde.geometry.Interval(0, 1)
space = dde.data.PowerSeries(N=DEGREE + 1)
sensors = line.uniform_points(SENSORS, boundary=True)


def poisson(shift, u, f):
    """The residual -u'' - f of every source (rows) at every point (columns).

    DeepXDE's zero-coordinate shift (``dde.zcs``): the trunk's points are moved
    by a scalar ``shift`` and u'' is taken with respect to it, for all sources
    at once, instead of ``dde.grad.hessian`` one source at a time with
    ``dde.data.PDEOperatorCartesianProd`` and ``dde.Model`` (the same problem,
    an order of magnitude slower per step here)."""
    return -dde.zcs.LazyGrad(shift, u).compute((2,)) - f


def operator_data(functions: int = 100, points: int = 60):
    """Training data: ``functions`` random sources, the residual at ``points``
    interior points and u = 0 at both ends, for every source."""
    ends = dde.icbc.DirichletBC(line, lambda x: 0, lambda x, on: on)
    pde = dde.data.PDE(line, poisson, ends, num_domain=points, num_boundary=2)
    return dde.zcs.PDEOperatorCartesianProd(pde, space, sensors, functions)


def exact(coefficients: np.ndarray, x: np.ndarray) -> np.ndarray:
    """u for each source's coefficients (rows) at the points ``x`` (n, 1):
    (n_functions, n_points)."""
    k = np.arange(DEGREE + 1)
    modes = (x - x ** (k + 2)) / ((k + 1) * (k + 2))  # (n_points, DEGREE + 1)
    return coefficients @ modes.T


def reference(functions: int = 100, points: int = 101, seed: int = 12345):
    """((f at the sensors, x), u): a fixed test set of ``functions`` sources
    (their own random stream) at ``points`` uniform points, to score on."""
    a = np.random.default_rng(seed).uniform(-1, 1, (functions, DEGREE + 1))
    a = a.astype(dde.config.real(np))
    x = line.uniform_points(points, boundary=True)
    return (space.eval_batch(a, sensors), x), exact(a, x)


def lbfgs_steps(n: int) -> None:
    """L-BFGS for ``n`` iterations. DeepXDE 1.15's PyTorch L-BFGS runs up to
    ``iter_per_step`` iterations per call, which ``set_LBFGS_options`` leaves at
    its value at import (1000): without the last two lines, asking for 100
    iterations runs up to 1000."""
    dde.optimizers.set_LBFGS_options(maxiter=n)
    options = dde.optimizers.config.LBFGS_options
    options["iter_per_step"] = min(1000, n)
    options["fun_per_step"] = options["maxfun"] * options["iter_per_step"] // n


def train(
    net, adam: int = ADAM, lbfgs: int = LBFGS, functions: int = 100, points: int = 60
) -> dde.Model:
    """The script: data (:func:`operator_data`), model, ``adam`` Adam steps then up
    to ``lbfgs`` L-BFGS steps; the trained model."""
    model = dde.zcs.Model(operator_data(functions, points), net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=adam, display_every=max(adam, 1))
    if lbfgs:
        lbfgs_steps(lbfgs)
        model.compile("L-BFGS")
        model.train(display_every=max(lbfgs, 1))
    return model


def _matched(sizes: list[int]) -> list[int]:
    """The plain layer sizes with the liquid network's parameter count."""
    return deepxde_lnn.matched_sizes(sizes, activation="tanh")


def _deeponet(**liquid):
    args = (BRANCH, TRUNK, "tanh", "Glorot normal")
    if not liquid:
        return dde.nn.DeepONetCartesianProd(*args)
    return deepxde_lnn.LiquidDeepONetCartesianProd(*args, **liquid)


NETS = {
    "deeponet": lambda: _deeponet(),
    "liquid-branch": lambda: _deeponet(liquid="branch"),
    "liquid-both": lambda: _deeponet(liquid=("branch", "trunk")),
    "deeponet-matched": lambda: dde.nn.DeepONetCartesianProd(
        _matched(BRANCH), _matched(TRUNK), "tanh", "Glorot normal"
    ),
}


def relative_l2(model: dde.Model, test=None) -> float:
    """||u_net - u|| / ||u|| over the reference set (all sources and points)."""
    x, u = reference() if test is None else test
    return float(dde.metrics.l2_relative_error(u, model.predict(x)))


if __name__ == "__main__":  # every network over seeds, through compare(train=...)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adam", type=int, default=ADAM)
    parser.add_argument("--lbfgs", type=int, default=LBFGS)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", default="runs/poisson_operator")
    args = parser.parse_args()
    result = deepxde_lnn.compare(
        train=functools.partial(train, adam=args.adam, lbfgs=args.lbfgs),
        nets=NETS,
        name="poisson_operator",
        reference=reference(),
        seeds=[int(s) for s in args.seeds.split(",")],
        out=args.out,
    )
    print(result)
