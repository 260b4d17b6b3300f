"""Limits of the networks' options, checked without torch."""

from __future__ import annotations

import re

from ..checks import parse_number

__all__ = [
    "TORCH_DEFAULT",
    "LAYOUTS",
    "ALPHA_MAX",
    "LAAF_MAX",
    "MAX_PARAMETERS",
    "activation_base",
]

#: ``kernel_initializer`` value that keeps PyTorch's default ``nn.Linear``
#: initialisation (weights and *biases* ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))), as the
#: authors' code does; the PyTorch networks' only. Every other value is a DeepXDE
#: initializer with zero biases.
TORCH_DEFAULT = "torch-default"
LAYOUTS = ("standard", "reduced")
ALPHA_MAX = 1e3  # |alpha_init| beyond this is a typo, not an ablation
LAAF_MAX = 1e3  # largest scale n of an "LAAF-n NAME" activation
# the most trainable parameters a method's network may have on a case (4 GB in
# float32 before gradients and Adam's state; the widest method option, width
# 4096, stays below it): more is a typo (``hidden=(200000, 200000)``), refused
# before the network is built
MAX_PARAMETERS = 10**9
_ACTIVATION = re.compile(r"(?:LAAF-(?P<scale>\S+) )?(?P<base>[A-Za-z]+)")


def activation_base(text: str, name: str = "activation") -> str:
    """The activation's base name if ``text`` is written ``NAME`` or ``LAAF-n
    NAME`` (layer-wise adaptive, scale ``1 <= n <= LAAF_MAX``), else a ValueError
    naming ``name``; whether DeepXDE knows the name is checked with the network."""
    match = _ACTIVATION.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(
            f"{name} must be an activation name or 'LAAF-n NAME'; got {text!r}"
        )
    if match["scale"] is not None:
        parse_number(match["scale"], f"{name} {text!r}: LAAF scale n", 1, LAAF_MAX)
    return match["base"]
