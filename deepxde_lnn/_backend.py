"""Make sure DeepXDE runs on its PyTorch backend.

DeepXDE picks its backend once, at its first import, from ``DDE_BACKEND`` (or its
config file). ``dde.nn.NN`` is the torch base class only under ``pytorch``, so this
module must run before anything imports :mod:`deepxde`.
"""

import os
import sys

REQUIRED = "pytorch"


def ensure_pytorch_backend() -> None:
    """Select DeepXDE's pytorch backend, or fail if another one is already chosen."""
    if "deepxde" in sys.modules:
        from deepxde import backend

        if backend.backend_name != REQUIRED:
            raise ImportError(
                f"deepxde_lnn needs DeepXDE's '{REQUIRED}' backend, but DeepXDE is "
                f"already loaded with '{backend.backend_name}'. Set "
                f"DDE_BACKEND={REQUIRED} before importing deepxde."
            )
        return
    chosen = os.environ.get("DDE_BACKEND")
    if chosen is None:
        os.environ["DDE_BACKEND"] = REQUIRED
    elif chosen != REQUIRED:
        raise ImportError(
            f"deepxde_lnn needs DeepXDE's '{REQUIRED}' backend, but DDE_BACKEND="
            f"'{chosen}'. Unset it or set DDE_BACKEND={REQUIRED}."
        )
