"""K networks of one architecture as ONE module: every parameter and buffer stacked
along a leading run axis ``k = 0..K-1`` (a buffer drawn per seed, such as random
Fourier frequencies, stays each run's own).

A batch holds K consecutive blocks of N rows (block k belongs to run k), and the
nets' one declared forward pass (their stages, :meth:`~deepxde_lnn.networks.pytorch.MLP.stages`)
runs on the (K, N, w) blocks: each ``Linear`` as one batched matmul, a block's gate
broadcast per run, an activation as it is, any other stage with parameters or
buffers under ``torch.func.vmap``; a network that is not a list of stages
(:class:`~deepxde_lnn.networks.pirate.PirateNet`) runs its whole ``trunk`` under
``vmap``::

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
import warnings
from collections.abc import Callable, Sequence

import torch
from deepxde import utils as dde_utils

from .fourier import FourierFeatures
from .pytorch import MLP, LiquidBlock

__all__ = ["StackedNet"]


class StackedNet(torch.nn.Module):
    """K nets of one architecture (:class:`MLP` or a subclass, or another
    ``dde.nn.NN`` with a ``trunk`` between DeepXDE's transforms) as one module.

    Args:
        nets: K initialised nets with identical architecture, activations and
            transforms; their values are copied (the nets are not modified).
        run_ids: labels of the runs (default ``0..K-1``), kept through
            :meth:`select_`.

    ``forward`` maps (K·N, d) -> (K·N, n_out), K consecutive blocks of N rows.
    Parameter ``i`` of ``self.parameters()`` is parameter ``i`` of a single net,
    stacked: shape ``(K, *shape)``; buffer ``j`` of a single net is
    ``self.stacked_buffers[j]``, stacked alike (never trained).
    """

    regularizer = None  # what dde.Model reads of a network
    template: MLP  # in __dict__: not a registered submodule

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
        self.buffer_names = [n for n, _ in nets[0].named_buffers()]
        self._buffer_index = {n: i for i, n in enumerate(self.buffer_names)}
        self._prefix = {
            id(m): f"{name}." if name else ""
            for name, m in self.template.named_modules()
        }
        # the template's stages as steps on the stacked parameters, made once
        if _declares_stages(self.template):
            self._plan = self._compile(self.template.stages())
        else:
            self._plan = _whole(self)
        per_net = [dict(n.named_parameters()) for n in nets]
        self.params = torch.nn.ParameterList(
            torch.nn.Parameter(torch.stack([p[k].detach() for p in per_net]))
            for k in self.names
        )
        per_net = [dict(n.named_buffers()) for n in nets]
        self.stacked_buffers = _Buffers(
            torch.stack([b[k].detach() for b in per_net]) for k in self.buffer_names
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

    def _b(self, name: str) -> torch.Tensor:
        return self.stacked_buffers[self._buffer_index[name]]

    def state_dicts(self) -> list[dict]:
        """Per-run state dicts, keys and shapes exactly those of a single net
        (run k's buffers, e.g. its random frequencies, are its own)."""
        order = list(self.template.state_dict())  # a single net's key order

        def value(k: str, i: int) -> torch.Tensor:
            v = self._p(k)[i] if k in self._index else self._b(k)[i]
            return v.detach().clone()

        return [{k: value(k, i) for k in order} for i in range(self.num_runs)]

    def nets(self) -> list[MLP]:
        """K single nets holding the runs' current values."""
        out: list[MLP] = []
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
        self.stacked_buffers = _Buffers(
            b.index_select(0, idx).clone() for b in self.stacked_buffers
        )
        self.run_ids = [self.run_ids[i] for i in keep]

    def per_run(self, fn: Callable, x: torch.Tensor):
        """``fn(x_k, net_k)`` for every run at once, in the row-block layout.

        ``fn`` takes a single net (e.g. a Taylor-mode ``Term.jet``, which reads the
        layers' weights instead of calling ``forward``); it runs under
        ``torch.func.vmap`` over the runs with the template's parameters and
        buffers replaced by run k's slices (``functional_call``). ``x``: (K·N, d);
        returns (K·N, ...) or a list of such (differentiable w.r.t. the stacked
        parameters)."""
        K, one = self.num_runs, self._each_run(fn)
        if K == 1:  # vmap's overhead buys nothing here
            return one([t[0] for t in self._tensors()], x)
        out = torch.func.vmap(one)(self._tensors(), x.reshape(K, -1, x.shape[1]))
        if isinstance(out, (list, tuple)):
            return [r.reshape(-1, *r.shape[2:]) for r in out]
        return out.reshape(-1, *out.shape[2:])

    def _tensors(self) -> tuple:
        """The stacked parameters, then the stacked buffers."""
        return (*self.params, *self.stacked_buffers)

    def _each_run(self, fn: Callable) -> Callable:
        """``one(tensors_k, x_k) = fn(x_k, net_k)``: the template with run k's
        slices of :meth:`_tensors` in place of its parameters and buffers."""
        call = _Call(fn, self.template)
        names = ["net." + n for n in (*self.names, *self.buffer_names)]

        def one(tensors, xk):
            return torch.func.functional_call(call, dict(zip(names, tensors)), (xk,))

        return one

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
        (:data:`_STACKED_RULES`); a stage with other parameters or buffers under
        ``vmap``, with a warning naming that table (once per type); one without
        (an activation, which acts on each row alone) as it is."""
        steps = []
        for stage in stages:
            rule = _rule(stage)
            if rule is None and _has_parameters(stage):
                _warn_vmapped(stage)
                rule = _vmapped
            steps.append((rule or _as_is)(self, stage))
        return steps

    def _slot(self, module: torch.nn.Module, name: str) -> int:
        """Index in ``params`` of the template's ``module``'s parameter ``name``."""
        return self._index[f"{self._prefix[id(module)]}{name}"]

    def _getter(self, module: torch.nn.Module, name: str) -> Callable:
        """``() -> (K, *shape)``: the template's ``module``'s parameter or buffer
        ``name``, stacked (read at each call: :meth:`select_` replaces them)."""
        key = f"{self._prefix[id(module)]}{name}"
        if key in self._index:
            i = self._index[key]
            return lambda: self.params[i]
        j = self._buffer_index[key]
        return lambda: self.stacked_buffers[j]


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
    residual path), ``alpha_k`` (a parameter, or a fixed gate's buffer) broadcast
    as in one net."""
    gate = net._getter(m, "alpha")
    branch = net._compile(m.stages())

    def step(h):
        alpha = gate()
        lead = (alpha.shape[0],) + (1,) * (h.ndim - alpha.ndim)
        alpha = alpha.reshape(*lead, *alpha.shape[1:])
        if not m.residual:
            return alpha * _run(branch, h)
        return torch.addcmul(h, alpha, _run(branch, h))

    return step


def _vmapped(net: StackedNet, m: torch.nn.Module) -> Callable:
    """Any stage with parameters or buffers: its own ``forward`` under ``vmap``
    over runs, with run k's parameters and buffers."""
    names = [n for n, _ in (*m.named_parameters(), *m.named_buffers())]
    gets = [net._getter(m, n) for n in names]

    def one(tensors, hk):
        return torch.func.functional_call(m, dict(zip(names, tensors)), (hk,))

    def step(h):
        return torch.func.vmap(one)(tuple(g() for g in gets), h)

    return step


def _stacked_fourier(net: StackedNet, m: FourierFeatures) -> Callable:
    """``[cos(h_k F_k^T), sin(h_k F_k^T)]``, run k's own frequencies ``F_k``."""
    frequencies = net._getter(m, "frequencies")

    def step(h):
        z = torch.bmm(h, frequencies().transpose(1, 2))
        return torch.cat([torch.cos(z), torch.sin(z)], dim=-1)

    return step


def _stacked_laaf(net: StackedNet, m: dde_utils.LLAAF) -> Callable:
    """DeepXDE's L-LAAF ``act(n a_k h_k)``, run k's own slope ``a_k``."""
    a = net._getter(m, "a")

    def step(h):
        slope = (m.n * a()).reshape(-1, *(1,) * (h.ndim - 1))
        return m.activation(slope * h)

    return step


def _whole(net: StackedNet) -> list:
    """A network that is not a list of stages: its ``trunk`` under ``vmap``
    over runs, as one step."""
    one = net._each_run(_trunk)

    def step(h):
        return torch.func.vmap(one)(net._tensors(), h)

    return [step]


def _trunk(x: torch.Tensor, net) -> torch.Tensor:
    return net.trunk(x)


def _as_is(net: StackedNet, stage: Callable) -> Callable:
    return stage


#: stacked rule per stage type, ``rule(net, stage) -> step`` (others: see
#: :meth:`StackedNet._compile`)
_STACKED_RULES: dict = {
    torch.nn.Linear: _stacked_linear,
    LiquidBlock: _stacked_residual,
    FourierFeatures: _stacked_fourier,
    dde_utils.LLAAF: _stacked_laaf,
}


def _rule(stage) -> Callable | None:
    for cls, rule in _STACKED_RULES.items():
        if isinstance(stage, cls) and type(stage).forward is cls.forward:
            return rule
    return None


_WARNED: set = set()  # the stage types the vmap fallback was said for


def _warn_vmapped(stage) -> None:
    """Warn, once per stage type, that a stage with parameters or buffers and no
    rule of its own runs under ``vmap`` (correct, slower than a batched rule)."""
    if type(stage) not in _WARNED:
        _WARNED.add(type(stage))
        warnings.warn(
            f"stacked seeds: stage {type(stage).__name__} has no stacked rule and "
            "runs under vmap (add one for its type to _STACKED_RULES in "
            "deepxde_lnn/networks/stacked.py; _stacked_fourier is the worked "
            "example)"
        )


def _has_parameters(stage) -> bool:
    """Whether ``stage`` holds parameters or buffers (run k's own, so it cannot
    act on every block as the template's)."""
    if not isinstance(stage, torch.nn.Module):
        return False
    return any(True for _ in (*stage.parameters(), *stage.buffers()))


def _declares_stages(net) -> bool:
    return callable(getattr(net, "stages", None))


class _Buffers(torch.nn.Module):
    """Stacked buffers by position (registered, so they follow ``.to()``)."""

    def __init__(self, tensors):
        super().__init__()
        self.count = 0
        for t in tensors:
            self.register_buffer(str(self.count), t)
            self.count += 1

    def __getitem__(self, j: int) -> torch.Tensor:
        return getattr(self, str(j))

    def __iter__(self):
        return (self[j] for j in range(self.count))


class _Call(torch.nn.Module):
    """``fn(x, net)`` as a module, for ``functional_call``."""

    def __init__(self, fn: Callable, net: torch.nn.Module):
        super().__init__()
        self.fn, self.net = fn, net

    def forward(self, x: torch.Tensor):
        return self.fn(x, self.net)


def _check_same_architecture(nets: Sequence[MLP]) -> None:
    first = nets[0]
    if not (isinstance(first, MLP) or _has_trunk(first)):
        raise ValueError(
            f"nets must be deepxde_lnn networks that declare their stages (MLP, "
            f"LNN, ...) or their trunk (PirateNet), got {type(first).__name__}"
        )

    def signature(n):
        tensors = (*n.named_parameters(), *n.named_buffers())
        return (
            type(n),
            n.extra_repr(),
            tuple((k, tuple(t.shape), t.dtype, t.device) for k, t in tensors),
            _structure(n.stages() if _declares_stages(n) else [n]),
            n._input_transform,
            n._output_transform,
        )

    ref = signature(first)
    for i, n in enumerate(nets[1:], 1):
        if signature(n) != ref:
            raise ValueError(f"nets[{i}] differs from nets[0] in architecture")


def _has_trunk(net) -> bool:
    """A ``dde.nn.NN`` whose forward is its ``trunk`` between DeepXDE's
    transforms (:func:`~deepxde_lnn.networks.pytorch.transformed`)."""
    return callable(getattr(net, "trunk", None)) and hasattr(net, "_input_transform")


def _structure(stages: Sequence) -> tuple:
    """The stages' types and settings (a block's own stages within) and the
    plain callables (activations), which the stacked form applies as they are."""
    out = []
    for s in stages:
        if not isinstance(s, torch.nn.Module):
            out.append(s)
        elif hasattr(s, "stages"):  # torch types a module's attributes Tensor | Module
            out.append((type(s), _structure(s.stages())))  # type: ignore[operator]
        else:
            out.append((type(s), s.extra_repr()))
    return tuple(out)
