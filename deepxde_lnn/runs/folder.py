"""A run's result folder: is it ours, is it writable, who holds it, is it finished.

deepxde-lnn writes only into a folder that is empty or that it wrote before, and
deletes only files it writes itself (``RUN_FILES`` and their temporary files):

* :func:`check_ours` refuses a folder holding anything else: a folder is ours if it
  is empty, holds the marker ``.deepxde-lnn`` itself (written by :func:`mark`), or
  is a run folder written before markers existed (its own run record,
  ``metrics.json``). Results of ours further below never make a folder ours: a
  folder of the user's may hold one. :func:`check_file_ours` is the same rule for
  a file (a report): new, or beginning with the text deepxde-lnn writes at its top.
* Links are never followed in these decisions: a linked marker or record does
  not count, and a path
  through a link inside a folder of ours (below one holding the marker) is
  refused (:func:`check_no_link`). Only the path the user names may itself be
  a link; a path derived from it (a report's figures) may not.
* :func:`claim` and :meth:`RunFolder.locked` pin their folder
  (:func:`deepxde_lnn.runs.atomic.pinned`): a file is written there only while
  the path still leads to the folder that was checked.
* :meth:`RunFolder.check` runs before any training, for every run of a command:
  the folder is ours and can be written or created (nothing is created), and
  no folder in it is a link or holds one;
  :meth:`RunFolder.prepare`, when its run starts, creates it and proves it
  writable with a probe file.
* :meth:`RunFolder.locked` holds an exclusive OS lock on ``.lock`` (``filelock``:
  ``fcntl``/``msvcrt``) for the whole run; the OS drops it when the process dies,
  so a killed run never leaves a stale lock. Only while holding it are temporary
  files of killed writes deleted (another process may be writing its own) and the
  marker written.
* :meth:`RunFolder.finished` reads ``metrics.json`` as JSON only (never code) and
  trusts it only if it parses, holds every configuration field and matches; a
  matching record that does not check, or lacks an artifact, is trained again.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from . import records
from .atomic import (
    PROBE,
    atomic_write_text,
    check_writable,
    pinned,
    remove_orphans,
    writable_folder,
)
from .errors import FolderError
from .names import (
    CHECKPOINT,
    FIELDS,
    FIELDS_FIGURE,
    LOSS,
    LOSS_FIGURE,
    MODEL,
    RECORD,
)

__all__ = [
    "RunFolder",
    "FolderError",
    "FolderLocked",
    "WriteFailed",
    "check_ours",
    "check_no_link",
    "check_no_links",
    "check_file_ours",
    "mark",
    "claim",
    "RUN_FILES",
    "VARIABLES",
    "LOG",
    "record_decay",
]

LOCK_NAME = ".lock"
MARKER_NAME = ".deepxde-lnn"
MARKER_FORMAT = "deepxde-lnn result folder/1"
VARIABLES = "variables.csv"  # a run's unknowns at every logged step (train=)
LOG = "train.log"  # what a user's training function printed (train=)
# every file a run writes in its folder: the only ones --overwrite deletes
RUN_FILES = (
    RECORD,
    CHECKPOINT,
    LOSS,
    FIELDS,
    MODEL,
    FIELDS_FIGURE,
    LOSS_FIGURE,
    VARIABLES,
    LOG,
)


class FolderLocked(FolderError):
    """Another process is running in this folder."""


class WriteFailed(FolderError):
    """A file could not be written in the folder (disk full, no permission)."""


def _lstat(path: Path) -> os.stat_result | None:
    """``os.lstat`` or None if nothing is there; ``FolderError`` naming the path
    for any other failure (a name too long, no permission, ...)."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise FolderError(f"out: {path}: {err.strerror}") from None


def _regular(path: Path) -> bool:
    st = _lstat(path)
    return st is not None and stat.S_ISREG(st.st_mode)


def _is_marker(path: Path) -> bool:
    if not _regular(path):
        return False
    try:  # a regular file, no link, a few bytes (swapped for a FIFO: refused)
        head = records.read_bytes(path, len(MARKER_FORMAT) + 2)
    except FolderError:
        return False
    return head.decode("utf-8", "replace").strip() == MARKER_FORMAT


def _is_record(path: Path) -> bool:
    """Whether ``path`` is a run record of this package (a regular file that
    :func:`deepxde_lnn.runs.records.problem` finds nothing wrong with)."""
    try:
        return records.problem(records.read_record(path)) is None
    except FolderError:
        return False


def _holds_record(path: Path) -> bool:
    """Whether ``path`` is a run folder of ours written before markers existed:
    its own record (never one further below: a folder of the user's may hold a
    result folder of ours and still be theirs)."""
    return _is_record(path / RECORD)


def _link_inside_ours(path: Path) -> Path | None:
    """The first link on the way to ``path`` below a folder of ours (one holding
    the marker), or None: inside its folders deepxde-lnn follows no link. The
    folders above, and ``path`` itself when it is not inside one, are the user's
    choice."""
    path = Path(os.path.abspath(path))
    ours = False
    for part in [*reversed(path.parents), path]:
        st = _lstat(part)
        if st is None:
            return None
        if ours and stat.S_ISLNK(st.st_mode):
            return part
        ours = ours or _is_marker(part / MARKER_NAME)
    return None


def check_no_link(path: str | os.PathLike, named: bool = True) -> None:
    """``FolderError`` (naming ``--out`` and the link) where the way to ``path``
    passes a symbolic link inside a folder of ours; where ``path`` is not
    ``named`` by the user but derived by deepxde-lnn (a report's figures, a
    run's ``files/``), also where ``path`` itself is one."""
    path = Path(path)
    link = _link_inside_ours(path)
    if link is not None:
        raise FolderError(
            f"out: {link} is a symbolic link inside a folder of deepxde-lnn, which "
            "follows no link there; remove it or choose another folder"
        )
    st = None if named else _lstat(path)
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise FolderError(
            f"out: {path} is a symbolic link; deepxde-lnn writes no file through "
            "a link (remove it or choose another folder)"
        )


def check_no_links(path: str | os.PathLike[str]) -> None:
    """:func:`check_no_link` for ``path`` (derived, not named) and every entry
    below it (links to folders not entered): a folder where files are written by
    name (a run's ``files/``), which a link would carry elsewhere."""
    check_no_link(path, named=False)
    for top, folders, files in os.walk(path):
        for name in (*folders, *files):
            if os.path.islink(os.path.join(top, name)):
                check_no_link(Path(top, name), named=False)


def check_ours(path: str | os.PathLike, named: bool = True) -> None:
    """``FolderError`` (naming ``--out``) unless ``path`` is missing, an empty
    folder, or a folder deepxde-lnn wrote (its marker in it, or a run folder's
    own record), and is not reached through a link inside a folder of ours, nor
    a link itself unless ``named`` by the user (:func:`check_no_link`)."""
    path = Path(path)
    check_no_link(path, named)
    st = _lstat(path)
    if st is None:
        return
    if not path.is_dir():
        raise FolderError(f"out: {path} exists and is not a folder")
    try:
        names = sorted(os.listdir(path))
    except OSError as err:
        raise FolderError(f"out: cannot read {path} ({err.strerror})") from None
    if not names or _is_marker(path / MARKER_NAME) or _holds_record(path):
        return
    shown = ", ".join(map(repr, names[:3])) + (", ..." if len(names) > 3 else "")
    raise FolderError(
        f"out: {path} holds files deepxde-lnn did not write ({shown}) and is not "
        f"marked as one of its result folders ({MARKER_NAME}); choose an empty "
        "folder or one of deepxde-lnn's result folders (overwrite does not change "
        "this; results of ours inside it do not make it ours)"
    )


def check_file_ours(path: str | os.PathLike, signature: str) -> None:
    """``FolderError`` (naming ``--out``) unless ``path`` is missing or a regular
    file (not a link) that begins with ``signature``: the text deepxde-lnn writes
    at the top of such a file (a report), so a file of someone else is never
    replaced."""
    path = Path(path)
    st = _lstat(path)
    if st is None:
        return
    if stat.S_ISLNK(st.st_mode):
        raise FolderError(
            f"out: {path} is a symbolic link; deepxde-lnn writes no file through "
            "a link (name the file itself or a new one)"
        )
    head = signature.encode("utf-8")
    if stat.S_ISREG(st.st_mode):
        try:  # as every file read (a FIFO swapped in: refused, not waited on)
            if records.read_bytes(path, len(head), prefix=True) == head:
                return
        except FolderError as err:
            raise FolderError(f"out: {err}") from None
    raise FolderError(
        f"out: {path} is a file deepxde-lnn did not write (it does not begin with "
        f"{signature.splitlines()[0]!r}); choose a new file or a report of "
        "deepxde-lnn"
    )


def mark(path: str | os.PathLike) -> None:
    """Write the marker that makes ``path`` a folder of deepxde-lnn."""
    marker = Path(path) / MARKER_NAME
    if not _is_marker(marker):
        atomic_write_text(marker, MARKER_FORMAT + "\n")


@contextlib.contextmanager
def claim(path: str | os.PathLike):
    """Hold a folder that holds result folders and summaries (a ``compare``,
    ``sweep`` or ``ablate`` root) for a block: checked to be ours, created,
    marked, and pinned (:func:`~deepxde_lnn.runs.atomic.pinned`) until the block
    ends; yields it."""
    path = Path(path)
    check_ours(path)
    writable_folder(path)
    with writing(path):
        mark(path)
    with pinned(path):
        yield path


@contextlib.contextmanager
def writing(path: Path, left=lambda: ""):
    """Turn an ``OSError`` while writing a file below ``path`` (disk full, no
    permission) into a ``WriteFailed`` naming the file, ending with ``left()``
    (what a rerun will find); other errors pass unchanged."""
    try:
        yield
    except OSError as err:
        where = Path(err.filename) if err.filename else None
        if where is None or (path != where and path not in where.parents):
            raise
        what = err.strerror or err
        raise WriteFailed(f"out: cannot write {where} ({what}){left()}") from None


class RunFolder:
    """The folder of one run: ``metrics.json``, ``checkpoint.pt`` and artifacts."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.metrics = self.path / RECORD
        self.checkpoint = self.path / CHECKPOINT

    def check(self) -> None:
        """Check that the folder is ours and can be written in or created, and
        that its folders (a ``train=`` function's ``files/``) hold no link nor
        are one (:func:`check_no_links`), creating nothing (every run of a
        command is checked before any starts)."""
        check_ours(self.path)
        for sub in self._folders():
            check_no_links(sub)
        check_writable(self.path)

    def _folders(self) -> list[Path]:
        """The folders in this one (links to folders too), sorted."""
        try:
            with os.scandir(self.path) as entries:
                return sorted(Path(e.path) for e in entries if e.is_dir())
        except (FileNotFoundError, NotADirectoryError):
            return []

    def prepare(self) -> None:
        """Check that the folder is ours, create it and check that files can be
        written in it. Deletes nothing: another process may be running here."""
        check_ours(self.path)
        writable_folder(self.path)

    @contextlib.contextmanager
    def locked(self):
        """Hold the folder's exclusive lock; ``FolderLocked`` if another run has it.
        Holding it, delete temporary files of killed writes, mark the folder and
        pin it: its files are written only while its path leads to it."""
        from filelock import FileLock, Timeout

        path = self.path / LOCK_NAME
        st = _lstat(path)
        if st is not None and not stat.S_ISREG(st.st_mode):
            kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            raise FolderError(
                f"out: {path} is {kind}, not deepxde-lnn's lock file; remove it"
            )
        lock = FileLock(path, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise FolderLocked(
                f"out: {self.path} is in use by another deepxde-lnn process "
                f"(lock {path}); wait for it or choose another folder"
            ) from None
        except OSError as err:
            raise FolderError(f"out: cannot lock {path} ({err.strerror})") from None
        try:
            with pinned(self.path):
                with writing(self.path):
                    remove_orphans(self.path, (*RUN_FILES, MARKER_NAME, PROBE))
                    mark(self.path)
                yield self
        finally:
            lock.release()

    def writing(self):
        """:func:`writing` for a run: the error says what a rerun will find (the
        last checkpoint, or finished results whose figures are missing)."""
        return writing(self.path, self._left)

    def _left(self) -> str:
        if _regular(self.checkpoint):
            return f"; the last checkpoint {self.checkpoint} is kept (--resume)"
        if _regular(self.metrics):
            return "; the results are complete, rerun to draw the missing figures"
        return "; no checkpoint was saved"

    def finished(
        self, identity: Mapping, held: Callable[[Mapping], dict]
    ) -> dict | None:
        """The finished record of the run of ``identity``, or None if there is
        none (also when its record does not check or an artifact is missing:
        :func:`deepxde_lnn.runs.records.run_problem`; the run is trained again). A
        checked record whose artifacts were all pruned (committed records) counts
        as finished: its metrics are in the record. ``held(record)`` is the
        identity of the run that wrote a record
        (:meth:`deepxde_lnn.config.RunConfig.identity_of`, a ``ValueError`` for
        option values that do not check: the run is trained again): the two must
        be equal, so a record holding more (another problem of the same name, loss
        weights) is another run too.

        Raises ``FolderError`` naming ``metrics.json`` and why when it exists but is
        unreadable, incomplete or from another configuration.
        """
        if _lstat(self.metrics) is None:
            return None
        record = self.read_record()
        missing = [k for k in records.NEEDS["run"] if k in identity and k not in record]
        if missing:
            raise FolderError(
                f"{self.metrics}: incomplete record, missing {', '.join(missing)}"
            )
        try:
            have = held(record)
        except ValueError:  # an option's value does not check
            return None
        differ = [k for k in {**identity, **have} if have.get(k) != identity.get(k)]
        if "problem" in differ:
            raise FolderError(
                f"{self.metrics}: a finished run of another problem named "
                f"{record['case']!r} ({_problem(have)}; asked {_problem(identity)}); "
                "pass overwrite=True (--overwrite) to replace it or choose another folder"
            )
        if differ:
            detail = ", ".join(
                f"{k}={have.get(k)!r} (asked {identity.get(k)!r})" for k in differ
            )
            raise FolderError(
                f"{self.metrics}: a finished run of another configuration ({detail}); "
                "pass overwrite=True (--overwrite) to replace it or choose another folder"
            )
        why = records.run_problem(self.path, record, pruned_ok=True)
        return None if why else record

    def has_checkpoint(self) -> bool:
        """Whether anything is at ``checkpoint.pt`` (a link or a FIFO too:
        reading it refuses them, :func:`~.checkpoint.load_checkpoint`)."""
        return os.path.lexists(self.checkpoint)

    def read_record(self) -> dict:
        """``metrics.json`` parsed as a JSON object (``FolderError`` otherwise;
        read as untrusted data: :func:`deepxde_lnn.runs.records.read_record`)."""
        return records.read_record(self.metrics)

    def clear(self) -> None:
        """Remove a previous run's results (``--overwrite``), only the files a run
        writes: the record first, so a half-cleared folder never looks finished."""
        for name in RUN_FILES:
            (self.path / name).unlink(missing_ok=True)


def _problem(identity: Mapping) -> str:
    """What an identity says the problem is, in words."""
    problem = identity.get("problem")
    return "the registered case" if problem is None else f"problem {problem}"


def record_decay(record: Mapping) -> list | None:
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
