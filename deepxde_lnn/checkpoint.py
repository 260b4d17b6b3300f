"""Checkpoints that load without executing code and refuse a damaged file.

A checkpoint is one file written atomically: ``torch.save`` of an envelope

    {"format": FORMAT, "sha256": hex digest of payload, "payload": uint8 tensor}

where the payload is itself ``torch.save`` of plain data: tensors, dicts, lists,
tuples, numbers, strings, None. Both levels load with ``weights_only=True``
(PyTorch's restricted unpickler: no arbitrary objects, so a file planted in a shared
result folder cannot run code), and the digest must match before the payload is
read. Random-generator states are stored in that plain form (NumPy's legacy state
array as a tensor).
"""

from __future__ import annotations

import hashlib
import io
import random
from pathlib import Path

import numpy as np
import torch

from .atomic import atomic_write_bytes

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "rng_state"]

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
    data = _dumps(payload)
    envelope = {
        "format": FORMAT,
        "sha256": hashlib.sha256(data).hexdigest(),
        "payload": torch.frombuffer(bytearray(data), dtype=torch.uint8),
    }
    return atomic_write_bytes(path, _dumps(envelope))


def load_checkpoint(path: str | Path) -> dict:
    """The payload of a checkpoint; ``CheckpointError`` naming the file if it cannot
    be read, is not a checkpoint of this format, or fails its SHA-256 check.
    Tensors are mapped to the CPU (a GPU checkpoint resumes anywhere)."""
    path = Path(path)
    try:
        envelope = _loads(path.read_bytes())
    except Exception as err:  # truncated, empty, zeroed, not a torch file, unsafe
        raise CheckpointError(f"checkpoint {path} is unreadable ({_short(err)})")
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
        return _loads(data)
    except Exception as err:
        raise CheckpointError(f"checkpoint {path} is unreadable ({_short(err)})")


def _short(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:200]


def rng_state(sampling: dict) -> dict:
    """The process's random states plus the sampler's, in checkpoint-safe form."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "sampling": sampling,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "numpy": [
            kind,
            torch.from_numpy(keys.astype(np.int64)),
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
