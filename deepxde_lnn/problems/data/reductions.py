"""From a term's residual to its loss: shapes checked, rows weighted, means of
squares (one per run's row block when K runs are stacked)."""

from __future__ import annotations

import numpy as np
import torch

from .terms import Term

__all__ = [
    "RowWeights",
    "as_columns",
    "blocks",
    "check_residual",
    "mean_square",
    "term_rows",
    "weighted",
]


class RowWeights:
    """Interface of the ``weights`` hook: ``hook(index, term, rows, r, training)``
    returns per-row multipliers ``omega`` of the squared residual ``r`` of term
    ``index`` on the float points ``rows`` ((N, 1) or (N, k) tensor), or ``None``
    for an unweighted term. ``training`` is True only in the gradient-enabled
    training pass (the one place where a stateful hook may update itself).
    Optional ``state_dict()``/``load_state_dict(state)`` carry its state through
    checkpoints (tensors and plain containers only)."""

    def __call__(self, index: int, term: Term, rows: np.ndarray, r, training: bool):
        raise NotImplementedError


def weighted(term: Term, loss):
    """``loss`` times the term's weight."""
    return loss if term.weight == 1 else term.weight * loss


def check_residual(term: Term, r, runs: int = 1) -> None:
    """ValueError naming ``term`` unless ``r`` is an (n,) or (n, k >= 1) tensor or
    a non-empty list of (n,) / (n, 1) tensors, ``n`` the term's row count (times
    ``runs``, for that many runs' row blocks)."""
    n = term.n * runs
    if isinstance(r, (list, tuple)):
        good = len(r) > 0 and all(_rows(p, n, column=True) for p in r)
        got = f"[{', '.join(_shape(p) for p in r)}]"
    else:
        good, got = _rows(r, n), _shape(r)
    if not good:
        raise ValueError(
            f"Term {term.name!r}: the residual must be a tensor of {n} rows, "
            f"(N,) or (N, k), or a list of (N, 1) tensors; got {got}"
        )


def _rows(p, n: int, column: bool = False) -> bool:
    if not isinstance(p, torch.Tensor) or p.ndim not in (1, 2) or len(p) != n:
        return False
    return p.ndim == 1 or (p.shape[1] == 1 if column else p.shape[1] >= 1)


def _shape(p) -> str:
    return str(tuple(p.shape)) if isinstance(p, torch.Tensor) else type(p).__name__


def term_rows(Xs, sl: slice) -> np.ndarray:
    """Rows ``sl`` of each run's host points, run by run."""
    return Xs[0][sl] if len(Xs) == 1 else np.vstack([X[sl] for X in Xs])


def blocks(t: torch.Tensor, K: int, sl: slice) -> torch.Tensor:
    """Rows ``sl`` of each of the K row blocks of ``t``."""
    if K == 1:
        return t[sl]
    return t.reshape(K, -1, *t.shape[1:])[:, sl].reshape(-1, *t.shape[1:])


def mean_square(r, omega=None, runs: int = 1) -> torch.Tensor:
    """Sum over channels of per-channel mean squares (a list or an (N, k) tensor),
    each row's square multiplied by ``omega`` ((N, 1) or (N, k)) when given; with
    ``runs = K > 1``, one value per row block: shape (K,)."""
    if runs > 1:
        if omega is not None:
            raise ValueError("weights: a weights hook needs one run per model")
        return _block_mean_square(r, runs)
    if omega is not None:
        r = as_columns(r)
        return torch.sum(torch.mean(omega * torch.square(r), dim=0))
    if isinstance(r, (list, tuple)):  # non-empty: a tensor (typeshed: or 0)
        return sum(torch.mean(torch.square(ri)) for ri in r)  # type: ignore[return-value]
    if r.ndim == 2:
        return torch.sum(torch.mean(torch.square(r), dim=0))
    return torch.mean(torch.square(r))


def _block_mean_square(r, K: int) -> torch.Tensor:
    """:func:`mean_square` of each of K row blocks of a residual: (K,)."""
    if isinstance(r, (list, tuple)):  # non-empty: a tensor (typeshed: or 0)
        return sum(torch.square(ri).reshape(K, -1).mean(1) for ri in r)  # type: ignore[return-value]
    sq = torch.square(r)
    if r.ndim == 2:
        return sq.reshape(K, -1, r.shape[1]).mean(1).sum(1)
    return sq.reshape(K, -1).mean(1)


def as_columns(r) -> torch.Tensor:
    """A residual (an (N,) or (N, k) tensor, or a list of (N, 1) tensors) as one
    (N, k) tensor."""
    if isinstance(r, (list, tuple)):
        return torch.cat([ri.reshape(len(ri), -1) for ri in r], dim=1)
    return r.reshape(len(r), -1)
