"""Results that must never be pooled or borrowed (issue 36, items 1 and 2).

* A compare's summary and verdicts hold only the runs it asked for (its
  configuration, methods and seeds); other records in the folder are listed as
  excluded, never averaged in.
* A problem of the user's own named like a registered case (a case file with
  ``name="laplace"``) never reuses the registered case's runs, nor they its runs,
  and never gets the paper's numbers.
"""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli, tiny_case

import deepxde_lnn
from deepxde_lnn.api import problem_of
from deepxde_lnn.config import RunConfig
from deepxde_lnn.runs import records
from deepxde_lnn.runs.folder import FolderError, RunFolder
from deepxde_lnn.study import registry, reproduction

REPO = Path(__file__).resolve().parents[1]
POISSON = REPO / "docs" / "examples" / "poisson_case.py"
QUIET = dict(workers=1, progress=False, verbose=False)
TINY = tiny_case("laplace", n=8, grid_n=9)


@pytest.fixture
def laplace(monkeypatch):
    """``"laplace"`` by name is a tiny copy of the registered case (fast runs)."""
    monkeypatch.setattr(registry, "get", lambda name: TINY)


def _plant(src: Path, dst: Path, **changes) -> None:
    """A copy of the run folder ``src`` at ``dst``, its record changed."""
    shutil.copytree(src, dst)
    rec = json.loads((dst / "metrics.json").read_text())
    (dst / "metrics.json").write_text(json.dumps({**rec, **changes}))


# --- item 1: a summary never pools configurations -----------------------------------


@pytest.mark.slow  # trains for seconds
def test_compare_summarises_only_the_runs_it_asked_for(tmp_path, laplace):
    root = tmp_path / "mix"
    deepxde_lnn.compare("laplace", seeds=[1, 2], iterations=3, out=root, **QUIET)
    _plant(root / "lnn" / "seed-1", root / "lnn" / "seed-9", seed=9, iterations=3000)
    res = deepxde_lnn.compare("laplace", seeds=[3, 4], iterations=5, out=root, **QUIET)
    # a run of a method not asked for, of the very configuration asked for
    _plant(root / "lnn" / "seed-3", root / "rezero" / "seed-3", method="rezero")
    again = deepxde_lnn.compare(
        "laplace", seeds=[3, 4], iterations=5, out=root, **QUIET
    )
    for r in (res, again):
        rmse = [row for row in r.summary if row["metric"] == "RMSE"]
        assert {(row["method"], row["n"], row["seeds"]) for row in rmse} == {
            ("lnn", 2, "3 4"),
            ("pinn", 2, "3 4"),
        }
        (v,) = r.verdicts
        assert v.method == "lnn" and (v.ci.n_a, v.ci.n_b) == (2, 2)
    md = (root / "summary.md").read_text()
    assert md == again.markdown
    assert "Profile `quick`, 5 iterations" in md and "rezero" not in md.split("Excl")[0]
    excluded = [line for line in md.splitlines() if line.startswith("Excluded")]
    assert excluded == [
        "Excluded (not asked for, never pooled): 4 runs of another configuration "
        "(iterations 3), 1 run of another configuration (iterations 3000), "
        "1 run of a method not asked for (rezero)."
    ]
    csv = (root / "summary.csv").read_text()
    assert "rezero" not in csv and ",1 2," not in csv
    # seeds run before, of the asked configuration, but not asked for now
    fewer = deepxde_lnn.compare("laplace", seeds=[4], iterations=5, out=root, **QUIET)
    assert {row["seeds"] for row in fewer.summary} == {"4"}
    assert "2 runs of a seed not asked for (3)" in fewer.markdown


@pytest.mark.slow  # trains for seconds
def test_the_cli_compare_summary_names_the_runs_it_left_out(tmp_path, laplace, capsys):
    out = tmp_path / "base"
    argv = ["compare", "laplace", "--iterations", "2", "--threads", "1"]
    argv += ["--workers", "1", "--no-progress", "--out", str(out)]
    assert run_cli([*argv, "--seeds", "1,2"], capsys)[0] == 0
    code, io = run_cli([*argv[:3], "3", *argv[4:], "--seeds", "3"], capsys)
    assert code == 0, io.err
    md = (out / "summary.md").read_text()
    assert "3 iterations" in md and "| lnn | 1 |" in md and "n=1/1" in md
    assert "4 runs of another configuration (iterations 2)" in md


def test_a_records_identity_is_the_identity_of_the_run_that_wrote_it():
    cfg = RunConfig("laplace", "pinn", 1, iterations=5, lbfgs=0).resolved(TINY)
    rec = {**cfg.identity(), "train_seconds": 1.0, "optimizer": "Adam(...)"}
    assert RunConfig.identity_of(rec) == cfg.identity()
    # an older record names its schedule in the optimizer's text only
    old = {k: v for k, v in rec.items() if k != "decay"}
    old["optimizer"] = "Adam(...), lr decay ('exponential', 0.998466120868281)"
    assert RunConfig.identity_of(old) == cfg.identity()
    assert RunConfig.identity_of({**rec, "loss_weights": [1, 2]}) != cfg.identity()


# --- item 2: a user's case never borrows a built-in case's runs or numbers ---------


def _laplace_named_poisson(tmp_path) -> Path:
    """A user's 1-D Poisson case file that calls itself ``laplace``."""
    text = POISSON.read_text().replace('name="poisson_1d"', 'name="laplace"')
    assert 'name="laplace"' in text
    path = tmp_path / "my_laplace.py"
    path.write_text(text)
    return path


# the same options for both problems: only what the problem is differs
SAME = dict(methods=["pinn"], seeds=[1], iterations=3, lr=1e-3, **QUIET)
SAME.update(decay=("exponential", 0.99), dtype="float32", profile="quick")


@pytest.mark.slow  # trains for seconds
def test_a_case_file_named_like_a_registered_case_never_reuses_its_runs(
    tmp_path, laplace
):
    root = tmp_path / "c"
    builtin = deepxde_lnn.compare("laplace", out=root, **SAME)
    assert "problem" not in builtin.runs[0].record  # the registered identity
    path = _laplace_named_poisson(tmp_path)
    with pytest.raises(FolderError, match=r"another problem named 'laplace'"):
        deepxde_lnn.compare(str(path), out=root, **SAME)
    mine = deepxde_lnn.compare(str(path), out=root, overwrite=True, **SAME)
    (run,) = mine.runs
    assert run.status == "done" and run.record["fields"] == ["u"]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert run.record["problem"] == f"sha256:{digest}"
    # its own runs are its own: reused; the registered case refuses them
    again = deepxde_lnn.compare(str(path), out=root, **SAME)
    assert [r.status for r in again.runs] == ["reused"]
    with pytest.raises(FolderError, match=r"another problem named 'laplace'"):
        deepxde_lnn.compare("laplace", out=root, **SAME)
    # an edited file is another problem
    path.write_text(path.read_text() + "\n# edited\n")
    with pytest.raises(FolderError, match=r"another problem named 'laplace'"):
        deepxde_lnn.compare(str(path), out=root, **SAME)


def test_a_users_case_never_gets_the_papers_numbers(tmp_path, laplace):
    builtin = deepxde_lnn.compare("laplace", out=tmp_path / "a", **SAME)
    assert any(row["paper"] is not None for row in builtin.summary)
    assert "| pinn, paper |" in builtin.markdown
    path = _laplace_named_poisson(tmp_path)
    mine = deepxde_lnn.compare(str(path), out=tmp_path / "b", **SAME)
    assert all(row["paper"] is None for row in mine.summary)
    assert all(row["paper_seed_run"] is None for row in mine.summary)
    assert ", paper |" not in mine.markdown and "'paper' =" not in mine.markdown
    assert "'paper' =" in builtin.markdown


def test_runs_of_a_problem_of_ones_own_are_matched_by_its_fingerprint(tmp_path):
    """The registered case (by name) keeps the identity it always had; a case
    file is its bytes; a Case or plain DeepXDE given in Python is what defines it
    (its functions' source files and its declared values), the same in every
    process, another when a value changes."""
    assert problem_of("laplace").fingerprint is None
    assert "problem" not in RunConfig("laplace").identity()
    path = _laplace_named_poisson(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert problem_of(str(path)).fingerprint == f"sha256:{digest}"
    a, b = problem_of(tiny_case(n=8)), problem_of(tiny_case(n=8))
    assert a.fingerprint == b.fingerprint and a.fingerprint.startswith("sha256:")
    assert problem_of(tiny_case(n=9)).fingerprint != a.fingerprint
    # a changed copy of a paper case is not the paper's problem: not its numbers
    assert a.paper_table == {} and problem_of("laplace").paper_table


def test_the_problem_key_of_a_record_is_checked_and_matched(tmp_path):
    cfg = RunConfig("laplace", "pinn", 1, iterations=5).resolved(TINY)
    mine = RunConfig("laplace", "pinn", 1, iterations=5, problem="sha256:" + "a" * 64)
    mine = mine.resolved(TINY)
    assert mine.identity()["problem"] == "sha256:" + "a" * 64
    assert "problem" not in cfg.identity()
    base = {
        **mine.identity(),
        "train_seconds": 1.0,
        "seconds_per_step": 0.1,
        "parameters": 10,
        "final_loss": {"total": 1.0},
        "grid_points": 81,
        "device": "cpu",
        "fields": ["phi"],
        "metrics": {"phi": dict(RMSE=1, MSE=1, MAE=1, relL2=1, MaxErr=1)},
    }
    assert records.problem(base, "run") is None
    for bad in ("sha256:xyz", "md5:" + "a" * 32, 3, None):
        assert "problem must be" in records.problem({**base, "problem": bad}, "run")
    # a record of another problem is never this run's, either way round
    folder = RunFolder(tmp_path / "r")
    folder.path.mkdir()
    folder.metrics.write_text(json.dumps(base))
    with pytest.raises(FolderError, match="another problem named 'laplace'"):
        folder.finished(cfg.identity(), RunConfig.identity_of)
    registered = {k: v for k, v in base.items() if k != "problem"}
    folder.metrics.write_text(json.dumps(registered))
    with pytest.raises(FolderError, match="another problem named 'laplace'"):
        folder.finished(mine.identity(), RunConfig.identity_of)


def test_the_report_keeps_a_users_laplace_apart_and_without_the_papers_numbers(
    tmp_path,
):
    """The report groups runs by configuration: a user's problem named
    ``laplace`` is a configuration of its own, without the paper's column."""
    root = tmp_path / "runs"
    mine = {"problem": "sha256:" + "ab" * 32, "fields": ["phi"]}
    for seed in (1, 2, 3):
        for method, rmse in (("lnn", 1e-3), ("pinn", 2e-3)):
            _record(root / "a", method, seed, rmse * seed)
            _record(root / "b", method, seed, rmse * seed * 10, **mine)
    md = reproduction.render(reproduction.load([root]), [root])
    plain = "### [1] profile `paper`, 8000 steps, lr 0.001, float32, budget `steps`"
    assert f"{plain}\n" in md
    assert f"### [2] {plain[8:]}, problem `sha256:abababababab…`\n" in md
    registered, users = md.split("## Missing")[0].split("### [2]")
    for part, paper in ((registered, True), (users, False)):
        (lnn,) = [line for line in part.splitlines() if line.startswith("| `lnn` |")]
        cells = lnn.split(" | ")
        assert cells[1] == "3"  # seeds: never pooled
        assert ("| paper RMSE | ours/paper |" in part) == paper
        if paper:
            assert cells[6:8] != ["—", "—"]  # paper RMSE, ours/paper


def _record(root: Path, method: str, seed: int, rmse: float, **over) -> None:
    """A paper-protocol record of laplace, as the report reads it."""
    metrics = {"phi": {k: rmse for k in ("RMSE", "MSE", "MAE", "relL2", "MaxErr")}}
    rec = {"case": "laplace", "method": method, "seed": seed, "lr": 1e-3}
    rec.update(iterations=8000, profile="paper", dtype="float32", device="cpu")
    rec.update(parameters=10, train_seconds=8.0, seconds_per_step=0.001)
    out = root / method / f"seed-{seed}"
    out.mkdir(parents=True)
    (out / "metrics.json").write_text(json.dumps({**rec, "metrics": metrics, **over}))
