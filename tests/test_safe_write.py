"""Writes only where deepxde-lnn may write, and spreadsheets never run its cells
(issue 36, items 3, 4, 5 and 13; a later reliability probe's items 1, 12, 13
and 17 at the end).

A report replaces only a report of deepxde-lnn; a link never makes a folder ours
and is never followed inside a folder of ours; a folder swapped for a link during
a run gets none of the run's files; CSV text cells cannot start a formula. Each
test reproduces a defect found by probing from outside and fails without its fix,
except the guards of what held already (marked so).
"""

import csv
import importlib.util
import io
import json
import math
import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from helpers import TINY, run_cli, tiny_case

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn.analysis import summaries
from deepxde_lnn.analysis.figures import load_loss
from deepxde_lnn.analysis.summaries import write_summary
from deepxde_lnn.checks import check_name
from deepxde_lnn.config import RunConfig
from deepxde_lnn.problems.case import load_file
from deepxde_lnn.problems.metrics import all_fields, field_metrics
from deepxde_lnn.problems.user_files import writing_to
from deepxde_lnn.runs import atomic
from deepxde_lnn.runs.csvtext import formula_safe, read_cell
from deepxde_lnn.runs.folder import FolderError, check_file_ours, check_ours, mark
from deepxde_lnn.runs.records import read_record
from deepxde_lnn.study import reproduction
from deepxde_lnn.study.report import report
from deepxde_lnn.training.artifacts import write_loss
from deepxde_lnn.training.runner import run

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "docs" / "results" / "compare-laplace-quick"  # records only


def _tree(folder: Path) -> dict:
    """Every path below ``folder`` (links not followed) with its bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_file():
            out[rel] = p.read_bytes()
        else:
            out[rel] = "folder"
    return out


def _example(name: str):
    """A module of docs/examples, loaded from its file."""
    spec = importlib.util.spec_from_file_location(name, REPO / "docs/examples" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _one_error_line(io) -> str:
    lines = io.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), io.err
    return lines[0]


# item 3: `report --out` writes a new file or a report of deepxde-lnn only --------


def test_report_refuses_a_file_it_did_not_write(tmp_path, capsys):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.md").write_text("my notes\n")
    before = _tree(tmp_path)
    out = foreign / "notes.md"
    code, io = run_cli(["report", str(RUNS), "--out", str(out)], capsys)
    assert code == 2
    assert _one_error_line(io).startswith(f"error: out: {out} is a file deepxde-lnn")
    assert _tree(tmp_path) == before  # nothing written, no figures' folder


def test_report_refuses_a_figures_folder_of_someone_elses_files(tmp_path):
    foreign = tmp_path / "foreign"
    (foreign / "notes").mkdir(parents=True)
    (foreign / "notes" / "laplace.png").write_bytes(b"my own picture")
    before = _tree(tmp_path)
    with pytest.raises(FolderError, match=r"^out: .*notes holds files deepxde-lnn"):
        report(RUNS, out=foreign / "notes.md")
    assert _tree(tmp_path) == before


def test_report_replaces_its_own_report_and_figures(tmp_path):
    out = tmp_path / "docs" / "R.md"
    first = report(RUNS, out=out)
    text = out.read_bytes()
    assert text.startswith(reproduction.SIGNATURE.encode())
    assert (first.figures / ".deepxde-lnn").is_file()  # the figures' folder is ours
    assert report(RUNS, out=out).out == out and out.read_bytes() == text
    # a report edited below its heading is still the report deepxde-lnn wrote
    out.write_bytes(text + b"\nmy note\n")
    report(RUNS, out=out)
    assert out.read_bytes() == text


def test_report_never_writes_through_a_link(tmp_path):
    mine = tmp_path / "mine.md"
    mine.write_text("my notes\n")
    (tmp_path / "R.md").symlink_to(mine)
    with pytest.raises(FolderError, match="is a symbolic link"):
        report(RUNS, out=tmp_path / "R.md")
    assert mine.read_text() == "my notes\n" and not (tmp_path / "R").exists()


def test_the_committed_report_and_its_figures_are_ours():
    """`make docs` (`deepxde-lnn report docs/results`, default --out) may rebuild
    them: the report begins with its signature, the figures' folder is marked."""
    committed = REPO / "docs" / "REPRODUCTION.md"
    if not committed.exists():
        pytest.skip("docs/REPRODUCTION.md is not beside the tests")
    check_file_ours(committed, reproduction.SIGNATURE)
    check_ours(REPO / "docs" / "REPRODUCTION")
    assert (REPO / "docs" / "REPRODUCTION" / ".deepxde-lnn").is_file()


@pytest.mark.slow  # renders every committed record (about 20 s)
# item 4: ownership and deletion never follow links -------------------------------


def test_a_link_to_a_result_folder_does_not_make_a_folder_ours(tmp_path, capsys):
    user = tmp_path / "documents"
    user.mkdir()
    (user / "summary.md").write_text("my summary")
    # records three levels below: RESULTS/METHOD/seed-S/metrics.json
    steps = REPO / "docs" / "results" / "laplace-cpu" / "steps"
    (user / "results").symlink_to(steps, target_is_directory=True)
    before = _tree(user)
    with pytest.raises(FolderError, match="holds files deepxde-lnn did not write"):
        check_ours(user)
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    code, io = run_cli([*argv, "--iterations", "2", "--out", str(user)], capsys)
    assert code == 2 and _one_error_line(io).startswith(f"error: out: {user} holds")
    assert _tree(user) == before


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_link_inside_a_folder_of_ours_is_never_followed(tmp_path, capsys, where):
    """A link below a compare's root is refused, wherever it points (a link out
    of the root was refused before; one to another folder inside it was
    followed)."""
    root = tmp_path / "cmp"
    elsewhere = root / "lnn" if where == "inside" else tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    mark(root)  # a compare's root
    (root / "pinn").symlink_to(elsewhere, target_is_directory=True)
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    code, io = run_cli([*argv, "--iterations", "2", "--out", str(root)], capsys)
    assert code == 2
    line = _one_error_line(io)  # a link out of the root: it "resolves outside"
    assert str(root / "pinn") in line
    assert where == "outside" or f"{root / 'pinn'} is a symbolic link" in line
    assert list(elsewhere.iterdir()) == []


def test_temp_files_are_removed_without_following_links(tmp_path):
    """Held before too (a linked folder was skipped); kept as its guard now that
    only regular files are removed."""
    folder, kept = tmp_path / "run", tmp_path / "kept"
    folder.mkdir()
    kept.mkdir()
    (kept / "x").write_text("kept")
    (folder / ".loss.csv.abc123.tmp").symlink_to(kept, target_is_directory=True)
    (folder / ".loss.csv.def456.tmp").write_text("a killed write")
    removed = atomic.remove_orphans(folder, ["loss.csv"])
    assert [p.name for p in removed] == [".loss.csv.def456.tmp"]
    assert (kept / "x").read_text() == "kept"


# item 5: a folder swapped for a link during a run gets none of its files --------


class SwapAt(dde.callbacks.Callback):
    """After ``step`` steps, moves ``folder`` away and puts a link to
    ``elsewhere`` in its place (someone with write access to --out)."""

    def __init__(self, step, folder: Path, elsewhere: Path):
        super().__init__()
        self.step, self.seen = step, 0
        self.folder, self.elsewhere = folder, elsewhere

    def on_batch_end(self):
        self.seen += 1
        if self.seen == self.step:
            self.folder.rename(self.folder.with_name("moved"))
            self.folder.symlink_to(self.elsewhere, target_is_directory=True)


def test_a_run_folder_swapped_for_a_link_mid_run_gets_no_write(tmp_path):
    out, elsewhere = tmp_path / "r", tmp_path / "elsewhere"
    elsewhere.mkdir()
    cfg = RunConfig("laplace", "pinn", seed=1, **TINY)  # checkpoints every 10
    swap = SwapAt(15, out, elsewhere)
    with pytest.raises(FolderError, match="changed during the run"):
        run(cfg, out, problem=tiny_case(), callbacks=[swap])
    assert list(elsewhere.iterdir()) == []
    assert (tmp_path / "moved" / "checkpoint.pt").is_file()  # from step 10


def test_a_pinned_folder_swapped_for_a_link_is_refused(tmp_path):
    folder, elsewhere = tmp_path / "f", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    with atomic.pinned(folder):
        atomic.atomic_write_text(folder / "a.txt", "one")
        folder.rename(tmp_path / "moved")
        folder.symlink_to(elsewhere, target_is_directory=True)
        with pytest.raises(FolderError, match=f"out: {folder} changed during"):
            atomic.atomic_write_text(folder / "b.txt", "two")
        with pytest.raises(FolderError, match="changed during"):
            with atomic.pinned(folder):  # pinned again: still the first folder
                pass
    assert list(elsewhere.iterdir()) == []
    atomic.atomic_write_text(folder / "c.txt", "three")  # no longer pinned
    assert (elsewhere / "c.txt").read_text() == "three"


def test_a_compare_root_below_a_sweep_is_pinned_for_its_summary(tmp_path, monkeypatch):
    """A compare holds its root from the check to the summary: the summary of
    a root swapped in between is refused, not written elsewhere."""
    from deepxde_lnn.experiments import orchestration

    root, elsewhere = tmp_path / "sweep" / "lr-0.001", tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copytree(RUNS, elsewhere / "copy")  # a records-only compare root
    real = orchestration.summarized

    def swapped(root, *args, **kwargs):
        root.rename(root.with_name("moved"))
        root.symlink_to(elsewhere / "copy", target_is_directory=True)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(orchestration, "summarized", swapped)
    monkeypatch.setattr(orchestration, "run_all", lambda jobs, o, case: [])
    before = _tree(elsewhere)
    from deepxde_lnn import compare

    with pytest.raises(FolderError, match="changed during the run"):
        # the identity of the committed records: the summary would be written
        compare("laplace", methods=["pinn"], seeds=[888888], out=root, progress=False)
    assert _tree(elsewhere) == before


# item 13: CSV cells, the summary's files, a missing case file -------------------


def test_csv_text_cells_cannot_start_a_formula():
    for text in ("=1+1", "+1", "-A1-A2", "@SUM(A1)", "\tx", "\rx", "'=already"):
        assert formula_safe(text) == "'" + text
        assert read_cell(formula_safe(text)) == text
    for value in ("lnn", "pinn:width=32", -1.5e-3, 0, 3, None):
        assert formula_safe(value) == value  # numbers are numbers, not formulas
        assert value is None or read_cell(str(value)) == str(value)


def _records(tmp_path: Path, case: str) -> Path:
    root = tmp_path / "c"
    for path in RUNS.rglob("metrics.json"):
        rec = json.loads(path.read_text())
        rec["case"] = case
        dest = root / path.relative_to(RUNS)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(rec))
    return root


def test_summary_csv_holds_no_name_a_spreadsheet_would_run(tmp_path):
    """A name beginning like a formula (``-A1-A2``) is no case name: refused
    where a case is declared and in a record read back (one rule), so no such
    cell reaches summary.csv; its numbers read back as written."""
    with pytest.raises(ValueError, match="^case name must be a name"):
        check_name("-A1-A2", "case name")
    with pytest.raises(FolderError, match="case must be a name"):
        write_summary(_records(tmp_path / "bad", "-A1-A2"))
    root = _records(tmp_path, "A1-A2")
    summary = write_summary(root)
    rows = list(csv.DictReader(io.StringIO((root / "summary.csv").read_text())))
    assert {r["case"] for r in rows} == {"A1-A2"}
    got = {(r["method"], r["field"], r["metric"]): float(r["mean"]) for r in rows}
    for row in summary.rows:  # numbers read back as written
        assert got[row["method"], row["field"], row["metric"]] == row["mean"]
    # records only: no figure drawn, none named
    assert summary.files == (root / "summary.md", root / "summary.csv")


def test_loss_csv_names_are_quoted_and_read_back(tmp_path):
    names = ["=HYPERLINK(1)", "-x", "+y", "@z", "'q", "a,b", "pde"]
    table = np.array([[0, 1.5, -2.5e-3, 1, 2, 3, 4, 5, 6]], dtype=float)
    write_loss(tmp_path / "loss.csv", table, names)
    header = next(csv.reader(io.StringIO((tmp_path / "loss.csv").read_text())))
    assert not any(c.startswith(("=", "+", "-", "@")) for c in header)
    got, rows = load_loss(tmp_path)
    assert got == ["step", "total", *names]
    assert rows.tolist() == table.tolist()


def test_compare_names_only_the_summary_files_it_wrote(tmp_path, capsys):
    """Committed records (no artifacts) are reused: no summary.png is drawn, and
    none is printed."""
    out = tmp_path / "c"
    shutil.copytree(RUNS, out)
    code, io = run_cli(["compare", "laplace", "--out", str(out)], capsys)
    assert code == 0, io.err
    line = io.out.strip().splitlines()[-1]
    assert line == f"summary: {out / 'summary.md'}, {out / 'summary.csv'}"
    assert not (out / "summary.png").exists()


def test_a_missing_case_file_is_named_missing(tmp_path, capsys):
    path = tmp_path / "nothere" / "case.py"
    with pytest.raises(ValueError, match=f"^case: no such file: {path}$"):
        load_file(path)
    code, io = run_cli(["compare", str(path), "--iterations", "2"], capsys)
    assert code == 2 and _one_error_line(io) == f"error: case: no such file: {path}"
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="is not a Python file"):
        load_file(tmp_path / "notes.txt")


# issue 43, item 5: a record is always one the package reads back ------------------


def test_a_metric_that_is_not_a_number_is_null_and_the_rest_stay_finite():
    rng = np.random.default_rng(0)
    pred, exact = rng.normal(size=50), rng.normal(size=50)
    e = pred - exact
    assert field_metrics(pred, exact) == {  # as before: the plain formulas
        "RMSE": float(np.sqrt(np.mean(e * e))),
        "MSE": float(np.mean(e * e)),
        "MAE": float(np.mean(np.abs(e))),
        "relL2": float(np.sqrt(np.sum(e * e) / np.sum(exact * exact))),
        "MaxErr": float(np.max(np.abs(e))),
    }
    zero = field_metrics(pred, np.zeros(50))  # a zero truth: no relative error
    assert zero["relL2"] is None
    assert zero["RMSE"] == pytest.approx(np.sqrt(np.mean(pred**2)))
    huge = field_metrics(np.array([2.0]), np.array([1e308]))  # squares overflow
    assert huge == {
        "RMSE": pytest.approx(1e308),
        "MSE": None,
        "MAE": pytest.approx(1e308),
        "relL2": pytest.approx(1.0),
        "MaxErr": pytest.approx(1e308),
    }
    # issue 55, item 3: a truth near zero: a relative error beyond float64 is none
    tiny = field_metrics(np.array([1.0]), np.array([5e-324]))
    assert tiny["relL2"] is None and tiny["RMSE"] == 1.0
    assert field_metrics(np.ones(3), np.full(3, 1e-161))["relL2"] == pytest.approx(
        1e161
    )
    both = all_fields(np.ones((4, 2)), np.c_[np.ones(4), np.zeros(4)], ["a", "b"])
    assert both["Avg"]["relL2"] is None and both["Avg"]["RMSE"] == 0.5


def test_json_is_never_written_with_a_number_strict_json_has_not(tmp_path):
    path = tmp_path / "metrics.json"
    for bad in (math.inf, -math.inf, math.nan):
        record = {"case": "x", "metrics": {"u": {"RMSE": 1.0, "relL2": bad}}}
        with pytest.raises(ValueError, match=r"metrics\.json: metrics\.u\.relL2 is"):
            atomic.write_json(path, record)
        assert list(tmp_path.iterdir()) == []
    atomic.write_json(path, {"metrics": {"u": {"relL2": None}}, "list": [1.5]})
    assert read_record(path)["metrics"]["u"]["relL2"] is None


def test_a_zero_truth_is_recorded_read_back_and_summarised(tmp_path, capsys):
    case = replace(tiny_case(), exact=lambda x: np.zeros((len(x), 1)))
    out, quiet = tmp_path / "o", dict(workers=1, progress=False)
    kw = dict(methods=["pinn", "lnn"], seeds=[1, 2], iterations=3, out=out)
    first = deepxde_lnn.compare(case, **kw, **quiet)  # once stuck: "Infinity"
    record = read_record(out / "pinn" / "seed-1" / "metrics.json")
    assert record["metrics"]["phi"]["relL2"] is None
    again = deepxde_lnn.compare(case, **kw, **quiet)  # read back and reused
    assert {r.status for r in again.runs} == {"reused"}
    assert "relL2 —" in capsys.readouterr().out  # each run's line
    row = next(r for r in first.summary if r["metric"] == "relL2")
    assert row["mean"] is None and row["n"] == 0
    table = (out / "summary.md").read_text()
    assert "| pinn | 2 |" in table and " | — | " in table and "nan" not in table
    assert "relL2 — RMSE" in repr(again.runs[0])


def test_a_true_value_of_zero_is_recorded_and_read_back(tmp_path):
    def train(net):
        c = dde.Variable(2.0)
        inverse = _example("diffusion_inverse.py")
        data = inverse.diffusion_data(c, points=16, sides=6, start=4, seen=5, test=30)
        model = dde.Model(data, net)
        model.compile("adam", lr=1e-2, external_trainable_variables=c)
        model.train(iterations=3, display_every=1, verbose=0)
        return model

    nets = {"fnn": lambda: dde.nn.FNN([2, 8, 1], "tanh", "Glorot uniform")}
    out = tmp_path / "o"
    for truth in (0.0, 1e308):
        kw = dict(train=train, nets=nets, seeds=[1], true_values={"C": truth})
        deepxde_lnn.compare(**kw, out=out / str(truth), progress=False)
        record = read_record(out / str(truth) / "fnn" / "seed-1" / "metrics.json")
        error = record["variables"]["C"]["relative_error"]
        assert error is None if truth == 0 else error == pytest.approx(1.0)
        assert record["extra_metrics"]["C"]["MSE" if truth else "relL2"] is None
        again = deepxde_lnn.compare(**kw, out=out / str(truth), progress=False)
        assert again.runs[0].status == "reused"


# reliability probe: links where a run's function or a report writes, empty input -


def _saves_its_plot(net):
    """A ``train(net)`` ending in ``dde.saveplot(..., issave=True)``: its files
    by relative paths, in the run's ``files/``."""
    data = dde.data.PDE(
        dde.geometry.Interval(0, 1), lambda x, u: dde.grad.hessian(u, x) + 1,
        [], 8, 2, solution=lambda x: x * (1 - x) / 2, num_test=5,
    )  # fmt: skip
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    history, state = model.train(iterations=2, verbose=0)
    dde.saveplot(history, state, issave=True, isplot=False)
    return model


FNN = {"fnn": lambda: dde.nn.FNN([1, 4, 1], "tanh", "Glorot uniform")}
QUIET = dict(verbose=False, progress=False, workers=1)


@pytest.mark.parametrize("linked", ["files", "files/train.dat"])
def test_a_link_in_a_runs_files_is_refused_before_training(tmp_path, linked):
    """Item 1: a run's ``files/`` linked to a user's folder (or a file there
    linked to theirs) was followed: DeepXDE's files replaced the user's. Now
    the command stops before any of its runs trains."""
    out, user = tmp_path / "out", tmp_path / "user"
    run_dir = out / "fnn" / "seed-1"
    (run_dir / "files").mkdir(parents=True)
    mark(out), mark(run_dir)  # a marked result folder, as resumed
    user.mkdir()
    (user / "train.dat").write_text("the user's own data")
    link = run_dir / linked
    if linked == "files":
        (run_dir / "files").rmdir()
        link.symlink_to(user, target_is_directory=True)
    else:
        link.symlink_to(user / "train.dat")
    before = _tree(user)
    kw = dict(train=_saves_its_plot, nets=FNN, seeds=[0, 1], out=out)
    with pytest.raises(FolderError, match=f"^out: {link} is a symbolic link"):
        deepxde_lnn.compare(**kw, **QUIET)
    assert _tree(user) == before
    assert not (out / "fnn" / "seed-0").exists()  # seed 0, first, did not run
    with writing_to(tmp_path / "mine") as folder:  # a new folder: written in
        assert folder.is_dir()
    (tmp_path / "mine" / "sub").symlink_to(user, target_is_directory=True)
    with pytest.raises(FolderError, match=f"{tmp_path / 'mine' / 'sub'} is a"):
        with writing_to(tmp_path / "mine"):  # a link below the folder
            pass


def test_a_report_whose_figures_folder_is_a_link_is_refused(tmp_path):
    """Item 13: the figures' folder (the report's name without ``.md``) linked
    to an empty folder of the user's was written through."""
    user = tmp_path / "pictures"
    user.mkdir()
    (tmp_path / "R").symlink_to(user, target_is_directory=True)
    with pytest.raises(FolderError, match=f"^out: {tmp_path / 'R'} is a symbolic"):
        report(RUNS, out=tmp_path / "R.md")
    assert list(user.iterdir()) == [] and not (tmp_path / "R.md").exists()


def test_a_report_of_no_folders_is_refused(tmp_path):
    """Item 17: ``report([])`` wrote a report of 0 runs of 0 cases."""
    with pytest.raises(ValueError, match="^runs_dirs: give at least one folder"):
        deepxde_lnn.report([], out=tmp_path / "R.md")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # two compares (about 5 s)
def test_a_second_compare_into_one_folder_says_it_replaced_the_summary(tmp_path):
    """Item 12: a compare of other seeds in the same folder replaced the first
    one's summary.md without a word; it names the first one's runs as excluded
    and says that its summary replaced theirs (it never pools them)."""
    kw = dict(train=_saves_its_plot, nets=FNN, out=tmp_path / "o", **QUIET)
    first = deepxde_lnn.compare(**kw, seeds=[0])
    assert summaries.REPLACED not in first.markdown and first.excluded == ()
    second = deepxde_lnn.compare(**kw, seeds=[1])
    md = (tmp_path / "o" / "summary.md").read_text()
    assert md == second.markdown and summaries.REPLACED in md
    assert "1 run of a seed not asked for (0)" in md
    assert second.excluded == ("1 run of a seed not asked for (0)",)
    assert "excluded (not asked for): 1 run of a seed" in repr(second)
