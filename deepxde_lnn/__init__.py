"""deepxde-lnn: liquid residual networks (LNN-PINN) for DeepXDE.

Importing this package selects DeepXDE's PyTorch backend when the user has not
chosen one (and fails clearly if another backend is already in use)::

    import deepxde_lnn
    import deepxde as dde

    net = deepxde_lnn.LNN([2] + [64] * 4 + [1], "tanh", "Glorot normal")
    plain = deepxde_lnn.matched(net, "tanh", "Glorot normal")  # its parameter count

Operator learning: ``deepxde_lnn.LiquidDeepONet`` and
``LiquidDeepONetCartesianProd`` take ``dde.nn.DeepONet``'s arguments
(:mod:`deepxde_lnn.networks.deeponet`).

Experiments run from Python as from the command line: ``deepxde_lnn.compare``,
``sweep``, ``ablate`` and ``run`` (:mod:`deepxde_lnn.api`), on the
package's cases, a case file of your own or a plain DeepXDE problem;
``deepxde_lnn.report`` rebuilds the reproduction report from their records
(:mod:`deepxde_lnn.study.report`, without torch or DeepXDE).
"""

from typing import TYPE_CHECKING

from ._backend import on_import
from ._version import __version__

on_import()  # DeepXDE's pytorch backend, or a clear error

if TYPE_CHECKING:  # static analysis (IDEs, type checkers) sees the lazy names below
    from .api import ablate, compare, run, sweep
    from .example import main
    from .networks.deeponet import LiquidDeepONet, LiquidDeepONetCartesianProd
    from .networks.gated import GatedResidualAttention
    from .networks.matched import matched, matched_sizes
    from .networks.nn import LNN, MLP, TORCH_DEFAULT, LiquidBlock, ReZero
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


def __getattr__(name):
    # deepxde is imported on first use of the networks, not by `import deepxde_lnn`
    # alone (the CLI imports it quietly)
    if name in ("LNN", "MLP", "LiquidBlock", "ReZero", "TORCH_DEFAULT"):
        from .networks import nn

        return getattr(nn, name)
    if name in ("matched", "matched_sizes"):
        from .networks import matched

        return getattr(matched, name)
    if name in ("LiquidDeepONet", "LiquidDeepONetCartesianProd"):
        from .networks import deeponet

        return getattr(deeponet, name)
    if name in _EXPERIMENTS:
        from . import api

        return getattr(api, name)
    if name == "report":
        from .study.report import report

        return report
    if name == "main":  # a case file's last line: deepxde_lnn.main(CASE)
        from .example import main

        return main
    if name == "GatedResidualAttention":
        from .networks import gated

        return gated.GatedResidualAttention
    raise AttributeError(f"module 'deepxde_lnn' has no attribute {name!r}")
