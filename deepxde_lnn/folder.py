"""A run's result folder: is it writable, who holds it, is it finished, for what.

* :meth:`RunFolder.prepare` runs before any training: it creates the folder, proves
  it writable with a probe file and deletes temporary files of killed writes.
* :meth:`RunFolder.locked` holds an exclusive OS lock on ``.lock`` (``filelock``:
  ``fcntl``/``msvcrt``) for the whole run; the OS drops it when the process dies,
  so a killed run never leaves a stale lock.
* :meth:`RunFolder.finished` reads ``metrics.json`` as JSON only (never code) and
  trusts it only if it parses, holds every configuration field and matches.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import tempfile
from pathlib import Path

from .atomic import remove_orphans

__all__ = ["RunFolder", "FolderError", "FolderLocked", "record_decay"]

LOCK_NAME = ".lock"


class FolderError(ValueError):
    """The folder cannot hold this run (not writable, another run's results, ...)."""


class FolderLocked(FolderError):
    """Another process is running in this folder."""


class RunFolder:
    """The folder of one run: ``metrics.json``, ``checkpoint.pt`` and artifacts."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.metrics = self.path / "metrics.json"
        self.checkpoint = self.path / "checkpoint.pt"

    def prepare(self) -> None:
        """Create the folder and check that files can be written in it."""
        if self.path.exists() and not self.path.is_dir():
            raise FolderError(f"out: {self.path} exists and is not a folder")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=self.path, prefix=".probe.", suffix=".tmp")
            os.close(fd)
            os.unlink(probe)
        except OSError as err:
            raise FolderError(f"out: cannot write in {self.path} ({err.strerror})")
        remove_orphans(self.path)

    @contextlib.contextmanager
    def locked(self):
        """Hold the folder's exclusive lock; ``FolderLocked`` if another run has it."""
        from filelock import FileLock, Timeout

        lock = FileLock(self.path / LOCK_NAME, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise FolderLocked(
                f"out: {self.path} is in use by another deepxde-lnn process "
                f"(lock {self.path / LOCK_NAME}); wait for it or choose another folder"
            ) from None
        try:
            yield self
        finally:
            lock.release()

    def finished(self, identity: dict) -> dict | None:
        """The finished record of this configuration, or None if there is none.

        Raises ``FolderError`` naming ``metrics.json`` and why when it exists but is
        unreadable, incomplete or from another configuration.
        """
        if not self.metrics.exists():
            return None
        record = self.read_record()
        if "decay" in identity and "decay" not in record:  # an older record
            record["decay"] = record_decay(record)
        missing = [k for k in identity if k not in record]
        if missing:
            raise FolderError(
                f"{self.metrics}: incomplete record, missing {', '.join(missing)}"
            )
        differ = [k for k, v in identity.items() if record[k] != v]
        if differ:
            detail = ", ".join(
                f"{k}={record[k]!r} (asked {identity[k]!r})" for k in differ
            )
            raise FolderError(
                f"{self.metrics}: a finished run of another configuration ({detail}); "
                "pass --overwrite to replace it or choose another folder"
            )
        return record

    def read_record(self) -> dict:
        """``metrics.json`` parsed as a JSON object (``FolderError`` otherwise)."""
        try:
            record = json.loads(self.metrics.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise FolderError(f"{self.metrics}: unreadable ({err})") from None
        if not isinstance(record, dict):
            raise FolderError(f"{self.metrics}: not a JSON object")
        return record

    def clear(self) -> None:
        """Remove a previous run's results (``--overwrite``): the record first, so
        a half-cleared folder never looks finished."""
        for name in (
            "metrics.json",
            "checkpoint.pt",
            "loss.csv",
            "fields.npz",
            "model.pt",
            "fields.png",
            "loss.png",
        ):
            (self.path / name).unlink(missing_ok=True)


def record_decay(record: dict) -> list | None:
    """Adam's learning-rate schedule of a run record (None: constant): its
    ``decay``, or, in records written before that key, the ``lr decay (...)`` its
    ``optimizer`` text names."""
    if "decay" in record:
        return record["decay"]
    found = re.search(r"lr decay (\([^)]*\))", str(record.get("optimizer", "")))
    try:  # literals only: a record's text never runs as code
        decay = ast.literal_eval(found.group(1)) if found else None
    except (ValueError, SyntaxError):
        return None
    return list(decay) if isinstance(decay, tuple) else None
