"""Your own DeepXDE problem, trained and scored the way the package's cases are.

:class:`DeepXDEProblem` makes a :class:`~deepxde_lnn.problems.problem.Problem` of

* ``data``: a zero-argument function returning a ``dde.data.Data`` with an exact
  solution (``solution=`` of ``dde.data.PDE``, kept as ``data.soln``), and
* ``nets``: ``{name: zero-argument function returning a dde.nn.NN}``.

The runner calls ``data()`` and ``nets[name]()`` for every run, after seeding
(``dde.config.set_random_seed``), trains through ``dde.Model`` as it trains a case,
and scores the network on DeepXDE's test points ``x = data.test()[0]`` against
``u = data.soln(x)`` (RMSE, relL2, ... of :mod:`deepxde_lnn.problems.metrics`). Everything is
built once and checked when the problem is made, so bad input fails before any
training, with a ``ValueError`` naming the argument.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

import deepxde as dde
import numpy as np
import torch
from deepxde.data import Data

from ..checks import check_choice, check_name
from ..runs.checkpoint import rng_state, set_rng_state
from .data import is_training_pass
from .fingerprints import of_definition
from .problem import DEFAULT, DEFAULT_PROFILE, Evaluation, Profile

__all__ = [
    "DeepXDEProblem",
    "TrackedData",
    "PROFILE",
    "check_nets",
    "default_name",
    "term_names",
]

PROFILE = DEFAULT_PROFILE  # the one profile of a DeepXDEProblem (its DEFAULT)


class DeepXDEProblem:
    """A user's ``data`` and ``nets`` factories as a problem named ``name``
    (default: :func:`default_name` of the data function, else ``custom``)."""

    default_profile = PROFILE
    trains_itself = False
    extra_metrics = None
    extra_grids: Mapping[str, int] = MappingProxyType({})
    paper_table: Mapping = MappingProxyType({})  # no paper numbers to set beside
    scores = ("final",)

    def __init__(
        self,
        data: Callable[[], Data],
        nets: Mapping[str, Callable[[], dde.nn.NN]],
        name: str | None = None,
    ):
        if not callable(data):
            raise ValueError(
                "data must be a function of no arguments returning a "
                f"deepxde.data.Data; got {data!r}"
            )
        self.nets = check_nets(nets)
        self.name = name if name is not None else default_name(data, "custom")
        check_name(self.name, "name")
        self.make_data = data
        self.inputs, self.fields = _inspect(data, self.nets)
        # never a registered case: what it is, its functions say
        self.fingerprint = of_definition(data, self.nets)

    def __repr__(self) -> str:
        return f"DeepXDEProblem({self.name!r}, nets={list(self.nets)})"

    # --- the runner's interface (deepxde_lnn.problems.problem.Problem) --------------------

    def profile(self, name: str) -> Profile:
        check_choice(name, "profile", (PROFILE,))
        return DEFAULT

    def check_method(self, method: str) -> None:
        check_choice(method, "method", tuple(self.nets))

    def loss_names(self, method: str, profile: Profile) -> None:
        return None  # a user's data names its terms once it evaluates them

    def deterministic(self, method: str) -> bool:
        return True  # as far as the package can tell

    def stackable(self, method: str) -> bool:
        return False  # stacking needs the package's own data and networks

    def build_data(
        self, method: str, profile: Profile, seed: int, compile_jets: bool = False
    ) -> TrackedData:
        """The user's data; ``compile_jets`` is ignored (DeepXDE's own losses have
        no jets: its record says "nested autograd")."""
        return TrackedData(self.make_data())

    def build_net(self, method: str) -> dde.nn.NN:
        return self.nets[method]()

    def evaluation(self, profile: Profile, data: TrackedData) -> Evaluation:
        """DeepXDE's test points and the exact solution there (no grid)."""
        x, exact = _test_set(data.data)
        return Evaluation(x, exact, np.ones(len(x), bool))


def check_nets(nets) -> dict:
    """``nets`` as a dict, checked: a non-empty mapping of network names (safe
    folder names) to functions (ValueError naming ``nets``)."""
    if not isinstance(nets, Mapping) or not nets:
        raise ValueError(
            "nets must be a non-empty dict {name: function returning a "
            f"deepxde.nn.NN}}; got {nets!r}"
        )
    for key, make in nets.items():
        check_name(key, "nets: a network's name")
        if not callable(make):
            raise ValueError(f"nets[{key!r}] must be a function; got {make!r}")
    return dict(nets)


#: function names that say nothing of the problem (every script has a ``train``):
#: the name of the file that defines the function says more
GENERIC_NAMES = ("train", "data", "main", "run", "make_data", "get_data", "<lambda>")


def default_name(func, fallback: str) -> str:
    """A problem's default name: its function's name where that is a safe name
    that says something, else (``train``, ``data``, ...: :data:`GENERIC_NAMES`)
    the name of the file that defines it (``allen_cahn`` for ``allen_cahn.py``),
    else the function's name, else ``fallback``."""
    name = getattr(func, "__name__", "")
    if name not in GENERIC_NAMES and _is_safe(name):
        return name
    code = getattr(func, "__code__", None)
    if code is not None and not code.co_filename.startswith("<"):
        path = Path(code.co_filename)
        if _is_safe(path.stem) and not path.stem.startswith("_"):
            return path.stem
    return name if _is_safe(name) else fallback


def _is_safe(name: str) -> bool:
    """Whether ``name`` may name a problem (folders and records)."""
    try:
        check_name(name, "name")
    except ValueError:
        return False
    return True


def _test_set(data: Data) -> tuple[np.ndarray, np.ndarray]:
    """``(x, u)``: DeepXDE's test points and the exact solution there, float64
    (ValueError unless the solution gives a row of finite values per point)."""
    x = np.asarray(data.test()[0], dtype=np.float64)
    exact = np.asarray(data.soln(x), dtype=np.float64)
    if exact.ndim == 1:
        exact = exact[:, None]
    if x.ndim != 2 or exact.ndim != 2 or len(exact) != len(x):
        raise ValueError(
            f"the solution gave shape {exact.shape} on test points of shape "
            f"{x.shape}; expected a row per point"
        )
    if not np.isfinite(exact).all():
        raise ValueError("the solution gave NaN or inf on the test points")
    return x, exact


def _inspect(data, nets) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Build the data and every network once (random states restored after),
    check that they fit together; the input and field names."""
    state = rng_state(None)
    try:
        made = _made(data, "data")
        if not isinstance(made, Data):
            raise ValueError(
                f"data: the function returned {type(made).__name__}, not a "
                "deepxde.data.Data"
            )
        if not callable(getattr(made, "soln", None)):
            raise ValueError(
                "data: the Data has no exact solution to score against; pass "
                "solution=... (e.g. dde.data.PDE(..., solution=u_exact))"
            )
        x, exact = _made(lambda: _test_set(made), "data: its test points")
        built = {key: _made(make, f"nets[{key!r}]") for key, make in nets.items()}
        for key, net in built.items():
            _check_net(net, key, x, exact.shape[1])
        _made(
            lambda: _losses(made, next(iter(built.values()))),
            "data: its training losses (residuals, conditions)",
        )
    finally:
        set_rng_state(state)
    d, k = x.shape[1], exact.shape[1]
    inputs = ("x",) if d == 1 else tuple(f"x{i + 1}" for i in range(d))
    return inputs, ("u",) if k == 1 else tuple(f"u{i + 1}" for i in range(k))


def _made(factory, what: str):
    try:
        return factory()
    except Exception as err:
        raise ValueError(f"{what} raised {type(err).__name__}: {err}") from err


def _check_net(net, key: str, x: np.ndarray, fields: int) -> None:
    if not isinstance(net, dde.nn.NN):
        raise ValueError(
            f"nets[{key!r}]: the function returned {type(net).__name__}, not a "
            "deepxde.nn.NN"
        )
    xb = torch.as_tensor(x[:4], dtype=dde.config.real(torch))
    with torch.no_grad():
        y = _made(lambda: net(xb), f"nets[{key!r}]: the network on the test points")
    if y.ndim != 2 or y.shape[1] != fields:
        raise ValueError(
            f"nets[{key!r}]: the network gives {tuple(y.shape[1:])} outputs per "
            f"point, the solution {fields}"
        )


def _losses(data: Data, net) -> None:
    """Evaluate the training losses of ``data`` (the residuals, the conditions)
    once with ``net``, the way ``dde.Model`` does in a training step (no step
    taken; DeepXDE's messages held back)."""
    model = dde.Model(data, net)
    with contextlib.redirect_stdout(io.StringIO()):
        model.compile("adam", lr=1e-3)
    inputs, targets, aux = data.train_next_batch()
    try:
        model.outputs_losses_train(inputs, targets, aux)
    finally:
        dde.grad.clear()


class TrackedData(Data):
    """A user's DeepXDE ``Data`` as the runner trains it: the DeepXDE Data API goes
    to ``data``; this keeps what the runner reads of a problem's data (the latest
    training step's per-term losses, the term names, the point counts)."""

    resample = False  # DeepXDE's Data keeps its points
    update_weights = True  # no weights hook

    def __init__(self, data: Data):
        self.data = data
        self.names: list[str] = []  # known once the losses were evaluated
        self.last_losses: torch.Tensor | None = None
        # DeepXDE samples from NumPy's global generator, which every checkpoint
        # saves; this is the runner's slot for a per-run sampler, unused here
        self.rng = np.random.default_rng(0)
        self.rng_state_before_draw = self.rng.bit_generator.state

    def train_next_batch(self, batch_size=None):
        return self.data.train_next_batch(batch_size)

    def test(self):
        return self.data.test()

    def losses_train(self, targets, outputs, loss_fn, inputs, model, aux=None):
        losses = self.data.losses_train(targets, outputs, loss_fn, inputs, model, aux)
        if is_training_pass(model):
            self.last_losses = torch.stack([torch.as_tensor(v) for v in losses])
            self.last_losses = self.last_losses.detach().reshape(-1)
        return self._named(losses)

    def losses_test(self, targets, outputs, loss_fn, inputs, model, aux=None):
        return self._named(
            self.data.losses_test(targets, outputs, loss_fn, inputs, model, aux)
        )

    def _named(self, losses):
        if not self.names:
            self.names = term_names(self.data, len(losses))
        return losses

    @property
    def counts(self) -> dict[str, int]:
        return {
            k: len(v)
            for k in ("train_x", "test_x")
            if (v := getattr(self.data, k, None)) is not None
        }

    def describe_derivatives(self, net) -> str:
        return "nested autograd (DeepXDE)"

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        if state:
            raise ValueError(f"data holds {next(iter(state))!r}: no state of a run")


def term_names(data: Data, n: int) -> list[str]:
    """``pde`` (``pde1``, ... for several residuals) and ``bc1``, ... for
    ``dde.data.PDE``-like data (residuals first, then conditions); else ``loss1``, ...
    """
    bcs = len(getattr(data, "bcs", None) or ())
    if not hasattr(data, "bcs") or bcs > n:
        return [f"loss{i + 1}" for i in range(n)]
    pde = ["pde"] if n - bcs == 1 else [f"pde{i + 1}" for i in range(n - bcs)]
    return pde + [f"bc{i + 1}" for i in range(bcs)]
