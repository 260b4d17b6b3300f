"""deepxde-lnn: liquid residual networks (LNN-PINN) for DeepXDE.

The networks follow DeepXDE onto its backend: ``deepxde_lnn.LNN`` (and ``MLP``,
``ReZero``, ``LiquidBlock``, the liquid DeepONets) is the class for the backend
DeepXDE runs on, chosen as DeepXDE chooses it (``DDE_BACKEND``, its config file,
or an already imported DeepXDE); where nothing is chosen, importing this package
chooses ``pytorch``::

    import deepxde_lnn
    import deepxde as dde

    net = deepxde_lnn.LNN([2] + [64] * 4 + [1], "tanh", "Glorot normal")
    plain = deepxde_lnn.matched(net, "tanh", "Glorot normal")  # its parameter count

Operator learning: ``deepxde_lnn.LiquidDeepONet`` and
``LiquidDeepONetCartesianProd`` take ``dde.nn.DeepONet``'s arguments
(:mod:`deepxde_lnn.networks.deeponet`).

Experiments run from Python as from the command line, on PyTorch only:
``deepxde_lnn.compare``, ``sweep``, ``ablate`` and ``run`` (:mod:`deepxde_lnn.api`), on the
package's cases, a case file of your own or a plain DeepXDE problem;
``deepxde_lnn.report`` rebuilds the reproduction report from their records
(:mod:`deepxde_lnn.study.report`, without torch or DeepXDE).
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._backend import on_import, require_pytorch
from ._version import __version__
from .networks import NETWORKS  # their names only: no backend imported

on_import()  # the user's backend, else pytorch (the command line: pytorch)

if TYPE_CHECKING:  # static analysis (IDEs, type checkers) sees the lazy names below
    from .api import ablate, compare, run, sweep
    from .case_script import main
    from .networks.gated import GatedResidualAttention
    from .networks.limits import TORCH_DEFAULT
    from .networks.matched import matched, matched_sizes
    from .networks.pytorch import (
        LNN,
        MLP,
        LiquidBlock,
        LiquidDeepONet,
        LiquidDeepONetCartesianProd,
        ReZero,
    )
    from .study.report import report

__all__ = [
    "LNN",
    "MLP",
    "LiquidBlock",
    "ReZero",
    "GatedResidualAttention",
    "TORCH_DEFAULT",
    "matched",
    "matched_sizes",
    "LiquidDeepONet",
    "LiquidDeepONetCartesianProd",
    "run",
    "compare",
    "sweep",
    "ablate",
    "report",
    "main",
    "__version__",
]
# deepxde_lnn.compare(...) etc.: deepxde_lnn.api
_EXPERIMENTS = ("run", "compare", "sweep", "ablate")
# PyTorch's only: the engine's entry points and the networks it alone has
_PYTORCH_ONLY = {
    **dict.fromkeys(_EXPERIMENTS, "api"),
    "main": "case_script",
    "matched": "networks.matched",
    "matched_sizes": "networks.matched",
    "GatedResidualAttention": "networks.gated",
}


def __getattr__(name: str) -> Any:
    # deepxde is imported on first use of the networks, not by `import deepxde_lnn`
    # alone (the CLI imports it quietly)
    if name == "TORCH_DEFAULT":
        from .networks.limits import TORCH_DEFAULT

        return TORCH_DEFAULT
    if name in NETWORKS:
        return _network(name)
    if name in _PYTORCH_ONLY:
        require_pytorch(f"deepxde_lnn.{name}")
        module = importlib.import_module(f".{_PYTORCH_ONLY[name]}", __name__)
        return getattr(module, name)
    if name == "report":  # reads records: no torch, no DeepXDE
        from .study.report import report

        return report
    raise AttributeError(f"module 'deepxde_lnn' has no attribute {name!r}")


def _network(name: str) -> type:
    """``name`` of the networks' module for DeepXDE's backend (imported now)."""
    from deepxde import backend

    from .networks import backend_module

    module = backend_module(backend.backend_name)
    if not hasattr(module, name):  # the module says why (its UNAVAILABLE)
        why = getattr(module, "UNAVAILABLE", {}).get(name, "not written")
        raise AttributeError(
            f"deepxde_lnn.{name} is not available on DeepXDE's "
            f"'{backend.backend_name}' backend: {why}"
        )
    return getattr(module, name)
