"""Which DeepXDE backend this process runs on, and what needs PyTorch's.

DeepXDE picks its backend once, at its first import, from ``DDE_BACKEND`` (or
``DDEBACKEND``), else its config file ``~/.deepxde/config.json``. Importing this
package respects that choice, and an already imported DeepXDE: the networks
(``deepxde_lnn.LNN`` and its kin) are the classes of the backend DeepXDE runs on.
Where nothing is chosen and PyTorch is installed it chooses ``pytorch``
(``DDE_BACKEND=pytorch`` in this process's environment), before anything imports
:mod:`deepxde`; without PyTorch, DeepXDE finds an installed backend as it does.

The engine (``compare``, ``run``, ``sweep``, ``ablate``, case files and the
command line) runs on PyTorch only: :func:`require_pytorch` stops it elsewhere
with one line, before anything is written. The command line's own process always
chooses ``pytorch`` (a ``DDE_BACKEND`` naming another one is an error there).

On its first import DeepXDE prints a banner to stderr ("Using backend: pytorch",
the other backends, a recommendation of paddle). The command line imports it
without the banner, in its own process and in its pool workers
(:func:`quiet_deepxde`); a user's ``import deepxde_lnn`` keeps DeepXDE's behaviour.
"""

import contextlib
import importlib.util
import io
import json
import os
import sys
from pathlib import Path

REQUIRED = "pytorch"
#: DeepXDE's backends, as ``DDE_BACKEND`` names them (DeepXDE refuses any other)
BACKENDS = ("tensorflow.compat.v1", "tensorflow", "pytorch", "jax", "paddle")
# the command line, as a console script or a module (how a process is told apart)
COMMAND, COMMAND_MODULE = "deepxde-lnn", "deepxde_lnn.cli"
# set (to "1") while the command line runs: processes started meanwhile (pool
# workers inherit the environment) import DeepXDE quietly with deepxde_lnn
QUIET = "DEEPXDE_LNN_QUIET_IMPORT"


def on_import() -> None:
    """What importing the package does. In the command line's process:
    :func:`ensure_pytorch_backend`, its ``ImportError`` as one ``error:`` line
    and exit status 2 (that process cannot catch what its own import raises).
    Elsewhere: the user's backend where one is chosen (:func:`chosen_backend`),
    else ``pytorch`` where PyTorch is installed (without it, DeepXDE finds an
    installed backend as it does)."""
    if _is_command_line():
        try:
            ensure_pytorch_backend()
        except ImportError as err:
            print(f"error: {err}", file=sys.stderr)
            raise SystemExit(2) from None
        return
    if chosen_backend() is None and torch_installed():
        os.environ["DDE_BACKEND"] = REQUIRED  # else DeepXDE finds one itself
    if os.environ.get(QUIET) == "1":
        import_deepxde_quietly()


def chosen_backend() -> str | None:
    """The backend DeepXDE runs on (already imported) or will choose, read as
    DeepXDE reads it (``DDE_BACKEND``, ``DDEBACKEND``, its config file), without
    importing it; None where nothing is chosen."""
    if "deepxde" in sys.modules:
        name = getattr(sys.modules.get("deepxde.backend"), "backend_name", None)
        if name is not None:
            return name
    for variable in ("DDE_BACKEND", "DDEBACKEND"):
        if variable in os.environ:
            return os.environ[variable]
    path = Path.home() / ".deepxde" / "config.json"
    try:
        return json.loads(path.read_text()).get("backend", "").lower()
    except (OSError, ValueError, AttributeError):
        return None  # no file (or one DeepXDE cannot read either)


def require_pytorch(what: str) -> None:
    """An ``ImportError`` in one line unless DeepXDE runs (or will run) on
    ``pytorch`` and PyTorch is installed: ``what`` (the engine's entry point)
    needs both."""
    require_torch(what)
    name = chosen_backend()
    if name is not None and name not in BACKENDS:
        raise ImportError(
            f"{what} runs on DeepXDE's '{REQUIRED}' backend, and {_unknown(name)}: "
            f"run it with DDE_BACKEND={REQUIRED}"
        )
    if name not in (None, REQUIRED):  # None: on_import chooses pytorch
        raise ImportError(
            f"{what} runs on DeepXDE's '{REQUIRED}' backend, and this process runs "
            f"'{name}': run it with DDE_BACKEND={REQUIRED} (deepxde_lnn.LNN, MLP, "
            "ReZero and LiquidBlock work on every backend)"
        )


def _unknown(name: str) -> str:
    """Says that the chosen backend ``name`` is none of DeepXDE's, and where it
    was chosen (as :func:`chosen_backend` reads it)."""
    where = next(
        (f"{v}={name!r}" for v in ("DDE_BACKEND", "DDEBACKEND") if v in os.environ),
        f"~/.deepxde/config.json's backend {name!r}",
    )
    return f"{where} is not one of DeepXDE's backends ({', '.join(BACKENDS)})"


def torch_installed() -> bool:
    """Whether PyTorch can be imported here (without importing it)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a broken or blocked installation
        return False


def require_torch(what: str) -> None:
    """An ``ImportError`` in one line where PyTorch is not installed (it is the
    ``torch`` extra)."""
    if not torch_installed():
        raise ImportError(
            f"{what} needs PyTorch, which is not installed: pip install "
            "'deepxde-lnn[torch]' (on a machine without a GPU, PyTorch's CPU build "
            "first: see PyTorch's install page)"
        )


def _is_command_line() -> bool:
    """Whether this process runs the command line: the ``deepxde-lnn`` script or
    ``python -m deepxde_lnn.cli`` (its original arguments)."""
    script = os.path.basename(sys.argv[0]) if sys.argv else ""
    if script.removesuffix(".exe") == COMMAND:
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b == COMMAND_MODULE for a, b in zip(argv, argv[1:]))


def ensure_pytorch_backend() -> None:
    """Select DeepXDE's pytorch backend (a config file naming another is
    overridden), or fail if another one is already chosen or loaded, or if
    PyTorch is not installed."""
    require_torch("the deepxde-lnn engine")
    if "deepxde" in sys.modules:
        from deepxde import backend

        if backend.backend_name != REQUIRED:
            raise ImportError(
                f"the deepxde-lnn engine needs DeepXDE's '{REQUIRED}' backend, but DeepXDE is "
                f"already loaded with '{backend.backend_name}'. Set "
                f"DDE_BACKEND={REQUIRED} before importing deepxde."
            )
        return
    chosen = os.environ.get("DDE_BACKEND")
    if chosen is None:
        os.environ["DDE_BACKEND"] = REQUIRED
    elif chosen not in BACKENDS:
        raise ImportError(
            f"the deepxde-lnn engine needs DeepXDE's '{REQUIRED}' backend, and "
            f"{_unknown(chosen)}. Unset it or set DDE_BACKEND={REQUIRED}."
        )
    elif chosen != REQUIRED:
        raise ImportError(
            f"the deepxde-lnn engine needs DeepXDE's '{REQUIRED}' backend, but DDE_BACKEND="
            f"'{chosen}'. Unset it or set DDE_BACKEND={REQUIRED}."
        )
    if os.environ.get(QUIET) == "1":
        import_deepxde_quietly()


def import_deepxde_quietly() -> None:
    """Import DeepXDE with what it prints on import (stdout and stderr) held back;
    it is shown only if the import fails."""
    if "deepxde" in sys.modules:
        return
    held = io.StringIO()
    try:
        with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
            import deepxde  # noqa: F401
    except BaseException:
        sys.stderr.write(held.getvalue())
        raise


@contextlib.contextmanager
def quiet_deepxde(now: bool = True):
    """For the command line: DeepXDE imported without its banner here (``now``,
    else when a module of this package first needs it) and in the processes
    started meanwhile (they import it with deepxde_lnn, see
    :func:`ensure_pytorch_backend`); the environment is restored afterwards."""
    before = os.environ.get(QUIET)
    os.environ[QUIET] = "1"
    try:
        if now:
            import_deepxde_quietly()
        yield
    finally:
        if before is None:
            os.environ.pop(QUIET, None)
        else:
            os.environ[QUIET] = before
