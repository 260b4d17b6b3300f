"""Train one (case, method, seed) job and write its result folder.

One run = one :class:`RunConfig` in, one folder of plain files out::

    metrics.json   configuration, timings, versions, per-field metrics
    loss.csv       step, total and every term's loss at every step
    fields.npz     evaluation grid, exact, prediction, |error|
    *.png          exact / prediction / |error| maps and the loss history
    model.pt       final network state_dict
    checkpoint.pt  only while a run is unfinished (interrupted or diverged)

Protocol (SPEC 1.2): Adam with library defaults at constant lr, one full batch per
step, every point set redrawn each step, final iterate reported. Timing covers the
training loop only (checkpoint I/O excluded).
"""

from __future__ import annotations

import io
import platform
import random
import signal
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from ._backend import ensure_pytorch_backend

ensure_pytorch_backend()

import deepxde as dde  # noqa: E402
import torch  # noqa: E402

from . import io as aio  # noqa: E402
from .case import Case  # noqa: E402
from .data import ResampledPDE  # noqa: E402
from .methods import METHODS, build_net  # noqa: E402
from .metrics import all_fields  # noqa: E402

__all__ = ["RunConfig", "run", "RunInterrupted", "TrainingDiverged"]

PROFILES = ("quick", "paper")
DTYPES = ("float32", "float64")


class RunInterrupted(RuntimeError):
    """Training stopped by SIGINT/SIGTERM; a checkpoint was saved."""


class TrainingDiverged(RuntimeError):
    """A non-finite loss appeared; the last good checkpoint is kept."""


@dataclass(frozen=True)
class RunConfig:
    """One training job. ``None`` fields take the profile's value."""

    case: str
    method: str = "lnn"
    seed: int | None = None
    lr: float | None = None
    iterations: int | None = None
    profile: str = "quick"
    dtype: str = "float32"
    checkpoint_every: int = 1000

    def resolved(self, case: Case | None = None) -> RunConfig:
        """Validate every field (ValueError naming it) and fill profile defaults."""
        if case is None:
            import cases

            case = cases.get(self.case)
        if self.method not in METHODS:
            raise ValueError(
                f"method must be one of {', '.join(METHODS)}; got {self.method!r}"
            )
        if self.profile not in PROFILES:
            raise ValueError(
                f"profile must be one of {', '.join(PROFILES)}; got {self.profile!r}"
            )
        if self.dtype not in DTYPES:
            raise ValueError(
                f"dtype must be one of {', '.join(DTYPES)}; got {self.dtype!r}"
            )
        prof = case.profile(self.profile)
        seed = prof.seed if self.seed is None else self.seed
        lr = prof.lr if self.lr is None else self.lr
        iterations = prof.iterations if self.iterations is None else self.iterations
        _check_int(seed, "seed", minimum=0)
        _check_int(iterations, "iterations", minimum=1)
        _check_int(self.checkpoint_every, "checkpoint_every", minimum=1)
        if (
            isinstance(lr, bool)
            or not isinstance(lr, (int, float))
            or not np.isfinite(lr)
            or lr <= 0
        ):
            raise ValueError(f"lr must be a finite number > 0; got {lr!r}")
        return replace(self, seed=int(seed), lr=float(lr), iterations=int(iterations))


def _check_int(value, name: str, minimum: int) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < minimum
    ):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")


class _Controller(dde.callbacks.Callback):
    """Per-step bookkeeping inside ``model.train``: loss log, NaN stop,
    periodic checkpoints, SIGINT/SIGTERM, progress bar and the train clock."""

    FLUSH = 100

    def __init__(self, data, start_step, total, checkpoint_every, save, progress):
        super().__init__()
        self.data, self.step, self.total = data, start_step, total
        self.checkpoint_every, self.save = checkpoint_every, save
        self.rows: list[np.ndarray] = []
        self._pending: list[torch.Tensor] = []
        self.diverged_at: int | None = None
        self.interrupted = False
        self.io_seconds = 0.0
        self.t0 = self.t1 = None
        self.bar = None
        if progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=total, initial=start_step, unit="step", mininterval=1.0
            )

    def on_train_begin(self):
        _sync()
        self.t0 = time.perf_counter()

    def on_train_end(self):
        _sync()
        self.t1 = time.perf_counter()
        self.flush()
        if self.bar is not None:
            self.bar.close()

    def on_batch_end(self):
        self.step += 1
        self._pending.append(self.data.last_losses)
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
        """Move pending losses to host; stop on the first non-finite one."""
        if not self._pending:
            return self.diverged_at is None
        losses = torch.stack(self._pending).cpu().numpy().astype(np.float64)
        first = self.step - len(losses) + 1
        self._pending = []
        bad = ~np.isfinite(losses).all(axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            losses = losses[:k]
            self.diverged_at = first + k
            self.model.stop_training = True
        steps = np.arange(first, first + len(losses))
        self.rows.append(np.column_stack([steps, losses.sum(1), losses]))
        if self.bar is not None and len(losses):
            self.bar.n = int(steps[-1])
            self.bar.set_postfix(loss=f"{losses[-1].sum():.3e}", refresh=False)
            self.bar.refresh()
        return self.diverged_at is None

    def _checkpoint(self):
        t = time.perf_counter()
        self.save(self.step, self.table(), self.elapsed())
        self.io_seconds += time.perf_counter() - t

    def elapsed(self) -> float:
        end = self.t1 if self.t1 is not None else time.perf_counter()
        return end - self.t0 - self.io_seconds

    def table(self) -> np.ndarray:
        return np.vstack(self.rows) if self.rows else np.zeros((0, 0))


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _versions() -> dict:
    import scipy

    from . import __version__

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "deepxde": dde.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "deepxde_lnn": __version__,
    }


def _device() -> dict:
    dev = torch.get_default_device() if hasattr(torch, "get_default_device") else None
    if torch.cuda.is_available():
        return {"device": "cuda", "device_name": torch.cuda.get_device_name()}
    return {
        "device": str(dev or "cpu"),
        "device_name": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
    }


def _rng_state(data: ResampledPDE) -> dict:
    return {
        "sampling": data.rng_state_before_draw,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "numpy": np.random.get_state(),
        "python": random.getstate(),
    }


def _set_rng_state(data: ResampledPDE, state: dict) -> None:
    data.rng.bit_generator.state = state["sampling"]
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and torch.cuda.is_available():
        try:
            torch.cuda.set_rng_state_all(state["cuda"])
        except RuntimeError:  # a different GPU count: sampling does not use it
            pass
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])


def predict(net, x: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Evaluate ``net`` in eval mode without gradients, in chunks, as float64."""
    net.eval()
    dtype = dde.config.real(torch)
    dev = next(net.parameters()).device
    outs = []
    with torch.no_grad():
        for a in range(0, len(x), chunk):
            xb = torch.as_tensor(x[a : a + chunk], dtype=dtype, device=dev)
            outs.append(net(xb).double().cpu().numpy())
    return np.vstack(outs)


def run(
    config: RunConfig,
    out: str | Path,
    *,
    resume: bool = False,
    progress: bool = False,
    case: Case | None = None,
    callbacks=(),
    figures: bool = True,
) -> dict:
    """Train one job into the folder ``out`` and return its ``metrics.json`` record.

    Raises ``ValueError`` (bad configuration, nothing written), ``RunInterrupted``
    (checkpoint saved) or ``TrainingDiverged`` (last good checkpoint kept).
    """
    if case is None:
        import cases

        case = cases.get(config.case)
    cfg = config.resolved(case)
    out = Path(out)
    ckpt_path = out / "checkpoint.pt"
    state = None
    if resume:
        if not ckpt_path.exists():
            raise ValueError(f"--resume: no checkpoint in {out}")
        # map to CPU: a checkpoint made on a GPU resumes anywhere (load_state_dict
        # copies onto the parameters' device; RNG states must be CPU tensors)
        state = torch.load(ckpt_path, map_location="cpu", weights_only=False)
        if state["config"] != asdict(cfg):
            raise ValueError(
                f"--resume: the checkpoint in {out} was made with {state['config']}, "
                f"not {asdict(cfg)}"
            )
    elif ckpt_path.exists():
        raise ValueError(
            f"out: {out} holds an unfinished run's checkpoint; pass --resume to "
            "continue it or choose another folder"
        )

    dde.config.set_default_float(cfg.dtype)
    dde.config.set_random_seed(cfg.seed)
    profile = replace(case.profile(cfg.profile), iterations=cfg.iterations)
    data = ResampledPDE(case.make_terms(profile), seed=cfg.seed)
    net = build_net(cfg.method, case)
    model = dde.Model(data, net)
    model.compile("adam", lr=cfg.lr)
    start, prior_rows, prior_seconds = 0, None, 0.0
    if state is not None:
        net.load_state_dict(state["net"])
        model.opt.load_state_dict(state["opt"])
        _set_rng_state(data, state["rng"])
        start, prior_rows, prior_seconds = (
            state["step"],
            state["loss"],
            state["seconds"],
        )

    def save_checkpoint(step, rows, seconds):
        table = rows if prior_rows is None else np.vstack([prior_rows, rows])
        buf = io.BytesIO()
        torch.save(
            {
                "config": asdict(cfg),
                "step": step,
                "net": net.state_dict(),
                "opt": model.opt.state_dict(),
                "rng": _rng_state(data),
                "loss": table,
                "seconds": prior_seconds + seconds,
            },
            buf,
        )
        aio.atomic_write_bytes(ckpt_path, buf.getvalue())

    ctl = _Controller(
        data, start, cfg.iterations, cfg.checkpoint_every, save_checkpoint, progress
    )
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def on_signal(signum, frame):
        ctl.interrupted = True

    for s in previous:
        signal.signal(s, on_signal)
    try:
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        model.train(
            iterations=cfg.iterations - start,
            display_every=profile.display_every,
            callbacks=[ctl, *callbacks],
            verbose=0,
        )
    finally:
        for s, h in previous.items():
            signal.signal(s, h)

    rows = ctl.table()
    loss = rows if prior_rows is None else np.vstack([prior_rows, rows])
    out.mkdir(parents=True, exist_ok=True)
    _write_loss(out / "loss.csv", loss, data.names)
    if ctl.diverged_at is not None:
        raise TrainingDiverged(
            f"non-finite loss at step {ctl.diverged_at}; stopped. The last good "
            f"checkpoint (if any) is kept in {ckpt_path}"
        )
    if ctl.interrupted and ctl.step < cfg.iterations:
        raise RunInterrupted(
            f"interrupted at step {ctl.step}; checkpoint saved in {ckpt_path}. "
            "Rerun the same command with --resume to continue."
        )

    train_seconds = prior_seconds + ctl.elapsed()
    x, keep = case.grid.points(profile.grid_n)
    exact = case.exact(x)
    pred = predict(net, x)
    record = {
        "case": case.name,
        "method": cfg.method,
        "seed": cfg.seed,
        "lr": cfg.lr,
        "iterations": cfg.iterations,
        "profile": cfg.profile,
        "dtype": cfg.dtype,
        **_device(),
        "parameters": net.num_trainable_parameters(),
        "train_seconds": train_seconds,
        "seconds_per_iteration": train_seconds / cfg.iterations,
        "peak_gpu_memory_bytes": (
            torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
        ),
        "resumed": state is not None,
        "counts": {t.name: t.n for t in data.terms},
        "initialization": "torch-default",
        "optimizer": "adam (torch defaults), constant lr, final iterate",
        "resampling": "every set redrawn every step (i.i.d. uniform)",
        "final_loss": dict(zip(["total", *data.names], map(float, loss[-1, 1:]))),
        "grid_points": int(len(x)),
        "fields": list(case.fields),
        "metrics": all_fields(pred, exact, case.fields),
        "versions": _versions(),
        "command": " ".join(sys.argv),
    }
    if case.extra_metrics is not None:
        record["extra_metrics"] = case.extra_metrics(x, pred, exact)
    for label, n in case.extra_grids.items():  # e.g. the paper's other grid sizes
        xg, _ = case.grid.points(n)
        record.setdefault("extra_grid_metrics", {})[label] = all_fields(
            predict(net, xg), case.exact(xg), case.fields
        )
    aio.save_npz(
        out / "fields.npz",
        x=x,
        exact=exact,
        pred=pred,
        abs_error=np.abs(pred - exact),
        mask=keep.reshape([len(a) for a in case.grid.axes(profile.grid_n)]),
        axes=np.array(case.grid.axes(profile.grid_n)),
        inputs=np.array(case.inputs),
        fields=np.array(case.fields),
    )
    buf = io.BytesIO()
    torch.save(net.state_dict(), buf)
    aio.atomic_write_bytes(out / "model.pt", buf.getvalue())
    aio.write_json(out / "metrics.json", record)
    if figures:
        from .report import run_figures

        run_figures(out)
    if ckpt_path.exists():
        ckpt_path.unlink()
    return record


def _write_loss(path: Path, table: np.ndarray, names) -> None:
    buf = io.StringIO()
    header = ",".join(["step", "total", *names])
    if table.size:
        np.savetxt(buf, table, delimiter=",", header=header, comments="", fmt="%.10g")
    else:
        buf.write(header + "\n")
    aio.atomic_write_text(path, buf.getvalue())
