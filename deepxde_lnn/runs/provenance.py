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
    """The device training ran on (CUDA when PyTorch sees a GPU, as DeepXDE)
    and torch's CPU thread count (the cores a CPU run asked for)."""
    threads = torch.get_num_threads()
    if torch.cuda.is_available():
        name = torch.cuda.get_device_name()
        return {"device": "cuda", "device_name": name, "threads": threads}
    name = platform.processor() or platform.machine()
    return {"device": "cpu", "device_name": name, "threads": threads}
