"""Make sure DeepXDE runs on its PyTorch backend.

DeepXDE picks its backend once, at its first import, from ``DDE_BACKEND`` (or its
config file). ``dde.nn.NN`` is the torch base class only under ``pytorch``, so this
module must run before anything imports :mod:`deepxde`.

On its first import DeepXDE prints a banner to stderr ("Using backend: pytorch",
the other backends, a recommendation of paddle). The command line imports it
without the banner, in its own process and in its pool workers
(:func:`quiet_deepxde`); a user's ``import deepxde_lnn`` keeps DeepXDE's behaviour.
"""

import contextlib
import io
import os
import sys

REQUIRED = "pytorch"
# the command line, as a console script or a module (how a process is told apart)
COMMAND, COMMAND_MODULE = "deepxde-lnn", "deepxde_lnn.cli"
# set (to "1") while the command line runs: processes started meanwhile (pool
# workers inherit the environment) import DeepXDE quietly with deepxde_lnn
QUIET = "DEEPXDE_LNN_QUIET_IMPORT"


def on_import() -> None:
    """What importing the package does: :func:`ensure_pytorch_backend`. Its
    ``ImportError`` propagates (a traceback, as for any failed import), but in the
    command line's own process, which cannot catch what its own import raises: there
    it is one ``error:`` line and exit status 2, as for any bad input."""
    try:
        ensure_pytorch_backend()
    except ImportError as err:
        if not _is_command_line():
            raise
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def _is_command_line() -> bool:
    """Whether this process runs the command line: the ``deepxde-lnn`` script or
    ``python -m deepxde_lnn.cli`` (its original arguments)."""
    script = os.path.basename(sys.argv[0]) if sys.argv else ""
    if script.removesuffix(".exe") == COMMAND:
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b == COMMAND_MODULE for a, b in zip(argv, argv[1:]))


def ensure_pytorch_backend() -> None:
    """Select DeepXDE's pytorch backend, or fail if another one is already chosen."""
    if "deepxde" in sys.modules:
        from deepxde import backend

        if backend.backend_name != REQUIRED:
            raise ImportError(
                f"deepxde_lnn needs DeepXDE's '{REQUIRED}' backend, but DeepXDE is "
                f"already loaded with '{backend.backend_name}'. Set "
                f"DDE_BACKEND={REQUIRED} before importing deepxde."
            )
        return
    chosen = os.environ.get("DDE_BACKEND")
    if chosen is None:
        os.environ["DDE_BACKEND"] = REQUIRED
    elif chosen != REQUIRED:
        raise ImportError(
            f"deepxde_lnn needs DeepXDE's '{REQUIRED}' backend, but DDE_BACKEND="
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
