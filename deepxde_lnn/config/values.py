"""The options' values: the field factory :func:`option` and the checks and
command-line parsers its fields use (schedules, loss weights, backends, ...).
Checked without torch or DeepXDE."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from ..checks import (
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_positive,
    is_number,
    parse_int,
    parse_list,
    parse_number,
)
from ..runs.names import NAME

#: the largest count an option takes (steps, checkpoints, workers): more steps
#: than any run can take, and a number every record's reader reads back
MAX_COUNT = 10**15
#: the most torch threads a run takes, even with ``force_threads``: more cores
#: than a machine has, and few enough that OpenMP can start them all
MAX_THREADS = 1024
BACKENDS = ("loky", "dask", "slurm")  # joblib backends of many runs (experiments.jobs)
# why a backend offered before is refused: its error says it (docs/running.md too)
WITHDRAWN = {
    "ray": "joblib's Ray backend cannot hand back each run as it finishes (joblib "
    "refuses return_as='generator' for it); use 'dask' for a cluster "
    "(docs/running.md#why-not-ray)"
}
_KEEP = object()  # an ``omit`` that never matches: the field is always recorded


def option(
    default,
    help: str,
    *,
    check: Callable | None = None,
    parse: Callable[[str], object] | None = None,
    choices: tuple | None = None,
    identity: bool = True,
    omit=_KEEP,
    from_profile: bool = False,
    cli: bool = True,
    script: bool = False,
):
    """A field that is an option. ``check(value, name)`` validates a given value
    (``None`` means "the default" and is not checked), and the value a run
    record holds (:func:`~deepxde_lnn.config.record_problem`); ``parse(text)`` reads the command
    line's text (None: a switch for a bool); ``identity``: part of a run's
    identity (what makes two runs the same run); ``omit``: a value left out of
    the identity (records written before the option existed); ``from_profile``:
    ``None`` takes the profile's value; ``cli``: has a flag; ``script``: a
    training option that the case scripts (:mod:`deepxde_lnn.case_script`, DeepXDE's
    own loop) honour; the others are refused there, never ignored."""
    meta = dict(
        help=help,
        check=check,
        parse=parse,
        choices=choices,
        identity=identity,
        omit=omit,
        from_profile=from_profile,
        cli=cli,
        script=script,
    )
    return dataclasses.field(default=default, metadata=meta)


# --- checks and text parsers of the fields ------------------------------------------


def _choice(choices):
    def check(value, name):
        check_choice(value, name, choices)
        return value

    return check


def check_backend_name(value, name: str = "backend") -> str:
    """``value`` if it is one of :data:`BACKENDS`, else a ValueError naming
    ``name`` (and why, for a :data:`WITHDRAWN` one)."""
    if isinstance(value, str) and value in WITHDRAWN:
        raise ValueError(f"{name}: {value!r} is no longer offered: {WITHDRAWN[value]}")
    check_choice(value, name, BACKENDS)
    return value


def _bool(value, name):
    return check_bool(value, name)


#: the command line's words for ``compile_jets``
_COMPILE_WORDS = {"auto": "auto", "on": True, "off": False}


def _compile_setting(value, name):
    if not (isinstance(value, bool) or value == "auto"):
        raise ValueError(f"{name} must be True, False or 'auto', got {value!r}")
    return value


def _compile_text(text: str):
    if text not in _COMPILE_WORDS:
        raise ValueError(f"compile-jets must be auto, on or off; got {text!r}")
    return _COMPILE_WORDS[text]


def _int_at_least(minimum, maximum=MAX_COUNT):
    return lambda value, name: check_int(value, name, minimum, maximum)


def _positive(value, name):
    return check_positive(value, name)


def _name(value, name):
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty name; got {value!r}")
    return value


# DeepXDE's learning-rate schedules for Adam, by name: their numbers, in order,
# each named as torch's scheduler names it and held to one of ``_DECAY_RULES``
# (DeepXDE's "lambda" takes a function, which no record or flag can hold)
_DECAYS = {
    "step": (("step_size", "steps"), ("gamma", "factor")),
    "cosine": (("T_max", "steps"), ("eta_min", "floor")),
    "inverse time": (("decay_steps", "steps"), ("decay_rate", "rate")),
    "exponential": (("gamma", "factor"),),
}
_DECAY_RULES = {
    "steps": (
        lambda v: 1 <= v <= MAX_COUNT and float(v).is_integer(),
        f"a whole number in [1, {MAX_COUNT:.0e}]",
    ),
    "factor": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "floor": (lambda v: v >= 0, ">= 0"),
    "rate": (lambda v: v > 0, "> 0"),
}


def _check_decay(value, name) -> tuple:
    """``(name, *numbers)``, DeepXDE's format (e.g. ``("inverse time", 1000,
    0.5)``), or the command line's text of it (``"inverse time,1000,0.5"``):
    one of :data:`_DECAYS` with its numbers in their ranges, so that no schedule
    divides by zero, overflows or raises the learning rate."""
    if isinstance(value, str):
        value = _parse_decay(value, name)
    ok = isinstance(value, (tuple, list)) and value and isinstance(value[0], str)
    if not ok or not NAME.fullmatch(value[0]) or not all(map(is_number, value[1:])):
        raise ValueError(
            f"{name} must be DeepXDE's (name, numbers...), e.g. ('inverse time', "
            f"1000, 0.5), or None; got {value!r}"
        )
    kind, *numbers = value
    if kind not in _DECAYS:
        raise ValueError(
            f"{name}: {kind!r} is not a schedule here; use "
            + ", ".join(map(repr, _DECAYS))
        )
    args = _DECAYS[kind]
    if len(numbers) != len(args):
        raise ValueError(
            f"{name}: {kind!r} takes {len(args)} number(s) "
            f"({', '.join(a for a, _ in args)}); got {tuple(value)!r}"
        )
    for (arg, rule), v in zip(args, numbers):
        test, what = _DECAY_RULES[rule]
        if not test(v):
            raise ValueError(f"{name}: {arg} of {kind!r} must be {what}; got {v!r}")
    return tuple(value)


def _check_weights(value, name) -> tuple:
    """One finite number >= 0 per loss term, as DeepXDE's ``loss_weights`` (or
    the command line's text of them, ``"1,10,10"``)."""
    if isinstance(value, str):
        value = _parse_weights(value, name)
    ok = isinstance(value, (tuple, list)) and len(value) > 0
    if not ok:
        raise ValueError(
            f"{name} must be a list of numbers >= 0, e.g. [1, 10, 10]; got {value!r}"
        )
    return tuple(check_number(v, name, 0) for v in value)


# SLURM's time limits (sbatch --time): MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS
_WALLTIME = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?")
# a job's memory as dask-jobqueue takes it: a number and a unit
_MEMORY = re.compile(r"\d+(\.\d+)?\s*[KMGT]i?B", re.IGNORECASE)


def walltime_seconds(value, name: str = "walltime") -> int:
    """Seconds of a SLURM time limit ``value`` (``MM``, ``MM:SS``, ``HH:MM:SS``,
    ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``), else a ValueError naming ``name``."""
    m = _WALLTIME.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        raise ValueError(
            f"{name} must be a SLURM time limit (MM, HH:MM:SS or D-HH:MM:SS); "
            f"got {value!r}"
        )
    days, *rest = m.groups()
    parts = [int(p) for p in rest if p is not None]
    if days is not None:  # D-HH[:MM[:SS]]
        parts += [0] * (3 - len(parts))
        h, mi, s = parts
        return ((int(days) * 24 + h) * 60 + mi) * 60 + s
    if len(parts) == 1:  # MM
        return parts[0] * 60
    if len(parts) == 2:  # MM:SS
        return parts[0] * 60 + parts[1]
    h, mi, s = parts
    return (h * 60 + mi) * 60 + s


def _walltime(value, name):
    walltime_seconds(value, name)
    return value


def _memory(value, name):
    if not isinstance(value, str) or not _MEMORY.fullmatch(value):
        raise ValueError(f"{name} must be an amount like 4GB or 500MB; got {value!r}")
    return value


def _parsed(reader, name: str):
    return lambda text: reader(text, name)


def _parse_int(minimum, maximum=MAX_COUNT):
    return lambda text, name: parse_int(text, name, minimum, maximum)


def _parse_positive(text, name):
    return parse_number(text, name, 0, None, above=True)


def _parse_decay(text, name):
    kind, *numbers = parse_list(text, name)
    return (kind, *(parse_number(s, name) for s in numbers))


def _parse_weights(text, name):
    return tuple(parse_number(s, name, 0) for s in parse_list(text, name))
