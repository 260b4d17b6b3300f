"""The whole Adam step of a ``dde.Model`` as one CUDA graph.

On a GPU one step of a small PINN is hundreds of tiny kernels, each launched from
Python: the step takes milliseconds whatever the network's size. Captured once in
a CUDA graph, a step is one launch. :class:`GraphedStep` takes the place of a
compiled model's ``train_step``; per step::

    host    the run's NumPy generator draws the points (as ever: same seed, same
            points) and the conditions' point-only values are computed on them
            (ResampledPDE.host_arrays) -> pinned buffers -> one copy each to
            static device buffers
    device  replay: the losses (jets, conditions: ResampledPDE.staged), the
            backward pass and Adam (``capturable=True``; a tensor lr under a
            schedule, which the host updates in place)
    host    the losses cloned for the log (NaN checks, checkpoints as before)

The step reads the same points and does the same math as DeepXDE's eager step, so
the iterates agree up to rounding (tested on CUDA; the staged step without capture
against the eager one everywhere). Checkpoints are the eager format
(:func:`plain_adam_state`): a run continues exactly, captured or not.

The graph is captured at the first step, after ``WARMUP`` steps whose effect on the
parameters and Adam's state is undone, and again when the parameters are replaced
(a diverged run leaving a stack). Where capture cannot work (no CUDA device, a
data without ``host_arrays``, an optimizer other than Adam, dropout) or fails, the
staged step runs eagerly (DeepXDE's own step for a data that cannot stage one);
:attr:`GraphedStep.engine` says which, and why.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable

import torch

from ..networks import compiled

__all__ = [
    "GraphedStep",
    "capture_obstacle",
    "plain_adam_state",
    "plain_scheduler_state",
]


def capture_obstacle(model) -> str | None:
    """Why the step of the compiled ``model`` cannot be captured here, or None."""
    params = list(model.net.parameters())
    if not torch.cuda.is_available() or params[0].device.type != "cuda":
        return "CUDA graphs need a CUDA device"
    if type(model.opt) is not torch.optim.Adam:
        return f"the optimizer is {type(model.opt).__name__}, not Adam"
    if any(
        isinstance(m, torch.nn.modules.dropout._DropoutNd)
        or getattr(m, "dropout_rate", 0)
        for m in model.net.modules()
    ):
        return "the network draws dropout masks"
    if getattr(model.data, "weights", None) is not None:
        return "a weights hook reads the points on the host"
    return None


def plain_adam_state(state: dict) -> dict:
    """An Adam ``state_dict()`` as an eager Adam's: float lr, ``capturable``
    False, step counters on the CPU (checkpoints resume on any device)."""
    groups = [
        dict(g, lr=float(g["lr"]), capturable=False) for g in state["param_groups"]
    ]
    per = {
        i: {k: (v.cpu() if k == "step" else v) for k, v in s.items()}
        for i, s in state["state"].items()
    }
    return {"state": per, "param_groups": groups}


def plain_scheduler_state(scheduler) -> dict:
    """A scheduler's ``state_dict()`` with its last learning rates as floats
    (tensors under a captured step)."""
    state = scheduler.state_dict()
    if "_last_lr" in state:
        state["_last_lr"] = [float(v) for v in state["_last_lr"]]
    return state


class GraphedStep:
    """``model.train_step`` replaced by the staged step, captured on CUDA.

    ``capture``: None captures where :func:`capture_obstacle` finds nothing in
    the way; False runs the staged step eagerly (the reference for tests)."""

    WARMUP = 3

    def __init__(self, model, capture: bool | None = None):
        self.model, self.data = model, model.data
        self.stageable = hasattr(model.data, "host_arrays")
        obstacle = capture_obstacle(model)
        if capture is False:
            obstacle = "capture switched off"
        self.capture, self.engine = obstacle is None, _engine_text(obstacle)
        if not self.stageable:  # e.g. a user's own DeepXDE data
            self.capture = False
            self.engine = "eager, DeepXDE's step (the data cannot stage a step)"
        self.replay: Callable[[], None] | None = None
        self.key: tuple | None = None
        self.losses: torch.Tensor | None = None
        self.static: list[torch.Tensor] = []
        self.pinned: list[list[torch.Tensor]] = []
        self.copied: list = [None, None]  # an event per pinned set: its copy
        self.turn = 0

    def install(self) -> GraphedStep:
        """Take the place of the model's ``train_step`` (if the data can stage)."""
        if self.stageable:
            self.model.train_step = self
        return self

    def __call__(self, inputs=None, targets=None, auxiliary_vars=None) -> None:
        """One training step on the data's current points (DeepXDE's arguments
        are the host copy of what the data stages, so they are not read)."""
        self._load(self.data.host_arrays())
        if self.capture and self.key != self._key():
            self._capture()
        if self.replay is not None:
            assert self.losses is not None  # captured with the replay
            self.replay()
            self.data.last_losses = self.losses.clone()
        else:
            self._step()
        scheduler = self.model.lr_scheduler
        if scheduler is not None:
            scheduler.step()

    # --- the step ---------------------------------------------------------------

    def _step(self) -> None:
        """DeepXDE's Adam step (zero, losses, backward, step) on the staged data."""
        opt = self.model.opt
        with self.data.staged(self.static):
            opt.zero_grad(set_to_none=True)
            losses = self.model.outputs_losses_train(self.static[0], None, None)[1]
            torch.sum(losses).backward()
            opt.step()

    def _load(self, arrays: list[torch.Tensor]) -> None:
        """The host arrays into the static device buffers (new ones when the
        layout changes, which forces a new capture)."""
        device = next(self.model.net.parameters()).device
        if not self.capture:
            self.static = [a.to(device) for a in arrays]
            return
        layout = [(a.shape, a.dtype) for a in arrays]
        if layout != [(s.shape, s.dtype) for s in self.static]:
            self.static = [torch.empty_like(a, device=device) for a in arrays]
            self.pinned = [[_pinned(a) for a in arrays] for _ in range(2)]
            self.copied, self.replay, self.key = [None, None], None, None
        pinned, event = self.pinned[self.turn], self.copied[self.turn]
        if event is not None:
            event.synchronize()  # that buffer's previous copy has been read
        with torch.no_grad():
            for host, src, dst in zip(arrays, pinned, self.static):
                src.copy_(host)
                dst.copy_(src, non_blocking=True)
        self.copied[self.turn] = _recorded_event()
        self.turn = 1 - self.turn

    # --- capture ------------------------------------------------------------------

    def _key(self) -> tuple:
        """What a captured graph is bound to: the parameters' and buffers' memory."""
        params = tuple(p.data_ptr() for p in self.model.net.parameters())
        return params + tuple(s.data_ptr() for s in self.static)

    def _capture(self) -> None:
        """Warm up (then undo it), capture one step; on failure run eagerly."""
        _make_capturable(self.model)
        opt = self.model.opt
        before = _snapshot(opt)
        try:
            with _side_stream(), _whole_step_jets():
                for _ in range(self.WARMUP):
                    self._step()
            _restore(opt, before)
            self.losses = losses = torch.empty_like(self.data.last_losses)

            def step():
                self._step()
                losses.copy_(self.data.last_losses)

            opt.zero_grad(set_to_none=True)
            with _whole_step_jets():
                self.replay = _record(step)
        except RuntimeError as err:
            _synchronize()
            _restore(opt, before)
            self.capture, self.replay = False, None
            self.engine = _engine_text(f"capture failed: {str(err).splitlines()[0]}")
            warnings.warn(f"CUDA graph: {self.engine}", RuntimeWarning, stacklevel=3)
            return
        self.key = self._key()


# --- CUDA itself (tests on a CPU stand in for these) ----------------------------------


def _record(step: Callable[[], None]) -> Callable[[], None]:
    """``step`` captured as one CUDA graph (nothing runs now); its replay."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


@contextlib.contextmanager
def _side_stream():
    """Run the block on a side stream (warm-up before a capture, as CUDA asks)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        yield
    torch.cuda.current_stream().wait_stream(stream)


def _pinned(a: torch.Tensor) -> torch.Tensor:
    return a.pin_memory()


def _recorded_event():
    event = torch.cuda.Event()
    event.record()
    return event


def _synchronize() -> None:
    torch.cuda.synchronize()


def _engine_text(obstacle: str | None) -> str:
    if obstacle is None:
        return "one CUDA graph per step (points drawn on the host, staged)"
    return f"eager, staged ({obstacle})"


@contextlib.contextmanager
def _whole_step_jets():
    """Compiled jets as plain fused kernels inside the step's graph (their own
    CUDA graphs cannot nest in it)."""
    with compiled.inside_graph():
        yield


def _make_capturable(model) -> None:
    """Adam with its step counters on the device; under a schedule the lr is a
    float64 device tensor that the scheduler fills in place."""
    opt = model.opt
    device = next(model.net.parameters()).device
    for group in opt.param_groups:
        group["capturable"] = True
        if model.lr_scheduler is not None and not torch.is_tensor(group["lr"]):
            group["lr"] = torch.tensor(group["lr"], dtype=torch.float64, device=device)
    for state in opt.state.values():
        if "step" in state:
            state["step"] = state["step"].to(device)


def _snapshot(opt) -> dict:
    """Copies of the parameters and Adam's state (empty where not yet created)."""
    params = [p for g in opt.param_groups for p in g["params"]]
    return {
        p: (
            p.detach().clone(),
            {k: v.clone() for k, v in opt.state[p].items()} if p in opt.state else {},
        )
        for p in params
    }


def _restore(opt, snap: dict) -> None:
    """Parameters and Adam's state back to ``snap``, in place (a state created
    since then is zeroed: the state of an Adam that has not stepped)."""
    with torch.no_grad():
        for p, (value, state) in snap.items():
            p.copy_(value)
            for k, v in opt.state.get(p, {}).items():
                if k in state:
                    v.copy_(state[k])
                else:
                    v.zero_()
