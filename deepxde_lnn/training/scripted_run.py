"""One run of a :class:`~deepxde_lnn.problems.scripted_problem.ScriptedProblem`: the
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
* ``files/``: where the files DeepXDE writes for the function by a relative
  path land (``ModelCheckpoint("ckpt/model")``, whose folder is created,
  ``VariableValue(..., filename=...)``, ``model.save``, ``dde.saveplot``); the
  function itself runs in the directory it was launched from, and reads its
  data files there (:mod:`~deepxde_lnn.problems.user_files`);
* where the data has no solution and no ``reference`` is given, the fields are
  the unknowns themselves (``true_values``), one value each;
* no checkpoint: a run stopped by a signal is discarded and trained again by the
  next call (the function's training is not the package's to resume).

Seeding: ``dde.config.set_random_seed(seed)`` before the network is built, as a
script that calls it first: the same seed gives the same loss history.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import time
from pathlib import Path

import deepxde as dde
import numpy as np
import torch

from ..checks import is_number
from ..config import RunConfig
from ..networks.compiled import usable_cache
from ..problems.deepxde_problem import term_names
from ..problems.metrics import all_fields, field_metrics
from ..problems.scripted_problem import UNKNOWNS, ScriptedProblem, intercepted
from ..problems.user_files import working_in, writing_to
from ..runs import atomic
from ..runs.cost import load_average, timing_fields
from ..runs.folder import LOG, VARIABLES, RunFolder
from ..runs.names import LOSS
from ..runs.provenance import device_info, versions
from .artifacts import write_fields, write_loss, write_model
from .controller import Signals
from .outcome import Outcome
from .run_record import describe
from .stack import kept_float, quiet_float

__all__ = ["run_scripted", "Recorder", "LOG", "FILES", "VARIABLES", "unknowns"]

FILES = "files"  # where DeepXDE's files for the user's function land


class Recorder(dde.callbacks.Callback):
    """Keeps the unknowns (the entries of the external trainable variables) at
    every step the model logs its losses, and stops the training when a signal
    arrived."""

    def __init__(self, trace: list, signals: Signals):
        super().__init__()
        self.trace, self.signals = trace, signals

    def _record(self):
        history, model = self.model.losshistory, self.model
        if len(history.steps) > len(self.trace):
            self.trace.append((history.steps[-1], unknowns(model)))

    def on_train_begin(self):
        self._record()

    def on_epoch_end(self):
        self._record()
        if self.signals.received:
            self.model.stop_training = True

    def on_train_end(self):
        self._record()


def unknowns(model) -> list[float]:
    """The entries of the model's external trainable variables, in order."""
    found = model.external_trainable_variables or []
    return [float(x) for v in found for x in v.detach().reshape(-1)]


@contextlib.contextmanager
def recording(trace: list, signals: Signals, recipe: list):
    """While the user's function runs: every ``Model.compile`` call is noted in
    ``recipe`` (the optimizer, lr, decay and loss weights it was given), every
    ``Model.train`` call gets a :class:`Recorder` after the function's own
    callbacks."""

    def on_compile(model, arguments):
        recipe.append(_compiled(arguments))

    def on_train(model, arguments):
        given = list(arguments.get("callbacks") or [])
        arguments["callbacks"] = [*given, Recorder(trace, signals)]

    with intercepted(on_compile, on_train):
        yield


def _compiled(arguments: dict) -> str:
    """One compile call in words: ``adam lr 0.001 (decay inverse time, 1000,
    0.5; loss weights 1, 10)``."""
    opt = arguments.get("optimizer")
    text = opt if isinstance(opt, str) else type(opt).__name__
    lr = arguments.get("lr")
    text += f" lr {lr:g}" if is_number(lr) else ""
    extra = []
    for key, label in (("decay", "decay"), ("loss_weights", "loss weights")):
        value = arguments.get(key)
        if isinstance(value, (list, tuple)):
            extra.append(f"{label} " + ", ".join(map(str, value)))
    return text + (f" ({'; '.join(extra)})" if extra else "")


def run_scripted(
    config: RunConfig,
    out: str | Path,
    *,
    problem: ScriptedProblem,
    overwrite: bool = False,
    on_done=None,
) -> Outcome:
    """Train one run of ``problem`` (``problem.train(net)``) into ``out``; a finished
    run of the same configuration there is reused. ValueError naming ``train``
    or ``reference`` when the model cannot be scored."""
    cfg = config.resolved(problem)
    folder = RunFolder(out)
    usable_cache()  # before the folder is made: PyTorch reads it on its first step
    folder.prepare()
    signals = Signals()
    with folder.locked(), folder.writing():
        done = None if overwrite else folder.finished(cfg.identity(), cfg.identity_of)
        if done is not None:
            outcome = Outcome(cfg, folder.path, "done", done)
        else:
            with kept_float():
                outcome = _train(cfg, folder, problem, signals)
        if outcome.status == "done" and on_done is not None:
            on_done(folder.path)
    return outcome


@functools.cache
def warm_up() -> None:
    """What a process pays once, on its first optimizer step (PyTorch imports
    its compiler stack, ~2 s), paid before a run is timed: else the first run in
    each worker process looks seconds slower than the others."""
    weight = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([weight])
    weight.sum().backward()
    opt.step()


def _train(cfg: RunConfig, folder: RunFolder, problem: ScriptedProblem, signals):
    warm_up()
    assert cfg.dtype is not None  # resolved
    quiet_float(cfg.dtype)
    dde.config.set_random_seed(cfg.seed)
    net = problem.build_net(cfg.method)
    trace: list = []
    recipe: list[str] = []
    printed = io.StringIO()  # what the function prints goes to train.log
    with signals.deferred(), recording(trace, signals, recipe):
        # it reads where it was launched; DeepXDE's relative files land in files/
        with (
            working_in(problem.workdir),
            writing_to(folder.path / FILES),
            contextlib.redirect_stdout(printed),
        ):
            loads = load_average()
            start, cpu = time.perf_counter(), time.process_time()
            model = _called(problem.train, net, "train")
            seconds = time.perf_counter() - start
            clock = (seconds, time.process_time() - cpu, (loads, load_average()))
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
        write_loss(folder.path / LOSS, table, names)
        msg = f"non-finite loss at step {int(table[-1, 0])}; stopped"
        return Outcome(cfg, folder.path, "diverged", message=msg)
    x, exact, pred, functions = _scored(model, problem, cfg.score)
    fields = problem.fields
    exact, pred = exact.reshape(-1, len(fields)), pred.reshape(-1, len(fields))
    x = _rows(x, len(exact))
    record = _record(cfg, problem, model, net, clock, table, names, exact, recipe)
    record["fields"] = list(fields)
    record["metrics"] = all_fields(pred, exact, fields)
    functions = None if functions is None else _functions(functions, len(exact))
    if functions is not None and functions.max() > 0:  # several functions
        record["relL2_mean_per_function"] = per_function_relL2(
            exact, pred, functions, fields
        )
    record.update(_variables(problem, model))
    _write(folder, problem, model, table, names, trace, record, x, exact, pred, fields)
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


def _scored(model, problem: ScriptedProblem, score: str):
    """``(x, exact, pred, operator)``: the scoring inputs (as stored: the trunk
    points for DeepONet's tuple), the reference and the prediction, float64, and
    DeepONet's ``(branch, trunk)`` inputs (else None). Judged on the
    unknowns alone (:data:`UNKNOWNS`): one "point" of no inputs, the true values
    and the learned ones."""
    if problem.scoring == UNKNOWNS:
        learned, true = unknowns(model), problem.true_values
        return np.zeros((1, 0)), np.array([true]), np.array([learned]), None
    if isinstance(problem.reference, tuple):
        x, exact = problem.reference
    else:
        x, exact = model.data.test()[:2]
        if problem.reference is not None:
            exact = _called(problem.reference, x, "reference")
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
    operator = x if isinstance(x, (tuple, list)) else None
    return np.asarray(points, dtype=np.float64), exact, pred, operator


def _functions(x, rows: int) -> np.ndarray | None:
    """For DeepONet's ``(branch, trunk)`` inputs, the function of each scored row
    (cartesian: function-major; aligned: rows of one branch input), else None."""
    if not isinstance(x, (tuple, list)):
        return None
    branch, trunk = np.asarray(x[0]), np.asarray(x[-1])
    if len(branch) * len(trunk) == rows and len(branch) != rows:
        return np.repeat(np.arange(len(branch)), len(trunk))
    if len(branch) == rows:
        flat = branch.reshape(rows, -1)
        return np.unique(flat, axis=0, return_inverse=True)[1].ravel()
    return None


def per_function_relL2(exact, pred, functions, fields) -> dict[str, float | None]:
    """DeepXDE's operator metric: the mean over functions of each one's relL2
    (the summary's relL2 is over all values of all functions together); None
    where it is not a finite number (a zero truth, a prediction not finite)."""
    out = {}
    for i, name in enumerate(fields):
        with np.errstate(over="ignore", invalid="ignore"):  # not finite: None
            e, u = pred[:, i] - exact[:, i], exact[:, i]
            num = np.bincount(functions, e * e)
            den = np.bincount(functions, u * u)
            ok = den > 0
            mean = np.mean(np.sqrt(num[ok] / den[ok])) if ok.any() else np.nan
        out[name] = float(mean) if np.isfinite(mean) else None
    return out


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
    except (Exception, SystemExit) as err:  # sys.exit() in it ends no caller
        raise ValueError(f"{what} raised {type(err).__name__}: {err}") from err


def _record(cfg, problem, model, net, clock, table, names, exact, recipe) -> dict:
    """The record of a run trained by the user's function; ``clock``: its wall
    and CPU seconds and the load average as it started and ended."""
    steps = int(model.train_state.step)
    seconds, cpu, loads = clock
    device = device_info()
    return {
        **cfg.identity(),
        **device,
        "parameters": sum(p.numel() for p in net.parameters() if p.requires_grad),
        "budget": "script",
        "grid_points": int(len(exact)),
        "scored": _scored_on(problem),
        "steps": steps,
        "train_seconds": seconds,
        "seconds_per_step": seconds / max(steps, 1),
        **timing_fields(seconds, cpu, device["threads"], loads),
        "training": f"{getattr(problem.train, '__qualname__', 'train')}(net)",
        "network": describe(net),
        "optimizer": "script: "
        + (", then ".join(recipe) or "no compile seen")
        + "; scored on "
        + ("DeepXDE's best model" if cfg.score == "best" else "the final iterate"),
        "final_loss": dict(zip(["total", *names], map(float, table[-1, 1:]))),
        "versions": versions(),
    }


def _scored_on(problem: ScriptedProblem) -> str:
    """What a run's fields are scored against, in words."""
    if problem.scoring == UNKNOWNS:
        return "the unknowns' true values (the data has no solution)"
    if problem.scoring == "reference":
        return "the reference"
    return "the test data's solution"


def _variables(problem: ScriptedProblem, model) -> dict:
    """The learned unknowns (their trajectory goes to ``variables.csv``) and,
    with true values, their errors as metric sets beside the fields'
    (``extra_metrics``: summarised and judged like a field; where the unknowns
    are the fields, :data:`UNKNOWNS`, they are those already)."""
    final = unknowns(model)
    if not final:
        return {}
    names = problem.variable_names(len(final))
    learned = [v if math.isfinite(v) else None for v in final]  # None: not a number
    out = {"variables": {n: {"final": v} for n, v in zip(names, learned)}}
    for n, v, true in zip(names, final, problem.true_values):
        out["variables"][n].update(true=true, relative_error=_relative(v, true))
        if problem.scoring != UNKNOWNS:
            error = field_metrics(np.array([v]), np.array([true]))
            out.setdefault("extra_metrics", {})[n] = error
    return out


def _relative(value: float, true: float) -> float | None:
    """``|value - true| / |true|``; None where that is not a finite number: a
    true value of 0 (undefined), one so near 0 that the ratio exceeds float64's
    range (``5e-324``), a learned value that is not finite."""
    if not true:
        return None
    ratio = abs(value - true) / abs(true)  # Python floats: inf or nan, no error
    return ratio if math.isfinite(ratio) else None


def _write(folder, problem, model, table, names, trace, record, x, exact, pred, fields):
    path = folder.path
    write_loss(path / LOSS, table, names)
    if record.get("variables"):
        variables = list(record["variables"])
        rows = np.array([[step, *values] for step, values in trace], np.float64)
        _write_table(path / VARIABLES, rows, ["step", *variables])
    inputs = problem.input_names if problem.scoring != UNKNOWNS else ()
    mask = np.ones(len(exact), bool)
    write_fields(path, x, exact, pred, mask, (), inputs, fields)
    write_model(path, model.net)
    atomic.write_json(folder.metrics, record)


def _write_table(path: Path, rows: np.ndarray, header: list[str]) -> None:
    buf = io.StringIO()
    np.savetxt(
        buf, rows, delimiter=",", header=",".join(header), comments="", fmt="%.10g"
    )
    atomic.atomic_write_text(path, buf.getvalue())
