"""Where and with what a run was made: device and library versions."""

from __future__ import annotations

import platform

import deepxde as dde
import numpy as np
import torch

from .._version import __version__

__all__ = ["device_info", "versions"]


def versions() -> dict:
    import scipy

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "deepxde": dde.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "deepxde_lnn": __version__,
    }


def device_info() -> dict:
    """The device training ran on (CUDA when PyTorch sees a GPU, as DeepXDE)."""
    if torch.cuda.is_available():
        return {"device": "cuda", "device_name": torch.cuda.get_device_name()}
    return {
        "device": "cpu",
        "device_name": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
    }
