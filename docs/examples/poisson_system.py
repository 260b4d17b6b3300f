"""A network class of your own, callbacks that write files and float64: a
system of two Poisson equations on [-1, 1],

    -u'' = pi^2 sin(pi x),   -v'' = 4 pi^2 sin(2 pi x),   u = v = 0 at x = +-1,
    exact: u = sin(pi x), v = sin(2 pi x).

``TwoHeads`` is a ``dde.nn.NN`` written by hand: a shared tanh layer, then one
head per field. It does not say how many outputs it has (no ``num_outputs``):
the dry call that ``compare`` makes before training finds the two by calling it.
``ModelCheckpoint("ckpt/model")`` saves into each run's ``files/ckpt/`` (what
DeepXDE writes by a relative path goes to the run's ``files/`` folder; the ``ckpt``
folder is created).

float64 is set at the top of the script, as DeepXDE's examples do: before the
networks are built, and in every worker process too. (Inside ``train`` it comes
too late: the network was built before.)

    python docs/examples/poisson_system.py
"""

import numpy as np
import torch

import deepxde_lnn

# isort: split
import deepxde as dde

dde.config.set_default_float("float64")

ITERATIONS = 3000
POINTS, TEST = 64, 200
CHECKPOINT_EVERY = 500


class TwoHeads(dde.nn.NN):
    """x -> (u, v): a shared layer of ``width`` tanh units, then a linear head
    per field."""

    def __init__(self, width: int = 32):
        super().__init__()
        real = dde.config.real(torch)
        self.shared = torch.nn.Linear(1, width, dtype=real)
        self.hidden = torch.nn.Linear(width, width, dtype=real)
        self.heads = torch.nn.ModuleList(
            [torch.nn.Linear(width, 1, dtype=real) for _ in range(2)]
        )

    def forward(self, x):
        h = torch.tanh(self.hidden(torch.tanh(self.shared(x))))
        return torch.cat([head(h) for head in self.heads], dim=1)


def pde(x, y):
    return [
        dde.grad.hessian(y, x, component=0) + np.pi**2 * torch.sin(np.pi * x),
        dde.grad.hessian(y, x, component=1) + 4 * np.pi**2 * torch.sin(2 * np.pi * x),
    ]


def exact(x):
    return np.hstack([np.sin(np.pi * x), np.sin(2 * np.pi * x)])


def train(net):
    line = dde.geometry.Interval(-1, 1)
    ends = [
        dde.icbc.DirichletBC(line, lambda x: 0, lambda _, on: on, component=i)
        for i in (0, 1)
    ]
    data = dde.data.PDE(line, pde, ends, POINTS, 2, solution=exact, num_test=TEST)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    keep = dde.callbacks.ModelCheckpoint(
        "ckpt/model", save_better_only=True, period=CHECKPOINT_EVERY
    )
    model.train(iterations=ITERATIONS, display_every=500, callbacks=[keep], verbose=0)
    return model


NETS = {
    "two-heads": TwoHeads,
    "lnn": lambda: deepxde_lnn.LNN([1, 32, 32, 2], "tanh", "Glorot uniform"),
}

if __name__ == "__main__":
    result = deepxde_lnn.compare(
        train=train,
        nets=NETS,
        name="poisson_system",
        fields=["u", "v"],
        seeds=[0, 1, 2],
        out="runs/poisson_system",
    )
    print(result)
