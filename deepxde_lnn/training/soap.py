"""SOAP, the first phase's optimizer where a run asks for it (``optimizer="soap"``).

SOAP (Vyas et al., 2024) runs Adam in the eigenbasis of a Shampoo preconditioner,
refreshed every ``PRECONDITION_FREQUENCY`` steps; in PINNs it eases the conflict
between the gradients of the loss terms (Wang et al., 2025). The implementation is
heavyball's (``heavyball.SOAP``, the ``soap`` extra), a maintained package with a
plain ``torch.optim.Optimizer`` interface: DeepXDE compiles it like any optimizer,
with the profile's learning-rate schedule, and its ``state_dict`` goes into the
run's checkpoints, so a resumed run continues it exactly.

Settings: heavyball's defaults, but no weight decay (as the package's Adam), and
its state (moments, Kronecker factors, eigenbases) in float64 where a run is
float64 (heavyball's float32 default fails there at the first refresh of the
eigenbasis); on a CPU, heavyball's ``torch.compile`` of its update is turned off
(its cold compile costs minutes there; ``heavyball.utils.compile_mode``, a setting
of the process).
"""

from __future__ import annotations

import torch

__all__ = ["SOAP_SETTINGS", "make_soap"]

#: heavyball.SOAP's arguments beside the parameters and the learning rate
SOAP_SETTINGS = {"weight_decay": 0.0, "compile_step": False}


def make_soap(params, lr: float) -> torch.optim.Optimizer:
    """heavyball's SOAP over ``params`` at learning rate ``lr``."""
    import heavyball  # the soap extra: checked when the run's options are

    params = list(params)
    if all(p.device.type == "cpu" for p in params):
        heavyball.utils.compile_mode = None
    wide = any(p.dtype == torch.float64 for p in params)
    storage = "float64" if wide else "float32"
    return heavyball.SOAP(params, lr=lr, storage_dtype=storage, **SOAP_SETTINGS)
