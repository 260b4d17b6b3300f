"""K seeds of one (problem, method) trained as ONE stacked model, equal to K runs.

:class:`~deepxde_lnn.networks.stacked.StackedNet` stacks the K networks; :class:`StackedData`
stacks their data, a DeepXDE ``Data`` whose losses are the single run's loss code
evaluated in K row blocks, one value per run. DeepXDE's total loss is their sum, so
each run gets the gradient of its own loss; Adam is elementwise, so one
``torch.optim.Adam`` over the stacked parameters performs K independent Adam
updates (:func:`split_adam_state` / :func:`stack_adam_states` convert its state to
and from K single-run states). Sampling follows ``ResampledPDE`` per run (own
generator, DeepXDE's extra draw before the first step), so run k reproduces the run
``runner.run`` makes with seed k, up to floating-point rounding::

    model = dde.Model(StackedData(datas), StackedNet(nets))  # K runs' own
    model.compile("adam", lr=1e-3)                            # data and nets
    model.train(iterations=1000)  # = K runs of the same, up to rounding
    model.net.state_dicts()       # per-run model.pt contents

:func:`deepxde_lnn.training.runner.run_stacked` trains K seeds this way through the one
training loop of :mod:`deepxde_lnn.training.runner` (checkpoints, NaN, signals per run).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from deepxde.data.data import Data

from ..networks.stacked import StackedNet
from ..problems.data import ResampledPDE, is_training_pass

__all__ = [
    "StackedData",
    "select_adam_",
    "split_adam_state",
    "stack_adam_states",
]


# --- Adam ---------------------------------------------------------------------------


def split_adam_state(state: dict, num_runs: int) -> list[dict]:
    """Stacked ``opt.state_dict()`` -> K single-net Adam ``state_dict()``s.

    Each has exactly the keys ``torch.optim.Adam(net.parameters()).state_dict()``
    has, with the run's own ``lr``.
    """
    (group,) = state["param_groups"]
    out = []
    for k in range(num_runs):
        g = dict(group, params=list(group["params"]))
        per = {
            i: {
                key: (v.clone() if key == "step" else v[k].clone())
                for key, v in s.items()
            }
            for i, s in state["state"].items()
        }
        out.append({"state": per, "param_groups": [g]})
    return out


def stack_adam_states(states: Sequence[dict]) -> dict:
    """K single-net Adam ``state_dict()``s (same step, same settings) -> the state
    dict of one Adam over the stacked parameters."""
    groups = [s["param_groups"][0] for s in states]
    rest = [{k: v for k, v in g.items() if k != "params"} for g in groups]
    if any(r != rest[0] for r in rest):
        raise ValueError("Adam states: the runs differ in their settings")
    steps = {tuple(float(v["step"]) for v in s["state"].values()) for s in states}
    if len(steps) != 1:
        raise ValueError("Adam states: the runs are at different steps")
    group = dict(groups[0], params=list(groups[0]["params"]))
    first = states[0]["state"]
    stacked = {
        i: {
            key: (
                v.clone()
                if key == "step"
                else torch.stack([s["state"][i][key] for s in states])
            )
            for key, v in first[i].items()
        }
        for i in first
    }
    return {"state": stacked, "param_groups": [group]}


# --- data ---------------------------------------------------------------------------


class StackedData(Data):
    """K runs' :class:`ResampledPDE` (one per seed) as one DeepXDE ``Data`` whose
    losses come in K row blocks, for ``dde.Model(StackedData(runs), StackedNet)``.

    ``train_next_batch`` lets every run draw its own fresh sets with its own
    generator (exactly a single run's ``train_next_batch``) and hands DeepXDE the K
    runs' value rows as K blocks; ``losses_train`` returns, per term,

        L[t] = w_t * mean_{x in S_kt} |r_t(x)|^2     (K,), one value per run

    computed by the runs' own :meth:`ResampledPDE.block_losses` (the single run's
    code, in blocks); DeepXDE's total ``sum_t sum_k L[t]_k`` gives each run the
    gradient of its own loss. ``last_losses``: the latest training pass's (K, T).
    """

    def __init__(self, runs: Sequence[ResampledPDE]):
        self.runs = list(runs)
        if not self.runs:
            raise ValueError("runs must hold at least one ResampledPDE")
        first = self.runs[0]
        ref = [(t.name, t.n, t.kind, t.weight) for t in first.terms]
        for i, d in enumerate(self.runs):
            if [(t.name, t.n, t.kind, t.weight) for t in d.terms] != ref:
                raise ValueError(f"runs[{i}] has other terms than runs[0]")
            if d.derivatives != first.derivatives:
                raise ValueError(f"runs[{i}] takes derivatives another way")
            if d.weights is not None:
                raise ValueError(f"runs[{i}]: a weights hook needs one run per model")
        if any(t.kind == "net" for t in first.terms):
            raise ValueError("runs: terms of kind 'net' need one run per model")
        self.terms, self.names = first.terms, list(first.names)
        self.resample, self.update_weights = first.resample, True
        self.last_losses: torch.Tensor | None = None

    @property
    def num_runs(self) -> int:
        return len(self.runs)

    def select_(self, keep: Sequence[int]) -> None:
        self.runs = [self.runs[i] for i in keep]

    def train_next_batch(self, batch_size=None):
        return np.vstack([d.train_next_batch()[0] for d in self.runs]), None, None

    def test(self):
        return np.vstack([d.test()[0] for d in self.runs]), None, None

    def host_arrays(self) -> list:
        """:meth:`ResampledPDE.host_arrays` of the K runs' current point sets."""
        drawn = [d.train_x for d in self.runs]  # by the first step
        return self.runs[0].host_arrays(drawn)  # type: ignore[arg-type]

    def staged(self, tensors):
        """:meth:`ResampledPDE.staged`, for the K runs' :meth:`host_arrays`."""
        return self.runs[0].staged(tensors)

    def losses_train(self, targets, outputs, loss_fn, inputs, model, aux=None):
        losses = self._losses([d.train_x for d in self.runs], inputs, outputs, model)
        if is_training_pass(model):
            self.last_losses = torch.stack(losses, dim=1).detach()
        return losses

    def losses_test(self, targets, outputs, loss_fn, inputs, model, aux=None):
        return self._losses([d.test_x for d in self.runs], inputs, outputs, model)

    def _losses(self, Xs, inputs, outputs, model) -> list:
        net = model.net
        if net.num_runs != self.num_runs:
            raise ValueError("the stacked net and the data hold different runs")
        return self.runs[0].block_losses(Xs, inputs, outputs, net, stacked=net)

    def uses_jets(self, net: StackedNet) -> bool:
        return self.runs[0].uses_jets(net.template)

    def describe_derivatives(self, net: StackedNet) -> str:
        """How input derivatives are taken (as a single run's metadata says)."""
        return self.runs[0].describe_derivatives(net.template)


# --- per-run views of the stacked optimizer ------------------------------------------


def select_adam_(opt: torch.optim.Optimizer, stacked: StackedNet, keep) -> None:
    """Keep the Adam state of the runs at positions ``keep`` after
    ``stacked.select_(keep)`` replaced the parameters (the others' state is copied)."""
    state = opt.state_dict()
    opt.param_groups[0]["params"] = list(stacked.parameters())
    if state["state"]:
        runs = len(next(iter(state["state"].values()))["exp_avg"])
        states = split_adam_state(state, runs)
        opt.load_state_dict(stack_adam_states([states[i] for i in keep]))
