"""Command-line options shared by ``deepxde-lnn`` and the case scripts: an
``argparse`` parser with one-line errors, and option types that apply the
package's own checks (:mod:`deepxde_lnn.checks`) to the parsed text."""

from __future__ import annotations

import argparse

from .checks import SEED_MAX, check_int, check_positive

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
]


class Parser(argparse.ArgumentParser):
    """``argparse`` with one-line errors and exit status 2."""

    def error(self, message):
        self.exit(2, f"error: {message}\n")


def _typed(name: str, kind, what: str, check):
    """An argparse type: ``kind(text)`` passing ``check(value, name)``, or an
    error naming ``name``."""

    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}")
        try:
            check(v, name)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        return v

    return parse


def positive_int(name: str):
    return _typed(name, int, "an integer", lambda v, n: check_int(v, n, 1))


def nonnegative_int(name: str):
    return _typed(name, int, "an integer", lambda v, n: check_int(v, n, 0))


def positive_float(name: str):
    return _typed(name, float, "a number", check_positive)


parse_seed = _typed(
    "seed", int, "an integer", lambda v, n: check_int(v, n, 0, SEED_MAX)
)
lr = positive_float("lr")


def _listed(item):
    """A comma-separated list of ``item`` values (at least one)."""

    def parse(text):
        return [item(s.strip()) for s in text.split(",") if s.strip()] or item("")

    return parse


seeds = _listed(parse_seed)
lrs = _listed(lr)


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
