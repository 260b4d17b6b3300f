"""K networks of one architecture as ONE module: every parameter stacked along a
leading run axis ``k = 0..K-1``.

A batch holds K consecutive blocks of N rows (block k belongs to run k), and the
nets' one declared forward pass (their stages, :meth:`~deepxde_lnn.networks.pytorch.MLP.stages`)
runs on the (K, N, w) blocks: each ``Linear`` as one batched matmul, a block's gate
broadcast per run, an activation as it is, any other stage with parameters under
``torch.func.vmap``::

    H_k <- act(H_k W_k^T + b_k)                    (K, N, w), torch.baddbmm

Row i of block k depends only on input row i of block k and on run k's parameters,
so nested autograd (and ``dde.grad``) give each run's own derivatives, and the
gradient of ``sum_k L_k`` w.r.t. run k's parameters is the gradient of run k's own
loss ``L_k``. Taylor-mode residuals (``Term.jet``, which read a single net's layers)
run under ``torch.func.vmap`` over the runs (:meth:`StackedNet.per_run`).
:mod:`deepxde_lnn.training.stacking` trains such a net on K runs' data.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import torch

from .pytorch import MLP, LiquidBlock

__all__ = ["StackedNet"]


class StackedNet(torch.nn.Module):
    """K nets of one architecture (:class:`MLP` or a subclass) as one module.

    Args:
        nets: K initialised nets with identical architecture, activations and
            transforms; their values are copied (the nets are not modified).
        run_ids: labels of the runs (default ``0..K-1``), kept through
            :meth:`select_`.

    ``forward`` maps (K·N, d) -> (K·N, n_out), K consecutive blocks of N rows.
    Parameter ``i`` of ``self.parameters()`` is parameter ``i`` of a single net,
    stacked: shape ``(K, *shape)``.
    """

    regularizer = None  # what dde.Model reads of a network

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
        self._prefix = {
            id(m): f"{name}." if name else ""
            for name, m in self.template.named_modules()
        }
        # the template's stages as steps on the stacked parameters, made once
        self._plan = self._compile(self.template.stages())
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
        """Per-run state dicts, keys and shapes exactly those of a single net
        (its buffers, e.g. fixed gates, the same in every run)."""
        buffers = dict(self.template.named_buffers())
        order = list(self.template.state_dict())  # a single net's key order

        def value(k: str, i: int) -> torch.Tensor:
            v = self._p(k)[i] if k in self._index else buffers[k]
            return v.detach().clone()

        return [{k: value(k, i) for k in order} for i in range(self.num_runs)]

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
        """The template's transforms on all rows, its declared stages
        (:meth:`~deepxde_lnn.networks.pytorch.MLP.stages`) on the (K, N, w) blocks."""
        net, K = self.template, self.num_runs
        if inputs.shape[0] % K:
            raise ValueError(f"{inputs.shape[0]} input rows are not {K} equal blocks")
        x = inputs if net._input_transform is None else net._input_transform(inputs)
        h = _run(self._plan, x.reshape(K, x.shape[0] // K, x.shape[1]))
        y = h.reshape(-1, h.shape[-1])
        if net._output_transform is not None:
            y = net._output_transform(inputs, y)
        return y

    def _compile(self, stages: Sequence) -> list:
        """One function ``(K, N, w) -> (K, N, w')`` per stage of the template,
        run k's parameters acting on block k: the stage type's rule
        (:data:`_STACKED_RULES`); a stage with other parameters under ``vmap``; a
        parameter-free one (an activation, which acts on each row alone) as it is."""
        steps = []
        for stage in stages:
            rule = _rule(stage)
            if rule is None:
                rule = _vmapped if _has_parameters(stage) else _as_is
            steps.append(rule(self, stage))
        return steps

    def _slot(self, module: torch.nn.Module, name: str) -> int:
        """Index in ``params`` of the template's ``module``'s parameter ``name``."""
        return self._index[f"{self._prefix[id(module)]}{name}"]


def _run(steps: Sequence[Callable], h: torch.Tensor) -> torch.Tensor:
    for step in steps:
        h = step(h)
    return h


def _stacked_linear(net: StackedNet, m: torch.nn.Linear) -> Callable:
    """``h_k W_k^T + b_k`` for every k: (K, N, i) x (K, o, i) -> (K, N, o).

    On CPU ``baddbmm``, ``bmm`` + add and ``matmul`` + add measured within noise
    of each other, ``einsum`` ~15% slower (Laplace paper profile, K=5, nested
    autograd, 1 thread: 0.305, 0.303, 0.305, 0.350 s/step;
    ``benchmarks/stacked_throughput.py --matmul``); the whole trunk under
    ``vmap`` (``functional_call`` of the template) 5-11% slower on the quick
    profiles (Laplace LNN, K=5, nested autograd: 0.0641 against 0.0579 s/step).
    ``baddbmm`` fuses the bias add: one kernel fewer per layer on a GPU.
    """
    w = net._slot(m, "weight")
    b = None if m.bias is None else net._slot(m, "bias")

    def step(h):
        wt = net.params[w].transpose(1, 2)
        if b is None:
            return torch.bmm(h, wt)
        return torch.baddbmm(net.params[b].unsqueeze(1), h, wt)

    return step


def _stacked_residual(net: StackedNet, m: LiquidBlock) -> Callable:
    """``h_k + alpha_k * branch_k(h_k)`` (``alpha_k * branch_k(h_k)`` without the
    residual path), ``alpha_k`` broadcast as in one net."""
    fixed = not isinstance(m.alpha, torch.nn.Parameter)  # one buffer for every run
    a = None if fixed else net._slot(m, "alpha")
    branch = net._compile(m.stages())

    def step(h):
        if fixed:
            alpha = m.alpha.to(h)
        else:
            alpha = net.params[a]
            lead = (alpha.shape[0],) + (1,) * (h.ndim - alpha.ndim)
            alpha = alpha.reshape(*lead, *alpha.shape[1:])
        if not m.residual:
            return alpha * _run(branch, h)
        return torch.addcmul(h, alpha, _run(branch, h))

    return step


def _vmapped(net: StackedNet, m: torch.nn.Module) -> Callable:
    """Any stage with parameters: its own ``forward`` under ``vmap`` over runs."""
    names = [n for n, _ in m.named_parameters()]
    slots = [net._slot(m, n) for n in names]

    def one(params, hk):
        return torch.func.functional_call(m, dict(zip(names, params)), (hk,))

    def step(h):
        return torch.func.vmap(one)(tuple(net.params[i] for i in slots), h)

    return step


def _as_is(net: StackedNet, stage: Callable) -> Callable:
    return stage


#: stacked rule per stage type, ``rule(net, stage) -> step`` (others: see
#: :meth:`StackedNet._compile`)
_STACKED_RULES: dict = {
    torch.nn.Linear: _stacked_linear,
    LiquidBlock: _stacked_residual,
}


def _rule(stage) -> Callable | None:
    for cls, rule in _STACKED_RULES.items():
        if isinstance(stage, cls) and type(stage).forward is cls.forward:
            return rule
    return None


def _has_parameters(stage) -> bool:
    return isinstance(stage, torch.nn.Module) and any(True for _ in stage.parameters())


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
            f"nets must be deepxde_lnn networks that declare their stages (MLP, "
            f"LNN, ...), got {type(first).__name__}"
        )
    buffers = dict(first.named_buffers())  # shared by the runs (e.g. fixed gates)
    for n in nets[1:]:
        other = dict(n.named_buffers())
        if other.keys() != buffers.keys() or not all(
            torch.equal(v, other[k]) for k, v in buffers.items()
        ):
            raise ValueError("nets whose buffers differ are not supported")
    if any("activation" in k for k, _ in first.named_parameters()):
        raise ValueError("nets with trainable activations are not supported")

    def signature(n):
        return (
            type(n),
            tuple(
                (k, tuple(p.shape), p.dtype, p.device) for k, p in n.named_parameters()
            ),
            _structure(n.stages()),
            n._input_transform,
            n._output_transform,
        )

    ref = signature(first)
    for i, n in enumerate(nets[1:], 1):
        if signature(n) != ref:
            raise ValueError(f"nets[{i}] differs from nets[0] in architecture")


def _structure(stages: Sequence) -> tuple:
    """The stages' types and settings (a block's own stages within) and the
    plain callables (activations), which the stacked form applies as they are."""
    out = []
    for s in stages:
        if not isinstance(s, torch.nn.Module):
            out.append(s)
        elif hasattr(s, "stages"):
            out.append((type(s), _structure(s.stages())))
        else:
            out.append((type(s), s.extra_repr()))
    return tuple(out)
