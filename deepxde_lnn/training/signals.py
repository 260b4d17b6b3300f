"""Signal handlers for a block of code (no heavy imports: the CLI uses this before
it loads DeepXDE)."""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["handling", "sigterm_as_interrupt"]


@contextlib.contextmanager
def handling(handler, signals=(signal.SIGINT, signal.SIGTERM)):
    """``handler`` for ``signals`` inside the block, the previous ones after it;
    nothing outside the main thread (e.g. a Dask worker thread: signals reach the
    main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in signals}
    for s in signals:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Inside the block SIGTERM acts as Ctrl-C does (``KeyboardInterrupt``), so a
    command stopped by either exits the same way (status 130)."""
    with handling(_interrupt, (signal.SIGTERM,)):
        yield


def ignore_further() -> None:
    """From now on SIGINT and SIGTERM are ignored (main thread only): a command
    that is already stopping on one (its folders checkpointed, its exit status
    130) is not killed by a second Ctrl-C while it shuts down."""
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
