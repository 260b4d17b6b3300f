"""Result folders: whose they are, who holds them, what a run may delete or write,
damaged-but-signed checkpoints and the FEM reference's folder.

Each test reproduces a defect found by probing from outside (issue 24) and fails
without its fix.
"""

import errno
import functools
import json
import math
import os
import shutil
from pathlib import Path

import pytest
import torch
from helpers import TINY, SignalAt, run_cli, tiny_case

import deepxde_lnn
from deepxde_lnn import cli, fem
from deepxde_lnn.analysis.figures import draw_missing
from deepxde_lnn.config import RunConfig, record_problem
from deepxde_lnn.fem import InvalidReferenceError
from deepxde_lnn.runs import atomic
from deepxde_lnn.runs.checkpoint import (
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from deepxde_lnn.runs.folder import (
    FolderLocked,
    RunFolder,
    WriteFailed,
    check_ours,
    mark,
)
from deepxde_lnn.runs.records import load_runs
from deepxde_lnn.training.runner import RunInterrupted, run

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "reference" / "circular_heat"


def _cli(argv, capsys):
    return run_cli(argv, capsys)


def _one_error_line(io):
    lines = io.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), io.err
    return lines[0]


def _files(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


TINY_RUN = ["run", "laplace", "--method", "pinn", "--seed", "1", "--no-progress"]


# item 2: a refused second process does not touch the running one's files -------


def test_refused_run_leaves_the_lock_holders_temp_files(tmp_path):
    case, out = tiny_case(), tmp_path / "r"
    holder = RunFolder(out)
    holder.prepare()
    with holder.locked():  # the running process, between mkstemp and os.replace
        writing = out / ".checkpoint.pt.k2j4x9ab.tmp"
        writing.write_bytes(b"half a checkpoint being written")
        with pytest.raises(FolderLocked, match="in use by another"):
            run(RunConfig("laplace", "pinn", seed=1, iterations=2), out, problem=case)
        assert writing.read_bytes() == b"half a checkpoint being written"
    # the next run holding the lock removes what a killed writer left
    cfg = RunConfig("laplace", "pinn", seed=1, iterations=2)
    run(cfg, out, problem=case)
    assert not writing.exists() and (out / "metrics.json").is_file()


# item 3: only empty folders or folders of ours; delete only our files -----------


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("record", [False, True])
def test_a_folder_of_someone_elses_files_is_refused_untouched(
    tmp_path, capsys, overwrite, record
):
    out = tmp_path / "mine"
    out.mkdir()
    for name in ("model.pt", "loss.csv", "fields.png", ".notes.txt.tmp", ".X11.tmp"):
        (out / name).write_text(f"my own {name}")
    if record:  # files with a run's names that are not a run's
        (out / "metrics.json").write_text('{"not": "a run record"}')
        (out / "checkpoint.pt").write_text("my own checkpoint")
    before = _files(out)
    argv = [*TINY_RUN, "--iterations", "2", "--out", str(out), *overwrite]
    code, io = _cli(argv, capsys)
    line = _one_error_line(io)
    assert code == 2 and line.startswith(f"error: out: {out} holds files")
    assert _files(out) == before


def test_overwrite_deletes_only_the_files_a_run_writes(tmp_path):
    case, out = tiny_case(), tmp_path / "r"
    run(
        RunConfig("laplace", "pinn", seed=1, iterations=2),
        out,
        problem=case,
    )
    mine = {
        "notes.txt": "mine",
        ".notes.txt.tmp": "mine too",
        ".loss.csv.tmp": "mine, with a dot in the name",
    }
    for name, text in mine.items():
        (out / name).write_text(text)
    cfg = RunConfig("laplace", "pinn", seed=1, iterations=3)
    assert run(cfg, out, problem=case, overwrite=True)["iterations"] == 3
    assert {n: (out / n).read_text() for n in mine} == mine


def test_compare_refuses_a_root_of_someone_elses_files(tmp_path, capsys):
    root = tmp_path / "documents"
    root.mkdir()
    (root / "summary.md").write_text("my summary")
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    code, io = _cli([*argv, "--iterations", "2", "--out", str(root)], capsys)
    assert code == 2 and _one_error_line(io).startswith(f"error: out: {root} holds")
    assert _files(root) == {"summary.md": b"my summary"}
    assert [p.name for p in root.iterdir()] == ["summary.md"]


def test_folders_written_before_markers_are_still_ours(tmp_path):
    case, out = tiny_case(), tmp_path / "r"
    cfg = RunConfig("laplace", "pinn", seed=1, iterations=2)
    record = run(cfg, out, problem=case)
    (out / ".deepxde-lnn").unlink()  # as a run written before markers existed
    assert run(cfg, out, problem=case) == record  # reused
    # the committed records: their roots carry the marker, their run folders
    # their own records; the report reads them as before
    results = REPO / "docs/results/laplace-cpu"
    for path in (results, results / "steps", results / "steps/pinn/seed-888888"):
        check_ours(path)
    assert len(load_runs(results, options=record_problem)) > 0


def test_results_of_ours_inside_a_folder_do_not_make_it_ours(tmp_path, capsys):
    # issue 55, item 1: p/summary.md is the user's; p/results is ours
    p = tmp_path / "p"
    p.mkdir()
    (p / "summary.md").write_text("notes")
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    argv += ["--iterations", "2", "--no-progress"]
    code, _ = _cli([*argv, "--out", str(p / "results")], capsys)
    assert code == 0 and (p / "results" / "summary.md").is_file()
    before = sorted(x.name for x in p.iterdir())
    code, io = _cli([*argv, "--out", str(p)], capsys)
    assert code == 2 and _one_error_line(io).startswith(f"error: out: {p} holds")
    assert "results of ours inside it do not make it ours" in io.err
    assert sorted(x.name for x in p.iterdir()) == before == ["results", "summary.md"]
    assert (p / "summary.md").read_text() == "notes"


# item 9: `reference heat` checks --out first; the shipped reference is kept ------


@pytest.fixture
def no_solving(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("solved before checking --out")

    monkeypatch.setattr(fem.reference, "convergence_study", refuse)


def test_reference_out_is_checked_before_solving(tmp_path, capsys, no_solving):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    for out in (blocker, blocker / "sub", foreign, tmp_path / ("x" * 300)):
        code, io = _cli(
            ["reference", "heat", "--levels", "3", "--out", str(out)], capsys
        )
        assert code == 2 and _one_error_line(io).startswith("error: out:")
    assert (foreign / "notes.txt").read_text() == "mine"


def test_shipped_reference_is_not_replaced_unless_asked(
    tmp_path, capsys, monkeypatch, no_solving
):
    before = _files(SHIPPED)
    monkeypatch.chdir(REPO)  # the default --out is the package's own data there
    code, io = _cli(["reference", "heat", "--levels", "3"], capsys)
    line = _one_error_line(io)
    assert code == 2 and "shipped with deepxde-lnn" in line and "--overwrite" in line
    assert _files(SHIPPED) == before
    code, io = _cli(
        ["reference", "heat", "--levels", "1", "--out", str(tmp_path)], capsys
    )
    assert code == 2 and "levels" in _one_error_line(io)
    with pytest.raises(AssertionError, match="solved"):  # asked: it would solve
        cli.main(["reference", "heat", "--levels", "3", "--overwrite"])


def _edited_reference(tmp_path, edit):
    out = tmp_path / "ref"
    shutil.copytree(SHIPPED, out)
    manifest = json.loads((out / "manifest.json").read_text())
    edit(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


@pytest.mark.parametrize(
    "edit, why",
    [
        (lambda m: m["parameters"].update(levels=1, nrefs=[10]), "at least 3 levels"),
        (lambda m: m["parameters"].update(nrefs=[9, 10]), "does not list 6 levels"),
        (lambda m: m["slopes"].update(diff_L2=None), "does not converge"),
        (lambda m: m["slopes"].update(diff_L2=0.4), "does not converge"),
    ],
)
def test_load_reference_checks_levels_and_convergence(tmp_path, edit, why):
    with pytest.raises(InvalidReferenceError, match=why):
        fem.load_reference(_edited_reference(tmp_path, edit))


def test_deeply_nested_manifest_is_an_invalid_reference(tmp_path):
    out = tmp_path / "ref"
    shutil.copytree(SHIPPED, out)
    (out / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidReferenceError, match="nested too deeply"):
        fem.load_reference(out)


# item 4: a checkpoint with a valid digest but bad contents ----------------------


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    """An unfinished tiny run (checkpoint at step 23 of 40), made once."""
    case, cfg = tiny_case(), RunConfig("laplace", "pinn", seed=1, **TINY)
    out = tmp_path_factory.mktemp("cut") / "cut"
    with pytest.raises(RunInterrupted):
        run(cfg, out, problem=case, callbacks=[SignalAt(23)])
    return case, cfg, out


def _interrupted(tmp_path, cut):
    """A copy of the unfinished run in ``tmp_path``."""
    case, cfg, out = cut
    shutil.copytree(out, tmp_path / "cut")
    return case, cfg, tmp_path / "cut"


def _drop(key):
    return lambda s: s.pop(key)


def _first_weight(s):
    name = next(iter(s["net"]))
    s["net"][name] = torch.zeros(3, 3)


def _adam_moment(s):
    entry = next(iter(s["opt"]["state"].values()))
    entry["exp_avg"] = torch.zeros(7)


@pytest.mark.parametrize(
    "edit, why",
    [
        (_drop("net"), "'net' missing"),
        (_drop("rng"), "'rng' missing"),
        (lambda s: s.update(step=-1), "step must be an integer >= 0"),
        (lambda s: s.update(step=10**6), "the loss table must have 1000000 rows"),
        (lambda s: s.update(seconds=math.nan), "seconds must be a finite number"),
        (lambda s: s.update(loss=s["loss"][:3]), "loss table must have"),
        (lambda s: s.update(phase="sgd"), "phase must be one of adam, lbfgs, nncg"),
        (_first_weight, "the network does not fit"),
        (_adam_moment, "'exp_avg' does not fit"),
        (lambda s: s["rng"].update(torch=torch.zeros(3)), "rng.torch must be"),
    ],
)
def test_signed_checkpoint_with_bad_contents_is_refused(tmp_path, cut, edit, why):
    case, cfg, out = _interrupted(tmp_path, cut)
    state = load_checkpoint(out / "checkpoint.pt")
    edit(state)
    save_checkpoint(out / "checkpoint.pt", state)  # a matching SHA-256
    with pytest.raises(CheckpointError, match=why) as err:
        run(cfg, out, problem=case, resume=True)
    assert str(out / "checkpoint.pt") in str(err.value)
    assert not (out / "metrics.json").exists()


def test_checkpoint_at_or_past_the_end_is_refused(tmp_path, cut):
    case, cfg, out = _interrupted(tmp_path, cut)
    state = load_checkpoint(out / "checkpoint.pt")
    rows = state["loss"]
    state["loss"] = torch.cat([rows, rows[-1:].repeat(40 - len(rows), 1)])
    state["step"] = 40  # the run's end: nothing left to train
    if state["scheduler"] is not None:  # its schedule there too
        state["scheduler"]["last_epoch"] = 40
    save_checkpoint(out / "checkpoint.pt", state)
    with pytest.raises(CheckpointError, match="step 40 is not before the end 40"):
        run(cfg, out, problem=case, resume=True)


# item 5: figures missing after a kill between the record and them ---------------


def test_missing_figures_of_a_finished_run_are_redrawn(tmp_path):
    case, out = tiny_case(), tmp_path / "r"
    cfg = RunConfig("laplace", "pinn", seed=1, iterations=2)
    figures = functools.partial(draw_missing, problem=case)  # as the experiments
    record = run(cfg, out, problem=case, on_done=figures)
    drawn = {n: (out / n).read_bytes() for n in ("fields.png", "loss.png")}
    for name in drawn:  # killed after metrics.json, before the figures
        (out / name).unlink()
    assert run(cfg, out, problem=case, on_done=figures) == record  # reused
    assert {n: (out / n).read_bytes() for n in drawn} == drawn


# item 6: odd locks, long names, full disks, empty --out, contradictory flags -----


@pytest.mark.parametrize("kind", ["folder", "symlink"])
def test_a_lock_that_is_not_a_file_is_one_error(tmp_path, capsys, kind):
    out, victim = tmp_path / "r", tmp_path / "victim"
    out.mkdir()
    mark(out)  # a folder of ours
    victim.write_text("precious")
    if kind == "folder":
        (out / ".lock").mkdir()
    else:
        (out / ".lock").symlink_to(victim)
    code, io = _cli([*TINY_RUN, "--iterations", "2", "--out", str(out)], capsys)
    line = _one_error_line(io)
    assert code == 2 and str(out / ".lock") in line and "lock file" in line
    assert victim.read_text() == "precious" and not (out / "metrics.json").exists()


def test_an_over_long_out_is_one_error(tmp_path, capsys):
    out = tmp_path / ("x" * 300)
    for argv in (TINY_RUN, ["compare", "laplace", "--methods", "pinn"]):
        code, io = _cli([*argv, "--iterations", "2", "--out", str(out)], capsys)
        assert code == 2 and "File name too long" in _one_error_line(io)


@pytest.mark.parametrize(
    "err, text",
    [(errno.ENOSPC, "No space left on device"), (errno.EPERM, "not permitted")],
)
def test_a_write_failing_mid_run_keeps_the_last_checkpoint(
    tmp_path, monkeypatch, err, text
):
    case, out, calls = tiny_case(), tmp_path / "r", []
    cfg = RunConfig("laplace", "pinn", seed=1, **TINY)  # checkpoints at 10, 20, 30
    real = atomic.os.fsync

    def failing(fd):
        calls.append(fd)
        if len(calls) == 3:  # the marker, the first checkpoint, the second one
            raise OSError(err, os.strerror(err))
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", failing)
    with pytest.raises(WriteFailed) as caught:
        run(cfg, out, problem=case)
    line = str(caught.value)
    assert "\n" not in line and text in line
    assert line.startswith(f"out: cannot write {out / 'checkpoint.pt'} (")
    assert line.endswith(
        f"the last checkpoint {out / 'checkpoint.pt'} is kept (--resume)"
    )
    assert load_checkpoint(out / "checkpoint.pt")["step"] == 10
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    monkeypatch.setattr(atomic.os, "fsync", real)
    assert run(cfg, out, problem=case, resume=True)["resumed"] is True


def test_empty_out_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the default folders would go
    for argv in (
        [*TINY_RUN, "--iterations", "2"],
        ["compare", "laplace", "--iterations", "2"],
        ["reference", "heat"],
    ):
        code, io = _cli([*argv, "--out", ""], capsys)
        assert code == 2 and "--out" in _one_error_line(io)
    assert list(tmp_path.iterdir()) == []


def test_overwrite_with_resume_is_refused_naming_both(tmp_path, capsys, cut):
    case, cfg, out = _interrupted(tmp_path, cut)
    before = _files(out)
    argv = [*TINY_RUN, "--iterations", "40", "--out", str(out)]
    code, io = _cli([*argv, "--overwrite", "--resume"], capsys)
    line = _one_error_line(io)
    assert code == 2 and "--overwrite" in line and "--resume" in line
    assert _files(out) == before


@pytest.mark.parametrize("flags", [["--resume", "--overwrite"], ["--resume"]])
def test_a_refused_command_creates_no_folder(tmp_path, capsys, flags):
    # issue 43, item 14: the refused run once left an empty new --out behind
    out = tmp_path / "new" / "out"
    argv = [*TINY_RUN, "--iterations", "2", *flags, "--out", str(out)]
    code, io = _cli(argv, capsys)
    assert code == 2 and "--resume" in _one_error_line(io)
    assert list(tmp_path.iterdir()) == []


# committed records: a run kept as its metrics.json alone is finished ------------


@pytest.mark.slow  # trains for seconds
def test_a_run_pruned_to_its_record_is_reused_and_summarised(tmp_path):
    """Runs committed as their ``metrics.json`` alone (docs/results) are finished
    runs: ``compare`` reuses them (adding seeds beside them, as
    ``--until-decided`` does) instead of training them again, and the summary
    leaves them out of its figure only."""
    case, root = tiny_case(), tmp_path / "c"
    kw = dict(methods=["pinn"], iterations=2, out=root, progress=False)
    first = deepxde_lnn.compare(case, seeds=[1], **kw)
    run_dir = root / "pinn" / "seed-1"
    record = json.loads((run_dir / "metrics.json").read_text())
    for p in run_dir.iterdir():
        if p.name not in ("metrics.json", ".deepxde-lnn", ".lock"):
            p.unlink()  # pruned, as for a commit
    again = deepxde_lnn.compare(case, seeds=[1, 2], **kw)
    assert sorted(p.name for p in run_dir.iterdir() if not p.name.startswith(".")) == [
        "metrics.json"
    ]  # not trained again
    assert json.loads((run_dir / "metrics.json").read_text()) == record
    assert (root / "pinn" / "seed-2" / "fields.npz").is_file()
    assert len(again.runs) == 2 and len(first.runs) == 1
    assert (root / "summary.png").is_file()
    # an artifact missing beside others is not a pruned run: trained again
    (root / "pinn" / "seed-2" / "loss.csv").unlink()
    deepxde_lnn.compare(case, seeds=[2], **kw)
    assert (root / "pinn" / "seed-2" / "loss.csv").is_file()
