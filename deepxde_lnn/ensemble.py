"""K seeds of one (case, method) trained as ONE stacked model, equal to K runs.

Every parameter of the K nets is stacked along a leading axis ``k = 0..K-1``. A
batch holds K consecutive blocks of N rows (block k belongs to run k); each linear
layer is one batched matmul::

    H_k <- act(H_k W_k^T + b_k)                    (K, N, w), torch.baddbmm

Row i of block k depends only on input row i of block k and on run k's parameters,
so nested autograd (and ``dde.grad``) give each run's own derivatives, and the
gradient of ``sum_k sum_t L_kt`` w.r.t. run k's parameters is the gradient of run
k's own loss ``sum_t L_kt``. Adam is elementwise, so one ``torch.optim.Adam`` over
the stacked parameters performs K independent Adam updates.

Taylor-mode residuals (``Term.jet``, which read a single net's layers) run under
``torch.func.vmap`` over the runs (:meth:`StackedNet.per_run`), used exactly when
a single run's ``ResampledPDE`` would use them. Sampling follows ``ResampledPDE``
per run (own generator, DeepXDE's extra draw before the first step), so run k
reproduces the run ``runner.run`` makes with seed k, up to floating-point rounding.

    stacked, data, opt = build_ensemble(case, "lnn", seeds, case.paper)
    log = train(stacked, data, opt, case.paper.iterations)
    log.table(k)              # run k's loss.csv rows; log.diverged_at: {run: step}
    stacked.state_dicts()     # per-run model.pt contents
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ._backend import ensure_pytorch_backend

ensure_pytorch_backend()

import deepxde as dde  # noqa: E402
import torch  # noqa: E402
from deepxde import icbc  # noqa: E402

from .case import Case, Profile  # noqa: E402
from .data import ResampledPDE  # noqa: E402
from .nn import LNN, MLP  # noqa: E402

__all__ = [
    "StackedNet",
    "EnsembleData",
    "TrainLog",
    "build_ensemble",
    "make_adam",
    "split_adam_state",
    "stack_adam_states",
    "train",
]

_CONDITIONS = (icbc.BC, icbc.IC)


def _linear(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``h_k W_k^T + b_k`` for every k: (K, N, i) x (K, o, i) -> (K, N, o).

    On CPU ``baddbmm``, ``bmm`` + add and ``matmul`` + add measured within noise
    of each other, ``einsum`` ~15% slower (Laplace paper profile, K=5, nested
    autograd, 1 thread: 0.305, 0.303, 0.305, 0.350 s/step;
    ``benchmarks/ensemble_throughput.py --matmul``). ``baddbmm`` fuses the bias
    add: one kernel fewer per layer on a GPU.
    """
    return torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))


class StackedNet(torch.nn.Module):
    """K nets of one architecture (:class:`MLP` or :class:`LNN`) as one module.

    Args:
        nets: K initialised nets with identical architecture, activations and
            transforms; their values are copied (the nets are not modified).
        run_ids: labels of the runs (default ``0..K-1``), kept through
            :meth:`select_`.

    ``forward`` maps (K·N, d) -> (K·N, n_out), K consecutive blocks of N rows.
    Parameter ``i`` of ``self.parameters()`` is parameter ``i`` of a single net,
    stacked: shape ``(K, *shape)``.
    """

    def __init__(self, nets: Sequence[MLP], run_ids: Sequence[int] | None = None):
        super().__init__()
        nets = list(nets)
        if not nets:
            raise ValueError("nets must hold at least one network")
        _check_same_architecture(nets)
        # structure, activations and transforms only; not a registered submodule
        self.__dict__["template"] = copy.deepcopy(nets[0])
        self.names = [n for n, _ in nets[0].named_parameters()]
        self._index = {n: i for i, n in enumerate(self.names)}
        per_net = [dict(n.named_parameters()) for n in nets]
        self.params = torch.nn.ParameterList(
            torch.nn.Parameter(torch.stack([p[k].detach() for p in per_net]))
            for k in self.names
        )
        self.run_ids = list(range(len(nets)) if run_ids is None else run_ids)
        if len(self.run_ids) != len(nets):
            raise ValueError("run_ids: one label per net")

    @classmethod
    def from_state_dicts(
        cls, net: MLP, states: Sequence[dict], run_ids: Sequence[int] | None = None
    ) -> StackedNet:
        """Stack K single-net ``state_dict``s (e.g. K ``model.pt``) into the
        architecture of ``net`` (whose own values are ignored)."""
        nets = []
        for s in states:
            n = copy.deepcopy(net)
            n.load_state_dict(s, strict=True)
            nets.append(n)
        return cls(nets, run_ids)

    @property
    def num_runs(self) -> int:
        return len(self.run_ids)

    def _p(self, name: str) -> torch.Tensor:
        return self.params[self._index[name]]

    def state_dicts(self) -> list[dict]:
        """Per-run state dicts, keys and shapes exactly those of a single net."""
        return [
            {k: p[i].detach().clone() for k, p in zip(self.names, self.params)}
            for i in range(self.num_runs)
        ]

    def nets(self) -> list[MLP]:
        """K single nets holding the runs' current values."""
        out = []
        for s in self.state_dicts():
            n = copy.deepcopy(self.template)
            n.load_state_dict(s)
            out.append(n)
        return out

    @torch.no_grad()
    def select_(self, keep: Sequence[int]) -> None:
        """Keep only the runs at positions ``keep`` (new Parameter objects)."""
        idx = torch.as_tensor(
            list(keep), dtype=torch.long, device=self.params[0].device
        )
        self.params = torch.nn.ParameterList(
            torch.nn.Parameter(p.detach().index_select(0, idx).clone())
            for p in self.params
        )
        self.run_ids = [self.run_ids[i] for i in keep]

    def per_run(self, fn: Callable, x: torch.Tensor):
        """``fn(x_k, net_k)`` for every run at once, in the row-block layout.

        ``fn`` takes a single net (e.g. a Taylor-mode ``Term.jet``, which reads the
        layers' weights instead of calling ``forward``); it runs under
        ``torch.func.vmap`` over the runs with the template's parameters replaced
        by run k's slices (``functional_call``). ``x``: (K·N, d); returns (K·N, ...)
        or a list of such (differentiable w.r.t. the stacked parameters).
        """
        K, call = self.num_runs, _Call(fn, self.template)
        names = ["net." + n for n in self.names]

        def one(params, xk):
            return torch.func.functional_call(call, dict(zip(names, params)), (xk,))

        if K == 1:  # vmap's overhead buys nothing here
            return one([p[0] for p in self.params], x)
        out = torch.func.vmap(one)(tuple(self.params), x.reshape(K, -1, x.shape[1]))
        if isinstance(out, (list, tuple)):
            return [r.reshape(-1, *r.shape[2:]) for r in out]
        return out.reshape(-1, *out.shape[2:])

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        net, K = self.template, self.num_runs
        if inputs.shape[0] % K:
            raise ValueError(f"{inputs.shape[0]} input rows are not {K} equal blocks")
        x = inputs if net._input_transform is None else net._input_transform(inputs)
        h = x.reshape(K, x.shape[0] // K, x.shape[1])
        n_lin = len(net.linears)
        for j in range(n_lin - 1):
            h = self._hidden(j, h)
        h = _linear(
            h,
            self._p(f"linears.{n_lin - 1}.weight"),
            self._p(f"linears.{n_lin - 1}.bias"),
        )
        y = h.reshape(-1, h.shape[-1])
        if net._output_transform is not None:
            y = net._output_transform(inputs, y)
        return y

    def _hidden(self, j: int, h: torch.Tensor) -> torch.Tensor:
        net = self.template
        h = _linear(h, self._p(f"linears.{j}.weight"), self._p(f"linears.{j}.bias"))
        if not isinstance(net, LNN):
            return net.activation[j](h)
        if net.layout == "standard":
            h = net.activation[j](h)
        a = self._p(f"blocks.{j}.alpha").unsqueeze(1)
        z = _linear(
            h, self._p(f"blocks.{j}.linear.weight"), self._p(f"blocks.{j}.linear.bias")
        )
        return h + a * net.blocks[j].activation(z)


class _Call(torch.nn.Module):
    """``fn(x, net)`` as a module, for ``functional_call``."""

    def __init__(self, fn: Callable, net: torch.nn.Module):
        super().__init__()
        self.fn, self.net = fn, net

    def forward(self, x: torch.Tensor):
        return self.fn(x, self.net)


def _check_same_architecture(nets: Sequence[MLP]) -> None:
    first = nets[0]
    if not isinstance(first, MLP):
        raise ValueError(
            f"nets must be MLP or LNN networks, got {type(first).__name__}"
        )
    if any(True for _ in first.buffers()):
        raise ValueError("nets with buffers are not supported")
    if any("activation" in k for k, _ in first.named_parameters()):
        raise ValueError("nets with trainable activations are not supported")

    def signature(n):
        return (
            type(n),
            getattr(n, "layout", None),
            tuple(
                (k, tuple(p.shape), p.dtype, p.device) for k, p in n.named_parameters()
            ),
            tuple(n.activation),
            tuple(b.activation for b in getattr(n, "blocks", ())),
            n._input_transform,
            n._output_transform,
        )

    ref = signature(first)
    for i, n in enumerate(nets[1:], 1):
        if signature(n) != ref:
            raise ValueError(f"nets[{i}] differs from nets[0] in architecture")


# --- Adam ---------------------------------------------------------------------------


def make_adam(stacked: StackedNet, lr: float | Sequence[float]) -> torch.optim.Adam:
    """One ``torch.optim.Adam`` (library defaults) over the stacked parameters.

    ``lr``: one rate, or one per run. Equal rates use Adam's own update. Different
    rates set the group's ``lr`` to 0 (Adam then only updates its moments) and a
    step post-hook applies ``p_k <- p_k + (-lr_k / (1 - b1^t)) m_k / (sqrt(v_k) /
    sqrt(1 - b2^t) + eps)``, Adam's formula, per run. The rates live in the
    param group under ``"run_lr"`` (so they are saved with ``state_dict()``).
    """
    lrs = [float(lr)] * stacked.num_runs if np.isscalar(lr) else [float(v) for v in lr]
    if len(lrs) != stacked.num_runs or not all(np.isfinite(lrs)) or min(lrs) < 0:
        raise ValueError(f"lr: one finite rate >= 0 or one per run, got {lr!r}")
    opt = torch.optim.Adam(stacked.parameters(), lr=_group_lr(lrs))
    opt.param_groups[0]["run_lr"] = lrs
    opt.register_step_post_hook(_per_run_lr_step)
    return opt


def make_schedule(opt: torch.optim.Optimizer, decay: tuple | None):
    """DeepXDE's learning-rate schedule ``decay`` (e.g. ``("cosine", 3000, 1e-5)``;
    None: constant, returns None) for ``opt`` from :func:`make_adam`, to step after
    each ``opt.step()`` as ``dde.Model`` does.

    The schedule sets the one group's lr, the same value for every run at each
    step, and Adam's update is elementwise, so run k follows exactly the lr
    sequence ``lr_t`` of its separate run: ``p_k <- p_k - lr_t * mhat_k /
    (sqrt(vhat_k) + eps)``. Per-run rates would need per-run factors: refused.
    """
    if decay is None:
        return None
    if len(set(opt.param_groups[0].get("run_lr") or [0.0])) > 1:
        raise ValueError("decay: a schedule needs one learning rate for all runs")
    return dde.optimizers.get(None, opt, decay=tuple(decay))[1]


def _group_lr(lrs: Sequence[float]) -> float:
    return lrs[0] if len(set(lrs)) == 1 else 0.0


@torch.no_grad()
def _per_run_lr_step(opt: torch.optim.Optimizer, args, kwargs) -> None:
    for group in opt.param_groups:
        lrs = group.get("run_lr")
        if lrs is None or group["lr"] != 0.0 or len(set(lrs)) == 1:
            continue
        beta1, beta2 = group["betas"]
        for p in group["params"]:
            st = opt.state.get(p)
            if not st:
                continue
            t = float(st["step"])
            shape = (-1,) + (1,) * (p.ndim - 1)
            neg = torch.tensor([-v / (1 - beta1**t) for v in lrs], dtype=p.dtype)
            neg = neg.to(p.device).view(shape)
            denom = (st["exp_avg_sq"].sqrt() / (1 - beta2**t) ** 0.5).add_(group["eps"])
            p.add_(neg * st["exp_avg"] / denom)  # addcdiv's order: (value * m) / d


def split_adam_state(state: dict, num_runs: int) -> list[dict]:
    """Stacked ``opt.state_dict()`` -> K single-net Adam ``state_dict()``s.

    Each has exactly the keys ``torch.optim.Adam(net.parameters()).state_dict()``
    has, with the run's own ``lr``.
    """
    (group,) = state["param_groups"]
    lrs = group.get("run_lr")
    if not lrs or len(set(lrs)) == 1:  # one rate: the group's (a schedule moves it)
        lrs = [group["lr"]] * num_runs
    out = []
    for k in range(num_runs):
        g = {key: v for key, v in group.items() if key != "run_lr"}
        g["lr"] = lrs[k]
        g["params"] = list(group["params"])
        per = {
            i: {
                key: (v.clone() if key == "step" else v[k].clone())
                for key, v in s.items()
            }
            for i, s in state["state"].items()
        }
        out.append({"state": per, "param_groups": [g]})
    return out


def stack_adam_states(states: Sequence[dict]) -> dict:
    """K single-net Adam ``state_dict()``s (same step) -> a stacked state dict,
    for ``make_adam(stacked, ...).load_state_dict``."""
    groups = [s["param_groups"][0] for s in states]
    rest = [{k: v for k, v in g.items() if k not in ("lr", "params")} for g in groups]
    if any(r != rest[0] for r in rest):
        raise ValueError("Adam states: the runs differ in more than the lr")
    steps = {tuple(float(v["step"]) for v in s["state"].values()) for s in states}
    if len(steps) != 1:
        raise ValueError("Adam states: the runs are at different steps")
    lrs = [g["lr"] for g in groups]
    group = dict(groups[0], lr=_group_lr(lrs), run_lr=lrs)
    group["params"] = list(groups[0]["params"])
    first = states[0]["state"]
    stacked = {
        i: {
            key: (
                v.clone()
                if key == "step"
                else torch.stack([s["state"][i][key] for s in states])
            )
            for key, v in first[i].items()
        }
        for i in first
    }
    return {"state": stacked, "param_groups": [group]}


# --- data ---------------------------------------------------------------------------


class EnsembleData:
    """K runs' :class:`ResampledPDE` (one per seed) as K row blocks per term.

    Each :meth:`draw` lets every run draw its own fresh sets with its own generator
    (exactly a single run's ``train_next_batch``). :meth:`losses` returns

        L[k, t] = w_t * mean_{x in S_kt} |r_t(x)|^2        (K, n_terms)

    where value terms share one stacked forward (as DeepXDE's batch) and pde/operator
    terms run the stacked net on their own K·n rows.
    """

    def __init__(self, runs: Sequence[ResampledPDE]):
        self.runs = list(runs)
        if not self.runs:
            raise ValueError("runs must hold at least one ResampledPDE")
        ref = [(t.name, t.n, t.kind, t.weight) for t in self.runs[0].terms]
        for i, d in enumerate(self.runs):
            if [(t.name, t.n, t.kind, t.weight) for t in d.terms] != ref:
                raise ValueError(f"runs[{i}] has other terms than runs[0]")
            if d.derivatives != self.runs[0].derivatives:
                raise ValueError(f"runs[{i}] takes derivatives another way")
        self.terms = self.runs[0].terms
        self.names = list(self.runs[0].names)
        self._values: list[np.ndarray] | None = None

    @property
    def num_runs(self) -> int:
        return len(self.runs)

    def draw(self) -> None:
        """One ``train_next_batch`` per run (value rows and ``train_x``)."""
        self._values = [d.train_next_batch()[0] for d in self.runs]

    def rng_states(self) -> list[dict]:
        """Per run, the sampling state before its latest draw (as a single run's
        checkpoint stores it: a resumed run redraws that batch first)."""
        return [d.rng_state_before_draw for d in self.runs]

    def set_rng_states(self, states: Sequence[dict]) -> None:
        for d, s in zip(self.runs, states, strict=True):
            d.rng.bit_generator.state = s

    def select_(self, keep: Sequence[int]) -> None:
        self.runs = [self.runs[i] for i in keep]
        if self._values is not None:
            self._values = [self._values[i] for i in keep]

    def losses(self, net: StackedNet) -> torch.Tensor:
        """(K, n_terms) per-run per-term losses on the current draw."""
        if self._values is None:
            raise RuntimeError("EnsembleData.losses before the first draw()")
        p = net.params[0]
        K, as_t = self.num_runs, dict(dtype=p.dtype, device=p.device)
        dde.grad.clear()
        values = None
        if len(self._values[0]):
            xv = torch.as_tensor(np.vstack(self._values), **as_t).requires_grad_()
            yv = net(xv)
            values = xv.reshape(K, -1, xv.shape[1]), yv.reshape(K, -1, yv.shape[1])
        jets = self._jet_residuals(net, as_t)
        cols = []
        for i, (t, sl, vsl) in enumerate(
            zip(self.terms, self.runs[0].slices, self.runs[0].value_slices)
        ):
            if i in jets:
                cols.append(_weighted(t, _block_mean_square(jets[i], K)))
                continue
            X = np.vstack([d.train_x[sl] for d in self.runs])
            if t.kind == "value":
                x, y = (v[:, vsl].reshape(-1, v.shape[2]) for v in values)
            else:  # own forward: derivatives on this term's rows only
                x = torch.as_tensor(X, **as_t).requires_grad_()
                y = net(x)
            if isinstance(t.residual, _CONDITIONS):
                r = t.residual.error(X, x, y, 0, len(X))
            else:
                r = t.residual(x, y)
            cols.append(_weighted(t, _block_mean_square(r, K)))
        dde.grad.clear()
        return torch.stack(cols, dim=1)

    def _jet_residuals(self, net: StackedNet, as_t: dict) -> dict:
        """Taylor-mode residuals by term index, as ``ResampledPDE`` takes them:
        terms sharing one ``jet`` in one pass, here over K blocks of their rows
        (:meth:`StackedNet.per_run`)."""
        if not self.runs[0].uses_jets(net.template):
            return {}
        groups: dict = {}
        for i, t in enumerate(self.terms):
            if t.jet is not None and t.kind != "value":
                groups.setdefault(t.jet, []).append(i)
        sl, K, out = self.runs[0].slices, self.num_runs, {}
        for jet, idx in groups.items():
            rows = np.concatenate([d.train_x[sl[i]] for d in self.runs for i in idx])
            r = net.per_run(jet, torch.as_tensor(rows, **as_t))
            r = r.reshape(K, -1, *r.shape[1:])
            parts = torch.split(r, [self.terms[i].n for i in idx], dim=1)
            out.update((i, p.reshape(-1, *p.shape[2:])) for i, p in zip(idx, parts))
        return out

    def describe_derivatives(self, net: StackedNet) -> str:
        """How input derivatives are taken (as a single run's metadata says)."""
        return self.runs[0].describe_derivatives(net.template)


def _weighted(term, loss: torch.Tensor) -> torch.Tensor:
    return loss if term.weight == 1 else term.weight * loss


def _block_mean_square(r, K: int) -> torch.Tensor:
    """Per-block ``_mean_square``: (K,) from K row blocks of a residual."""
    if isinstance(r, (list, tuple)):
        return sum(torch.square(ri).reshape(K, -1).mean(1) for ri in r)
    sq = torch.square(r)
    if r.ndim == 2:
        return sq.reshape(K, -1, r.shape[1]).mean(1).sum(1)
    return sq.reshape(K, -1).mean(1)


def build_ensemble(
    case: Case,
    method: str,
    seeds: Sequence[int],
    profile: Profile,
    lr: float | Sequence[float] | None = None,
    derivatives: str = "taylor",
) -> tuple[StackedNet, EnsembleData, torch.optim.Adam]:
    """What ``runner.run`` builds, once per seed, stacked.

    Per seed: ``dde.config.set_random_seed(seed)``, ``ResampledPDE(terms, seed)``,
    ``build_net(method, case)``. ``lr`` defaults to the profile's; ``derivatives``
    as ``ResampledPDE``'s. Set the float type (``dde.config.set_default_float``)
    first.
    """
    from .methods import build_net, get

    if not get(method).stackable:
        raise ValueError(f"method: {method!r} cannot train its seeds as one stack")
    datas, nets = [], []
    for s in seeds:
        dde.config.set_random_seed(s)
        terms = case.make_terms(profile)
        datas.append(ResampledPDE(terms, seed=s, derivatives=derivatives))
        nets.append(build_net(method, case))
    stacked = StackedNet(nets)
    return (
        stacked,
        EnsembleData(datas),
        make_adam(stacked, profile.lr if lr is None else lr),
    )


# --- training -----------------------------------------------------------------------


@dataclass
class TrainLog:
    """Losses logged by :func:`train`, per run id; ``diverged_at[run]`` is the
    first step with a non-finite loss (that step's losses are not logged)."""

    names: list[str]
    rows: dict[int, list[np.ndarray]] = field(default_factory=dict)
    diverged_at: dict[int, int] = field(default_factory=dict)

    def _rows(self, run: int) -> np.ndarray:
        chunks = self.rows[run]
        return np.vstack(chunks) if chunks else np.zeros((0, 1 + len(self.names)))

    def steps(self, run: int) -> np.ndarray:
        return self._rows(run)[:, 0].astype(int)

    def losses(self, run: int) -> np.ndarray:
        """(steps, n_terms) float64."""
        return self._rows(run)[:, 1:]

    def table(self, run: int) -> np.ndarray:
        """``[step, total, *terms]`` rows, the columns of a run's ``loss.csv``."""
        r = self._rows(run)
        return np.column_stack([r[:, 0], r[:, 1:].sum(1), r[:, 1:]])


def train(
    stacked: StackedNet,
    data: EnsembleData,
    opt: torch.optim.Optimizer,
    steps: int,
    on_step: Callable[[int, torch.Tensor], None] | None = None,
    *,
    start: int = 0,
    flush_every: int = 100,
    schedule=None,
) -> TrainLog:
    """``steps`` Adam steps of all runs at once, like K ``dde.Model.train`` calls.

    As ``Model.train``, one batch is drawn (and discarded) before the first step;
    then each step draws, computes L (K, n_terms), backpropagates ``sum(L)`` and
    steps ``opt``, then ``schedule`` (:func:`make_schedule`) if given. ``on_step(step, L.detach())`` runs after each update. Losses
    stay on the device and reach the host every ``flush_every`` steps; a run with
    a non-finite loss there is recorded in ``log.diverged_at`` and removed from
    ``stacked``, ``data`` and ``opt`` (in place; ``stacked.run_ids`` says which runs
    remain). Until then its NaNs cannot reach the other runs: every operation is
    per block or elementwise, and ``d sum(L) / d L_kt = 1`` whatever L holds. If
    every run diverged the objects are left as they are and training stops.
    """
    if stacked.num_runs != data.num_runs:
        raise ValueError("stacked and data hold different numbers of runs")
    if steps < 0 or flush_every < 1:
        raise ValueError("steps must be >= 0 and flush_every >= 1")
    log = TrainLog(list(data.names), {r: [] for r in stacked.run_ids})
    data.draw()  # dde.Model.train draws once before its first step
    pending: list[torch.Tensor] = []
    for i in range(steps):
        step = start + i + 1
        data.draw()
        opt.zero_grad()
        losses = data.losses(stacked)
        losses.sum().backward()
        opt.step()
        if schedule is not None:
            schedule.step()
        pending.append(losses.detach())
        if on_step is not None:
            on_step(step, pending[-1])
        if step % flush_every == 0 or i + 1 == steps:
            bad = _flush(log, stacked.run_ids, pending, step)
            pending = []
            if len(bad) == stacked.num_runs:
                break
            if bad:
                _drop(stacked, data, opt, bad)
    return log


def _flush(log: TrainLog, run_ids, pending: list[torch.Tensor], last: int) -> list:
    """Move pending (K, T) losses to the host; positions of diverged runs."""
    L = torch.stack(pending).cpu().numpy().astype(np.float64)  # (S, K, T)
    steps = np.arange(last - len(L) + 1, last + 1)
    bad = []
    for pos, run in enumerate(run_ids):
        ok = np.isfinite(L[:, pos]).all(1)
        n = len(ok) if ok.all() else int(np.argmin(ok))
        log.rows[run].append(np.column_stack([steps[:n], L[:n, pos]]))
        if n < len(ok):
            log.diverged_at[run] = int(steps[n])
            bad.append(pos)
    return bad


def _drop(stacked: StackedNet, data: EnsembleData, opt, bad: Sequence[int]) -> None:
    """Remove the runs at positions ``bad``; the others' values are copied."""
    keep = [i for i in range(stacked.num_runs) if i not in bad]
    states = split_adam_state(opt.state_dict(), stacked.num_runs)
    stacked.select_(keep)
    data.select_(keep)
    opt.param_groups[0]["params"] = list(stacked.parameters())
    opt.load_state_dict(stack_adam_states([states[i] for i in keep]))
