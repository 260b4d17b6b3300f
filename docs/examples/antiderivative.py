"""Operator learning from data: the antiderivative operator v -> u,
u(x) = int_0^x v(s) ds on [0, 1], with DeepXDE's aligned DeepONet (one point per
function and row, ``dde.data.Triple``), as DeepXDE's ``antiderivative_aligned``
example (which reads its data from files; here the functions are drawn from a
Gaussian random field and integrated by the trapezoidal rule).

The networks: DeepXDE's ``DeepONet``, and ``LiquidDeepONet`` with liquid branch
and trunk. The test data holds the solution, so the runs are scored against it;
the summary's relL2 is over all values together, and it also gives DeepXDE's
operator metric (the mean of each function's relL2).

    python docs/examples/antiderivative.py
"""

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde

SENSORS = 100  # where the branch reads v
TRAIN_FUNCTIONS, TEST_FUNCTIONS = 150, 50
ITERATIONS = 10000


def functions(n: int, seed: int, length: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """``n`` functions v of a Gaussian random field (squared-exponential
    covariance) at the sensors, and their antiderivatives u there."""
    s = np.linspace(0, 1, SENSORS)
    cov = np.exp(-((s[:, None] - s[None, :]) ** 2) / (2 * length**2))
    root = np.linalg.cholesky(cov + 1e-10 * np.eye(SENSORS))
    v = (root @ np.random.default_rng(seed).standard_normal((SENSORS, n))).T
    steps = (v[:, 1:] + v[:, :-1]) / 2 * np.diff(s)
    u = np.concatenate([np.zeros((n, 1)), np.cumsum(steps, axis=1)], axis=1)
    return v, u


def aligned(v: np.ndarray, u: np.ndarray, seed: int):
    """One random point per function: ``((v, x), u(x))`` rows."""
    pick = np.random.default_rng(seed).integers(0, SENSORS, len(v))
    x = np.linspace(0, 1, SENSORS)[pick, None]
    real = dde.config.real(np)  # NumPy's float64 would not meet a float32 network
    return (v.astype(real), x.astype(real)), u[np.arange(len(v)), pick, None]


# the data, made once where the script starts (fixed: every run sees the same)
TRAIN = aligned(*functions(TRAIN_FUNCTIONS * 10, 1), 2)
TEST = aligned(*functions(TEST_FUNCTIONS * 10, 3), 4)


def train(net):
    data = dde.data.Triple(TRAIN[0], TRAIN[1], TEST[0], TEST[1])
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=ITERATIONS, display_every=1000, verbose=0)
    return model


BRANCH, TRUNK = [SENSORS, 40, 40], [1, 40, 40]
NETS = {
    "deeponet": lambda: dde.nn.DeepONet(BRANCH, TRUNK, "relu", "Glorot normal"),
    "liquid": lambda: deepxde_lnn.LiquidDeepONet(
        BRANCH, TRUNK, "relu", "Glorot normal"
    ),
}

if __name__ == "__main__":
    result = deepxde_lnn.compare(
        train=train,
        nets=NETS,
        name="antiderivative",
        seeds=[0, 1, 2],
        out="runs/antiderivative",
    )
    print(result)
