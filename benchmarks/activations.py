"""Seconds of one hidden activation: ``torch.tanh`` against ``2 sigmoid(2x) - 1``.

Which is faster depends on the CPU's math library (``deepxde_lnn.networks.pytorch.tanh``
says which the networks use and why); this prints both (and ``torch.sigmoid``
alone) on an ``(N, width)`` tensor, the shape of a hidden layer
at the paper's point counts, with each one's largest deviation from ``torch.tanh``
in float64, as multiples of the dtype's machine epsilon.

    python benchmarks/activations.py
    python benchmarks/activations.py --rows 4000 --width 64 --threads 1 --clock cpu
"""

from __future__ import annotations

import argparse
import time

import torch

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def tanh(x: torch.Tensor) -> torch.Tensor:
    """``tanh`` by the identity ``tanh(x) = 2 sigmoid(2x) - 1``."""
    return 2.0 * torch.sigmoid(2.0 * x) - 1.0


def seconds(fn, x: torch.Tensor, clock, repeats: int) -> float:
    """Best of 5 blocks of ``repeats`` calls, per call."""
    fn(x)
    best = float("inf")
    for _ in range(5):
        t = clock()
        for _ in range(repeats):
            fn(x)
        best = min(best, (clock() - t) / repeats)
    return best


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.clock == "cpu" and torch.get_num_threads() != 1:
        p.error("--clock cpu needs --threads 1 (CPU time sums over threads)")
    clock = CLOCKS[args.clock]
    print(
        f"({args.rows}, {args.width}) tensor, {torch.get_num_threads()} threads, "
        f"{args.clock} clock; us per call, error vs torch.tanh in eps"
    )
    fns = {
        "torch.tanh": torch.tanh,
        "2 sigmoid(2x) - 1": tanh,
        "torch.sigmoid": torch.sigmoid,
    }
    for dtype in (torch.float32, torch.float64):
        x = 3 * torch.randn(args.rows, args.width, dtype=dtype)
        ref = torch.tanh(x.double())
        eps = torch.finfo(dtype).eps
        cells = []
        for name, fn in fns.items():
            us = 1e6 * seconds(fn, x, clock, args.repeats)
            err = (
                ""
                if fn is torch.sigmoid
                else f" ({(fn(x) - ref).abs().max() / eps:.1f} eps)"
            )
            cells.append(f"{name} {us:.0f}{err}")
        ratio = seconds(torch.tanh, x, clock, args.repeats) / seconds(
            tanh, x, clock, args.repeats
        )
        print(
            f"{str(dtype):14s} "
            + ", ".join(cells)
            + f"; torch.tanh / identity {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
