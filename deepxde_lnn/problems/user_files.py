"""Where the files of a user's ``train`` land, without changing directory.

The function runs in the working directory its user launched it from, so that it
reads its data as the script does (``np.loadtxt("../dataset/x.dat")``,
``ref/burgers1d.dat``). What DeepXDE writes for it by a relative path goes to a
folder of ours instead (a run's ``files/``, the dry call's temporary folder), so
that runs never collide and the user's folder keeps nothing of them:

* ``Model.save(path)``: ``ModelCheckpoint``'s files and ``model_save_path``;
* ``VariableValue``, ``OperatorPredictor`` (``FirstDerivative``) and
  ``MovieDumper`` ``filename``;
* ``dde.saveplot`` (``output_dir``, default the working directory),
  ``save_loss_history``, ``save_best_state`` and ``plot_loss_history``'s file.

The folder of a redirected path is created. An absolute path is the user's own
and is left alone, as is whatever the function writes itself with ``open``. No
link is followed there: the folder is refused, naming the link, where it is a
symbolic link, is reached through one inside a folder of ours or holds one
(:func:`~deepxde_lnn.runs.folder.check_no_links`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
from collections.abc import Iterator
from pathlib import Path

import deepxde as dde
from deepxde.utils import external

from ..runs.folder import check_no_links

__all__ = ["writing_to", "working_in", "PATH_ARGUMENTS"]

#: (owner, attribute) -> its arguments that are paths DeepXDE writes to, each
#: marked True where leaving it out means the working directory
PATH_ARGUMENTS: dict[tuple[object, str], dict[str, bool]] = {
    (dde.Model, "save"): {"save_path": False},
    (dde.callbacks.VariableValue, "__init__"): {"filename": False},
    (dde.callbacks.OperatorPredictor, "__init__"): {"filename": False},
    (dde.callbacks.MovieDumper, "__init__"): {"filename": False},
    (external, "saveplot"): {"output_dir": True},
    (external, "save_loss_history"): {"fname": False},
    (external, "save_best_state"): {"fname_train": False, "fname_test": False},
    (external, "plot_loss_history"): {"fname": False},
}

# the modules that re-export a function of ``external`` under its name
_EXPORTS = (dde, dde.utils, external)


def _moved(value, folder: Path, default_here: bool):
    """``value`` below ``folder`` where it is a relative path (its folder
    created); ``folder`` itself for a missing directory marked as the working
    directory's; anything else unchanged."""
    if value is None:
        return str(folder) if default_here else None
    if not isinstance(value, (str, os.PathLike)) or os.path.isabs(value):
        return value
    moved = folder / value
    (moved if default_here else moved.parent).mkdir(parents=True, exist_ok=True)
    return str(moved)


def _redirecting(original, paths: dict[str, bool], folder: Path):
    signature = inspect.signature(original)

    @functools.wraps(original)
    def call(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, default_here in paths.items():
            value = bound.arguments.get(name)
            if name in bound.arguments or default_here:
                bound.arguments[name] = _moved(value, folder, default_here)
        return original(*bound.args, **bound.kwargs)

    return call


@contextlib.contextmanager
def writing_to(folder: str | os.PathLike) -> Iterator[Path]:
    """While the block runs, what DeepXDE writes by a relative path (see the
    module) lands below ``folder`` (created); the working directory is not
    changed. Everything is put back after, whatever the block did.
    ``FolderError`` naming a link on the way to ``folder`` or below it, before
    anything is written."""
    folder = Path(folder).absolute()
    check_no_links(folder)
    folder.mkdir(parents=True, exist_ok=True)
    saved = []
    for (owner, name), paths in PATH_ARGUMENTS.items():
        original = getattr(owner, name)
        wrapped = _redirecting(original, paths, folder)
        places = _EXPORTS if owner is external else (owner,)
        for place in places:
            if getattr(place, name, None) is original:
                saved.append((place, name, original))
                setattr(place, name, wrapped)
    try:
        yield folder
    finally:
        for place, name, original in reversed(saved):
            setattr(place, name, original)


@contextlib.contextmanager
def working_in(path: str | os.PathLike) -> Iterator[None]:
    """Run the block in ``path``, the directory the user launched from: a no-op in
    their own process, a change in a worker process that sits elsewhere (where
    ``path`` is gone, the block runs where it is). The working directory is
    restored after, whatever the block did with it."""
    before = os.getcwd()
    if os.path.isdir(path) and not os.path.samefile(path, before):
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)
