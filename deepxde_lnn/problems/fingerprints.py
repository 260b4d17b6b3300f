"""What a problem of the user's own is, as its runs' identity says it (``problem``,
:class:`~deepxde_lnn.config.RunConfig`): a fingerprint, so that a user's problem
never takes the runs of another problem of the same name (a registered case's,
or its own before an edit) as its own.

* A case file (:func:`~deepxde_lnn.problems.case.load_file`) is its bytes
  (:func:`of_file`): the file is the problem.
* A problem given in Python (a ``Case``, plain DeepXDE's ``data=`` and
  ``nets=``) is what defines it (:func:`of_definition`): its declared values
  (numbers, names, arrays, the fields of dataclasses, containers) and its
  functions, each by its source text (by its code where Python has no source),
  with the values it closes over and the globals it names (its module's
  functions and values; another module's functions by name); an object of
  another library (a DeepXDE condition, a geometry) by its type and its
  attributes' values. Every value is described by what it is, never by where it
  is in memory, so the fingerprint is the same in every process; mutable
  containers reached through another library's objects and functions (caches
  filled during training) count by their type only, so training does not change
  it. Code in other modules than the ones defining the problem is not part of
  it (as a registered case's code is not part of its runs' identity).

A registered case has none: its name says what it is (its runs keep the identity
they always had).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import types
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..runs.names import fingerprint

__all__ = ["of_file", "of_definition"]

_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_CONSTANT = (*_PLAIN, tuple, np.ndarray, np.generic)  # globals any function's
_DEPTH = 8  # objects of other libraries are described this deep at most


def of_file(path: str | Path) -> str:
    """The fingerprint of the file ``path``: its bytes."""
    return fingerprint(Path(path).read_bytes())


def of_definition(*parts) -> str:
    """The fingerprint of what ``parts`` (a problem's declaration) are."""
    return fingerprint(_Describer().value(parts, True, 0).encode())


def _name(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"


def _digest(lines: list[str]) -> str:
    text = "\n".join(lines).encode("utf-8", "backslashreplace")
    return "sha256 " + hashlib.sha256(text).hexdigest()


class _Describer:
    """Describes values by their content: a plain value by itself, any other by
    the digest of its parts' descriptions (each described once: a value met
    again, or shared, reads the same)."""

    def __init__(self):
        self.memo: dict[tuple[int, bool], str] = {}
        self.active: set[tuple[int, bool]] = set()
        self.keep: list = []  # alive while described: their ids stay unique

    def value(self, x, declared: bool, depth: int) -> str:
        """``declared``: a part of the problem's declaration, whose mutable
        containers are its values (else they are described by their type)."""
        if isinstance(x, _PLAIN):
            return f"{type(x).__name__} {x!r}"
        if isinstance(x, (np.ndarray, np.generic)):
            a = np.ascontiguousarray(x)
            digest = hashlib.sha256(a.tobytes()).hexdigest()
            return f"array {a.dtype.str} {a.shape} {digest}"
        if isinstance(x, (type, types.ModuleType)):
            return f"{type(x).__name__} {getattr(x, '__name__', '?')}"
        key = (id(x), declared)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return f"cycle {_name(type(x))}"
        self.active.add(key)
        self.keep.append(x)
        try:
            text = _digest(self.parts(x, declared, depth))
        finally:
            self.active.discard(key)
        self.memo[key] = text
        return text

    def parts(self, x, declared: bool, depth: int) -> list[str]:
        def each(items, mine=declared):
            return [self.value(item, mine, depth) for item in items]

        if isinstance(x, tuple) or (declared and isinstance(x, list)):
            return [type(x).__name__, *each(x)]
        if isinstance(x, frozenset) or (declared and isinstance(x, set)):
            return [type(x).__name__, *sorted(each(x))]
        if isinstance(x, Mapping) and declared:
            items = sorted(zip(each(x.keys()), each(x.values())))
            return ["mapping", *(f"{k}: {v}" for k, v in items)]
        if isinstance(x, (list, set, Mapping)):
            return [f"mutable {type(x).__name__}"]
        if isinstance(x, types.FunctionType):
            return self.function(x, declared, depth)
        if isinstance(x, types.MethodType):
            return ["method", *each((x.__func__, x.__self__))]
        if isinstance(x, functools.partial):
            return ["partial", *each((x.func, x.args, dict(x.keywords)), True)]
        if dataclasses.is_dataclass(x):
            names = [f.name for f in dataclasses.fields(x)]
            values = each(getattr(x, n) for n in names)
            return [f"dataclass {_name(type(x))}", *map(" ".join, zip(names, values))]
        return self.other(x, depth)

    def function(self, fn: types.FunctionType, declared: bool, depth: int):
        """Its source (its code without one), defaults, the values it closes over
        and the globals it names: its module's functions and constant values,
        and for a function of the declaration every value (another module's
        function by its name)."""
        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):
            source = _code(fn.__code__)
        out = [f"function {fn.__qualname__}", source]  # wherever it was imported
        out.append(self.value((fn.__defaults__, fn.__kwdefaults__ or {}), True, depth))
        for cell in fn.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                contents = None
            out.append(self.value(contents, declared, depth))
        for n in sorted({n for n in _names(fn.__code__) if n in fn.__globals__}):
            x = fn.__globals__[n]
            if isinstance(x, types.FunctionType) and x.__module__ != fn.__module__:
                out.append(f"global {n} function {_name(x)}")
            elif declared or isinstance(x, (*_CONSTANT, types.FunctionType)):
                out.append(f"global {n} {self.value(x, declared, depth)}")
        return out

    def other(self, x, depth: int) -> list[str]:
        """An object of another library: its type and its attributes' values,
        ``_DEPTH`` objects deep."""
        name = getattr(x, "__name__", None)  # a builtin, a ufunc
        out = [f"object {_name(type(x))} {name if isinstance(name, str) else ''}"]
        attrs = getattr(x, "__dict__", None)
        if isinstance(attrs, dict) and depth < _DEPTH:
            for k in sorted(attrs):
                out.append(f"{k} {self.value(attrs[k], False, depth + 1)}")
        return out


def _code(code: types.CodeType) -> str:
    """A function's code where Python has no source (made by ``exec``)."""
    parts = [code.co_code.hex(), repr(code.co_names)]
    for c in code.co_consts:
        parts.append(_code(c) if isinstance(c, types.CodeType) else repr(c))
    return " ".join(parts)


def _names(code: types.CodeType) -> list[str]:
    """The global names ``code`` and the code nested in it use."""
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _names(c)
    return names
