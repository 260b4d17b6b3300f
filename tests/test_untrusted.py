"""Result folders from someone else: records are read as untrusted data.

Each test reproduces one defect found by an outside probe: a record that writes
outside the report's folder, injects markup, stalls or exhausts the reader, or is
reused by ``compare`` without being checked.
"""

import contextlib
import json
import os
import re
import shutil
import signal
from pathlib import Path

import numpy as np
import pytest

from deepxde_lnn import cli
from deepxde_lnn.experiments.ablation import variants
from deepxde_lnn.problems.metrics import set_names
from deepxde_lnn.runs import records
from deepxde_lnn.runs.folder import FolderError, mark
from deepxde_lnn.study import registry, reproduction

FIELDS = {name: registry.get(name).fields for name in registry.available()}
RMSE = {"RMSE": 1e-3, "MSE": 1e-6, "MAE": 5e-4, "relL2": 1e-2, "MaxErr": 3e-3}


def _record(case="laplace", method="pinn", seed=1, **over) -> dict:
    """A record as the runner writes it (every field a reader reads)."""
    rec = {
        "case": case,
        "method": method,
        "seed": seed,
        "lr": 1e-3,
        "iterations": 8000,
        "profile": "paper",
        "dtype": "float32",
        "device": "cpu",
        "device_name": "Test CPU",
        "parameters": 12737,
        "train_seconds": 8.0,
        "seconds_per_step": 0.001,
        "final_loss": {"total": 1e-4},
        "grid_points": 441,
        "versions": {"python": "3.12.3", "torch": "2.11.0", "deepxde": "1.15.0"},
        "metrics": {f: dict(RMSE) for f in set_names(FIELDS.get(case, ["phi"]))},
    }
    rec.update(over)
    return rec


def _write(root, rec, name=None) -> str:
    folder = root / (name or f"{rec['case']}/{rec['method']}/seed-{rec['seed']}")
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(rec))
    return str(folder / "metrics.json")


def _cli(argv, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr()


def _refused(code, io, path, problem) -> None:
    """Exit 2 with one ``error:`` line naming ``path`` and ``problem``."""
    err = io.err.strip().splitlines()
    assert code == 2 and len(err) == 1, io.err
    assert err[0].startswith("error: ") and str(path) in err[0] and problem in err[0]


@contextlib.contextmanager
def deadline(seconds: int):
    """TimeoutError if the block takes longer (interrupts a blocking open)."""

    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# 1. no name from a record reaches a path ------------------------------------------


@pytest.mark.parametrize("case", ["{victim}/photo", "../../../escaped", "laplace/.."])
def test_report_refuses_a_case_outside_the_registry(tmp_path, capsys, case):
    victim = tmp_path / "victim"
    victim.mkdir()
    case = case.format(victim=victim)
    path = _write(tmp_path / "runs", _record(case=case), name="a")
    out = tmp_path / "deep" / "er" / "out" / "R.md"
    code, io = _cli(["report", str(tmp_path / "runs"), "--out", str(out)], capsys)
    _refused(code, io, path, "case must be one of")
    assert not list(victim.iterdir()) and not (tmp_path / "escaped.png").exists()
    assert not (tmp_path / "deep").exists()  # nothing written at all


@pytest.mark.parametrize(
    "over, problem",
    [
        ({"method": "nosuch"}, "method is not a method of this version"),
        ({"method": "pinn/../../x"}, "method must be a method name"),
        ({"method": "pinn:width=0"}, "method is not a method of this version"),
        ({"metrics": {"phi/../x": RMSE}}, "metrics must be an object of the fields"),
        ({"profile": "../p"}, "profile must be one of"),
        ({"extra_grid_metrics": {"../g": {"phi": RMSE}}}, "name '../g' must match"),
        ({"seed": -1}, r"seed must be an integer in \[0, 4294967295\]"),
        ({"seed": 2**40}, r"seed must be an integer in \[0, 4294967295\]"),  # issue 55
    ],
)
def test_names_outside_the_registries_are_refused(tmp_path, over, problem):
    path = _write(tmp_path, _record(**over), name="a")
    with pytest.raises(FolderError, match=problem) as err:
        reproduction.load([tmp_path])
    assert str(err.value).startswith(path)


def test_a_record_with_a_key_twice_or_in_another_seeds_folder_is_refused(tmp_path):
    # issue 55, item 10: which duplicate counts depends on the reader; a record
    # of seed 1 in seed-2's folder would stand in for seed 2's own run
    text = json.dumps(_record())
    path = _write(tmp_path / "twice", _record())
    Path(path).write_text(text[:-1] + ', "seed": 2}')
    with pytest.raises(FolderError, match="the key 'seed' is given twice"):
        reproduction.load([tmp_path / "twice"])
    moved = _write(tmp_path / "moved", _record(seed=1), name="laplace/pinn/seed-2")
    with pytest.raises(FolderError, match="the record of seed 1 in the folder seed-2"):
        reproduction.load([tmp_path / "moved"])
    assert moved.endswith("seed-2/metrics.json")


def test_a_record_in_another_methods_folder_is_refused(tmp_path, capsys):
    # reliability probe, item 7: a record saying pinn in lnn/seed-1 displaced
    # pinn's own seed 1 (listed as a duplicate) and moved the ratio
    _write(tmp_path / "runs", _record(method="pinn"))
    moved = _write(tmp_path / "runs", _record(method="pinn"), "laplace/lnn/seed-1")
    out = tmp_path / "docs" / "R.md"
    code, io = _cli(["report", str(tmp_path / "runs"), "--out", str(out)], capsys)
    _refused(code, io, moved, "the record of method pinn in the folder lnn/seed-1")
    assert not (tmp_path / "docs").exists()


def test_the_report_names_what_it_passed_over(tmp_path):
    # issue 55, item 10: a linked run folder and a metrics.json folder were left
    # out in silence
    _write(tmp_path / "runs", _record())
    elsewhere = Path(_write(tmp_path / "elsewhere", _record(seed=2))).parent
    (tmp_path / "runs" / "laplace" / "pinn" / "seed-2").symlink_to(elsewhere)
    (tmp_path / "runs" / "laplace" / "pinn" / "seed-3" / "metrics.json").mkdir(
        parents=True
    )
    roots = [tmp_path / "runs"]
    text = reproduction.render(reproduction.load(roots), roots)
    section = text.split("## Left out\n")[1]
    assert "seed-2`: a link to a folder" in section
    assert "seed-3/metrics.json`: a folder, not a file" in section


def test_written_paths_stay_inside_the_folder(tmp_path):
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "laplace.png").symlink_to(tmp_path / "elsewhere.png")
    assert records.inside(tmp_path / "figs" / "beam.png", tmp_path / "figs")
    for name in ("laplace.png", "../x.png"):
        with pytest.raises(FolderError, match="resolves outside"):
            records.inside(tmp_path / "figs" / name, tmp_path / "figs")


# 4. every string from a record is escaped -----------------------------------------

EVIL = "<script>alert(1)</script> | [x](javascript:alert(1)) `c`\n## forged &amp;"


def test_record_strings_cannot_inject_markup_into_the_report(tmp_path):
    evil = {"device_name": EVIL, "versions": {"torch": EVIL, "python": "#3"}}
    for seed in (1, 2):
        _write(tmp_path / "runs", _record(seed=seed, **evil))
        _write(tmp_path / "runs", _record(method="lnn", seed=seed, device=EVIL[:0]))
    with pytest.raises(FolderError, match="device must be a device name"):
        reproduction.load([tmp_path / "runs"])  # an empty device name
    shutil.rmtree(tmp_path / "runs" / "laplace" / "lnn")
    md = reproduction.render(reproduction.load([tmp_path / "runs"]), ["r"])
    for raw in ("<script>", "`c`", "\n## forged"):
        assert raw not in md
    assert not re.search(r"[^\\]\]\(javascript:", md)  # no link can form
    safe = records.escape(EVIL)
    assert safe == (
        "&lt;script&gt;alert(1)&lt;/script&gt; \\| \\[x\\](javascript:alert(1)) "
        "&#96;c&#96; ## forged &amp;amp;"
    )
    assert f"hardware: {safe} (cpu); software: torch {safe}, deepxde" in md
    assert "Python \\#3" in md
    lines = md.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| `pinn` |"))
    head = next(lines[i] for i in range(at, -1, -1) if lines[i + 1].startswith("|---"))
    assert lines[at].count(" | ") == head.count(" | ")  # the header's cells, none added


def test_escape_keeps_every_legitimate_name():
    names = [*registry.NAMES, *variants(registry.get("laplace")), "pinn-matched"]
    names += ["lnn:block_activation=LAAF-10 tanh", "T_paper_float32", "u@150x150"]
    names += ["NVIDIA H100 80GB HBM3", "2.13.0+cpu", "docs/results", "x86_64"]
    assert [records.escape(n) for n in names] == names
    assert records.escape("a\\|b") == "a\\\\\\|b"  # the backslash cannot un-escape


def test_summary_escapes_record_strings(tmp_path):
    root = tmp_path / "c"
    for seed in (1, 2):
        _write(root, _record(seed=seed, device_name=EVIL), name=f"pinn/seed-{seed}")
        _artifacts(root / "pinn" / f"seed-{seed}")
    from deepxde_lnn.analysis.summaries import write_summary

    write_summary(root)
    md = (root / "summary.md").read_text()
    assert "<script>" not in md and "\n## forged" not in md
    assert f"device cpu ({records.escape(EVIL)})" in md


@pytest.mark.parametrize("name", ["fields.npz", "loss.csv"])
def test_summary_refuses_an_unreadable_artifact(tmp_path, name):
    from deepxde_lnn.analysis.summaries import write_summary

    _write(tmp_path, _record(), name="pinn/seed-1")
    _artifacts(tmp_path / "pinn" / "seed-1")
    (tmp_path / "pinn" / "seed-1" / name).write_bytes(b"\x80garbage\n1,x\n")
    with pytest.raises(FolderError, match="unreadable") as err:
        write_summary(tmp_path)
    assert str(err.value).startswith(str(tmp_path / "pinn" / "seed-1" / name))


def _artifacts(folder, n=4) -> None:
    """``fields.npz`` and ``loss.csv`` as the runner writes them (tiny)."""
    axes = np.linspace(0, 1, n)
    x = np.stack(np.meshgrid(axes, axes, indexing="ij"), -1).reshape(-1, 2)
    u = np.sin(x[:, :1])
    np.savez(
        folder / "fields.npz",
        x=x,
        exact=u,
        pred=u + 1e-3,
        abs_error=np.full_like(u, 1e-3),
        mask=np.ones((n, n), bool),
        axes=np.array([axes, axes]),
        inputs=np.array(["x", "y"]),
        fields=np.array(["phi"]),
    )
    (folder / "loss.csv").write_text("step,total,pde\n0,1.0,1.0\n1,0.5,0.5\n")


# 5. only small regular files are read ---------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "link", "large"])
def test_report_reads_only_small_regular_files(tmp_path, capsys, kind):
    folder = tmp_path / "runs" / "a"
    folder.mkdir(parents=True)
    path = folder / "metrics.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "large":
        with open(path, "wb") as f:
            f.truncate(records.MAX_JSON_BYTES + 1)
    else:
        target = "/dev/zero" if kind.endswith("zero") else tmp_path / "r.json"
        (tmp_path / "r.json").write_text(json.dumps(_record()))
        path.symlink_to(target)
    why = {"fifo": "not a regular file", "large": "larger than 1,048,576 bytes"}
    with deadline(10):
        code, io = _cli(
            ["report", str(tmp_path / "runs"), "--out", str(tmp_path / "o.md")], capsys
        )
    _refused(code, io, path, why.get(kind, "a symbolic link"))


@pytest.mark.parametrize("name", ["metrics.json", "budget.json"])
def test_compare_reads_only_regular_files(tmp_path, capsys, name):
    out = tmp_path / "c"
    path = out / ("pinn/seed-1/" if name == "metrics.json" else "") / name
    path.parent.mkdir(parents=True)
    mark(out), mark(path.parent)  # a result folder of deepxde-lnn from elsewhere
    os.mkfifo(path)
    argv = [*ARGV, "--out", str(out)] + (
        ["--budget", "time"] if "budget" in name else []
    )
    with deadline(10):
        code, io = _cli(argv, capsys)
    _refused(code, io, path, "not a regular file")


# 7. compare checks the records it reuses ------------------------------------------

ARGV = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
ARGV += ["--iterations", "2", "--no-progress", "--threads", "1"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished one-run compare folder (copied by each test)."""
    out = tmp_path_factory.mktemp("finished") / "c"
    assert cli.main([*ARGV, "--out", str(out)]) == 0
    return out


def _identity_only(rec: dict) -> dict:
    keys = ("case", "method", "seed", "lr", "iterations", "profile", "dtype", "decay")
    return {k: rec[k] for k in keys if k in rec}


@pytest.mark.parametrize(
    "damage",
    [
        "identity only",
        "negative RMSE",
        "no loss.csv",
        "no fields.npz",
    ],
)
def test_compare_trains_again_over_a_record_that_does_not_check(
    finished, tmp_path, capsys, damage
):
    out = tmp_path / "c"
    shutil.copytree(finished, out)
    run = out / "pinn" / "seed-1"
    rec = json.loads((run / "metrics.json").read_text())
    if damage == "negative RMSE":
        rec["metrics"]["phi"]["RMSE"] = -1.0
    elif damage == "identity only":
        rec = _identity_only(rec)
    else:
        (run / damage.split()[-1]).unlink()
    (run / "metrics.json").write_text(json.dumps(rec))
    code, io = _cli([*ARGV, "--out", str(out)], capsys)
    assert code == 0, io.err
    assert "done, reused" not in io.out and "pinn seed 1: 2 steps" in io.out
    again = records.read_record(run / "metrics.json")
    assert records.run_problem(run, again) is None
    summary = (out / "summary.md").read_text()
    assert "-1.000e+00" not in summary


def test_compare_refuses_a_record_that_is_not_strict_json(finished, tmp_path, capsys):
    out = tmp_path / "c"
    shutil.copytree(finished, out)
    path = out / "pinn" / "seed-1" / "metrics.json"
    rec = json.loads(path.read_text())
    rec["metrics"]["phi"]["RMSE"] = float("nan")  # Python's json writes NaN
    path.write_text(json.dumps(rec))
    code, io = _cli([*ARGV, "--out", str(out)], capsys)
    _refused(code, io, path, "NaN is not a finite number")
    assert "nan" not in (out / "summary.md").read_text()


def test_summary_leaves_out_a_run_of_another_case(finished, tmp_path, capsys):
    """A compare summarises the runs it asked for: a record of another case in
    its folder is named as excluded, never pooled (issue 36)."""
    out = tmp_path / "c"
    shutil.copytree(finished, out)
    _write(out, _record(case="rel_b", method="pinn"), name="zz/pinn/seed-1")
    code, io = _cli([*ARGV, "--out", str(out)], capsys)
    assert code == 0 and "done, reused" in io.out, io.err
    md = (out / "summary.md").read_text()
    assert (
        "Excluded (not asked for, never pooled): 1 run of another case (rel_b)." in md
    )
    assert "| pinn | 1 |" in md


# also: nested JSON, non-finite numbers, mixed groups, the time budget file ---------


def test_deeply_nested_record_is_refused(tmp_path, capsys):
    path = tmp_path / "runs" / "a" / "metrics.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"case": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, io = _cli(
        ["report", str(tmp_path / "runs"), "--out", str(tmp_path / "o.md")], capsys
    )
    _refused(code, io, path, "nested too deeply")


@pytest.mark.parametrize(
    "key, text, problem",
    [
        ("lbfgs", "Infinity", "Infinity is not a finite number"),
        ("seconds", "NaN", "NaN is not a finite number"),
        ("lr", "1e999", "1e999 is not a finite float"),
        ("seed", "1" * 40, "an integer of 40 digits"),
        ("lbfgs", "-3", "lbfgs must be an integer in [0, 1000000000000000]"),
        ("seconds", '"10"', "seconds must be a finite number > 0"),
        # every option a record holds, by the option's own check (issue 43)
        ("loss_weights", '"1,2"', "loss_weights must be a list, not str"),
        ("loss_weights", "[1, -2]", "loss_weights must be a finite number >= 0"),
        ("score", '"worst"', "score must be one of final, best"),
        ("decay", '["<b>x</b>", 1]', "decay must be DeepXDE's (name, numbers...)"),
        ("stack_sizes", "[[5, 0]]", "stack_sizes must be a list of [step, runs]"),
    ],
)
def test_non_finite_or_mistyped_numbers_are_refused(
    tmp_path, capsys, key, text, problem
):
    rec = _record(budget="time", **{key: 0})
    path = tmp_path / "runs" / "a" / "metrics.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(rec).replace(f'"{key}": 0', f'"{key}": {text}'))
    code, io = _cli(
        ["report", str(tmp_path / "runs"), "--out", str(tmp_path / "o.md")], capsys
    )
    _refused(code, io, path, problem)


def test_groups_with_and_without_seconds_are_ordered(tmp_path):
    _write(tmp_path, _record(budget="time", seconds=10.0), name="a")
    _write(tmp_path, _record(budget="time", method="lnn"), name="b")
    md = reproduction.render(reproduction.load([tmp_path]), ["r"])
    steps = "### [1] profile `paper`, 8000 steps, lr 0.001, float32, budget `time`"
    timed = "### [2] profile `paper`, 10 s per run (at most 8000 steps)"
    assert steps in md and timed in md and md.index(steps) < md.index(timed)


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"seconds": NaN}', "NaN is not a finite number"),
        ('{"seconds": -1}', "seconds must be a finite number > 0"),
        ('{"seconds": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ],
)
def test_bad_time_budget_file_is_refused_before_training(
    tmp_path, capsys, monkeypatch, text, problem
):
    from deepxde_lnn.training import phases

    def no_training(*a, **k):
        raise AssertionError("trained with a bad budget.json")

    monkeypatch.setattr(phases, "train", no_training)
    path = tmp_path / "c" / "budget.json"
    path.parent.mkdir()
    mark(path.parent)  # a compare root of deepxde-lnn from elsewhere
    path.write_text(text)
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    code, io = _cli([*argv, "--budget", "time", "--out", str(path.parent)], capsys)
    _refused(code, io, path, problem)
    assert "nan s per run" not in io.out
