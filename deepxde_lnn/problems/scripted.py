"""Your DeepXDE script as the problem: a function that trains a network your way.

:class:`ScriptedProblem` makes a :class:`~deepxde_lnn.problems.problem.Problem` of

* ``train``: a function of one network, ``train(net) -> dde.Model``, that builds
  the data and the ``dde.Model``, compiles and trains it exactly as your script
  does (any optimizer, schedule, loss weights, external trainable variables,
  callbacks, Adam then L-BFGS) and returns the trained model;
* ``nets``: ``{name: zero-argument function returning a network}``;
* ``reference`` (optional): what the runs are scored against where the model's
  own test data has no solution (operator learning, no ``solution=``): arrays
  ``(X, Y)`` (``X`` as the network takes it: an array, or DeepONet's tuple) or a
  function ``Y = reference(X)`` of the model's test inputs;
* ``true_values`` (optional): the true values of the model's external trainable
  variables (an inverse problem's unknowns), a list in DeepXDE's order or a dict
  ``{name: value}`` in that order; each learned value is then scored like a field
  (its error ``|c - c*|``, relative ``|c - c*| / |c*|``).

Nothing of the training is the package's: its options (steps, lr, schedule, ...)
are the function's; a run records what it did (steps, optimizer, time). The
checks here run before any training; what only the trained model can tell (a
function that never trains or returns something else, outputs that do not match
the reference) is checked on each run's model, one ``ValueError`` naming
``train`` or ``reference``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

import deepxde as dde
import numpy as np
import torch

from ..checks import check_choice, check_name, is_number
from ..runs.checkpoint import rng_state, set_rng_state
from .custom import check_nets, default_name
from .fingerprints import of_definition
from .problem import SCRIPT_PROFILE, Profile

__all__ = ["ScriptedProblem", "SCRIPT", "SCRIPT_PROFILE"]

#: its runs' training is the function's: no steps or lr of the package's (None)
SCRIPT = Profile(iterations=None, lr=None, seed=0, n_seeds=3, resample=False)


class ScriptedProblem:
    """``train(net) -> dde.Model`` over the networks ``nets``, named ``name``
    (default: the function's name if it is a safe name, else ``script``)."""

    default_profile = SCRIPT_PROFILE
    extra_metrics = None
    extra_grids: Mapping[str, int] = MappingProxyType({})
    paper_table: Mapping = MappingProxyType({})
    scores = ("final", "best")
    inputs: tuple[str, ...] = ()  # scored on scattered points: no maps to draw

    def __init__(
        self,
        train: Callable,
        nets: Mapping[str, Callable],
        name: str | None = None,
        reference=None,
        true_values: Sequence[float] | Mapping[str, float] | None = None,
    ):
        if not callable(train):
            raise ValueError(
                "train must be a function of one network that trains it and "
                f"returns the dde.Model; got {train!r}"
            )
        self.nets = check_nets(nets)
        self.name = name if name is not None else default_name(train, SCRIPT_PROFILE)
        check_name(self.name, "name")
        self.train = train
        self.reference = _check_reference(reference)
        self.variables, self.true_values = _check_true_values(true_values)
        outputs = _outputs(self.nets)
        self.outputs = outputs
        self.fields = ("u",) if outputs in (None, 1) else _numbered("u", outputs)
        self.fingerprint = of_definition(train, self.nets, reference, true_values)
        # DeepXDE's float type where the problem is made (a script sets it at its
        # top): the runs in worker processes train with it too
        self.dtype = dde.config.default_float()

    def __repr__(self) -> str:
        return f"ScriptedProblem({self.name!r}, nets={list(self.nets)})"

    # --- what the experiments read of a problem ----------------------------------

    def profile(self, name: str) -> Profile:
        check_choice(name, "profile", (SCRIPT_PROFILE,))
        return replace(SCRIPT, dtype=self.dtype)

    def check_method(self, method: str) -> None:
        check_choice(method, "method", tuple(self.nets))

    def loss_names(self, method: str, profile: Profile) -> None:
        return None

    def deterministic(self, method: str) -> bool:
        return True

    def stackable(self, method: str) -> bool:
        return False  # the function trains one network

    def build_net(self, method: str):
        return self.nets[method]()

    def variable_names(self, n: int) -> list[str]:
        """The names of a model's ``n`` external trainable variables (those of
        ``true_values``; else ``var``, or ``var1``, ``var2``, ...)."""
        if self.variables:
            if len(self.variables) != n:
                raise ValueError(
                    f"true_values: {len(self.variables)} values for the model's "
                    f"{n} external trainable variables"
                )
            return list(self.variables)
        return ["var"] if n == 1 else list(_numbered("var", n))


def _numbered(stem: str, n: int) -> tuple[str, ...]:
    return tuple(f"{stem}{i + 1}" for i in range(n))


def _check_reference(reference):
    """``None``, a function, or ``(X, Y)`` arrays (``X`` may be a tuple)."""
    if reference is None or callable(reference):
        return reference
    if not (isinstance(reference, (tuple, list)) and len(reference) == 2):
        raise ValueError(
            "reference must be (X, Y) arrays or a function Y = reference(X); got "
            f"{type(reference).__name__}"
        )
    x, y = reference
    xs = (
        tuple(np.asarray(a, dtype=np.float64) for a in x)
        if isinstance(x, (tuple, list))
        else np.asarray(x, dtype=np.float64)
    )
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0 or not np.isfinite(y).all():
        raise ValueError("reference: Y must be a non-empty array of finite numbers")
    return xs, y


def _check_true_values(true_values) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The variables' names and true values (``()``: none given)."""
    if true_values is None:
        return (), ()
    if isinstance(true_values, Mapping):
        names = tuple(true_values)
        for key in names:
            check_name(key, "true_values: a variable's name")
        values = tuple(true_values.values())
    elif isinstance(true_values, (list, tuple)):
        values = tuple(true_values)
        names = _numbered("var", len(values)) if len(values) > 1 else ("var",)
    else:
        raise ValueError(
            "true_values must be a list of numbers (DeepXDE's order of the "
            f"external trainable variables) or a dict; got {true_values!r}"
        )
    if not values or not all(is_number(v) and np.isfinite(v) for v in values):
        raise ValueError(f"true_values must be finite numbers; got {true_values!r}")
    return names, tuple(float(v) for v in values)


def _outputs(nets: Mapping[str, Callable]) -> int | None:
    """The networks' common number of outputs, where they say it (DeepXDE's
    FNN-like ``layer_sizes``, DeepONet's ``num_outputs``); ValueError naming
    ``nets`` when they differ. Built with the random states restored after."""
    state = rng_state(None)
    counts = {}
    try:
        for key, make in nets.items():
            try:
                net = make()
            except Exception as err:
                raise ValueError(
                    f"nets[{key!r}] raised {type(err).__name__}: {err}"
                ) from err
            if not isinstance(net, dde.nn.NN):
                raise ValueError(
                    f"nets[{key!r}]: the function returned {type(net).__name__}, "
                    "not a deepxde.nn.NN"
                )
            counts[key] = output_count(net)
    finally:
        set_rng_state(state)
    known = {k: v for k, v in counts.items() if v is not None}
    if len(set(known.values())) > 1:
        said = ", ".join(f"{k}: {v}" for k, v in known.items())
        raise ValueError(f"nets: the networks differ in their outputs ({said})")
    return next(iter(known.values()), None)


def output_count(net) -> int | None:
    """How many outputs ``net`` gives per point, where it says (else None): this
    package's ``layer_sizes``, DeepONet's ``num_outputs``, the last layer of
    DeepXDE's FNN (``linears``)."""
    sizes = getattr(net, "layer_sizes", None)
    if isinstance(sizes, Sequence) and sizes and isinstance(sizes[-1], int):
        return int(sizes[-1])
    n = getattr(net, "num_outputs", None)
    if isinstance(n, int):
        return n
    layers = getattr(net, "linears", None)
    last = layers[-1] if isinstance(layers, torch.nn.ModuleList) and layers else None
    return int(last.out_features) if isinstance(last, torch.nn.Linear) else None
