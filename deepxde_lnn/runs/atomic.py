"""Atomic file output: write to a temporary file in the same folder, then rename.

A reader never sees a half-written artifact, and an interrupted run leaves the
previous version (or nothing) in place.

A folder can be pinned (:func:`pinned`) while a command writes in it: each write
there first checks, before creating its temporary file and again just before
the rename, that the folder's path still leads to the folder pinned (the same
device and inode). A folder swapped for a link, or moved, after its checks gets
no file: ``FolderError``. What remains is the instant between the last check and
the rename; closing it would take writing through directory handles
(``dir_fd``), which the threat does not warrant (docs/guarantees.md, "A
concurrent writer").
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import re
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import FolderError
from .records import MAX_ARTIFACT_BYTES, read_bytes

_UMASK = os.umask(0)
os.umask(_UMASK)


# a write's temporary file: ``.NAME.RANDOM.tmp`` beside ``NAME`` (mkstemp's letters)
_TEMP = re.compile(r"\.(?P<name>.+)\.[A-Za-z0-9_]+\.tmp")


# folder (absolute path) -> ((device, inode) pinned, how many hold it)
_PINNED: dict[str, tuple[tuple[int, int], int]] = {}
_PIN_LOCK = threading.Lock()


def _identity(folder: str) -> tuple[int, int] | None:
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _changed(folder: str) -> FolderError:
    now = "nowhere" if _identity(folder) is None else os.path.realpath(folder)
    return FolderError(
        f"out: {folder} changed during the run: it no longer leads to the folder "
        f"checked before writing (now: {now}); nothing more is written there"
    )


@contextlib.contextmanager
def pinned(folder: str | os.PathLike):
    """Within the block, a write into ``folder`` (an existing folder) happens only
    while its path leads to the folder it leads to now; ``FolderError`` if it
    does not when pinned again (nested) or at a write. Process-wide: every
    thread's writes are checked."""
    key = os.path.abspath(folder)
    ident = _identity(key)
    if ident is None:
        raise FolderError(f"out: {folder} is not there to write in")
    with _PIN_LOCK:
        held, count = _PINNED.get(key, (ident, 0))
        if held != ident:
            raise _changed(key)
        _PINNED[key] = (held, count + 1)
    try:
        yield Path(folder)
    finally:
        with _PIN_LOCK:
            held, count = _PINNED[key]
            if count > 1:
                _PINNED[key] = (held, count - 1)
            else:
                del _PINNED[key]


def _check_pinned(folder: Path) -> None:
    """``FolderError`` if ``folder`` is pinned and its path no longer leads to
    the folder pinned."""
    key = os.path.abspath(folder)
    held = _PINNED.get(key)
    if held is not None and _identity(key) != held[0]:
        raise _changed(key)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + ``os.replace``).

    An ``OSError`` (disk full, no permission, ...) names ``path``, not the
    temporary file, and leaves the previous ``path`` untouched. In a pinned
    folder (:func:`pinned`) whose path has changed: ``FolderError``, nothing
    written."""
    return atomic_write_all([(Path(path), data)])[0]


def atomic_write_all(files: list[tuple[Path, bytes]]) -> list[Path]:
    """Write each ``(path, data)`` of ``files`` as :func:`atomic_write_bytes`
    does, as a group: every file is written to its temporary file first, and
    only when all are written are they renamed into place. A write that fails
    (a full disk) leaves every previous file as it was, so that files that
    belong together (a stack's checkpoints) never stand at different steps."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            staged.append((_staged(Path(path), data), Path(path)))
        for tmp, path in staged:
            _check_pinned(path.parent)  # just before the rename
            try:
                os.replace(tmp, path)
            except OSError as err:
                raise OSError(err.errno, err.strerror, str(path)) from None
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    return [path for _, path in staged]


def _staged(path: Path, data: bytes) -> str:
    """``data`` in a temporary file beside ``path`` (synced, the usual mode),
    its name; ``OSError`` naming ``path``, nothing left, where it fails."""
    _check_pinned(path.parent)  # before anything is created there
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as err:
        raise OSError(err.errno, err.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; use the usual mode
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise OSError(err.errno, err.strerror, str(path)) from None
        raise
    return tmp


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """``obj`` as strict JSON (the package's one JSON writer): a number that is
    not finite, which strict JSON has no spelling for and no reader here takes
    back, is a ValueError naming the file and where it is; nothing written."""
    where = _not_finite(obj)
    if where is not None:
        raise ValueError(
            f"{path}: {where[0] or 'the value'} is {where[1]!r}, not a finite "
            "number; strict JSON cannot hold it, so nothing was written"
        )
    text = json.dumps(obj, indent=2, sort_keys=False, allow_nan=False)
    return atomic_write_text(path, text + "\n")


def _not_finite(obj, where: str = "") -> tuple[str, float] | None:
    """The first non-finite number in ``obj`` (nested dicts and lists): its place
    (``metrics.u.relL2``) and value; None if there is none."""
    if isinstance(obj, float):
        return None if math.isfinite(obj) else (where, obj)
    items: Iterable | None = obj.items() if isinstance(obj, dict) else None
    if isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    for key, value in items or ():
        found = _not_finite(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def save_npz(path: str | os.PathLike, **arrays: np.ndarray) -> Path:
    """``np.savez_compressed`` into memory, then an atomic write."""
    buf = io.BytesIO()
    # NumPy's stubs take an array named allow_pickle for the flag
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return atomic_write_bytes(path, buf.getvalue())


def save_figure(path: str | os.PathLike, fig, **kwargs) -> Path:
    """Save a matplotlib figure atomically (PNG by the path's suffix)."""
    buf = io.BytesIO()
    fmt = Path(path).suffix.lstrip(".") or "png"
    fig.savefig(buf, format=fmt, **kwargs)
    return atomic_write_bytes(path, buf.getvalue())


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file written here, read back as any file
    (:func:`~.records.read_bytes`: regular, no link, capped)."""
    return hashlib.sha256(read_bytes(path, MAX_ARTIFACT_BYTES)).hexdigest()


PROBE = "probe"  # writable_folder's probe: .probe.RANDOM.tmp, a temporary file


def writable_folder(path: str | os.PathLike) -> Path:
    """Create the folder ``path`` and prove files can be written in it (a probe
    file); ``FolderError`` naming ``out`` otherwise."""
    path = Path(path)
    try:
        if os.path.lexists(path) and not path.is_dir():
            raise FolderError(f"out: {path} exists and is not a folder")
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=f".{PROBE}.", suffix=".tmp")
        os.close(fd)
        Path(probe).unlink(missing_ok=True)
    except OSError as err:
        raise FolderError(f"out: cannot write in {path} ({err.strerror})") from None
    return path


def check_writable(path: str | os.PathLike) -> None:
    """``FolderError`` naming ``out`` unless ``path`` is a folder files can be
    written in, or could be created as one (its nearest existing folder above is
    writable); creates nothing: a command checks every folder before it makes
    any (:func:`writable_folder`, when a run starts)."""
    path = Path(os.path.abspath(path))
    if os.path.lexists(path):
        if not path.is_dir():
            raise FolderError(f"out: {path} exists and is not a folder")
        writable_folder(path)  # its probe file is removed at once
        return
    above = next(p for p in path.parents if os.path.lexists(p))
    if not above.is_dir():
        raise FolderError(f"out: cannot create {path}: {above} is not a folder")
    if not os.access(above, os.W_OK | os.X_OK):
        raise FolderError(f"out: cannot create {path}: {above} is not writable")


def remove_orphans(folder: str | os.PathLike[str], names) -> list[Path]:
    """Delete the temporary files that killed writes of the files ``names`` left in
    ``folder`` (``.NAME.RANDOM.tmp``, regular files); nothing else. Only call it
    while no other process can be writing there (the folder's lock held)."""
    names = set(names)
    removed = []
    with os.scandir(folder) as entries:
        for entry in entries:
            match = _TEMP.fullmatch(entry.name)
            # a regular file only: a link of that name is not followed or removed
            regular = entry.is_file(follow_symlinks=False)
            if match and match["name"] in names and regular:
                Path(entry.path).unlink(missing_ok=True)
                removed.append(Path(entry.path))
    return removed
