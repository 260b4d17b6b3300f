"""``ResampledPDE``: the paper's sampling protocol as a DeepXDE ``Data``.

Stock ``dde.data.PDE`` evaluates the PDE on boundary points too, filters boundary
points by ``on_boundary`` (random per-BC counts, shared points) and
``PDEPointResampler`` cannot keep per-term counts fixed. Here every loss term owns
a fixed-size point set with its own sampler::

    loss = sum_k  w_k * mean_{x in S_k} |r_k(x)|^2        (multi-channel: sum of means)

* ``kind="pde"`` / ``"operator"``: the network is re-run on the term's own points,
  so derivatives (up to the beam's 4th order) are taken on those rows only;
* ``kind="value"``: residual from the shared forward pass (no derivatives);
* ``kind="net"``: the residual takes the network itself, ``residual(x, net)``
  (e.g. XPINN interface terms that evaluate two subnetworks at the same points).

``resample=True`` redraws every set at every step (paper protocol);
``resample=False`` draws one fixed pool (for L-BFGS). A term with ``fixed=True``
keeps one pool, drawn once from its own stream, even when the others are redrawn
(point-attached weights such as RBA's multipliers).

An optional ``weights`` hook multiplies each row's squared residual::

    loss_k = w_k * sum_c mean_i ( omega_ic * r_ic^2 )

(``omega = lambda^2`` for RBA, ``N / N_q`` for XPINN's per-subdomain means).

The batch handed to DeepXDE (``train_next_batch``/``test``) holds only the value
terms' rows, since only those use DeepXDE's shared forward pass: a forward over the
other rows would be thrown away. ``data.train_x`` holds every term's points.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from deepxde import config, icbc
from deepxde.data.data import Data
from deepxde.utils import get_num_args, return_tensor

from ..checks import check_bool

__all__ = ["Term", "ResampledPDE", "RowWeights", "KINDS", "as_columns"]

KINDS = ("pde", "operator", "value", "net")
DERIVATIVES = ("taylor", "autograd")

_CONDITIONS = (icbc.BC, icbc.IC)
Residual = Callable[[torch.Tensor, torch.Tensor], "torch.Tensor | list[torch.Tensor]"]


@dataclass(frozen=True)
class Term:
    """One loss term: its name, sampler ``(n, rng) -> (n, d)``, fixed count ``n``,
    a residual ``(x, y) -> tensor | list of (N, 1) tensors`` or a ``dde.icbc``
    condition, its kind and its weight ``w >= 0`` in the loss. ``fixed=True``
    draws the term's points once (a fixed pool) even when the data resamples.

    ``jet(x, net) -> residual`` optionally computes the same residual with
    Taylor-mode derivatives (:mod:`deepxde_lnn.networks.taylor`); it is used instead of
    ``residual`` when the network supports jets (tests check both agree).
    """

    name: str
    sampler: Callable[[int, np.random.Generator], np.ndarray]
    n: int
    residual: Residual | icbc.BC | icbc.IC
    kind: str = "operator"
    weight: float = 1.0
    jet: Callable[[torch.Tensor, torch.nn.Module], Residual] | None = None
    fixed: bool = False

    def __post_init__(self):
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"Term.name must be a non-empty string, got {self.name!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)):
            raise ValueError(
                f"Term {self.name!r}: n must be an integer, got {self.n!r}"
            )
        if self.n <= 0:
            raise ValueError(f"Term {self.name!r}: n must be positive, got {self.n}")
        if self.kind not in KINDS:
            raise ValueError(f"Term {self.name!r}: kind must be one of {KINDS}")
        _check_weight(self.name, self.weight)
        if not callable(self.sampler):
            raise ValueError(f"Term {self.name!r}: sampler must be callable")
        if self.jet is not None and not callable(self.jet):
            raise ValueError(f"Term {self.name!r}: jet must be callable or None")
        if not isinstance(self.fixed, bool):
            raise ValueError(f"Term {self.name!r}: fixed must be True or False")
        if self.kind == "net" and isinstance(self.residual, _CONDITIONS):
            raise ValueError(f"Term {self.name!r}: kind 'net' needs a callable")
        if type(self.residual).__module__.startswith("deepxde.icbc"):
            _check_supported(self.name, self.residual)
        if not (callable(self.residual) or isinstance(self.residual, _CONDITIONS)):
            raise ValueError(f"Term {self.name!r}: residual must be callable or a BC")
        if isinstance(self.residual, (icbc.DirichletBC, icbc.IC)):
            # no derivative needed: use the shared forward pass
            object.__setattr__(self, "kind", "value")
        if isinstance(self.residual, _CONDITIONS):
            object.__setattr__(self, "residual", _uncached(self.name, self.residual))


def _check_weight(name: str, weight) -> None:
    ok = isinstance(weight, (int, float, np.number)) and not isinstance(weight, bool)
    if not ok or not np.isfinite(weight) or weight < 0:
        raise ValueError(
            f"Term {name!r}: weight must be a finite number >= 0, got {weight!r}"
        )


# conditions whose values depend only on the points (not on fixed point sets)
_SUPPORTED = (icbc.DirichletBC, icbc.NeumannBC, icbc.RobinBC, icbc.OperatorBC, icbc.IC)
_VALUE_FUNC = (icbc.DirichletBC, icbc.NeumannBC, icbc.IC)


def _check_supported(name: str, bc) -> None:
    if not isinstance(bc, _SUPPORTED):
        raise ValueError(
            f"Term {name!r}: {type(bc).__name__} is not supported (it needs fixed "
            "point sets); use DirichletBC, NeumannBC, RobinBC, OperatorBC or IC"
        )


def _uncached(name: str, bc):
    """A copy of ``bc`` whose value functions are rebuilt without DeepXDE's cache.

    DeepXDE wraps a condition's value function (and ``boundary_normal``) in a cache
    keyed by ``id(X)``, because ``dde.data.PDE`` points never change. With fresh
    points every step that cache would return stale values (ids are reused) and
    grow without bound. The functions are rebuilt from public parts: the user's
    function (``inspect.unwrap`` of the ``functools.wraps`` chain) and the
    geometry's ``boundary_normal``, as :class:`HostFunction` objects.
    """
    _check_supported(name, bc)
    bc = copy.copy(bc)
    if isinstance(bc, icbc.BC):
        bc.boundary_normal = HostFunction(return_tensor(bc.geom.boundary_normal))
    if isinstance(bc, _VALUE_FUNC):
        user = inspect.unwrap(bc.func)
        if get_num_args(user) != 1:
            raise ValueError(
                f"Term {name!r}: condition functions with auxiliary variables are "
                "not supported by ResampledPDE"
            )
        bc.func = HostFunction(return_tensor(user))
    return bc


class HostFunction:
    """A condition's function of the points alone (its values, or the boundary
    normals), evaluated on the host's NumPy rows, in DeepXDE's ``(X, beg, end,
    aux_var)`` convention and without DeepXDE's cache (``__wrapped__`` keeps the
    chain to the user's function, so rebuilding is idempotent).

    While ``staged`` holds a tensor, a call returns it instead: a step whose
    values were computed on the host beforehand and copied to the device
    (:meth:`ResampledPDE.staged`), so that the step itself reads no host memory.
    """

    def __init__(self, func):
        functools.update_wrapper(self, func)
        self.staged: torch.Tensor | None = None

    def host(self, rows: np.ndarray) -> torch.Tensor:
        """The values on ``rows`` as the unstaged call gives them, but in host
        memory (DeepXDE makes tensors on the GPU when there is one)."""
        with torch.device("cpu"):
            return self.__wrapped__(rows)

    def __call__(self, X, beg, end, aux_var=None):
        if self.staged is not None:
            return self.staged
        return self.__wrapped__(X[beg:end])


def _host_functions(condition) -> list[HostFunction]:
    """The point-only functions a condition's ``error`` calls, in a fixed order."""
    if isinstance(condition, (icbc.DirichletBC, icbc.IC)):
        names = ("func",)
    elif isinstance(condition, icbc.NeumannBC):
        names = ("func", "boundary_normal")
    elif isinstance(condition, icbc.RobinBC):
        names = ("boundary_normal",)
    else:  # OperatorBC: its function takes the tensors
        names = ()
    return [getattr(condition, a) for a in names]


class ResampledPDE(Data):
    """Fixed per-term point counts, fresh i.i.d. points every step.

    Args:
        terms: the loss terms, in the order their losses are returned.
        seed: seeds the sampling generator (``np.random.default_rng``); the fixed
            test batch uses an independent stream.
        resample: redraw every set on every ``train_next_batch`` call (paper) or
            keep the first draw (fixed pool).
        derivatives: ``"taylor"`` uses the terms' ``jet`` residuals when the
            network supports jets, ``"autograd"`` always DeepXDE's nested autograd.
        weights: optional :class:`RowWeights` hook giving per-row multipliers of
            the squared residuals (its state is saved by :meth:`state_dict`).
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
        weights: "RowWeights | None" = None,
        compile_jets: bool = False,
    ):
        if derivatives not in DERIVATIVES:
            raise ValueError(
                f"derivatives must be one of {DERIVATIVES}, got {derivatives!r}"
            )
        self.derivatives = derivatives
        self._jet_ok: dict[int, bool] = {}
        self.compile_jets = check_bool(compile_jets, "compile_jets")
        self._compiled: dict = {}
        if isinstance(terms, Term) or not isinstance(terms, Iterable):
            raise ValueError(f"terms must be a sequence of Term, got {terms!r}")
        terms = list(terms)
        if not terms:
            raise ValueError("terms must contain at least one Term")
        bad = [i for i, t in enumerate(terms) if not isinstance(t, Term)]
        if bad:
            raise ValueError(f"terms[{bad[0]}] is not a Term: {terms[bad[0]]!r}")
        names = [t.name for t in terms]
        if len(set(names)) != len(names):
            raise ValueError(f"terms: names must be unique, got {names}")
        self.terms = terms
        self.names = names
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
            for i, t in enumerate(terms)
            if t.fixed
        }
        self.rng = np.random.default_rng(seed)
        offsets = np.cumsum([0] + [t.n for t in terms])
        self.slices = [slice(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]
        # rows of the value terms inside the batch given to DeepXDE
        value_n = [t.n if t.kind == "value" else 0 for t in terms]
        v_off = np.cumsum([0] + value_n)
        self.value_slices = [
            slice(int(a), int(b)) for a, b in zip(v_off[:-1], v_off[1:])
        ]
        self.last_losses: torch.Tensor | None = None
        self._staged_points: torch.Tensor | None = None
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

    # --- a step that reads no host memory (CUDA graphs) ---------------------------

    def host_arrays(self, Xs: Sequence[np.ndarray] | None = None) -> list:
        """What the training losses of the point sets ``Xs`` (default: this run's
        ``train_x``; K runs' sets in a stack) read from host memory, as CPU
        tensors: DeepXDE's inputs (the value terms' rows, run by run), the points
        ``(K, N, d)`` and each condition's point-only values on its rows."""
        Xs = [self.train_x] if Xs is None else list(Xs)
        inputs = np.vstack([self._value_rows(X) for X in Xs])
        out = [torch.from_numpy(inputs), torch.from_numpy(np.stack(Xs))]
        for t, sl in zip(self.terms, self.slices):
            if isinstance(t.residual, _CONDITIONS):
                rows = _term_rows(Xs, sl)
                out += [f.host(rows) for f in _host_functions(t.residual)]
        return out

    @contextlib.contextmanager
    def staged(self, tensors: Sequence[torch.Tensor]):
        """Within, the losses read the points and the conditions' values from
        ``tensors`` (laid out as :meth:`host_arrays`, e.g. on the GPU) instead of
        host memory; ``tensors[0]`` is what to pass DeepXDE as its inputs."""
        funcs = [
            f
            for t in self.terms
            if isinstance(t.residual, _CONDITIONS)
            for f in _host_functions(t.residual)
        ]
        if len(tensors) != 2 + len(funcs):
            raise ValueError(f"tensors: expected {2 + len(funcs)}, got {len(tensors)}")
        self._staged_points = tensors[1]
        for f, v in zip(funcs, tensors[2:]):
            f.staged = v
        try:
            yield
        finally:
            self._staged_points = None
            for f in funcs:
                f.staged = None

    def _points(self, Xs, slices, like: torch.Tensor) -> torch.Tensor:
        """Rows ``slices`` of each run's points (run by run), a new tensor with
        ``like``'s dtype and device, staged or from the host arrays ``Xs``."""
        P = self._staged_points
        if P is not None:
            parts = [P[k, sl] for k in range(len(Xs)) for sl in slices]
            return torch.cat(parts).to(like.dtype)
        rows = np.concatenate([X[sl] for X in Xs for sl in slices])
        return torch.as_tensor(rows, dtype=like.dtype, device=like.device)

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
        if "weights" in state:
            self.weights.load_state_dict(state["weights"])

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
        (a :class:`~deepxde_lnn.networks.stacked.StackedNet`, also ``net``) applies the jet
        residuals to each run's block (a weights hook needs K = 1)."""
        K = len(Xs)
        jets = self._jet_residuals(Xs, inputs, net, stacked)
        losses = []
        for i, (term, sl, vsl) in enumerate(
            zip(self.terms, self.slices, self.value_slices)
        ):
            rows = _term_rows(Xs, sl)
            if i in jets:
                r = jets[i]
            else:
                x, y = _blocks(inputs, K, vsl), _blocks(outputs, K, vsl)
                r = self._residual(term, Xs, sl, x, y, net)
            _check_residual(term, r, K)
            update = training and self.update_weights
            omega = self.weights(i, term, rows, r, update) if self.weights else None
            losses.append(_weighted(term, _mean_square(r, omega, K)))
        return losses

    def _residual(self, term, Xs, sl, value_x, value_y, net):
        rows = _term_rows(Xs, sl)
        if term.kind == "value":
            x, y = value_x, value_y
        else:  # own forward: derivatives on this term's rows only
            x = self._points(Xs, [sl], value_x)
            x.requires_grad_()
            if term.kind == "net":
                return term.residual(x, net)
            y = net(x)
        if isinstance(term.residual, _CONDITIONS):
            return term.residual.error(rows, x, y, 0, len(rows))
        return term.residual(x, y)

    def _jet_residuals(self, Xs, inputs, net, stacked=None) -> dict:
        """Residuals of the terms computed with jets, by term index. Terms sharing
        one jet function (e.g. the same operator on two edges) are evaluated in
        one pass over their stacked rows (jets act row by row), run by run."""
        if not any(t.jet is not None and t.kind != "value" for t in self.terms):
            return {}
        if not self.uses_jets(net if stacked is None else stacked.template):
            return {}
        groups: dict = {}
        for i, t in enumerate(self.terms):
            if t.jet is not None and t.kind != "value":
                groups.setdefault(t.jet, []).append(i)
        out, K = {}, len(Xs)
        if self.compile_jets and torch.is_grad_enabled():
            from ..networks import compiled

            compiled.begin_step(inputs.device)
        for jet, idx in groups.items():
            x = self._points(Xs, [self.slices[i] for i in idx], inputs)
            if stacked is None:
                r = self._jet_function(jet)(x, net)
            else:
                r = self._jet_function(_per_run(jet))(x, stacked)
            parts = torch.split(
                r.reshape(K, -1, *r.shape[1:]), [self.terms[i].n for i in idx], 1
            )
            out.update((i, p.reshape(-1, *p.shape[2:])) for i, p in zip(idx, parts))
        return out

    def _jet_function(self, jet):
        """``jet`` itself, or its compiled version (one per jet function) while
        gradients are recorded (training; an evaluation is not worth a compile).
        Stacked runs compile ``_per_run(jet)``: the jet vmapped over the runs."""
        if not (self.compile_jets and torch.is_grad_enabled()):
            return jet
        if jet not in self._compiled:
            from ..networks.compiled import compiled

            self._compiled[jet] = compiled(jet)
        return self._compiled[jet]

    def uses_jets(self, net) -> bool:
        """Whether the jet residuals are used with ``net``."""
        if self.derivatives != "taylor":
            return False
        key = id(net)
        if key not in self._jet_ok:
            from ..networks import taylor

            self._jet_ok[key] = taylor.supported(net)
        return self._jet_ok[key]

    def describe_derivatives(self, net) -> str:
        """How input derivatives are taken, for run metadata."""
        jets = [t.name for t in self.terms if t.jet is not None]
        if jets and self.uses_jets(net):
            how = "Taylor-mode jets"
            if self.compile_jets and not any(
                f.fallback for f in self._compiled.values()
            ):
                how += " compiled with torch.compile"
            return f"{how} ({', '.join(jets)}); others nested autograd"
        return "nested autograd (DeepXDE)"


@functools.cache
def _per_run(jet):
    """``jet`` for a :class:`~deepxde_lnn.networks.stacked.StackedNet`: each run's
    jet on its row block (``StackedNet.per_run``), one function per ``jet`` (so
    one compiled function per jet for stacked runs too)."""

    def per_run(x: torch.Tensor, stacked):
        return stacked.per_run(jet, x)

    return per_run


def is_training_pass(model) -> bool:
    """Whether DeepXDE evaluates the losses for a gradient step (not for its
    display of the training loss, made with the parameters frozen)."""
    return torch.is_grad_enabled() and next(model.net.parameters()).requires_grad


def _weighted(term: Term, loss):
    return loss if term.weight == 1 else term.weight * loss


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


def _check_residual(term: Term, r, runs: int = 1) -> None:
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


def _term_rows(Xs, sl: slice) -> np.ndarray:
    """Rows ``sl`` of each run's host points, run by run."""
    return Xs[0][sl] if len(Xs) == 1 else np.vstack([X[sl] for X in Xs])


def _blocks(t: torch.Tensor, K: int, sl: slice) -> torch.Tensor:
    """Rows ``sl`` of each of the K row blocks of ``t``."""
    if K == 1:
        return t[sl]
    return t.reshape(K, -1, *t.shape[1:])[:, sl].reshape(-1, *t.shape[1:])


def _mean_square(r, omega=None, runs: int = 1) -> torch.Tensor:
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
    if isinstance(r, (list, tuple)):
        return sum(torch.mean(torch.square(ri)) for ri in r)
    if r.ndim == 2:
        return torch.sum(torch.mean(torch.square(r), dim=0))
    return torch.mean(torch.square(r))


def _block_mean_square(r, K: int) -> torch.Tensor:
    """:func:`_mean_square` of each of K row blocks of a residual: (K,)."""
    if isinstance(r, (list, tuple)):
        return sum(torch.square(ri).reshape(K, -1).mean(1) for ri in r)
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
