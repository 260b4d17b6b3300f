"""An inverse problem with observations only: the Lorenz system's three
coefficients learned from observed trajectories (DeepXDE's ``Lorenz_inverse``).

    x' = C1 (y - x),   y' = x (C2 - z) - y,   z' = x y - C3 z,   t in [0, 3],

observed at 40 times; the true values are C1 = 10, C2 = 15, C3 = 8/3 and the
training starts from 1 for all three. The data has no solution to score the
network against (only the observations): ``compare`` judges the runs on the
unknowns alone (``true_values``), each learned coefficient's error a field.
The ``VariableValue`` callback writes ``variables.dat`` into each run's own
``files/`` folder (the function runs there); the package also keeps every
run's unknowns at each logged step in its ``variables.csv``.

    python docs/examples/lorenz_inverse.py
"""

import numpy as np
from scipy.integrate import solve_ivp

import deepxde_lnn

# isort: split
import deepxde as dde

TRUE = {"C1": 10.0, "C2": 15.0, "C3": 8.0 / 3.0}
ITERATIONS = 3000
POINTS = 400


def lorenz(t, s, c1=TRUE["C1"], c2=TRUE["C2"], c3=TRUE["C3"]):
    x, y, z = s
    return [c1 * (y - x), x * (c2 - z) - y, x * y - c3 * z]


# the observations, made once where the script starts (as DeepXDE's example
# loads them from a file): 40 times, three components
T = np.linspace(0, 3, 40)[:, None]
OBSERVED = solve_ivp(lorenz, (0, 3), [-8.0, 7.0, 27.0], t_eval=T[:, 0], rtol=1e-8).y.T


def train(net):
    c1, c2, c3 = (dde.Variable(1.0) for _ in range(3))

    def ode(t, s):
        x, y, z = s[:, 0:1], s[:, 1:2], s[:, 2:3]
        return [
            dde.grad.jacobian(s, t, i=0) - c1 * (y - x),
            dde.grad.jacobian(s, t, i=1) - x * (c2 - z) + y,
            dde.grad.jacobian(s, t, i=2) - x * y + c3 * z,
        ]

    seen = [
        dde.icbc.PointSetBC(T, OBSERVED[:, i : i + 1], component=i) for i in range(3)
    ]
    data = dde.data.PDE(
        dde.geometry.TimeDomain(0, 3), ode, seen, num_domain=POINTS, anchors=T
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, external_trainable_variables=[c1, c2, c3])
    log = dde.callbacks.VariableValue(
        [c1, c2, c3], period=100, filename="variables.dat"
    )
    model.train(iterations=ITERATIONS, display_every=500, callbacks=[log], verbose=0)
    return model


SIZES = [1, 40, 40, 40, 3]
NETS = {
    "fnn": lambda: dde.nn.FNN(SIZES, "tanh", "Glorot uniform"),
    "lnn": lambda: deepxde_lnn.LNN(SIZES, "tanh", "Glorot uniform"),
}

if __name__ == "__main__":
    result = deepxde_lnn.compare(
        train=train,
        nets=NETS,
        name="lorenz_inverse",
        true_values=TRUE,
        fields=["x", "y", "z"],
        inputs=["t"],
        seeds=[0, 1, 2],
        out="runs/lorenz_inverse",
    )
    print(result)
