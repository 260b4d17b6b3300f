"""Methods compared by the runner: which network (and data) a method trains.

* ``lnn``: :class:`~deepxde_lnn.LNN` in the case's layout;
* ``pinn``: the plain twin :class:`~deepxde_lnn.MLP` (same trunk, no blocks);
* ``pinn-matched``: a plain MLP of the same depth widened to the parameter count
  nearest the LNN's (ties to the smaller width).

All use PyTorch's default initialisation (the authors' code; docs/methods.md) and the case's
output transform.
"""

from __future__ import annotations

from .case import Case
from .nn import LNN, MLP, TORCH_DEFAULT

METHODS = ("lnn", "pinn", "pinn-matched")
ACTIVATION = "tanh"


def mlp_params(sizes) -> int:
    return sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:]))


def lnn_params(case: Case) -> int:
    hidden = case.layer_sizes()[1:-1]
    return mlp_params(case.layer_sizes()) + sum(w * w + 2 * w for w in hidden)


def matched_width(case: Case) -> int:
    """Width whose plain MLP has the parameter count nearest the LNN's."""
    target = lnn_params(case)
    widths = range(1, 4 * max(case.hidden) + 1)
    return min(widths, key=lambda w: (abs(mlp_params(case.layer_sizes(w)) - target), w))


def build_net(method: str, case: Case):
    if method == "lnn":
        net = LNN(case.layer_sizes(), ACTIVATION, TORCH_DEFAULT, layout=case.lnn_layout)
    elif method == "pinn":
        net = MLP(case.layer_sizes(), ACTIVATION, TORCH_DEFAULT)
    elif method == "pinn-matched":
        net = MLP(case.layer_sizes(matched_width(case)), ACTIVATION, TORCH_DEFAULT)
    else:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if case.output_transform is not None:
        net.apply_output_transform(case.output_transform)
    return net


def parameter_count(method: str, case: Case) -> int:
    """Trainable parameters of ``method``'s network on ``case``."""
    return build_net(method, case).num_trainable_parameters()
