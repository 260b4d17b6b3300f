"""Small shared helpers for the tests (tiny cases, a real SIGINT at a step)."""

import json
import os
import signal
from dataclasses import replace

import deepxde_lnn  # noqa: F401

# isort: split
import deepxde as dde
import numpy as np
import torch

from deepxde_lnn import cli
from deepxde_lnn.study import registry

TINY = dict(iterations=40, checkpoint_every=10)


def tiny_case(name: str = "laplace", n: int = 16, grid_n: int = 21):
    """A case with ``n`` points per term and a small grid (fast runs in tests)."""
    case = registry.get(name)
    counts = {t.name: n for t in case.terms}
    quick = replace(case.profile("quick"), counts=counts, grid_n=grid_n)
    return replace(case, profiles={**case.profiles, "quick": quick})


class SignalAt(dde.callbacks.Callback):
    """Sends a real SIGINT to this process after ``step`` steps."""

    def __init__(self, step):
        super().__init__()
        self.step, self.seen = step, 0

    def on_batch_end(self):
        self.seen += 1
        if self.seen == self.step:
            os.kill(os.getpid(), signal.SIGINT)


def run_cli(argv, capsys):
    """``deepxde-lnn ARGV`` in this process: its exit status and captured output."""
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse-level errors
        code = e.code
    return code, capsys.readouterr()


def no_solution(net):
    """A ``train(net)`` whose data has no solution: -u'' = 1 on [0, 1], two
    Adam steps (its exact u is x (1 - x) / 2)."""
    data = dde.data.PDE(
        dde.geometry.Interval(0, 1),
        lambda x, u: dde.grad.hessian(u, x) + 1,
        [],
        num_domain=8,
        num_test=5,
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=2, verbose=0)
    return model


def write_record(folder, method: str, seed: int, rmse: float, **over) -> None:
    """A finished Laplace run's ``metrics.json`` in ``folder/METHOD/seed-S``, as
    tables read it (quick profile, RMSE ``rmse``); ``over`` replaces or adds keys."""
    rec = {
        "case": "laplace", "method": method, "seed": seed, "lr": 1e-3,
        "iterations": 100, "profile": "quick", "dtype": "float32", "device": "cpu",
        "device_name": "Test CPU", "parameters": 100, "train_seconds": 1.0,
        "seconds_per_step": 0.01, "final_loss": {"total": rmse**2},
        "grid_points": 9, "versions": {"python": "3", "torch": "2", "deepxde": "1"},
        "metrics": {"phi": {"RMSE": rmse, "MSE": rmse**2, "MAE": rmse / 2,
                            "relL2": 10 * rmse, "MaxErr": 3 * rmse}},
        **over,
    }  # fmt: skip
    out = folder / method / f"seed-{seed}"
    out.mkdir(parents=True)
    (out / "metrics.json").write_text(json.dumps(rec))


def write_fields(folder, error: float, field: str, exact_first: bool = False) -> None:
    """A run's ``fields.npz`` (a 5 x 5 grid of the unit square, |error| ``error``
    everywhere, 0 at its first point when ``exact_first``) and ``loss.csv``, as
    the figures read them."""
    axes = np.linspace(0.0, 1.0, 5)
    x = np.stack(np.meshgrid(axes, axes, indexing="ij"), -1).reshape(-1, 2)
    err = np.full((len(x), 1), error)
    if exact_first:
        err[0] = 0.0
    np.savez(
        folder / "fields.npz",
        x=x,
        exact=np.zeros_like(err),
        pred=err,
        abs_error=err,
        mask=np.ones((5, 5), bool),
        axes=np.stack([axes, axes]),
        inputs=np.array(["x", "y"]),
        fields=np.array([field]),
    )
    (folder / "loss.csv").write_text("step,total\n1,1.0\n2,0.5\n")


class ExactNet(torch.nn.Module):
    """A 'network' that returns the case's exact solution (float64 torch ops)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.w = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))

    def forward(self, x):
        # the zero cubic keeps higher derivatives in the graph for linear solutions
        return self.fn(x) + 0 * self.w + 0 * (x**3).sum(1, keepdim=True)
