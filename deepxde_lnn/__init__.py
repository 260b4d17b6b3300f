"""deepxde-lnn: liquid residual networks (LNN-PINN) for DeepXDE.

Importing this package selects DeepXDE's PyTorch backend when the user has not
chosen one (and fails clearly if another backend is already in use)::

    import deepxde_lnn
    import deepxde as dde

    net = deepxde_lnn.LNN([2] + [64] * 4 + [1], "tanh", "Glorot normal")
"""

from ._backend import ensure_pytorch_backend

ensure_pytorch_backend()

from .nn import LNN, MLP, LiquidBlock, TORCH_DEFAULT  # noqa: E402

__version__ = "0.1.0"
__all__ = ["LNN", "MLP", "LiquidBlock", "TORCH_DEFAULT", "__version__"]
