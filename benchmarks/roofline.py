"""How far one training step is from this machine's matmul limit (CPU roofline).

Per case and method at the paper's point counts, one training step of the runner's
path (``ResampledPDE`` draw + ``dde.Model``'s Adam step: jets or nested autograd,
loss, backward, update) is

* counted: its matrix-multiply FLOPs with ``torch.utils.flop_counter.FlopCounterMode``
  (``2 m n k`` per ``m x k`` by ``k x n`` product, forward and backward; elementwise
  work is not counted, it is what the step should spend little time on);
* replayed: every matrix product of the step (``mm``/``addmm``/``bmm``/``baddbmm``
  recorded with its shapes, strides and dtype) is timed alone, at the step's own
  thread count; ``F / t_mm`` is the machine's matmul throughput at the step's shapes;
* timed: the step itself, ``t_step`` (best of blocks of steps);
* compared: the matmul FLOPs of the hand-written loop of ``step_time.py`` (the
  authors' way: a forward per term, nested autograd) on the same case, and the
  ratio ours / hand, and the hand step's time and achieved fraction. The step-time
  ratio ours / hand is the FLOP ratio times the hand's fraction over ours: below
  the FLOP ratio only by running the products more efficiently than the hand loop.

The achieved fraction of the matmul throughput is ``(F / t_step) / (F / t_mm) =
t_mm / t_step``: 100 % would be a step that does nothing but its matrix products.
The FLOP count is checked against a hand formula for one case
(:func:`laplace_pinn_flops`) before anything is timed. ``--compile`` also times the
step with compiled jets (``ResampledPDE(compile_jets=True)``; the same products, so
the eager step's count and ``t_mm``).

    python benchmarks/roofline.py                          # laplace, beam x lnn, pinn
    python benchmarks/roofline.py --cases all --threads 2
    python benchmarks/roofline.py --threads 1 --clock cpu   # on a loaded machine
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import deepxde as dde
import torch
from step_time import HAND, hand_step
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from deepxde_lnn.problems.build import build_net
from deepxde_lnn.problems.data import ResampledPDE
from deepxde_lnn.study import registry

aten = torch.ops.aten
MATMULS = (aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default)


def build_step(case, method: str, compile_jets: bool = False):
    """One training step as ``dde.Model._train_sgd`` takes it (no callbacks)."""
    dde.config.set_random_seed(0)
    kwargs = {"compile_jets": True} if compile_jets else {}
    data = ResampledPDE(case.make_terms(case.profile("paper")), seed=0, **kwargs)
    model = dde.Model(data, build_net(method, case))
    model.compile("adam", lr=case.profile("paper").lr, verbose=0)

    def step():
        model.train_step(*data.train_next_batch())

    return step


class _MatmulLog(TorchDispatchMode):
    """Records every matrix product: ``(op, args as (shape, stride, dtype), kwargs)``."""

    def __init__(self):
        super().__init__()
        self.calls: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in MATMULS:
            meta = tuple(
                (
                    (tuple(a.shape), a.stride(), a.dtype)
                    if isinstance(a, torch.Tensor)
                    else a
                )
                for a in args
            )
            self.calls[(func, meta, tuple(sorted(kwargs.items())))] += 1
        return func(*args, **kwargs)


class _Global:
    """FlopCounterMode's module tracker, reduced to the total: the per-module
    attribution hooks every module's backward, which ``autograd.grad`` on a leaf
    refuses (the relativistic residuals)."""

    parents = ("Global",)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return None


def count(step) -> tuple[int, Counter]:
    """Matmul FLOPs of one ``step()`` (FlopCounterMode) and its matrix products."""
    log, flops = _MatmulLog(), FlopCounterMode(display=False)
    flops.mod_tracker = _Global()
    with flops, log:
        step()
    return flops.get_total_flops(), log.calls


def _flops(func, meta) -> int:
    shapes = [m[0] for m in meta if isinstance(m, tuple)]
    a, b = shapes[-2], shapes[-1]  # (addmm/baddbmm: bias first)
    batch = a[0] if len(a) == 3 else 1
    return 2 * batch * a[-2] * a[-1] * b[-1]


#: the clock of every timing: wall time, or this process's CPU time (``--clock
#: cpu``: with one thread, a step's own time on a machine shared with others)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter


def matmul_seconds(calls: Counter, repeats: int = 20) -> float:
    """Seconds the step's matrix products take alone (each timed on random
    operands of its own shapes and strides, best of ``repeats`` blocks)."""
    total = 0.0
    for (func, meta, kwargs), n in calls.items():
        args = [_operand(*m) if isinstance(m, tuple) else m for m in meta]
        kw = dict(kwargs)
        func(*args, **kw)
        best = float("inf")
        for _ in range(repeats):
            t = clock()
            for _ in range(n):
                func(*args, **kw)
            best = min(best, clock() - t)
        total += best
    return total


def _operand(shape, stride, dtype) -> torch.Tensor:
    """Random values viewed with ``shape`` and ``stride`` (strides may be 0, as
    in the expanded gradients of autograd)."""
    size = 1 + sum((n - 1) * st for n, st in zip(shape, stride))
    return torch.randn(size, dtype=dtype).as_strided(shape, stride)


def step_seconds(step, steps: int = 10, blocks: int = 5) -> float:
    """Seconds per step: the best of ``blocks`` blocks of ``steps`` steps (best,
    as for the matrix products: both are what the machine does unhindered)."""
    for _ in range(3):
        step()
    per = []
    for _ in range(blocks):
        t = clock()
        for _ in range(steps):
            step()
        per.append((clock() - t) / steps)
    return min(per)


def laplace_pinn_flops(counts: dict, sizes: list[int]) -> int:
    """Hand count of one Laplace ``pinn`` step with Taylor-mode jets.

    A ``Linear(i, o)`` on ``R`` rows costs ``2 R i o`` forward, as much again for
    the weight gradient and again for the input gradient when its input needs one.
    Three passes: the value terms' shared forward (``n_b + n_t`` rows), the
    Laplacian jet (primal ``n_p``, first coefficients along 2 axes ``2 n_p``,
    collapsed second coefficient ``n_p``) and the ``phi_x`` jet on both Neumann
    edges (primal and one coefficient, ``n_lr`` each). With ``d`` inputs, ``m``
    outputs, ``L`` hidden layers of width ``w``::

        P = n_b + n_t + n_p + n_lr             primal rows
        R = n_b + n_t + 4 n_p + 2 n_lr         rows of every layer after the first
        forward  = 2 P d w + 2 * 3 d w          first layer (the input's coefficients
                                                are the 3 axis directions, one row
                                                each, broadcast over points)
                 + (L - 1) 2 R w^2 + 2 R w m
        backward = 2 P d w + 2 * 3 d w          weight gradient, first layer
                 + 2 (n_b + n_t) d w            input gradient: DeepXDE's value rows
                 + (L - 1) 2 * 2 R w^2
                 + 2 * 2 P w m                  output layer: only the rows the loss
                                                reads (values, the collapsed
                                                Laplacian, phi_x)
        folds    = L * 2 * (2 * 2 n_p w)        the sum over the 2 axes after each
                                                activation, (1, 2) @ (2, n_p w),
                                                and its input gradient
        F = forward + backward + folds
    """
    n_p, n_b, n_t = counts["pde"], counts["bottom"], counts["top"]
    n_lr = counts["left"] + counts["right"]
    d, w, m, L = sizes[0], sizes[1], sizes[-1], len(sizes) - 2
    P = n_b + n_t + n_p + n_lr
    R = n_b + n_t + 4 * n_p + 2 * n_lr
    first = 2 * P * d * w + 2 * 3 * d * w
    forward = first + (L - 1) * 2 * R * w * w + 2 * R * w * m
    backward = first + 2 * (n_b + n_t) * d * w + (L - 1) * 4 * R * w * w + 4 * P * w * m
    folds = L * 2 * (2 * 2 * n_p * w)
    return forward + backward + folds


def check_hand_count() -> tuple[int, int]:
    """FlopCounterMode's count of a Laplace ``pinn`` step and the hand formula;
    raises if they differ by more than 1 %."""
    case = registry.get("laplace")
    counted, _ = count(build_step(case, "pinn"))
    counts = {t.name: t.n for t in case.make_terms(case.profile("paper"))}
    hand = laplace_pinn_flops(counts, case.layer_sizes())
    if abs(counted - hand) > 0.01 * hand:
        raise AssertionError(f"FLOPs: counted {counted}, hand formula {hand}")
    return counted, hand


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="laplace,beam", help="comma list or 'all'")
    p.add_argument("--methods", default="lnn,pinn")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--steps", type=int, default=10, help="steps per timed block")
    p.add_argument("--blocks", type=int, default=5, help="timed blocks (best)")
    p.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    p.add_argument(
        "--compile",
        action="store_true",
        help="also time the step with compiled jets (ResampledPDE(compile_jets=True))",
    )
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.clock == "cpu" and torch.get_num_threads() != 1:
        p.error("--clock cpu needs --threads 1 (CPU time sums over threads)")
    globals()["clock"] = CLOCKS[args.clock]
    names = registry.available() if args.cases == "all" else args.cases.split(",")
    counted, hand = check_hand_count()
    print(
        f"laplace pinn: FlopCounterMode {counted / 1e6:.2f} MFLOP/step, hand "
        f"formula {hand / 1e6:.2f} ({100 * (counted - hand) / hand:+.2f} %)"
    )
    print(
        f"cpu, {torch.get_num_threads()} threads, {dde.config.real(torch)}, "
        f"{args.clock} clock; t_mm: the step's matrix products alone"
    )
    head = ["case", "method", "MFLOP/step", "t_mm ms", "mm GFLOP/s", "t_step ms"]
    head += ["GFLOP/s", "fraction"]
    if args.compile:
        head += ["compiled ms", "fraction"]
    head += ["hand MFLOP", "FLOPs/hand", "hand ms", "fraction"]
    print(f"{head[0]:12s} {head[1]:7s}" + "".join(f"{h:>12s}" for h in head[2:]))
    for name in names:
        case = registry.get(name)
        for method in args.methods.split(","):
            step = build_step(case, method)
            flops, calls = count(step)
            assert flops == sum(_flops(f, m) * n for (f, m, _), n in calls.items())
            t_mm = matmul_seconds(calls)
            t_step = step_seconds(step, args.steps, args.blocks)
            row = [flops / 1e6, 1e3 * t_mm, flops / t_mm / 1e9, 1e3 * t_step]
            row += [flops / t_step / 1e9, 100 * t_mm / t_step]
            if args.compile:  # same FLOPs: the count is the eager step's
                t_c = step_seconds(build_step(case, method, compile_jets=True))
                row += [1e3 * t_c, 100 * t_mm / t_c]
            if name in HAND:
                h_step = hand_step(case, method)
                hand, h_calls = count(h_step)
                t_h = step_seconds(h_step, args.steps, args.blocks)
                row += [hand / 1e6, flops / hand, 1e3 * t_h]
                row += [100 * matmul_seconds(h_calls) / t_h]
            cells = "".join(f"{v:12.1f}" if v >= 100 else f"{v:12.2f}" for v in row)
            print(f"{name:12s} {method:7s}{cells}", flush=True)


if __name__ == "__main__":
    main()
