"""Residual-based attention (RBA; Anagnostopoulos et al., CMAME 2024): the
package's RA-PINN.

Every collocation point i of a PDE term carries a multiplier lambda_i (one per
residual channel), initialised to 0 and updated at every training step, without
gradient, from the normalised residual magnitude::

    lambda_i <- gamma * lambda_i + eta * |r_i| / max_j |r_j|     (eta 1e-3, gamma 0.999)
    loss_pde  = mean_i ( lambda_i * r_i )^2                       (the updated lambda)

so ``lambda`` stays in ``[0, eta / (1 - gamma)] = [0, 1]``. The boundary and initial
terms stay unweighted means, and the weighted residual term replaces the plain one
(the published method adds no unweighted copy). A multiplier belongs to a point,
so the PDE term uses a fixed collocation pool (``Term(fixed=True)``) while the
other terms are still redrawn every step (docs/methods.md).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from .data import RowWeights, Term, as_columns

__all__ = ["RBA", "ETA", "GAMMA"]

ETA, GAMMA = 1e-3, 0.999


class RBA(RowWeights):
    """The ``weights`` hook of :class:`~deepxde_lnn.problems.data.ResampledPDE` for RBA on
    the terms named ``names``: returns ``lambda ** 2`` per row and channel."""

    def __init__(self, names: Iterable[str], eta: float = ETA, gamma: float = GAMMA):
        self.names = frozenset(names)
        if not self.names:
            raise ValueError("names: RBA needs at least one term name")
        for value, name in ((eta, "eta"), (gamma, "gamma")):
            if not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise ValueError(f"{name} must be a number in (0, 1]; got {value!r}")
        self.eta, self.gamma = float(eta), float(gamma)
        self.lam: dict[int, torch.Tensor] = {}

    def __call__(self, index: int, term: Term, rows: np.ndarray, r, training: bool):
        if term.name not in self.names:
            return None
        a = as_columns(r).detach().abs()
        lam = self.lam.get(index)
        if lam is None:
            lam = torch.zeros_like(a)
        lam = lam.to(device=a.device, dtype=a.dtype)
        if training:
            peak = a.amax(dim=0, keepdim=True)
            step = self.eta * a / torch.where(peak > 0, peak, torch.ones_like(peak))
            lam = self.gamma * lam + step
            self.lam[index] = lam
        return torch.square(lam)

    def state_dict(self) -> dict:
        return {"lam": {str(i): v.detach().cpu() for i, v in self.lam.items()}}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`; ``ValueError`` unless it maps term indices
        to tables of finite multipliers >= 0."""
        lam = state.get("lam") if isinstance(state, dict) else None
        if not isinstance(lam, dict) or not all(
            isinstance(i, str)
            and i.isdigit()
            and isinstance(v, torch.Tensor)
            and v.is_floating_point()
            and v.ndim == 2
            and bool((torch.isfinite(v) & (v >= 0)).all())
            for i, v in lam.items()
        ):
            raise ValueError(
                "data.weights.lam must map term indices to RBA's multipliers "
                "(tensors of rows and channels, finite and >= 0)"
            )
        self.lam = {int(i): v.clone() for i, v in lam.items()}
