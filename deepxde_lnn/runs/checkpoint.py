"""Checkpoints that load without executing code and refuse a damaged file.

A checkpoint is one file written atomically: ``torch.save`` of an envelope

    {"format": FORMAT, "sha256": hex digest of payload, "payload": uint8 tensor}

where the payload is itself ``torch.save`` of plain data: tensors, dicts, lists,
tuples, numbers, strings, None. Both levels load with ``weights_only=True``
(PyTorch's restricted unpickler: no arbitrary objects, so a file planted in a shared
result folder cannot run code), and the digest must match before the payload is
read. Random-generator states are stored in that plain form (NumPy's legacy state
array as a tensor).

The file is read as any file read back (:func:`~.records.read_bytes`: a regular
file, no link, at most :data:`~.records.MAX_CHECKPOINT_BYTES`). The digest detects
damage (a truncated or flipped file), not tampering: anyone who can write the file
can write a matching digest. So the payload's structure is checked too
(:func:`check_payload`: every key, types, ``step >= 0``, finite ``seconds``, a loss
table of ``step`` rows, the random states as each generator takes them, the
optimizer's settings and finite state, the scheduler's position at the step), and
against the run that resumes it (:func:`check_fits`: the step before the run's
end, the network's and the optimizer's tensor shapes, the loss table's width).
Whatever it holds, a resumed run takes its optimizer's and scheduler's settings
from its configuration, never from the file (the runner loads the per-parameter
state only).
"""

from __future__ import annotations

import hashlib
import io
import math
import random
from pathlib import Path

import numpy as np
import torch

from ..checks import is_integer, is_number
from .atomic import atomic_write_all
from .errors import FolderError
from .records import MAX_CHECKPOINT_BYTES, read_bytes, stack_sizes_problem

#: the training phases, in their order: a checkpoint names the one it was saved in
PHASES = ("adam", "lbfgs", "nncg")

__all__ = [
    "CheckpointError",
    "save_checkpoint",
    "save_checkpoints",
    "load_checkpoint",
    "check_payload",
    "check_fits",
    "short_error",
    "rng_state",
]

FORMAT = "deepxde-lnn-checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint file is missing, truncated, corrupted or of another format."""


def _dumps(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _loads(data: bytes):
    return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)


def save_checkpoint(path: str | Path, payload: dict) -> Path:
    """Write ``payload`` (plain data and tensors only) atomically with its digest."""
    return save_checkpoints([(Path(path), payload)])[0]


def save_checkpoints(items: list[tuple[Path, dict]]) -> list[Path]:
    """Write each ``(path, payload)`` as :func:`save_checkpoint` does, as one
    group (:func:`~.atomic.atomic_write_all`): a stack's checkpoints stand at one
    step together, or none is replaced."""
    return atomic_write_all([(Path(p), _envelope(payload)) for p, payload in items])


def _envelope(payload: dict) -> bytes:
    """``payload`` in its envelope: the format and the digest of its bytes."""
    data = _dumps(payload)
    envelope = {
        "format": FORMAT,
        "sha256": hashlib.sha256(data).hexdigest(),
        "payload": torch.frombuffer(bytearray(data), dtype=torch.uint8),
    }
    return _dumps(envelope)


def load_checkpoint(path: str | Path) -> dict:
    """The payload of a checkpoint; ``CheckpointError`` naming the file if it cannot
    be read, is not a checkpoint of this format, or fails its SHA-256 check.
    Tensors are mapped to the CPU (a GPU checkpoint resumes anywhere)."""
    path = Path(path)
    try:
        data = read_bytes(path, MAX_CHECKPOINT_BYTES)
    except FolderError as err:  # a FIFO, a device, a link, too large
        raise CheckpointError(f"checkpoint {err}") from None
    try:
        envelope = _loads(data)
    except Exception as err:  # truncated, empty, zeroed, not a torch file, unsafe
        raise CheckpointError(f"checkpoint {path} is unreadable ({short_error(err)})")
    if not isinstance(envelope, dict) or envelope.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {path} is not a {FORMAT} file")
    payload = envelope.get("payload")
    if not isinstance(payload, torch.Tensor) or payload.dtype != torch.uint8:
        raise CheckpointError(f"checkpoint {path} has no payload")
    data = payload.numpy().tobytes()
    if hashlib.sha256(data).hexdigest() != envelope.get("sha256"):
        raise CheckpointError(
            f"checkpoint {path} is corrupted (SHA-256 mismatch); delete it to "
            "restart the run from scratch"
        )
    try:
        return check_payload(_loads(data), path)
    except CheckpointError:
        raise
    except Exception as err:
        raise CheckpointError(f"checkpoint {path} is unreadable ({short_error(err)})")


_RESTART = "delete it to restart the run from scratch"
_KINDS = {"config": dict, "net": dict, "opt": dict, "rng": dict, "loss": torch.Tensor}
_RNG_KEYS = ("sampling", "torch", "cuda", "numpy", "python")
_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "phase": (str, type(None)),
    "scheduler": (dict, type(None)),
    "data": dict,
    "stack_sizes": list,  # older checkpoints have none
    "cpu_seconds": (int, float),  # older checkpoints have none: unknown
}


def _malformed(path, problem: str) -> CheckpointError:
    return CheckpointError(f"checkpoint {path} is malformed ({problem}); {_RESTART}")


def check_payload(state, path: str | Path = "") -> dict:
    """``state`` if it has the structure of a run checkpoint, else a
    ``CheckpointError`` naming ``path`` and the first problem."""
    if not isinstance(state, dict):
        raise _malformed(path, "not a dict")
    for key, kind in _KINDS.items():
        if not isinstance(state.get(key), kind):
            raise _malformed(path, f"{key!r} missing or not a {kind.__name__}")
    for key, kinds in _OPTIONAL.items():
        if key in state and not isinstance(state[key], kinds):
            raise _malformed(path, f"{key!r} of the wrong type")
    if state.get("phase") not in (None, *PHASES):
        raise _malformed(
            path, f"phase must be one of {', '.join(PHASES)}, got {state['phase']!r}"
        )
    step = state.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise _malformed(path, f"step must be an integer >= 0, got {step!r}")
    for key in ("seconds", "cpu_seconds"):
        value = state.get(key, 0.0 if key == "cpu_seconds" else None)
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not math.isfinite(value)
            or value < 0
        ):
            raise _malformed(path, f"{key} must be a finite number >= 0, got {value!r}")
    if not all(isinstance(v, torch.Tensor) for v in state["net"].values()):
        raise _malformed(path, "'net' must map names to tensors")
    opt = state["opt"]
    if not isinstance(opt.get("state"), dict) or not isinstance(
        opt.get("param_groups"), list
    ):
        raise _malformed(path, "'opt' is not an optimizer state dict")
    if not all(k in state["rng"] for k in _RNG_KEYS):
        raise _malformed(path, f"'rng' needs {', '.join(_RNG_KEYS)}")
    loss = state["loss"]
    rows_ok = loss.ndim == 2 and loss.shape[0] == step and loss.is_floating_point()
    if not rows_ok or (step and loss.shape[1] < 3):
        raise _malformed(path, f"the loss table must have {step} rows (the step)")
    if not bool(torch.isfinite(loss).all()):
        raise _malformed(path, "the loss table holds non-finite values")
    problem = (
        _rng_problem(state["rng"])
        or stack_sizes_problem(state.get("stack_sizes", []), step)
        or _opt_problem(opt)
        or _scheduler_problem(state.get("scheduler"), step)
        or _plain_problem(state.get("data", {}), "data")
    )
    if problem:
        raise _malformed(path, problem)
    return state


def _bytes(v) -> bool:
    return isinstance(v, torch.Tensor) and v.dtype == torch.uint8 and v.ndim == 1


def _rng_problem(rng: dict) -> str | None:
    """What keeps ``rng`` from holding states its generators take, or None."""
    sampling = rng["sampling"]
    if not isinstance(sampling, dict) or not isinstance(sampling.get("state"), dict):
        return "rng.sampling must be a NumPy bit generator's state"
    if not _bytes(rng["torch"]):
        return "rng.torch must be a tensor of bytes"
    cuda = rng["cuda"]
    if cuda is not None and not (isinstance(cuda, list) and all(map(_bytes, cuda))):
        return "rng.cuda must be None or a list of tensors of bytes"
    legacy = rng["numpy"]  # np.random.get_state(), its keys as a tensor
    ok = isinstance(legacy, (list, tuple)) and len(legacy) == 5
    kind, keys, pos, has_gauss, cached = legacy if ok else (None,) * 5
    if not (
        kind == "MT19937"
        and isinstance(keys, torch.Tensor)
        and keys.dtype == torch.int64
        and keys.shape == (624,)
        and is_integer(pos)
        and 0 <= pos <= 624
        and has_gauss in (0, 1)
        and is_number(cached)
    ):
        return (
            "rng.numpy must be [MT19937, a tensor of 624 integers, a position "
            "in [0, 624], 0 or 1, a number]"
        )
    state = rng["python"]  # random.getstate()
    ok = isinstance(state, tuple) and len(state) == 3
    version, words, gauss = state if ok else (None,) * 3
    if not (
        version == 3
        and isinstance(words, tuple)
        and len(words) == 625
        and all(is_integer(w) and 0 <= w < 2**32 for w in words)
        and (gauss is None or is_number(gauss))
    ):
        return "rng.python must be random.getstate() (version 3)"
    return None


def _positive(v) -> bool:
    return is_number(v) and v > 0


def _at_least_0(v) -> bool:
    return is_number(v) and v >= 0


def _count(v) -> bool:
    return is_integer(v) and v > 0


# an optimizer's settings (ignored on resuming: the configuration's are used) and
# ScaledLBFGS's loss scale (state kept in its group), as their optimizers take them
_SETTINGS = {
    "lr": (_positive, "a finite number > 0"),
    "initial_lr": (_positive, "a finite number > 0"),
    "betas": (
        lambda v: (
            isinstance(v, (tuple, list))
            and len(v) == 2
            and all(_at_least_0(b) and b < 1 for b in v)
        ),
        "two numbers in [0, 1)",
    ),
    "eps": (_positive, "a finite number > 0"),
    "weight_decay": (_at_least_0, "a finite number >= 0"),
    "max_iter": (_count, "an integer > 0"),
    "max_eval": (_count, "an integer > 0"),
    "history_size": (_count, "an integer > 0"),
    "tolerance_grad": (_at_least_0, "a finite number >= 0"),
    "tolerance_change": (_at_least_0, "a finite number >= 0"),
    "line_search_fn": (lambda v: v is None or isinstance(v, str), "None or a name"),
    "loss_scale": (lambda v: v is None or _positive(v), "None or a number > 0"),
}


def _scalar(v) -> bool:
    """None, a bool, a short string or a finite number (or a one-number tensor,
    as heavyball counts its steps): any other setting."""
    if isinstance(v, torch.Tensor) and v.numel() == 1:
        return _finite(v)
    return (
        v is None
        or isinstance(v, bool)
        or is_number(v)
        or (isinstance(v, str) and len(v) <= 100)
    )


NESTING = 4  # how deep an optimizer's per-parameter state may nest (heavyball: 3)


def _finite(v, depth: int = 0) -> bool:
    """A tensor of finite floats (or of integers: counters), a finite number, a
    bool or None, or a list, set or name-keyed dict of them nested at most
    ``NESTING`` deep (heavyball keeps its state so)."""
    if isinstance(v, (list, tuple, set)):
        return depth < NESTING and all(_finite(e, depth + 1) for e in v)
    if isinstance(v, dict):
        return depth < NESTING and all(
            isinstance(k, (str, int)) and _finite(e, depth + 1) for k, e in v.items()
        )
    if isinstance(v, torch.Tensor):
        if not v.is_floating_point():
            return v.dtype in (torch.int64, torch.int32) and bool((v >= 0).all())
        return bool(torch.isfinite(v).all())
    return v is None or isinstance(v, bool) or is_number(v)


def _opt_problem(opt: dict) -> str | None:
    """What keeps ``opt`` from being an optimizer state of well-formed settings
    and finite per-parameter state (its shapes: :func:`check_fits`), or None."""
    for i, group in enumerate(opt["param_groups"]):
        where = f"opt.param_groups[{i}]"
        if not isinstance(group, dict) or not isinstance(group.get("params"), list):
            return f"{where} must be a settings dict with its params"
        if not all(is_integer(p) for p in group["params"]):
            return f"{where}.params must be parameter indices"
        for key, value in group.items():
            ok, what = _SETTINGS.get(key, (_scalar, "a number, a name or None"))
            if key != "params" and not ok(value):
                return f"{where}.{key} must be {what}, got {_short(value)}"
    for idx, entry in opt["state"].items():
        for key, value in entry.items() if isinstance(entry, dict) else ():
            counter = key in ("step", "n_iter", "func_evals")
            if counter and isinstance(value, torch.Tensor) and value.numel() == 1:
                value = float(value)
            good = _at_least_0(value) if counter else _finite(value)
            if good and key in ("exp_avg_sq", "max_exp_avg_sq"):
                good = bool((value >= 0).all())
            if not good:
                return f"opt.state[{idx}].{key} must be finite (counts >= 0)"
    return None


def _scheduler_problem(scheduler, step: int) -> str | None:
    """What keeps ``scheduler`` (a learning-rate scheduler's ``state_dict()``,
    or None) from being one at ``step``, or None."""
    if scheduler is None:
        return None
    position = scheduler.get("last_epoch")
    if not is_integer(position) or position != step:
        got = _short(position)
        return f"scheduler.last_epoch must be the step {step}, got {got}"
    for key, value in scheduler.items():
        if not isinstance(key, str):
            return f"scheduler must have names as keys, got {_short(key)}"
        values = value if isinstance(value, list) else [value]
        if not all(map(_scalar, values)):
            return f"scheduler.{key} must be numbers, names or None"
    return None


def _plain_problem(value, where: str, depth: int = 0) -> str | None:
    """What keeps ``value`` from being plain data (dicts of string keys, lists,
    tensors, finite numbers, names, None; a few levels deep), or None."""
    if depth > 8:
        return f"{where} is nested too deeply"
    if isinstance(value, dict):
        for key, v in value.items():
            if not isinstance(key, str):
                return f"{where} must have names as keys"
            problem = _plain_problem(v, f"{where}.{key}", depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        items = (_plain_problem(v, where, depth + 1) for v in value)
        return next(filter(None, items), None)
    if isinstance(value, torch.Tensor) or _scalar(value):
        return None
    return f"{where} holds a {type(value).__name__}"


def _short(value) -> str:
    return repr(value)[:40]


def check_fits(
    state: dict, path, net: torch.nn.Module, terms: int | None, end: int
) -> None:
    """``CheckpointError`` unless ``state`` (a :func:`check_payload`-checked
    checkpoint) can resume a run of ``net`` with ``terms`` loss terms ending at
    step ``end``: its step before the end, every tensor of the network's and the
    optimizer's shape, the loss table ``2 + terms`` wide (``None``: not known
    before training)."""
    if state["step"] >= end:
        raise _malformed(path, f"step {state['step']} is not before the end {end}")
    if terms and state["step"] and state["loss"].shape[1] != 2 + terms:
        raise _malformed(path, f"the loss table must have {2 + terms} columns")
    want = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in state["net"].items()}
    if got != want:
        bad = sorted(set(got) ^ set(want)) or [k for k in want if got[k] != want[k]]
        raise _malformed(path, f"the network does not fit (at {bad[0]})")
    _check_opt_shapes(state["opt"], list(net.parameters()), path)


def _check_opt_shapes(opt: dict, params: list, path) -> None:
    """Adam's moments of each parameter's shape; L-BFGS's flat vectors of the
    parameters' total size."""
    size = sum(p.numel() for p in params)
    for idx, s in opt["state"].items():
        if not isinstance(s, dict) or not isinstance(idx, int):
            raise _malformed(path, "'opt' has a malformed state entry")
        if not 0 <= idx < len(params):
            raise _malformed(path, f"'opt' has state for parameter {idx}")
        for key, value in s.items():
            want = {
                "exp_avg": params[idx].shape,
                "exp_avg_sq": params[idx].shape,
                "max_exp_avg_sq": params[idx].shape,
                "d": (size,),
                "prev_flat_grad": (size,),
            }.get(key)
            if want is not None and (
                not isinstance(value, torch.Tensor) or value.shape != want
            ):
                raise _malformed(path, f"the optimizer's {key!r} does not fit")


def short_error(err: Exception) -> str:
    """``Type: first line`` of an exception, at most 200 characters."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:200]


def rng_state(sampling: dict | None) -> dict:
    """The process's random states plus the sampler's, in checkpoint-safe form."""
    # NumPy's stubs give the dict form where no argument is given: the tuple is
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "sampling": sampling,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "numpy": [
            kind,
            torch.from_numpy(keys.astype(np.int64)),  # type: ignore[attr-defined]
            pos,
            has_gauss,
            cached,
        ],
        "python": random.getstate(),
    }


def set_rng_state(state: dict) -> dict:
    """Restore the process's random states; returns the sampler's state."""
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and torch.cuda.is_available():
        try:
            torch.cuda.set_rng_state_all(state["cuda"])
        except RuntimeError:  # a different GPU count: sampling does not use it
            pass
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    random.setstate(state["python"])
    return state["sampling"]
