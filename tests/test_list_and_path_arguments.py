"""Arguments an outside probe found unchecked: a thread count beyond any machine,
an ``out`` that is not a path, names that differ only by case, a list value that
begins with ``-`` and an empty item in a comma-separated list. Each is refused
with one line naming the argument, before anything is written."""

import pytest
from helpers import run_cli

import deepxde_lnn
from deepxde_lnn import api
from deepxde_lnn.cli import build_parser
from deepxde_lnn.config import MAX_THREADS, Execution, Training
from deepxde_lnn.runs.names import check_case_distinct


def _one_error(io, *words):
    lines = io.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), io.err
    for word in words:
        assert word in lines[0], lines[0]


def _never_trains(*args, **kwargs):
    raise AssertionError("the bad argument reached the runs")


# threads: at most MAX_THREADS, even with force_threads ------------------------------


def test_threads_are_capped_even_with_force_threads(tmp_path, capsys, monkeypatch):
    said = f"threads must be an integer in [1, {MAX_THREADS}]; got 1000000000"
    argv = ["run", "laplace", "--threads", "1000000000", "--force-threads"]
    with pytest.raises(SystemExit) as stop:  # parsing only: nothing trains
        build_parser().parse_args([*argv, "--out", str(tmp_path / "o")])
    assert stop.value.code == 2
    assert said in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"^threads must be an integer in \[1, 1024\]"):
        Execution(threads=MAX_THREADS + 1, force_threads=True)
    assert Execution(threads=MAX_THREADS, force_threads=True).threads == MAX_THREADS
    monkeypatch.setattr(api, "compare_runs", _never_trains)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="^threads must be"):
        deepxde_lnn.compare("laplace", threads=10**9, force_threads=True)
    assert not list(tmp_path.iterdir())


# out: a path --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "out, said",
    [
        ("o\x00x", "out must be a path without a null character"),
        (b"ob", "out must be a path (text or a pathlib.Path), not bytes"),
        (5, "out must be a path (text or a pathlib.Path), not int"),
        (" ", "out must be a path, got an empty string"),
    ],
    ids=["null", "bytes", "int", "blank"],
)
def test_out_that_is_not_a_path_is_refused(tmp_path, monkeypatch, out, said):
    monkeypatch.setattr(api, "compare_runs", _never_trains)
    monkeypatch.chdir(tmp_path)
    calls = [
        lambda: deepxde_lnn.run("laplace", out=out),
        lambda: deepxde_lnn.compare("laplace", out=out),
        lambda: deepxde_lnn.sweep("laplace", lrs=[1e-3], out=out),
        lambda: deepxde_lnn.ablate("laplace", out=out),
        lambda: deepxde_lnn.report([tmp_path], out=out),
    ]
    for call in calls:
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value).startswith(said)
    assert not list(tmp_path.iterdir())


def test_out_with_a_null_character_on_the_command_line(tmp_path, capsys):
    argv = ["report", str(tmp_path), "--out", "o\x00x.md"]
    code, io = run_cli(argv, capsys)
    assert code == 2
    _one_error(io, "argument --out: out must be a path without a null character")


# names that differ only by case -------------------------------------------------------


def test_names_that_differ_only_by_case_are_refused(tmp_path, capsys):
    check_case_distinct(["lnn", "pinn", "lnn-2"], "methods")  # distinct: passes
    with pytest.raises(ValueError, match="^methods: 'C' and 'c' differ only by case"):
        check_case_distinct(["C", "x", "c"], "methods")
    out = tmp_path / "o"
    argv = ["compare", "laplace", "--methods", "lnn,LNN", "--iterations", "1"]
    code, io = run_cli([*argv, "--out", str(out)], capsys)
    assert code == 2 and not out.exists()
    _one_error(io, "methods: 'lnn' and 'LNN' differ only by case")


# a value that begins with '-' ---------------------------------------------------------


@pytest.mark.parametrize(
    "given", [["--loss-weights", "-1,1,1,1,1"], ["--loss-weights=-1,1,1,1,1"]]
)
def test_a_list_beginning_with_minus_is_a_value(tmp_path, capsys, given):
    out = tmp_path / "o"
    code, io = run_cli(["run", "laplace", *given, "--out", str(out)], capsys)
    assert code == 2 and not out.exists()
    _one_error(io, "loss_weights must be a finite number >= 0; got -1.0")
    args = build_parser().parse_args(["run", "laplace", "--loss-weights", "-0,1,2"])
    assert args.loss_weights == (0.0, 1.0, 2.0)


# an empty item in a comma-separated list ----------------------------------------------


@pytest.mark.parametrize(
    "argv, option",
    [
        (["compare", "laplace", "--seeds", "1,,2"], "seeds"),
        (["compare", "laplace", "--seeds", "1,2,"], "seeds"),
        (["compare", "laplace", "--methods", "lnn,,pinn"], "methods"),
        (["sweep", "laplace", "--lrs", "1e-3,,1e-4"], "lrs"),
        (["run", "laplace", "--loss-weights", "1,,1,1,1"], "loss_weights"),
        (["run", "laplace", "--decay", "cosine,,0"], "decay"),
    ],
)
def test_an_empty_item_in_a_list_is_refused(tmp_path, capsys, argv, option):
    out = tmp_path / "o"
    code, io = run_cli([*argv, "--iterations", "1", "--out", str(out)], capsys)
    assert code == 2 and not out.exists()
    _one_error(io, f"{option}: an empty item in ")


def test_an_empty_item_in_a_list_is_refused_in_python(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="^loss_weights: an empty item in '1,,2'"):
        Training(loss_weights="1,,2")
    monkeypatch.setattr(api, "compare_runs", _never_trains)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="^methods: an empty item in 'lnn,,pinn'"):
        deepxde_lnn.compare("laplace", methods="lnn,,pinn")
    assert not list(tmp_path.iterdir())
