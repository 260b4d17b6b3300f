"""Per-step bookkeeping inside ``dde.Model.train``: the loss log, the NaN stop,
periodic checkpoints, SIGINT/SIGTERM, progress output and the training clocks
(wall and process CPU time)."""

from __future__ import annotations

import contextlib
import sys
import time

import deepxde as dde
import numpy as np
import torch

from .signals import handling

__all__ = ["Controller", "Signals", "sync"]


def sync() -> None:
    """Wait for queued GPU work (so wall-clock timings cover it)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


class Signals:
    """While active, SIGINT/SIGTERM only set ``received`` (the run stops at a point
    where its folder is consistent) instead of raising inside a write."""

    def __init__(self):
        self.received = False

    @contextlib.contextmanager
    def deferred(self):
        def handler(signum, frame):
            self.received = True

        with handling(handler):
            yield self


class Controller(dde.callbacks.Callback):
    """Logs every step's per-term losses of each run (moved to host every
    ``FLUSH`` steps), takes a run with a non-finite loss out (``drop(positions,
    step)``, while others remain; training stops when none does), checkpoints every
    ``checkpoint_every`` steps through ``save(step, tables, seconds,
    cpu_seconds)``, stops with a checkpoint when a signal arrived, stops when a time ``budget`` (training
    seconds) is spent, and reports progress (a tqdm bar, or a line every
    ``log_every`` steps, or nothing) out of ``shown_total`` steps (default
    ``total``, the step this phase ends at).

    ``runs``: the labels of the runs in the data's order; ``data.last_losses`` is
    (T,) for one run, (K, T) for K runs trained together.
    """

    FLUSH = 100
    BUDGET_EVERY = 10  # steps between checks of a time budget

    def __init__(
        self,
        data,
        start,
        total,
        checkpoint_every,
        save,
        signals,
        progress,
        budget: float | None = None,
        shown_total: int | None = None,
        runs=(0,),
        drop=None,
    ):
        super().__init__()
        self.budget, self.out_of_time = budget, False
        self.data, self.step, self.total = data, start, total
        self.checkpoint_every, self.save, self.signals = checkpoint_every, save, signals
        self.live = list(runs)
        self.rows: dict = {r: [] for r in runs}
        self.diverged: dict = {}  # run -> first step with a non-finite loss
        self.drop = drop
        self._pending: list[torch.Tensor] = []
        self.io_seconds = self.io_cpu_seconds = 0.0
        self.t0: float | None = None  # wall and CPU clocks at the train's begin
        self.t1: float | None = None  # and end
        self.c0: float | None = None
        self.c1: float | None = None
        self.progress = progress
        shown = total if shown_total is None else shown_total
        self.bar = progress.bar(start, shown) if progress is not None else None

    @property
    def interrupted(self) -> bool:
        return self.signals.received

    @property
    def diverged_at(self) -> int | None:
        """The first divergence, if a run diverged."""
        return min(self.diverged.values(), default=None)

    def on_train_begin(self):
        sync()
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def on_train_end(self):
        sync()
        self.t1, self.c1 = time.perf_counter(), time.process_time()
        self.flush()
        if self.bar is not None:
            self.bar.close()

    def on_batch_end(self):
        self.step += 1
        self._pending.append(self.data.last_losses)
        if self.budget is not None and self.step % self.BUDGET_EVERY == 0:
            sync()
            if self.elapsed() >= self.budget:
                self.out_of_time = True
                self.model.stop_training = True
        if self.step % self.FLUSH == 0 and not self.flush():
            return
        if self.interrupted:
            if self.flush():
                self._checkpoint()
            self.model.stop_training = True
        elif self.step % self.checkpoint_every == 0 and self.step < self.total:
            if self.flush():
                self._checkpoint()

    def flush(self) -> bool:
        """Move pending losses to host; a run whose loss is not finite stops there
        and leaves. Whether any run is left."""
        if not self._pending:
            return bool(self.live)
        losses = torch.stack(self._pending).cpu().numpy().astype(np.float64)
        losses = losses.reshape(len(losses), len(self.live), -1)  # (S, K, T)
        first = self.step - len(losses) + 1
        self._pending = []
        steps = np.arange(first, first + len(losses))
        bad = []
        for pos, run in enumerate(self.live):
            ok = np.isfinite(losses[:, pos]).all(axis=1)
            n = len(losses) if ok.all() else int(np.argmin(ok))
            good = losses[:n, pos]
            self.rows[run].append(np.column_stack([steps[:n], good.sum(1), good]))
            if n < len(losses):
                self.diverged[run] = first + n
                bad.append(pos)
        if len(bad) == len(self.live):
            self.model.stop_training = True
        elif bad:
            self.drop(bad, self.step)
        last = [losses[-1, p].sum() for p in range(len(self.live)) if p not in bad]
        self.live = [r for p, r in enumerate(self.live) if p not in bad]
        if self.bar is not None and last:
            self.bar.update(int(steps[-1]), float(np.mean(last)), self.elapsed())
        return bool(self.live)

    def _checkpoint(self):
        t, c = time.perf_counter(), time.process_time()
        tables = {r: self.table(r) for r in self.live}
        self.save(self.step, tables, self.elapsed(), self.cpu_elapsed())
        self.io_seconds += time.perf_counter() - t
        self.io_cpu_seconds += time.process_time() - c

    def elapsed(self) -> float:
        """Wall seconds of training so far (checkpoint writing excluded)."""
        end = self.t1 if self.t1 is not None else time.perf_counter()
        assert self.t0 is not None  # the train has begun
        return end - self.t0 - self.io_seconds

    def cpu_elapsed(self) -> float:
        """This process's CPU seconds (all threads) over :meth:`elapsed`."""
        end = self.c1 if self.c1 is not None else time.process_time()
        assert self.c0 is not None  # the train has begun
        return end - self.c0 - self.io_cpu_seconds

    def table(self, run=0) -> np.ndarray:
        """Run ``run``'s rows ``[step, total, *terms]`` logged so far."""
        rows = self.rows.get(run)
        return np.vstack(rows) if rows else np.zeros((0, 0))


class Progress:
    """How a run reports progress: ``"bar"`` (tqdm, for a terminal), ``"lines"``
    (one line every ``every`` steps on stderr, for logs) or ``"off"``."""

    def __init__(self, mode: str, label: str, every: int = 1000):
        if mode not in ("bar", "lines", "off"):
            raise ValueError(f"progress must be 'bar', 'lines' or 'off', got {mode!r}")
        self.mode, self.label, self.every = mode, label, every

    @classmethod
    def auto(cls, label: str, enabled: bool = True) -> "Progress":
        """A bar on a terminal, lines in a pipe or log file, nothing if disabled."""
        if not enabled:
            return cls("off", label)
        return cls("bar" if sys.stderr.isatty() else "lines", label)

    def bar(self, start: int, total: int):
        if self.mode == "bar":
            return _Bar(self.label, start, total)
        if self.mode == "lines" and total - start > self.every:
            return _Lines(self.label, start, total, self.every)
        return None


class _Bar:
    def __init__(self, label, start, total):
        from tqdm.auto import tqdm

        self.tqdm = tqdm(
            total=total, initial=start, unit="step", mininterval=1.0, desc=label
        )

    def update(self, step, loss, seconds):
        self.tqdm.n = step
        self.tqdm.set_postfix(loss=f"{loss:.3e}", refresh=False)
        self.tqdm.refresh()

    def close(self):
        self.tqdm.close()


class _Lines:
    def __init__(self, label, start, total, every):
        self.label, self.start, self.total, self.every = label, start, total, every
        self.next = (start // every + 1) * every

    def update(self, step, loss, seconds):
        if step >= self.next and step < self.total:
            rate = (step - self.start) / max(seconds, 1e-9)
            print(
                f"{self.label}: step {step}/{self.total}, loss {loss:.3e}, "
                f"{rate:.1f} steps/s",
                file=sys.stderr,
                flush=True,
            )
            self.next = (step // self.every + 1) * self.every

    def close(self):
        pass
