"""The data: each term's points drawn by its own sampler (every step, or once),
the DeepXDE ``Data`` API over them, and the per-term losses."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from deepxde import config
from deepxde.data.data import Data

from ...checks import check_bool
from .conditions import CONDITIONS
from .jets import DERIVATIVES, JetResiduals
from .reductions import (
    RowWeights,
    blocks,
    check_residual,
    mean_square,
    term_rows,
    weighted,
)
from .staging import Staging
from .terms import Term, checked_terms

__all__ = ["ResampledPDE", "is_training_pass"]


class ResampledPDE(Staging, JetResiduals, Data):
    """Fixed per-term point counts, fresh i.i.d. points every step.

    Args:
        terms: the loss terms, in the order their losses are returned.
        seed: seeds the sampling generator (``np.random.default_rng``); the fixed
            test batch uses an independent stream.
        resample: redraw every set on every ``train_next_batch`` call (paper) or
            keep the first draw (fixed pool).
        derivatives: ``"taylor"`` uses the terms' ``jet`` residuals when the
            network supports jets, ``"autograd"`` always DeepXDE's nested autograd.
        weights: optional :class:`~.reductions.RowWeights` hook giving per-row
            multipliers of the squared residuals (its state is saved by
            :meth:`state_dict`).
        compile_jets: run the jet residuals through ``torch.compile``
            (:mod:`deepxde_lnn.networks.compiled`: fused kernels, CUDA graphs on CUDA).

    Attributes:
        update_weights: whether the training pass may update the weights hook
            (False during L-BFGS, whose line search needs a fixed objective).
        last_losses: the per-term losses of the latest gradient-enabled
            (training) evaluation, a detached tensor, for logging.
    """

    def __init__(
        self,
        terms: Sequence[Term],
        seed: int | None = None,
        resample: bool = True,
        derivatives: str = "taylor",
        weights: RowWeights | None = None,
        compile_jets: bool = False,
    ):
        if derivatives not in DERIVATIVES:
            raise ValueError(
                f"derivatives must be one of {DERIVATIVES}, got {derivatives!r}"
            )
        self.derivatives = derivatives
        self._jet_ok: dict[int, bool] = {}
        self._jet_nested: dict[int, dict] = {}  # jets a net cannot take, and why
        self.compile_jets = check_bool(compile_jets, "compile_jets")
        self._compiled: dict = {}
        self.terms, self.names = checked_terms(terms)
        if weights is not None and not callable(weights):
            raise ValueError(f"weights must be callable or None, got {weights!r}")
        self.weights = weights
        self.update_weights = True  # False: a stateful hook keeps its state
        self.resample = bool(resample)
        # fixed pools come from their own stream: the per-step stream (and so a
        # resumed run's draws) is the same whatever is fixed
        pool_rng = np.random.default_rng([seed or 0, 104729])
        self._pools = {
            i: _checked_points(t, t.sampler(t.n, pool_rng))
            for i, t in enumerate(self.terms)
            if t.fixed
        }
        self.rng = np.random.default_rng(seed)
        self.slices = _slices([t.n for t in self.terms])
        # rows of the value terms inside the batch given to DeepXDE
        self.value_slices = _slices(
            [t.n if t.kind == "value" else 0 for t in self.terms]
        )
        self.last_losses: torch.Tensor | None = None
        self.rng_state_before_draw = self.rng.bit_generator.state
        self.train_x: np.ndarray | None = None
        self.test_x = self._draw(np.random.default_rng([seed or 0, 7919]))

    def _draw(self, rng: np.random.Generator) -> np.ndarray:
        parts = [
            (
                self._pools[i]
                if i in self._pools
                else _checked_points(t, t.sampler(t.n, rng))
            )
            for i, t in enumerate(self.terms)
        ]
        dims = {x.shape[1] for x in parts}
        if len(dims) > 1:
            per = ", ".join(
                f"{t.name}: {x.shape[1]}" for t, x in zip(self.terms, parts)
            )
            raise ValueError(f"terms: samplers give different input dimensions ({per})")
        return np.vstack(parts).astype(config.real(np), copy=False)

    @property
    def counts(self) -> dict[str, int]:
        """Points per term, by name."""
        return {t.name: t.n for t in self.terms}

    def points(self, X: np.ndarray, name: str) -> np.ndarray:
        """The rows of a full point set ``X`` (e.g. ``data.train_x``) of term ``name``."""
        return X[self.slices[self.names.index(name)]]

    def _value_rows(self, X: np.ndarray) -> np.ndarray:
        rows = [X[sl] for t, sl in zip(self.terms, self.slices) if t.kind == "value"]
        return np.vstack(rows) if rows else X[:0]

    # --- DeepXDE Data API --------------------------------------------------------

    def train_next_batch(self, batch_size=None):
        if self.resample or self.train_x is None:
            # checkpoints store the state *before* the latest draw: dde.Model.train
            # draws once before its first step, so a resumed run redraws that batch
            self.rng_state_before_draw = self.rng.bit_generator.state
            self.train_x = self._draw(self.rng)
            self._train_values = self._value_rows(self.train_x)
        return self._train_values, None, None

    def test(self):
        return self._value_rows(self.test_x), None, None

    def losses_train(self, targets, outputs, loss_fn, inputs, model, aux=None):
        training = is_training_pass(model)
        losses = self._losses(self.train_x, outputs, inputs, model, training)
        if training:
            self.last_losses = torch.stack(losses).detach()
        return losses

    def losses_test(self, targets, outputs, loss_fn, inputs, model, aux=None):
        return self._losses(self.test_x, outputs, inputs, model, False)

    def state_dict(self) -> dict:
        """Training state beyond the sampler (the weights hook's), for checkpoints:
        tensors and plain containers only."""
        state = getattr(self.weights, "state_dict", None)
        return {"weights": state()} if state else {}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`; ``ValueError`` naming an entry that this
        data does not hold or lacks (another method's checkpoint)."""
        have = set(self.state_dict())
        odd = sorted(set(state) ^ have)
        if odd:
            what = "is not" if odd[0] in state else "lacks"
            raise ValueError(f"data {what} a state of this run's data: {odd[0]!r}")
        if "weights" in state:  # a hook with a state (the optional interface)
            getattr(self.weights, "load_state_dict")(state["weights"])

    def _losses(self, X, outputs, inputs, model, training=False):
        net = None if model is None else model.net  # value terms need no net
        return self.block_losses([X], inputs, outputs, net, training)

    def block_losses(
        self, Xs, inputs, outputs, net, training: bool = False, stacked=None
    ) -> list:
        """Per-term losses of ``K = len(Xs)`` runs' point sets (each laid out as
        ``train_x``), the runs' rows in K consecutive blocks::

            L[t] = w_t * mean_{x in S_t} |r_t(x)|^2      (a scalar; (K,) for K > 1)

        ``inputs``/``outputs``: the shared forward over the runs' value rows (K
        blocks); ``net`` runs the other terms' own forwards. With K > 1, ``stacked``
        (a :class:`~deepxde_lnn.networks.stacked.StackedNet`, also ``net``) applies
        the jet residuals to each run's block (a weights hook needs K = 1)."""
        K = len(Xs)
        jets = self._jet_residuals(Xs, inputs, net, stacked)
        losses = []
        for i, (term, sl, vsl) in enumerate(
            zip(self.terms, self.slices, self.value_slices)
        ):
            rows = term_rows(Xs, sl)
            if i in jets:
                r = jets[i]
            else:
                x, y = blocks(inputs, K, vsl), blocks(outputs, K, vsl)
                r = self._residual(term, Xs, sl, x, y, net)
            check_residual(term, r, K)
            update = training and self.update_weights
            omega = self.weights(i, term, rows, r, update) if self.weights else None
            losses.append(weighted(term, mean_square(r, omega, K)))
        return losses

    def _residual(self, term, Xs, sl, value_x, value_y, net):
        rows = term_rows(Xs, sl)
        if term.kind == "value":
            x, y = value_x, value_y
        else:  # own forward: derivatives on this term's rows only
            x = self._points(Xs, [sl], value_x)
            x.requires_grad_()
            if term.kind == "net":
                return term.residual(x, net)
            y = net(x)
        if isinstance(term.residual, CONDITIONS):
            return term.residual.error(rows, x, y, 0, len(rows))
        return term.residual(x, y)


def is_training_pass(model) -> bool:
    """Whether DeepXDE evaluates the losses for a gradient step (not for its
    display of the training loss, made with the parameters frozen)."""
    return torch.is_grad_enabled() and next(model.net.parameters()).requires_grad


def _slices(sizes: list[int]) -> list[slice]:
    """Consecutive row slices of the given sizes."""
    offsets = np.cumsum([0, *sizes])
    return [slice(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]


def _checked_points(term: Term, x) -> np.ndarray:
    """The sampler's points as a finite real (n, d) array, or a ValueError."""
    x = np.asarray(x)
    if x.dtype.kind not in "fiu":
        raise ValueError(
            f"Term {term.name!r}: sampler returned non-numeric points ({x.dtype})"
        )
    if x.ndim != 2 or x.shape[0] != term.n or x.shape[1] < 1:
        raise ValueError(
            f"Term {term.name!r}: sampler returned shape {x.shape}, "
            f"expected ({term.n}, d) with d >= 1"
        )
    if not np.isfinite(x).all():
        raise ValueError(f"Term {term.name!r}: sampler returned NaN or inf points")
    return x
