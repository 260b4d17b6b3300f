"""Command-line options shared by ``deepxde-lnn`` and the case scripts: an
``argparse`` parser with one-line errors, the flags of the options declared in
:mod:`deepxde_lnn.config` (:func:`add_options`) and the types of the commands' own
arguments, which apply the package's checks (:mod:`deepxde_lnn.checks`)."""

from __future__ import annotations

import argparse
import re
from typing import NoReturn

from .checks import (
    SEED_MAX,
    check_path,
    parse_int,
    parse_list,
    parse_number,
    unique,
)
from .config import OPTION_CLASSES, Training, option_fields

__all__ = [
    "Parser",
    "add_options",
    "chosen_options",
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


# an argument that begins like a negative number (``-1,1,1``, ``-.5``): a value,
# never a flag (no flag here begins with a digit)
_NEGATIVE = re.compile(r"-\.?[0-9]")


class Parser(argparse.ArgumentParser):
    """``argparse`` with one-line errors and exit status 2, and options that say
    what a run is given once and in full: no abbreviation (``--iter`` is not
    ``--iterations``) and no repeat (``--seeds 1 --seeds 2`` is refused, not
    read as ``--seeds 2``). A value that begins with ``-`` and a digit is a value
    (``--loss-weights -1,1``: checked, not "expected one argument")."""

    def __init__(self, *, allow_abbrev: bool = False, **kwargs):
        super().__init__(allow_abbrev=allow_abbrev, **kwargs)
        for action, cls in _ONCE.items():
            self.register("action", action, cls)

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if hasattr(namespace, _GIVEN):
            delattr(namespace, _GIVEN)
        return namespace, extras

    def _parse_optional(self, arg_string):
        if _NEGATIVE.match(arg_string):
            return None  # argparse's "positional": the value of the flag before
        return super()._parse_optional(arg_string)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n")


_GIVEN = "_given_options"  # the namespace's record of the options given so far


def _once(cls):
    """``cls`` (an argparse action) that refuses a second use of its option."""

    class Once(cls):  # type: ignore[misc, valid-type]  # a base given at run time
        def __call__(self, parser, namespace, values, option_string=None):
            given = getattr(namespace, _GIVEN, None)
            if given is None:
                given = set()
                setattr(namespace, _GIVEN, given)
            if self.dest in given:
                raise argparse.ArgumentError(self, "given more than once; give it once")
            given.add(self.dest)
            super().__call__(parser, namespace, values, option_string)

    Once.__name__ = f"Once{cls.__name__}"
    return Once


# argparse's actions for a value and for a switch, each given at most once
_ONCE = {
    None: _once(argparse._StoreAction),
    "store": _once(argparse._StoreAction),
    "store_true": _once(argparse._StoreTrueAction),
    "store_false": _once(argparse._StoreFalseAction),
}


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
    """A comma-separated list of ``item`` values, at least one, none empty or
    repeated."""

    def parse(text):
        try:
            return unique(map(item, parse_list(text, name)), name)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


seeds = _listed(parse_seed, "seeds")
lrs = _listed(lr, "lrs")


margin = _arg(parse_number, "margin", 1, None, above=True)


def out(text: str) -> str:
    """``--out``: a path (:func:`~deepxde_lnn.checks.check_path`), as given."""
    try:
        return check_path(text, "out")
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def names(name: str):
    """Comma-separated names (e.g. ``--methods``), none empty."""
    return _arg(parse_list, name)


def add_options(p: argparse.ArgumentParser, *classes, only=None, exclude=()) -> None:
    """One flag per option field of ``classes`` (:mod:`deepxde_lnn.config`):
    ``--name-with-dashes``, the field's help, its text parser (a switch for a
    bool; ``--no-NAME`` for one that is on by default, its help saying that it
    turns the field's off); ``only``/``exclude``
    select fields by name. The parsed namespace holds the fields' own names."""
    for name, f in option_fields(*classes).items():
        meta = f.metadata
        if (
            not meta["cli"]
            or name in exclude
            or (only is not None and name not in only)
        ):
            continue
        flag, text = "--" + name.replace("_", "-"), meta["help"].replace("%", "%%")
        if meta["parse"] is None and f.default is True:
            off = f"off: {text} (on by default)"
            p.add_argument(
                f"--no-{flag[2:]}", dest=name, action="store_false", help=off
            )
        elif meta["parse"] is None:
            p.add_argument(flag, dest=name, action="store_true", help=text)
        else:
            p.add_argument(
                flag,
                dest=name,
                type=_typed(meta["parse"]),  # before the choices: its own error
                choices=meta["choices"],
                help=text,
                default=f.default,
            )


def _typed(parse):
    """An argparse type from a field's parser (its ValueError, which names the
    option, becomes argparse's one-line error)."""

    def typed(text):
        try:
            return parse(text.strip())
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return typed


def chosen_options(args: argparse.Namespace, *classes) -> dict:
    """The option values in ``args`` (those :func:`add_options` added), by name."""
    return {k: getattr(args, k) for k in option_fields(*classes) if hasattr(args, k)}


def options_markdown() -> str:
    """``docs/options.md``: every option with its flag, keyword, default and help,
    as the fields of :mod:`deepxde_lnn.config` declare them."""
    refused = [
        f"`--{name.replace('_', '-')}`"
        for name, f in option_fields(Training).items()
        if not f.metadata["script"]
    ]
    out = [
        "# Options",
        "",
        "Generated from `deepxde_lnn/config/` by `python -m deepxde_lnn.flags "
        "docs/options.md` (`make docs`); a test keeps it current. Each option is a",
        "keyword of the Python API (`deepxde_lnn.compare(..., lr=1e-3)`) and a flag of",
        "the command line; the training options are also flags of the case scripts",
        f"(but {', '.join(refused)}: they refuse them). `None` means the "
        "profile's value.",
    ]
    for cls in OPTION_CLASSES:
        out += ["", f"## {cls.__name__}", "", (cls.__doc__ or "").strip(), ""]
        out += ["| keyword | flag | default | what it does |", "|---|---|---|---|"]
        for name, f in option_fields(cls).items():
            flag = _flag(name, f)
            text = f.metadata["help"].replace("|", "\\|")
            out.append(f"| `{name}` | {flag} | `{f.default!r}` | {text} |")
    return "\n".join(out) + "\n"


def _flag(name: str, f) -> str:
    if not f.metadata["cli"]:
        return "(API only)"
    dashed = name.replace("_", "-")
    return f"`--no-{dashed}`" if f.default is True else f"`--{dashed}`"


if __name__ == "__main__":  # python -m deepxde_lnn.flags docs/options.md
    import sys

    from .runs.atomic import atomic_write_text

    atomic_write_text(sys.argv[1], options_markdown())
