"""Compiled Taylor-mode residuals: the jets' arithmetic as a few fused kernels.

A jet residual (``Term.jet(x, net)``, :mod:`deepxde_lnn.networks.taylor`) is mostly
elementwise arithmetic on the coefficients, forward and backward: hundreds of small
operations per step, each a pass over memory (CPU) or a kernel launch (GPU).
``torch.compile`` traces it once per input shape and fuses those operations (its
backward too, through AOTAutograd); the math is the same, the rounding may differ
(tests compare against the eager jets in float64). On CUDA the compiled jets also
run as CUDA graphs (``mode="reduce-overhead"``): one launch per graph instead of one
per operation.

    fn = compiled(term.jet)          # same signature as term.jet
    begin_step(x.device)             # once per loss evaluation
    r = fn(x, net)                   # compiled on the first call for x's shape

The first call compiles (seconds to minutes, cached by PyTorch across processes);
if the backend cannot compile here (e.g. no C++ compiler for the CPU backend), or
the compiled jet raises (e.g. a jet that takes reverse-mode derivatives of a
compiled piece of itself needs a double backward, which compiled graphs refuse), a
warning says so and the eager jet is used from then on (an error the eager jet
raises too stands). The first result of each
compiled function for each input shape is checked against the eager jet's (within
:data:`TOLERANCE` of its largest value): a kernel that computes something else (a
stale or damaged cache) is a warning and the eager jet from then on, so the record
then says "Taylor-mode jets", not "compiled". :func:`wanted` decides
whether a run compiles: as asked, or (``"auto"``) where the compile pays for itself
within the run.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable

import torch

__all__ = [
    "usable_cache",
    "compiled",
    "begin_step",
    "mode_for",
    "inside_graph",
    "wanted",
    "OPTIONS",
    "PAYS_FROM",
    "SETTINGS",
]

#: extra ``torch.compile`` keywords for every compiled jet (e.g. a ``backend``)
OPTIONS: dict = {}

#: the values of ``compile_jets``: always, never, or where it pays
SETTINGS = (True, False, "auto")

#: ``compile_jets="auto"`` compiles a model that trains at least this many
#: run-steps (each run's steps of every phase, Adam, L-BFGS and NNCG, x the seeds
#: stacked in it; a time-budget run never, since the compile would be charged to
#: its budget): on this project's 2-core CPU a cold
#: compile took 5-30 s per network and paid for itself after 90-3700 run-steps on
#: the cases where the jets carry derivatives (``benchmarks/case_table.py
#: --compiled``; docs/running.md, Compiled jets)
PAYS_FROM = 5000

#: dynamo's recompile limit for the compiled jets: every jet of every network a
#: process trains (a worker runs many) is one more entry of the vmapped jets' code
RECOMPILE_LIMIT = 64


@functools.cache
def usable_cache() -> None:
    """Where ``TORCHINDUCTOR_CACHE_DIR`` names a folder that cannot be made or
    written (``/proc/x``, a file, a path under a file), PyTorch fails on the first
    optimizer step of a process, compiled jets or not (its compiler stack reads
    the folder on import): warn (once per process) and unset it, in this process
    and so in the worker processes it starts later, so that PyTorch uses its own
    per-user folder (``torchinductor_<user>`` in the temporary folder); nothing
    is created here. Called before a run's folder is made and before workers
    start."""
    given = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not given:
        return
    try:
        os.makedirs(given, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=given, prefix=".probe."):
            pass
    except OSError as err:
        del os.environ["TORCHINDUCTOR_CACHE_DIR"]
        warnings.warn(
            f"TORCHINDUCTOR_CACHE_DIR={given!r} cannot be used "
            f"({err.strerror or type(err).__name__}): it is unset in this process "
            "and the workers it starts, and PyTorch's compile cache goes to its "
            f"default folder (torchinductor_<user> in {tempfile.gettempdir()})",
            RuntimeWarning,
            stacklevel=2,
        )


def wanted(setting: bool | str, steps: int, runs: int = 1) -> bool:
    """Whether a model compiles its jets, the one rule: ``setting`` if a bool;
    for ``"auto"``, when it trains at least :data:`PAYS_FROM` run-steps
    (``steps``, each run's steps of every phase, Adam, L-BFGS and NNCG, x its
    ``runs`` stacked; in float32 and float64 alike) and ``torch.compile`` can
    build kernels here (CUDA, or a C++ compiler for the CPU backend)."""
    if setting != "auto":
        return bool(setting)
    return steps * runs >= PAYS_FROM and _can_compile()


def _can_compile() -> bool:
    if torch.cuda.is_available():
        return True
    names = [os.environ.get("CXX"), "g++", "clang++", "c++"]
    return any(shutil.which(n) for n in names if n)


_INSIDE_GRAPH = [False]


def mode_for(device: torch.device) -> str:
    """``torch.compile`` mode: CUDA graphs on CUDA (unless inside a larger
    graph), plain fusion elsewhere."""
    own_graphs = device.type == "cuda" and not _INSIDE_GRAPH[0]
    return "reduce-overhead" if own_graphs else "default"


@contextlib.contextmanager
def inside_graph():
    """Within, compiled jets are plain fused kernels on CUDA too: a whole step
    captured as one CUDA graph (:mod:`deepxde_lnn.training.graphed`) holds them."""
    before, _INSIDE_GRAPH[0] = _INSIDE_GRAPH[0], True
    try:
        yield
    finally:
        _INSIDE_GRAPH[0] = before


#: how far a compiled jet's first result may lie from the eager jet's, relative
#: to the eager result's largest magnitude (fusion reorders the arithmetic)
TOLERANCE = {torch.float32: 1e-3, torch.float64: 1e-9}


def _differs(compiled_out, eager) -> str:
    """What sets a compiled result apart from the eager one beyond rounding
    ("": nothing)."""
    a, b = (torch.as_tensor(v).detach() for v in (compiled_out, eager))
    if a.shape != b.shape:
        return f"shape {tuple(a.shape)}, eager {tuple(b.shape)}"
    scale = float(b.abs().max()) if b.numel() else 0.0
    gap = float((a - b).abs().max()) if b.numel() else 0.0
    if not (gap <= TOLERANCE.get(b.dtype, 1e-3) * max(scale, 1e-30)):
        return f"largest difference {gap:.3g} on values up to {scale:.3g}"
    return ""


def begin_step(device: torch.device) -> None:
    """Call once per loss evaluation, before its first compiled jet: on CUDA the
    outputs of the previous evaluation's graphs may then be overwritten."""
    if mode_for(device) == "reduce-overhead":
        torch.compiler.cudagraph_mark_step_begin()


def compiled(jet: Callable) -> Callable:
    """``jet(x, net)`` compiled with ``torch.compile`` (mode by ``x``'s device),
    falling back to ``jet`` itself, with a warning, where compilation fails."""
    by_mode: dict = {}
    failed: list = []

    checked: set = set()  # (mode, shape) whose first result matched the eager jet

    def fall_back(why: str, x, net):
        failed.append(why)
        warnings.warn(
            f"compiled jets: {why}; using the eager jets", RuntimeWarning, stacklevel=3
        )
        return jet(x, net)

    @functools.wraps(jet)
    def call(x: torch.Tensor, net):
        if failed:
            return jet(x, net)
        mode = mode_for(x.device)
        if mode not in by_mode:
            limit = torch._dynamo.config.recompile_limit
            torch._dynamo.config.recompile_limit = max(limit, RECOMPILE_LIMIT)
            kwargs = {"mode": mode, **OPTIONS}
            by_mode[mode] = torch.compile(jet, **kwargs)
        try:
            out = by_mode[mode](x, net)
        except torch._dynamo.exc.BackendCompilerFailed as err:
            why = f"{type(err).__name__}: {str(err).splitlines()[0]}"
            return fall_back(f"torch.compile failed here ({why})", x, net)
        except RuntimeError as err:
            # e.g. a jet that differentiates a compiled piece of itself (reverse
            # mode across a graph break) needs a double backward, which compiled
            # graphs refuse; where the eager jet raises too, its error stands
            why = f"{type(err).__name__}: {str(err).splitlines()[0]}"
            return fall_back(f"the compiled jet raised ({why})", x, net)
        key = (mode, tuple(x.shape))
        if key not in checked:  # a compile (or a cached kernel) checked once
            checked.add(key)
            differs = _differs(out, jet(x, net))
            if differs:
                why = (
                    f"the compiled jet differs from the eager one ({differs}; a "
                    "stale or damaged compile cache?)"
                )
                return fall_back(why, x, net)
        return out

    # non-empty once the eager jet is used instead (a function's own attribute)
    call.fallback = failed  # type: ignore[attr-defined]
    return call
