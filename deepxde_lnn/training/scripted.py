"""One run of a :class:`~deepxde_lnn.problems.scripted.ScriptedProblem`: the
user's ``train(net)`` trains the network its way; this seeds it, times it,
records what the model did and scores it.

The run folder holds what a managed run's holds (``metrics.json``, ``loss.csv``,
``fields.npz``, ``model.pt``), with ``variables.csv`` (the external trainable
variables at every logged step) for a model that has them:

* ``loss.csv``: DeepXDE's loss history as the model logged it (every
  ``display_every`` steps and each phase's last; with loss weights, the weighted
  terms, as DeepXDE logs them);
* scored on the model's test inputs against their solution (``reference`` where
  given), on the final iterate or (``score="best"``) DeepXDE's best model: the
  test predictions at the logged step of lowest training loss;
* ``train.log``: what the function printed (DeepXDE's tables and messages);
* no checkpoint: a run stopped by a signal is discarded and trained again by the
  next call (the function's training is not the package's to resume).

Seeding: ``dde.config.set_random_seed(seed)`` before the network is built, as a
script that calls it first: the same seed gives the same loss history.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import time
from pathlib import Path

import deepxde as dde
import numpy as np
import torch

from ..config import RunConfig
from ..problems.custom import term_names
from ..problems.metrics import all_fields, field_metrics
from ..problems.scripted import ScriptedProblem, output_count
from ..runs import atomic
from ..runs.folder import RunFolder
from ..runs.provenance import device_info, versions
from .artifacts import write_loss
from .controller import Signals
from .job import kept_float, quiet_float
from .outcome import Outcome
from .record import describe

__all__ = ["run_scripted", "Recorder", "LOG"]

LOG = "train.log"  # what the user's function printed


class Recorder(dde.callbacks.Callback):
    """Keeps the external trainable variables at every step the model logs its
    losses, and stops the training when a signal arrived."""

    def __init__(self, trace: list, signals: Signals):
        super().__init__()
        self.trace, self.signals = trace, signals

    def _record(self):
        history, model = self.model.losshistory, self.model
        if len(history.steps) > len(self.trace):
            values = [float(v.detach()) for v in model.external_trainable_variables]
            self.trace.append((history.steps[-1], values))

    def on_train_begin(self):
        self._record()

    def on_epoch_end(self):
        self._record()
        if self.signals.received:
            self.model.stop_training = True

    def on_train_end(self):
        self._record()


@contextlib.contextmanager
def recording(trace: list, signals: Signals):
    """While the user's function runs: every ``Model.train`` call gets a
    :class:`Recorder` after the function's own callbacks."""
    train = dde.Model.train
    params = inspect.signature(train)

    def recorded(self, *args, **kwargs):
        bound = params.bind(self, *args, **kwargs)
        given = bound.arguments.get("callbacks") or []
        bound.arguments["callbacks"] = [*given, Recorder(trace, signals)]
        return train(*bound.args, **bound.kwargs)

    dde.Model.train = recorded
    try:
        yield
    finally:
        dde.Model.train = train


def run_scripted(
    config: RunConfig,
    out: str | Path,
    *,
    case: ScriptedProblem,
    overwrite: bool = False,
    on_done=None,
) -> Outcome:
    """Train one run of ``case`` (``case.train(net)``) into ``out``; a finished
    run of the same configuration there is reused. ValueError naming ``train``
    or ``reference`` when the model cannot be scored."""
    cfg = config.resolved(case)
    folder = RunFolder(out)
    folder.prepare()
    signals = Signals()
    with folder.locked(), folder.writing():
        done = None if overwrite else folder.finished(cfg.identity(), cfg.identity_of)
        if done is not None:
            outcome = Outcome(cfg, folder.path, "done", done)
        else:
            with kept_float():
                outcome = _train(cfg, folder, case, signals)
        if outcome.status == "done" and on_done is not None:
            on_done(folder.path)
    return outcome


def _train(cfg: RunConfig, folder: RunFolder, case: ScriptedProblem, signals):
    quiet_float(cfg.dtype)
    dde.config.set_random_seed(cfg.seed)
    net = case.build_net(cfg.method)
    trace: list = []
    printed = io.StringIO()  # what the function prints goes to train.log
    with signals.deferred(), recording(trace, signals):
        with contextlib.redirect_stdout(printed):
            start = time.perf_counter()
            model = _called(case.train, net, "train")
            seconds = time.perf_counter() - start
    atomic.atomic_write_text(folder.path / LOG, printed.getvalue())
    _check_model(model, net)
    if signals.received:
        msg = (
            "interrupted; a run trained by your function keeps no checkpoint: "
            "rerun the same command to train it again"
        )
        return Outcome(cfg, folder.path, "interrupted", message=msg)
    table, names = _loss_table(model)
    if not np.isfinite(table[-1, 1]):
        write_loss(folder.path / "loss.csv", table, names)
        msg = f"non-finite loss at step {int(table[-1, 0])}; stopped"
        return Outcome(cfg, folder.path, "diverged", message=msg)
    x, exact, pred = _scored(model, case, cfg.score)
    fields = _fields(case, net, exact)
    exact, pred = exact.reshape(-1, len(fields)), pred.reshape(-1, len(fields))
    x = _rows(x, len(exact))
    record = _record(cfg, case, model, net, seconds, table, names, exact)
    record["fields"] = list(fields)
    record["metrics"] = all_fields(pred, exact, fields)
    record.update(_variables(case, model))
    _write(folder, case, model, table, names, trace, record, x, exact, pred, fields)
    return Outcome(cfg, folder.path, "done", record)


def _check_model(model, net) -> None:
    if not isinstance(model, dde.Model):
        raise ValueError(
            f"train: the function returned {type(model).__name__}, not the "
            "trained dde.Model"
        )
    if model.net is not net:
        raise ValueError(
            "train: the returned model trains another network than the one the "
            "function was given; build the dde.Model with it"
        )
    if not model.losshistory.steps or model.train_state.step == 0:
        raise ValueError("train: the function returned a model that never trained")


def _loss_table(model) -> tuple[np.ndarray, list[str]]:
    """DeepXDE's loss history: step, total, each term (training losses)."""
    history = model.losshistory
    terms = np.array([np.ravel(v) for v in history.loss_train], dtype=np.float64)
    steps = np.asarray(history.steps, dtype=np.float64)[:, None]
    table = np.hstack([steps, terms.sum(1, keepdims=True), terms])
    return table, term_names(model.data, terms.shape[1])


def _scored(model, case: ScriptedProblem, score: str):
    """``(x, exact, pred)``: the scoring inputs (as stored: the trunk points for
    DeepONet's tuple), the reference and the prediction, float64."""
    if isinstance(case.reference, tuple):
        x, exact = case.reference
        if score == "best":
            raise ValueError(
                "score: 'best' is DeepXDE's best model on the model's test data; "
                "with reference=(X, Y) arrays pass score='final'"
            )
    else:
        x, exact = model.data.test()[:2]
        if case.reference is not None:
            exact = _called(case.reference, x, "reference")
        if exact is None:
            raise ValueError(
                "reference: the model's test data has no solution to score "
                "against; pass reference=(X, Y) or a function Y = reference(X)"
            )
    if score == "best":
        pred = model.train_state.best_y
    else:
        pred = model.predict(x)
    pred = np.asarray(pred, dtype=np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    if pred.size != exact.size:
        raise ValueError(
            f"reference: the network gives {pred.size} values on the scoring "
            f"inputs, the reference {exact.size}"
        )
    points = x[-1] if isinstance(x, (tuple, list)) else x
    return np.asarray(points, dtype=np.float64), exact, pred


def _rows(x: np.ndarray, rows: int) -> np.ndarray:
    """The scoring points, one row per scored value: DeepONet's trunk points
    repeated for every function (its predictions are function-major)."""
    x = x.reshape(len(x), -1)
    if len(x) == rows:
        return x
    if len(x) and rows % len(x) == 0:
        return np.tile(x, (rows // len(x), 1))
    raise ValueError(
        f"reference: {rows} scored values do not fit {len(x)} input points"
    )


def _called(func, arg, what: str):
    """``func(arg)``; its exception as a ValueError naming ``what``."""
    try:
        return func(arg)
    except Exception as err:
        raise ValueError(f"{what} raised {type(err).__name__}: {err}") from err


def _fields(case: ScriptedProblem, net, exact: np.ndarray) -> tuple[str, ...]:
    k = output_count(net)
    if k is None:
        k = exact.shape[-1] if exact.ndim == 2 and case.outputs is None else 1
    return case.fields if len(case.fields) == k else _names(k)


def _names(k: int) -> tuple[str, ...]:
    return ("u",) if k == 1 else tuple(f"u{i + 1}" for i in range(k))


def _record(cfg, case, model, net, seconds, table, names, exact) -> dict:
    steps = int(model.train_state.step)
    return {
        **cfg.identity(),
        **device_info(),
        "parameters": sum(p.numel() for p in net.parameters() if p.requires_grad),
        "budget": "script",
        "grid_points": int(len(exact)),
        "steps": steps,
        "train_seconds": seconds,
        "seconds_per_iteration": seconds / max(steps, 1),
        "training": f"{getattr(case.train, '__qualname__', 'train')}(net)",
        "network": describe(net),
        "optimizer": f"{_optimizer(model)}, "
        + ("DeepXDE's best model" if cfg.score == "best" else "final iterate"),
        "final_loss": dict(zip(["total", *names], map(float, table[-1, 1:]))),
        "versions": versions(),
    }


def _optimizer(model) -> str:
    opt = getattr(model, "opt", None)
    if not isinstance(opt, torch.optim.Optimizer):
        return str(getattr(model, "opt_name", "unknown"))
    lr = opt.param_groups[0].get("lr")
    return f"{type(opt).__name__} (last compile), lr {lr:g}"


def _variables(case: ScriptedProblem, model) -> dict:
    """The learned external variables (their trajectory goes to
    ``variables.csv``) and, with true values, their errors as metric sets beside
    the fields' (``extra_metrics``: summarised and judged like a field)."""
    found = model.external_trainable_variables
    if not found:
        if case.true_values:
            raise ValueError(
                "true_values: the model has no external trainable variables "
                "(compile(..., external_trainable_variables=...))"
            )
        return {}
    names = case.variable_names(len(found))
    final = [float(v.detach()) for v in found]
    out = {"variables": {n: {"final": v} for n, v in zip(names, final)}}
    for n, v, true in zip(names, final, case.true_values):
        out["variables"][n].update(true=true, relative_error=_relative(v, true))
        error = field_metrics(np.array([v]), np.array([true]))
        out.setdefault("extra_metrics", {})[n] = error
    return out


def _relative(value: float, true: float) -> float:
    return abs(value - true) / abs(true) if true else abs(value)


def _write(folder, case, model, table, names, trace, record, x, exact, pred, fields):
    path = folder.path
    write_loss(path / "loss.csv", table, names)
    if trace:
        variables = list(record.get("variables", ()))
        rows = np.array([[step, *values] for step, values in trace], np.float64)
        _write_table(path / "variables.csv", rows, ["step", *variables])
    atomic.save_npz(
        path / "fields.npz",
        x=x,
        exact=exact,
        pred=pred,
        abs_error=np.abs(pred - exact),
        mask=np.ones(len(exact), bool),
        axes=np.array(()),
        inputs=np.array(case.inputs or _inputs(x)),
        fields=np.array(fields),
    )
    buf = io.BytesIO()
    torch.save(model.net.state_dict(), buf)
    atomic.atomic_write_bytes(path / "model.pt", buf.getvalue())
    atomic.write_json(folder.metrics, record)


def _inputs(x: np.ndarray) -> tuple[str, ...]:
    d = x.shape[1] if x.ndim == 2 else 1
    return ("x",) if d == 1 else tuple(f"x{i + 1}" for i in range(d))


def _write_table(path: Path, rows: np.ndarray, header: list[str]) -> None:
    buf = io.StringIO()
    np.savetxt(
        buf, rows, delimiter=",", header=",".join(header), comments="", fmt="%.10g"
    )
    atomic.atomic_write_text(path, buf.getvalue())
