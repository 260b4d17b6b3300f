"""Command-line options shared by ``deepxde-lnn`` and the case scripts: an
``argparse`` parser with one-line errors, and option types that apply the
package's own checks (:mod:`deepxde_lnn.checks`) to the parsed text."""

from __future__ import annotations

import argparse

from .checks import SEED_MAX, parse_int, parse_number, unique

__all__ = [
    "Parser",
    "add_training_options",
    "positive_int",
    "nonnegative_int",
    "positive_float",
    "parse_seed",
    "seeds",
    "lr",
    "lrs",
    "names",
    "out",
    "margin",
]


class Parser(argparse.ArgumentParser):
    """``argparse`` with one-line errors and exit status 2."""

    def error(self, message):
        self.exit(2, f"error: {message}\n")


def _arg(check, *args, **kwargs):
    """An argparse type from a :mod:`deepxde_lnn.checks` parser (its ValueError,
    which names the argument, becomes argparse's one-line error)."""

    def parse(text):
        try:
            return check(text.strip(), *args, **kwargs)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


def positive_int(name: str):
    return _arg(parse_int, name, 1)


def nonnegative_int(name: str):
    return _arg(parse_int, name, 0)


def positive_float(name: str):
    return _arg(parse_number, name, 0, None, above=True)


parse_seed = _arg(parse_int, "seed", 0, SEED_MAX)
lr = positive_float("lr")


def _listed(item, name: str):
    """A comma-separated list of ``item`` values, at least one, none repeated."""

    def parse(text):
        values = [item(s) for s in text.split(",") if s.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"{name}: give at least one value")
        try:
            return unique(values, name)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


seeds = _listed(parse_seed, "seeds")
lrs = _listed(lr, "lrs")


margin = _arg(parse_number, "margin", 1, None, above=True)


def out(text: str) -> str:
    """``--out``: a path, not an empty string."""
    if not text.strip():
        raise argparse.ArgumentTypeError("out must be a path, got an empty string")
    return text


def names(text: str) -> list[str]:
    """Comma-separated names (e.g. methods; an empty list is refused by the API)."""
    return [s.strip() for s in text.split(",") if s.strip()]


def add_training_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``run``/``compare``/``sweep`` and the case scripts."""
    p.add_argument(
        "--profile",
        default="quick",
        help="quick (default), paper or accurate (float64, fixed points, Adam "
        "with decay, then L-BFGS)",
    )
    p.add_argument("--lr", type=lr, help="Adam learning rate (default: profile's)")
    p.add_argument("--iterations", type=positive_int("iterations"), help="Adam steps")
    p.add_argument(
        "--dtype", help="float32 or float64 (default: the profile's; accurate: float64)"
    )
    p.add_argument(
        "--lbfgs",
        type=nonnegative_int("lbfgs"),
        help="L-BFGS iterations after Adam, at most (default: the profile's; "
        "accurate: 3000, others 0)",
    )
    p.add_argument(
        "--compile-jets",
        action="store_true",
        help="run the Taylor-mode derivatives through torch.compile (fused "
        "kernels; CUDA graphs on a GPU): the same math, other rounding. Costs a "
        "first compile of minutes on a CPU (cached by PyTorch for later runs); "
        "buys shorter steps, e.g. on a 2-core CPU the beam LNN's step from 0.47x "
        "to 0.30x a naive PyTorch loop's (docs/running.md, Compiled jets)",
    )
    p.add_argument(
        "--cuda-graph",
        action="store_true",
        help="on a GPU, capture each Adam step (losses, backward, Adam) as one "
        "CUDA graph: one launch per step instead of hundreds; the same points and "
        "math, other rounding. Elsewhere the same step runs eagerly "
        "(docs/running.md, CUDA graphs)",
    )
