"""Networks and their derivatives: the liquid residual network and its plain and
ReZero twins on every DeepXDE backend, one module each as DeepXDE lays out its own
(:mod:`.pytorch`, :mod:`.tensorflow_compat_v1`, :mod:`.tensorflow`, :mod:`.jax`,
:mod:`.paddle`), built from what they share (:mod:`.plan`, :mod:`.deeponet`).
On PyTorch also Taylor-mode jets (:mod:`.taylor`, compiled in :mod:`.compiled`),
K networks stacked as one (:mod:`.stacked`), the parameter-matched plain network
(:mod:`.matched`), the authors' gated residual-attention network
(:mod:`.gated`), and the alternatives a PINN researcher would pick: random
Fourier features before a plain network (:mod:`.fourier`) and PirateNets
(:mod:`.pirate`). Each network's forward pass is declared once (its stages); the
stacked and Taylor-mode forms are derived from it.
"""

import importlib
from types import ModuleType

from .._backend import BACKENDS

__all__ = ["MODULES", "NETWORKS", "backend_module"]

#: DeepXDE's backend names and the module of this package that holds their
#: networks (``tensorflow.compat.v1``: ``tensorflow_compat_v1``)
MODULES = {name: name.replace(".", "_") for name in BACKENDS}
#: What every backend's module declares (the DeepONets where DeepXDE has one)
NETWORKS = (
    "LNN",
    "MLP",
    "ReZero",
    "LiquidBlock",
    "LiquidDeepONet",
    "LiquidDeepONetCartesianProd",
)


def backend_module(name: str) -> ModuleType:
    """The module of the networks on DeepXDE's backend ``name`` (imported now:
    each needs its backend's library)."""
    if name not in MODULES:
        raise ValueError(f"backend: DeepXDE has no backend {name!r}")
    return importlib.import_module(f"{__name__}.{MODULES[name]}")
