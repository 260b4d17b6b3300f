"""DeepXDE's boundary and initial conditions on points that change every step.

DeepXDE wraps a condition's value function (and ``boundary_normal``) in a cache
keyed by ``id(X)``, because ``dde.data.PDE`` points never change. With fresh points
every step that cache would return stale values (ids are reused) and grow without
bound: :func:`uncached` rebuilds a condition's functions without it.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable

import numpy as np
import torch
from deepxde import icbc
from deepxde.utils import get_num_args, return_tensor

__all__ = [
    "CONDITIONS",
    "HostFunction",
    "check_supported",
    "host_functions",
    "uncached",
]

CONDITIONS = (icbc.BC, icbc.IC)
# conditions whose values depend only on the points (not on fixed point sets)
_SUPPORTED = (icbc.DirichletBC, icbc.NeumannBC, icbc.RobinBC, icbc.OperatorBC, icbc.IC)
_VALUE_FUNC = (icbc.DirichletBC, icbc.NeumannBC, icbc.IC)


def check_supported(name: str, bc) -> None:
    """ValueError naming the term ``name`` unless ``bc`` is a supported condition."""
    if not isinstance(bc, _SUPPORTED):
        raise ValueError(
            f"Term {name!r}: {type(bc).__name__} is not supported (it needs fixed "
            "point sets); use DirichletBC, NeumannBC, RobinBC, OperatorBC or IC"
        )


def uncached(name: str, bc):
    """A copy of ``bc`` whose value functions are rebuilt without DeepXDE's cache,
    from public parts: the user's function (``inspect.unwrap`` of the
    ``functools.wraps`` chain) and the geometry's ``boundary_normal``, as
    :class:`HostFunction` objects."""
    check_supported(name, bc)
    bc = copy.copy(bc)
    if isinstance(bc, icbc.BC):
        bc.boundary_normal = HostFunction(return_tensor(bc.geom.boundary_normal))
    if isinstance(bc, _VALUE_FUNC):
        user = inspect.unwrap(bc.func)
        if get_num_args(user) != 1:
            raise ValueError(
                f"Term {name!r}: condition functions with auxiliary variables are "
                "not supported by ResampledPDE"
            )
        bc.func = HostFunction(return_tensor(user))
    return bc


class HostFunction:
    """A condition's function of the points alone (its values, or the boundary
    normals), evaluated on the host's NumPy rows, in DeepXDE's ``(X, beg, end,
    aux_var)`` convention and without DeepXDE's cache (``__wrapped__`` keeps the
    chain to the user's function, so rebuilding is idempotent).

    While ``staged`` holds a tensor, a call returns it instead: a step whose
    values were computed on the host beforehand and copied to the device
    (:meth:`~.staging.Staging.staged`), so that the step itself reads no host
    memory.
    """

    __wrapped__: Callable  # the user's function (functools.update_wrapper)

    def __init__(self, func):
        functools.update_wrapper(self, func)
        self.staged: torch.Tensor | None = None

    def host(self, rows: np.ndarray) -> torch.Tensor:
        """The values on ``rows`` as the unstaged call gives them, but in host
        memory (DeepXDE makes tensors on the GPU when there is one)."""
        with torch.device("cpu"):
            return self.__wrapped__(rows)

    def __call__(self, X, beg, end, aux_var=None):
        if self.staged is not None:
            return self.staged
        return self.__wrapped__(X[beg:end])


def host_functions(condition) -> list[HostFunction]:
    """The point-only functions a condition's ``error`` calls, in a fixed order."""
    names: tuple[str, ...]
    if isinstance(condition, (icbc.DirichletBC, icbc.IC)):
        names = ("func",)
    elif isinstance(condition, icbc.NeumannBC):
        names = ("func", "boundary_normal")
    elif isinstance(condition, icbc.RobinBC):
        names = ("boundary_normal",)
    else:  # OperatorBC: its function takes the tensors
        names = ()
    return [getattr(condition, a) for a in names]
