"""Files read back from a result folder cannot stall, exhaust or crash a reader,
and a checkpoint cannot set a resumed run's optimizer (issue 36, items 7-10).

Each test reproduces a defect found by an outside probe and fails without its fix:
a ``checkpoint.pt`` that is a FIFO or a link to ``/dev/zero`` (item 7), a
``fields.npz`` zip bomb, forged header or missing array (item 8), a checkpoint
whose valid digest covers another lr or malformed entries (item 9), and 1500
nested folders in a result folder (item 10).
"""

import io
import json
import os
import shutil
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import TINY, SignalAt, run_cli, tiny_case
from numpy.lib import format as npy
from test_untrusted import _artifacts, _record, _refused, _write, deadline

from deepxde_lnn import cli, fem
from deepxde_lnn.analysis.figures import load_fields, load_loss
from deepxde_lnn.analysis.summaries import write_summary
from deepxde_lnn.config import RunConfig, record_problem
from deepxde_lnn.fem import InvalidReferenceError
from deepxde_lnn.runs import records
from deepxde_lnn.runs.checkpoint import (
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from deepxde_lnn.runs.folder import FolderError, check_ours, mark
from deepxde_lnn.training.runner import RunInterrupted, run

SHIPPED = Path(__file__).resolve().parents[1] / "reference" / "circular_heat"
COMPARE = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
COMPARE += ["--iterations", "2", "--no-progress", "--threads", "1"]


# item 7: one reader for every file read back ---------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "large"])
def test_compare_reads_a_checkpoint_only_as_a_small_regular_file(
    tmp_path, capsys, kind
):
    out = tmp_path / "c"
    path = out / "pinn" / "seed-1" / "checkpoint.pt"
    path.parent.mkdir(parents=True)
    mark(out), mark(path.parent)  # a result folder of deepxde-lnn from elsewhere
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "large":  # sparse: nothing is written, nothing may be read
        with open(path, "wb") as f:
            f.truncate(records.MAX_CHECKPOINT_BYTES + 1)
    else:
        path.symlink_to("/dev/zero")
    why = {"fifo": "not a regular file", "large": "larger than 1,073,741,824 bytes"}
    with deadline(20):
        code, io_ = run_cli([*COMPARE, "--out", str(out)], capsys)
    _refused(code, io_, path, why.get(kind, "a symbolic link"))
    assert not (out / "pinn" / "seed-1" / "metrics.json").exists()


@pytest.mark.parametrize("name", ["heat_reference.npz", "manifest.json"])
def test_fem_reference_reads_only_regular_files(tmp_path, name):
    out = tmp_path / "ref"
    shutil.copytree(SHIPPED, out)
    (out / name).unlink()
    os.mkfifo(out / name)
    with deadline(10), pytest.raises(InvalidReferenceError, match="not a regular"):
        fem.load_reference(out)


def test_a_loss_table_whose_header_does_not_fit_is_refused(tmp_path):
    folder = tmp_path / "r"
    _write(tmp_path, _record(), name="r")
    _artifacts(folder)
    (folder / "loss.csv").write_text("step,total,pde,bc\n0,1.0,1.0\n1,0.5,0.5\n")
    with pytest.raises(FolderError, match="4 names for 3 columns") as err:
        load_loss(folder)  # run_figures: an IndexError drawing the 4th
    assert str(err.value).startswith(str(folder / "loss.csv"))


# item 8: fields.npz, its inflated size and its headers checked before loading -----


def _fields(folder, **arrays) -> dict:
    """``fields.npz`` as :func:`_artifacts` writes it, ``arrays`` replaced (None:
    left out); its arrays."""
    _artifacts(folder)
    with np.load(folder / "fields.npz") as f:
        kept = {k: f[k] for k in f.files}
    kept.update(arrays)
    kept = {k: v for k, v in kept.items() if v is not None}
    np.savez_compressed(folder / "fields.npz", **kept)
    return kept


def _summary_refuses(root, folder, problem) -> None:
    """``write_summary`` (what compare runs last) refuses ``fields.npz`` of
    ``folder`` with one ``FolderError`` naming it and ``problem``."""
    with pytest.raises(FolderError, match=problem) as err:
        write_summary(root)
    assert str(err.value).startswith(str(folder / "fields.npz"))


def test_fields_npz_inflating_beyond_the_cap_is_refused_unread(tmp_path, monkeypatch):
    """A zip bomb: 8 MiB of zeros in a few kB, against a cap of 1 MiB."""
    folder = tmp_path / "pinn" / "seed-1"
    _write(tmp_path, _record(), name="pinn/seed-1")
    _fields(folder, pred=np.zeros((2**20, 1)))
    assert (folder / "fields.npz").stat().st_size < 2**15
    monkeypatch.setattr(records, "MAX_INFLATED_BYTES", 2**20, raising=False)
    _summary_refuses(tmp_path, folder, "inflate beyond 1,048,576 bytes")
    tracemalloc.start()
    try:
        with pytest.raises(FolderError):
            load_fields(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**19  # never inflated


def _forged(folder, name: str, shape: tuple, data: bytes = b"\0" * 64) -> None:
    """``fields.npz`` whose array ``name`` has a header declaring ``shape``
    (float64) over ``data``."""
    _fields(folder)
    buf = io.BytesIO()
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    npy.write_array_header_1_0(buf, header)
    with zipfile.ZipFile(folder / "fields.npz") as z:
        members = {n: z.read(n) for n in z.namelist()}
    members[f"{name}.npy"] = buf.getvalue() + data
    with zipfile.ZipFile(folder / "fields.npz", "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in members.items():
            z.writestr(n, b)


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda f: _forged(f, "x", (10**12, 1)), "inflate beyond 268,435,456"),
        (lambda f: _forged(f, "exact", (16, 1), b"\0" * 8), "unreadable"),
        (lambda f: _fields(f, mask=None), "no array 'mask'"),
        (lambda f: _fields(f, fields=None), "no array 'fields'"),
        (lambda f: _fields(f, mask=np.zeros((4, 4))), "array 'mask' is of type"),
        (lambda f: _fields(f, x=np.zeros(16)), "array 'x' has shape"),
        (lambda f: _fields(f, mask=np.ones((3, 3), bool)), "axes and mask"),
        (lambda f: _fields(f, pred=np.zeros((16, 2))), "pred has not the shape"),
        (lambda f: _fields(f, inputs=np.array(["x"])), "fields and inputs"),
    ],
)
def test_a_forged_or_incomplete_fields_npz_is_one_error(tmp_path, damage, problem):
    folder = tmp_path / "pinn" / "seed-1"
    _write(tmp_path, _record(), name="pinn/seed-1")
    damage(folder)
    _summary_refuses(tmp_path, folder, problem)


def test_fields_npz_as_the_runner_writes_it_loads(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    _artifacts(folder)
    f = load_fields(folder)
    assert f["x"].shape == (16, 2) and f["mask"].shape == (4, 4)


# item 9: a resumed run's optimizer settings come from its configuration ------------


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    """A tiny run with an lr schedule cut at step 23 of 40 (a checkpoint)."""
    case, cfg = tiny_case(), RunConfig("laplace", "pinn", seed=1, **TINY)
    assert case.profile("quick").decay is not None  # a scheduler to restore
    out = tmp_path_factory.mktemp("cut") / "cut"
    with pytest.raises(RunInterrupted):
        run(cfg, out, problem=case, callbacks=[SignalAt(23)])
    return case, cfg, out


def _edited(tmp_path, cut, edit):
    """A copy of the cut run whose checkpoint ``edit`` changed (a valid SHA)."""
    case, cfg, out = cut
    shutil.copytree(out, tmp_path / "cut")
    path = tmp_path / "cut" / "checkpoint.pt"
    state = load_checkpoint(path)
    edit(state)
    save_checkpoint(path, state)
    return case, cfg, tmp_path / "cut"


def _other_settings(state) -> None:
    state["opt"]["param_groups"][0].update(
        lr=10.0, initial_lr=10.0, betas=(0.5, 0.6), eps=1e-2, weight_decay=0.1
    )
    sched = state["scheduler"]
    sched.update(base_lrs=[10.0], _last_lr=[10.0], gamma=2.0)


@pytest.mark.slow
def test_resume_takes_the_optimizer_settings_from_the_configuration(tmp_path, cut):
    case, cfg, out = _edited(tmp_path, cut, _other_settings)
    full = run(cfg, tmp_path / "full", problem=case)
    resumed = run(cfg, out, problem=case, resume=True)
    assert resumed["resumed"] and resumed["metrics"] == full["metrics"]
    loss = (out / "loss.csv").read_bytes()
    assert loss == (tmp_path / "full" / "loss.csv").read_bytes()


def _set(*keys, value):
    """An edit that sets ``state[k0][k1]...`` to ``value``."""

    def edit(state):
        for k in keys[:-1]:
            state = state[k]
        state[keys[-1]] = value

    return edit


@pytest.mark.parametrize(
    "edit, entry",
    [
        (_set("rng", "numpy", 1, value=5), "rng.numpy must be"),
        (_set("rng", "python", value=(3, (1, 2), None)), "rng.python must be"),
        (_set("rng", "sampling", value="x"), "rng.sampling must be"),
        (_set("opt", "param_groups", 0, "lr", value="abc"), "param_groups[0].lr"),
        (_set("opt", "param_groups", 0, "betas", value=(5, -3)), "[0].betas"),
        (_set("opt", "param_groups", 0, "eps", value=-1.0), "param_groups[0].eps"),
        (_set("opt", "state", 0, "step", value="x"), "opt.state[0].step"),
        (_set("scheduler", "last_epoch", value="x"), "scheduler.last_epoch"),
        (_set("scheduler", "base_lrs", value=[{"a": 1}]), "scheduler.base_lrs"),
        (_set("data", value={"weights": "x"}), "'weights'"),
        (_set("stack_sizes", value=[[0, 0]]), "stack_sizes must hold"),
        (_set("stack_sizes", value=[[0, 1], [10**6, 2]]), "stack_sizes must end"),
    ],
)
def test_malformed_checkpoint_entries_are_one_checkpoint_error(
    tmp_path, cut, edit, entry
):
    case, cfg, out = _edited(tmp_path, cut, edit)
    with pytest.raises(CheckpointError) as err:
        run(cfg, out, problem=case, resume=True)
    message = str(err.value)
    assert str(out / "checkpoint.pt") in message and entry in message, message
    assert "delete it to restart the run from scratch" in message
    assert not (out / "metrics.json").exists()  # as any damaged checkpoint


# item 10: walks of a result folder are bounded and follow no link -----------------


@pytest.fixture
def nested():
    """``nest(root)``: ``root/d/d/.../d``, 1500 folders deep (made and removed
    without recursion: ``Path.mkdir``, ``shutil.rmtree`` recurse)."""
    made = []

    def nest(root, depth: int = 1500):
        fd = os.open(root, os.O_RDONLY)
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        made.append((root, depth))
        return root.joinpath(*["d"] * depth)

    yield nest
    for root, depth in made:  # bottom up, by folder handles
        bottom = root.joinpath(*["d"] * depth)
        for p in bottom.iterdir():  # what a test put there
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        fd = os.open(bottom, os.O_RDONLY)
        for _ in range(depth):
            up = os.open("..", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = up
            os.rmdir("d", dir_fd=fd)
        os.close(fd)


def test_report_survives_1500_nested_folders(tmp_path, capsys, nested):
    root = tmp_path / "runs"
    _write(root, _record())
    deep = nested(root)
    _write(deep, _record(seed=2), name="a")  # too deep to be a record
    out = tmp_path / "o.md"
    code, io_ = run_cli(["report", str(root), "--out", str(out)], capsys)
    assert code == 0, io_.err
    assert "RecursionError" not in io_.err and out.is_file()


@pytest.mark.slow
def test_compare_survives_1500_nested_folders(tmp_path, capsys, nested):
    out = tmp_path / "c"
    assert cli.main([*COMPARE, "--out", str(out)]) == 0
    capsys.readouterr()
    nested(out)
    code, io_ = run_cli([*COMPARE, "--out", str(out)], capsys)
    assert code == 0, io_.err
    assert "done, reused" in io_.out and (out / "summary.md").is_file()


def test_walks_are_bounded_and_follow_no_link(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    _write(outside, _record(), name="a")
    _write(root, _record(seed=2), name="a")
    (root / "link").symlink_to(outside, target_is_directory=True)
    deepest = root.joinpath(*["d"] * (records.MAX_DEPTH - 1))
    _write(deepest, _record(seed=3), name="b")  # MAX_DEPTH folders deep
    _write(deepest, _record(seed=4), name="d/b")  # one more
    found = records.load_runs(root, "report", options=record_problem)
    seeds = [r["seed"] for r in found]
    assert sorted(seeds) == [2, 3]  # not through the link, not deeper
    # a folder of the user's files holding a link to a result folder is not ours
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    (mine / "results").symlink_to(outside, target_is_directory=True)
    with pytest.raises(FolderError, match="holds files deepxde-lnn did not write"):
        check_ours(mine)


def test_the_walk_finds_records_where_results_are_kept(tmp_path):
    """The walk finds what ``rglob`` found at the depths results are kept."""
    layouts = ["pinn/seed-1", "lr-0.001/pinn/seed-2", "paper/laplace/pinn/seed-3"]
    for seed, name in enumerate(layouts, start=1):
        _write(tmp_path, _record(seed=seed), name=name)
    found = records.find(tmp_path, "metrics.json")
    assert found == sorted(tmp_path.rglob("metrics.json")) and len(found) == 3
    assert all(json.loads(p.read_text())["case"] == "laplace" for p in found)
