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
  variables (an inverse problem's unknowns), a list in DeepXDE's order (a vector
  variable's entries in turn) or a dict ``{name: value}`` in that order; each
  learned value is then scored like a field (its error ``|c - c*|``, relative
  ``|c - c*| / |c*|``). Where the data has no solution and no ``reference`` is
  given (observations only), the runs are judged on their unknowns alone;
* ``fields``, ``inputs`` (optional): names of the network's outputs and inputs
  (default ``u``/``u1, u2, ...`` and ``x``/``x1, x2, ...``).

Nothing of the training is the package's: its options (steps, lr, schedule, ...)
are the function's; a run records what it did (steps, optimizer, time).

Everything that can be known before training is checked when the problem is made,
by a dry call (:func:`probe`): for every network, ``train(net)`` runs with its
first ``model.train`` call taking no step (a second call stops the function
there), so that what it returns is checked to be that model; the training losses
of one batch are evaluated as a step would. Code that fails after the skipped
training (on its empty loss history) is not held against it. Its model tells the network's
outputs per point, whether the test data has a solution, the scoring inputs, the
reference's shape and the unknowns; a problem there is one
``ValueError`` naming ``train``, ``nets``, ``reference``, ``true_values``,
``fields`` or ``inputs``, before anything trains. The dry call runs in the
working directory, as the runs do (the function reads its data files as the
script does); what DeepXDE writes for it by a relative path goes to a temporary
folder and is discarded (:mod:`.user_files`); the random states and DeepXDE's
float type are restored after.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import NoReturn

import deepxde as dde
import numpy as np
import torch

from ..checks import check_choice, check_name, is_number
from ..runs.checkpoint import rng_state, set_rng_state
from ..runs.names import check_case_distinct
from .deepxde_problem import check_nets, default_name
from .fingerprints import of_definition
from .problem import DEFAULT_PROFILE, MAX_POINTS, Profile
from .user_files import working_in, writing_to

__all__ = [
    "ScriptedProblem",
    "SCRIPT",
    "Probe",
    "probe",
    "intercepted",
    "output_count",
    "numbered",
    "UNKNOWNS",
]

#: its runs' training is the function's: no steps or lr of the package's (None)
SCRIPT = Profile(iterations=None, lr=None, seed=0, n_seeds=3, resample=False)

#: what a run is scored on where the data has no solution and no reference is
#: given: the unknowns alone (each a field of one value)
UNKNOWNS = "unknowns"


class ScriptedProblem:
    """``train(net) -> dde.Model`` over the networks ``nets``, named ``name``
    (default: :func:`~.deepxde_problem.default_name` of the function: its name, or
    for a ``train`` the name of its file; else ``script``); checked
    by a dry call of every network (:func:`probe`) before anything trains."""

    default_profile = DEFAULT_PROFILE  # its one: the function's own training
    trains_itself = True
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
        fields: Sequence[str] | None = None,
        inputs: Sequence[str] | None = None,
    ):
        if not callable(train):
            raise ValueError(
                "train must be a function of one network that trains it and "
                f"returns the dde.Model; got {train!r}"
            )
        self.nets = check_nets(nets)
        self.name = name if name is not None else default_name(train, "script")
        check_name(self.name, "name")
        self.train = train
        self.reference = _check_reference(reference)
        self.variables, self.true_values = _check_true_values(true_values)
        given_fields = _check_names(fields, "fields")
        given_inputs = _check_names(inputs, "inputs")
        # DeepXDE's float type where the problem is made (a script sets it at its
        # top): the runs in worker processes train with it too
        self.dtype = dde.config.default_float()
        # where the function reads its files by a relative path: the runs (in
        # worker processes too) call it here
        self.workdir = Path.cwd()
        self.probe = _agreed(
            {key: probe(self, key) for key in self.nets}, self.reference is None
        )
        self.scoring = "solution" if self.probe.solution else "reference"
        if self.reference is None and not self.probe.solution:
            self.scoring = UNKNOWNS
        self.variables = self.variable_names(self.probe.variables)
        self.fields = _names_for(given_fields, self.probe.outputs, "fields", "u")
        if self.scoring == UNKNOWNS:  # what is scored: the unknowns themselves
            self.fields = self.variables
        elif self.true_values:  # both scored by name
            _check_distinct(self.fields, self.variables)
        self.input_names = _names_for(
            given_inputs, self.probe.inputs, "inputs", "x", "the scoring inputs have"
        )
        self.fingerprint = of_definition(
            train, self.nets, reference, true_values, fields, inputs
        )

    def __repr__(self) -> str:
        return f"ScriptedProblem({self.name!r}, nets={list(self.nets)})"

    # --- what the experiments read of a problem ----------------------------------

    def profile(self, name: str) -> Profile:
        check_choice(name, "profile", (DEFAULT_PROFILE,))
        return replace(SCRIPT, dtype=self.dtype)

    def check_method(self, method: str) -> None:
        check_choice(method, "method", tuple(self.nets))

    def check_score(self, score: str) -> None:
        """ValueError naming ``score`` where DeepXDE's best model cannot be
        scored: against ``reference=(X, Y)`` arrays, or the unknowns alone."""
        if score != "best":
            return
        if isinstance(self.reference, tuple):
            raise ValueError(
                "score: 'best' is DeepXDE's best model on the model's test data; "
                "with reference=(X, Y) arrays pass score='final'"
            )
        if self.scoring == UNKNOWNS:
            raise ValueError(
                "score: 'best' is DeepXDE's best model on its test data, which has "
                "no solution here (the unknowns are judged, at their final values); "
                "pass score='final'"
            )

    def loss_names(self, method: str, profile: Profile) -> None:
        return None

    def deterministic(self, method: str) -> bool:
        return True

    def stackable(self, method: str) -> bool:
        return False  # the function trains one network

    def build_net(self, method: str):
        return self.nets[method]()

    def build_data(
        self, method: str, profile: Profile, seed: int, compile_jets: bool = False
    ) -> NoReturn:
        raise TypeError("a problem that trains itself (train=) builds no data")

    def evaluation(self, profile: Profile, data) -> NoReturn:
        raise TypeError("a problem that trains itself (train=) scores its own model")

    def variable_names(self, n: int) -> tuple[str, ...]:
        """The names of a model's ``n`` unknowns (the entries of its external
        trainable variables: those of ``true_values``; else ``var``, or
        ``var1``, ``var2``, ...)."""
        if self.true_values:
            if len(self.variables) != n:
                raise ValueError(
                    f"true_values: {len(self.variables)} values for the model's "
                    f"{n} unknowns (the entries of its external trainable "
                    "variables, in DeepXDE's order)"
                )
            return tuple(self.variables)
        return ("var",) if n == 1 else numbered("var", n)


def numbered(stem: str, n: int) -> tuple[str, ...]:
    """``stem`` for one, else ``stem1``, ``stem2``, ..."""
    return (stem,) if n == 1 else tuple(f"{stem}{i + 1}" for i in range(n))


def _check_names(names, what: str) -> tuple[str, ...] | None:
    """``fields``/``inputs`` as a tuple of distinct safe names, or None."""
    if names is None:
        return None
    if isinstance(names, str):
        names = names.split(",")
    if not isinstance(names, Sequence) or not names:
        raise ValueError(f"{what} must be a list of names; got {names!r}")
    for n in names:
        check_name(n, f"{what}: a name")
    if len(set(names)) != len(names) or "Avg" in names:
        raise ValueError(f"{what} must be distinct names other than 'Avg'; got {names}")
    check_case_distinct(names, what)
    return tuple(names)


def _names_for(given, n: int | None, what: str, stem: str, has="the network gives"):
    """The names of ``n`` columns: ``given`` (their count checked), else numbered."""
    if given is None:
        return numbered(stem, n or 1)
    if n is not None and len(given) != n:
        raise ValueError(f"{what}: {len(given)} names, but {has} {n}")
    return given


def _check_distinct(fields: Sequence[str], variables: Sequence[str]) -> None:
    """ValueError naming ``true_values`` where an unknown is named like a field:
    both are scored and judged by name, so one would replace the other."""
    folded = {f.casefold() for f in fields}
    both = [v for v in variables if v.casefold() in folded]
    if both:
        raise ValueError(
            f"true_values: {both[0]!r} names a field too (fields: "
            f"{', '.join(fields)}); name the unknown otherwise, e.g. "
            f"{both[0] + '_true'!r}, or the fields with fields=[...]"
        )


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
        tuple(_finite(a, "reference: X") for a in x)
        if isinstance(x, (tuple, list))
        else _finite(x, "reference: X")
    )
    for a in xs if isinstance(xs, tuple) else (xs,):
        if len(a) > MAX_POINTS:  # an evaluation grid's cap
            raise ValueError(
                f"reference: X has {len(a):,} points; at most {MAX_POINTS:,}, as an "
                "evaluation grid"
            )
    return xs, _finite(y, "reference: Y")


def _finite(values, what: str) -> np.ndarray:
    """``values`` as a non-empty float64 array of finite numbers, at most
    :data:`MAX_POINTS` of them (ValueError naming ``what``)."""
    try:
        size = np.size(values)
        if size > MAX_POINTS * 8:
            raise ValueError(f"{size} values")
        if np.iscomplexobj(values):
            raise ValueError("complex values")
        out = np.asarray(values, dtype=np.float64)
        if out.ndim == 0:
            raise ValueError("one number, not an array")
    except (ValueError, TypeError) as err:
        raise ValueError(
            f"{what} must be an array of at most {MAX_POINTS * 8:,} finite numbers "
            f"({err})"
        ) from None
    if out.size == 0 or not np.isfinite(out).all():
        raise ValueError(f"{what} must be a non-empty array of finite numbers")
    return out


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
        names = numbered("var", len(values))
    else:
        raise ValueError(
            "true_values must be a list of numbers (DeepXDE's order of the "
            f"external trainable variables) or a dict; got {true_values!r}"
        )
    if not values or not all(is_number(v) and np.isfinite(v) for v in values):
        raise ValueError(f"true_values must be finite numbers; got {true_values!r}")
    if "Avg" in names:
        raise ValueError("true_values: 'Avg' is the mean over fields; rename it")
    check_case_distinct(names, "true_values")
    return names, tuple(float(v) for v in values)


# --- the dry call ----------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    """What a dry call of ``train(net)`` told of its model: ``outputs`` per point
    (None where the network does not say and its prediction cannot tell),
    ``inputs`` per scoring point (None for DeepONet's tuple), whether the test data
    has a ``solution``, the number of unknowns (``variables``), and how many values
    the network and the solution give on the test inputs."""

    outputs: int | None
    inputs: int | None
    solution: bool
    variables: int
    values: int = 0  # the network's values on the test inputs
    solution_values: int | None = None  # the solution's there


class _Stopped(BaseException):
    """Raised by ``Model.train`` during a dry call (a BaseException: a function's
    ``except Exception`` does not swallow it); carries the compiled model."""

    def __init__(self, model):
        super().__init__("dry call")
        self.model = model


@contextlib.contextmanager
def intercepted(
    on_compile: Callable | None = None, on_train: Callable | None = None
) -> Iterator[None]:
    """While the block runs, ``dde.Model.compile`` and ``dde.Model.train`` call
    ``on_compile(model, arguments)`` / ``on_train(model, arguments)`` first (the
    arguments bound by name, a dict the hook may change) and then DeepXDE's own."""
    originals = {"compile": dde.Model.compile, "train": dde.Model.train}
    hooks = {"compile": on_compile, "train": on_train}

    def hooked(name: str, hook: Callable):
        original = originals[name]
        params = inspect.signature(original)

        def call(self, *args, **kwargs):
            bound = params.bind(self, *args, **kwargs)
            hook(self, bound.arguments)
            return original(*bound.args, **bound.kwargs)

        return call

    for name, hook in hooks.items():
        if hook is not None:
            setattr(dde.Model, name, hooked(name, hook))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(dde.Model, name, original)


#: a dry call's return value that was not seen (stopped at a second train)
_UNSEEN = object()


@contextlib.contextmanager
def _trains_nothing(seen: list) -> Iterator[None]:
    """While the block runs, the first ``dde.Model.train`` takes no step: it
    notes its model in ``seen`` and returns as a training of no steps would
    (so the function goes on to return, or not, its model); a second call stops
    the block (:class:`_Stopped`): a loop of training calls never runs on."""
    original = dde.Model.train

    def train(self, *args, **kwargs):
        if seen:
            raise _Stopped(seen[0])
        seen.append(self)
        return self.losshistory, self.train_state

    dde.Model.train = train
    try:
        yield
    finally:
        dde.Model.train = original


def probe(problem: ScriptedProblem, key: str) -> Probe:
    """The dry call of ``problem.train`` with the network ``nets[key]``: up to its
    first ``model.train``, no step taken; checks the model (see the module)."""
    state, dtype = rng_state(None), dde.config.default_float()
    try:
        with tempfile.TemporaryDirectory(prefix="deepxde-lnn-probe-") as scratch:
            with (
                working_in(problem.workdir),
                writing_to(scratch),
                contextlib.redirect_stdout(io.StringIO()),
            ):
                model = _dry_model(problem, key)
                return _probed(problem, key, model)
    finally:
        set_rng_state(state)
        changed = dde.config.default_float()
        if changed != dtype:
            dde.config.set_default_float(dtype)
            raise ValueError(
                f"train: the function sets DeepXDE's float type to {changed} after "
                f"the network was built in {dtype}; set it at the top of your "
                "script, before compare(), as DeepXDE's examples do: "
                f"dde.config.set_default_float({changed!r})"
            )


def _dry_model(problem: ScriptedProblem, key: str):
    """The model ``train(nets[key]())`` compiled and was about to train."""
    try:
        net = problem.nets[key]()
    except Exception as err:
        raise ValueError(f"nets[{key!r}] raised {type(err).__name__}: {err}") from err
    if not isinstance(net, dde.nn.NN):
        raise ValueError(
            f"nets[{key!r}]: the function returned {type(net).__name__}, not a "
            "deepxde.nn.NN"
        )
    seen: list = []  # the model of the first model.train call
    try:
        with _trains_nothing(seen):
            returned = problem.train(net)
    except _Stopped:
        returned = _UNSEEN  # a second model.train: stopped there
    except (Exception, SystemExit) as err:  # sys.exit() in train: not the caller's
        if not seen:
            raise ValueError(
                f"train raised {type(err).__name__}: {err} (in a dry call with "
                f"nets[{key!r}], before any training)"
            ) from err
        returned = _UNSEEN  # after its (skipped) training: not judged here
    if not seen:
        what = type(returned).__name__
        raise ValueError(
            f"train: the function returned {what} without calling model.train(); "
            "it must train the dde.Model it builds and return it"
        )
    model = seen[0]
    if returned is not _UNSEEN and returned is not model:
        raise ValueError(
            f"train: the function returned {type(returned).__name__}, not the "
            "dde.Model it trained; end it with `return model`"
        )
    if model.net is not net:
        raise ValueError(
            "train: the model trains another network than the one the function "
            "was given; build the dde.Model with it"
        )
    return model


def _probed(problem: ScriptedProblem, key: str, model) -> Probe:
    """The :class:`Probe` of a dry call's ``model``, its reference checked."""
    where = f"nets[{key!r}]"
    try:
        x, solution = model.data.test()[:2]
        pred = np.asarray(model.predict(x), dtype=np.float64)
    except Exception as err:
        raise ValueError(
            f"train: the model built with {where} cannot predict on its test data "
            f"({type(err).__name__}: {err}); compile it before model.train()"
        ) from err
    outputs = output_count(model.net)
    if outputs is None and not isinstance(x, (tuple, list)):
        outputs = pred.shape[1] if pred.ndim == 2 and len(pred) == len(x) else 1
    points = x[-1] if isinstance(x, (tuple, list)) else x
    inputs = np.shape(points)[1] if np.ndim(points) == 2 else None
    _check_reference_fits(problem, model, x, pred, where)
    unknowns = sum(int(v.numel()) for v in model.external_trainable_variables)
    if solution is None and problem.reference is None and not problem.true_values:
        raise ValueError(
            "reference: the model's test data has no solution to score against; "
            "pass reference=(X, Y) or a function Y = reference(X), or true_values= "
            "to judge the unknowns alone"
        )
    if problem.true_values and len(problem.true_values) != unknowns:
        raise ValueError(
            f"true_values: {len(problem.true_values)} values for the model's "
            f"{unknowns} unknowns (the entries of its external trainable variables, "
            f"in DeepXDE's order; compile(..., external_trainable_variables=...))"
        )
    _first_losses(model, where)
    size = None if solution is None else int(np.size(solution))
    return Probe(outputs, inputs, solution is not None, unknowns, int(pred.size), size)


def _first_losses(model, where: str) -> None:
    """The training losses of the model's first batch, evaluated once as a
    training step does (no step taken): what would fail in the first step
    (dtypes, residuals, conditions) fails here."""
    try:
        inputs, targets, *aux = model.data.train_next_batch(model.batch_size)
        _, losses = model.outputs_losses_train(inputs, targets, aux[0] if aux else None)
        values = [float(v) for v in torch.as_tensor(losses).detach().reshape(-1)]
    except Exception as err:
        hint = (
            " (NumPy arrays are float64: build the data in DeepXDE's float type, "
            "e.g. x.astype(dde.config.real(np)), or set "
            "dde.config.set_default_float('float64') at the top of your script)"
            if "dtype" in str(err)
            else ""
        )
        raise ValueError(
            f"train: the first training step of the model built with {where} "
            f"fails ({type(err).__name__}: {err}){hint}"
        ) from err
    finally:
        dde.grad.clear()
    n = len(values)
    bad = [
        f"term {i + 1} of {n} is {v}"
        for i, v in enumerate(values)
        if not np.isfinite(v)
    ]
    if bad:
        raise ValueError(
            f"train: the first training losses of the model built with {where} "
            f"are not finite ({', '.join(bad)}; a condition whose filter selects "
            "no point gives nan)"
        )


def _check_reference_fits(problem, model, x, pred, where: str) -> None:
    """The reference gives one finite value per predicted value."""
    if problem.reference is None:
        return
    if isinstance(problem.reference, tuple):
        ref_x, exact = problem.reference
        try:
            pred = np.asarray(model.predict(ref_x), dtype=np.float64)
        except Exception as err:
            raise ValueError(
                f"reference: the network of {where} cannot predict on X "
                f"({type(err).__name__}: {err})"
            ) from err
    else:
        try:
            exact = problem.reference(x)
        except Exception as err:
            raise ValueError(f"reference raised {type(err).__name__}: {err}") from err
        exact = _finite(exact, "reference: the values it returns")
    if pred.size != exact.size:
        raise ValueError(
            f"reference: the network of {where} gives {pred.size} values on the "
            f"scoring inputs, the reference {exact.size}"
        )


def _agreed(probes: Mapping[str, Probe], by_solution: bool) -> Probe:
    """The networks' common probe; ValueError naming ``nets`` where they differ
    in their outputs, or (``by_solution``: scored against the test data's
    solution) one gives other values than the solution."""
    known = {k: p.outputs for k, p in probes.items() if p.outputs is not None}
    if len(set(known.values())) > 1:
        said = ", ".join(f"{k}: {v}" for k, v in known.items())
        raise ValueError(f"nets: the networks differ in their outputs ({said})")
    for key, p in probes.items():
        if by_solution and p.solution_values not in (None, p.values):
            raise ValueError(
                f"nets[{key!r}]: the network gives {p.values} values on the test "
                f"points, the test data's solution {p.solution_values}"
            )
    first = next(iter(probes.values()))
    return replace(first, outputs=next(iter(known.values()), None))


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
