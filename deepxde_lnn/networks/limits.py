"""Limits of the networks' options, checked without torch."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ..checks import parse_number

__all__ = [
    "TORCH_DEFAULT",
    "LAYOUTS",
    "ALPHA_MAX",
    "LAAF_MAX",
    "SCALE_MAX",
    "BLOCKS_MAX",
    "MAX_PARAMETERS",
    "activation_base",
    "check_parameters",
    "dense_parameters",
]

#: ``kernel_initializer`` value that keeps PyTorch's default ``nn.Linear``
#: initialisation (weights and *biases* ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))), as the
#: authors' code does; the PyTorch networks' only. Every other value is a DeepXDE
#: initializer with zero biases.
TORCH_DEFAULT = "torch-default"
LAYOUTS = ("standard", "reduced")
ALPHA_MAX = 1e3  # |alpha_init| beyond this is a typo, not an ablation
LAAF_MAX = 1e3  # largest scale n of an "LAAF-n NAME" activation
SCALE_MAX = 1e4  # largest scale of a random Fourier embedding: more is a typo
BLOCKS_MAX = 256  # most blocks of a PirateNet: more is a typo
# the most trainable parameters a network may have (4 GB in float32 before
# gradients and Adam's state; the widest method option, width 4096, stays below
# it): more is a typo (``hidden=(200000, 200000)``, ``[1, 10**12, 1]``), refused
# before the network is built (:func:`check_parameters`)
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


def dense_parameters(sizes: Sequence[int]) -> int:
    """Weights and biases of the fully connected layers of ``sizes`` (``d_in``,
    the hidden widths, ``d_out``), as an exact integer."""
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def check_parameters(count: int, name: str) -> None:
    """ValueError naming ``name`` where a network of ``count`` trainable
    parameters would exceed :data:`MAX_PARAMETERS`."""
    if count > MAX_PARAMETERS:
        big = f"about 10^{int(math.log10(count))}"  # str() refuses 4,300+ digits
        many = f"{count:,}" if count < 10**18 else big
        raise ValueError(
            f"{name}: the network would have {many} trainable parameters, more than "
            f"{MAX_PARAMETERS:,}"
        )
