"""Time budgets: a run stops when its training seconds are spent; ``compare
--budget time`` gives every method the same seconds."""

import json

import numpy as np
import pytest
from helpers import tiny_case

from deepxde_lnn import cli
from deepxde_lnn.config import RunConfig
from deepxde_lnn.training.runner import run, step_seconds


def test_a_time_budget_stops_the_run_and_is_recorded(tmp_path):
    case = tiny_case("laplace", n=8, grid_n=9)
    cfg = RunConfig("laplace", "pinn", seconds=0.5, iterations=10**6)
    rec = run(cfg, tmp_path / "r", problem=case)
    assert rec["budget"] == "time" and rec["seconds"] == 0.5
    assert 10 <= rec["steps"] < 10**6
    assert 0.5 <= rec["train_seconds"] < 5
    loss = np.loadtxt(tmp_path / "r" / "loss.csv", delimiter=",", skiprows=1)
    assert len(loss) == rec["steps"]
    # the same command reuses the finished run instead of training again
    again = run(cfg, tmp_path / "r", problem=case)
    assert again["steps"] == rec["steps"]


def test_step_budget_records_say_so(tmp_path):
    case = tiny_case("laplace", n=8, grid_n=9)
    rec = run(RunConfig("laplace", "pinn", iterations=5), tmp_path / "r", problem=case)
    assert rec["budget"] == "steps" and rec["steps"] == 5 and "seconds" not in rec


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1", True])
def test_bad_seconds_name_the_argument(bad):
    with pytest.raises(ValueError, match="seconds"):
        RunConfig("laplace", seconds=bad).resolved(tiny_case())


def test_step_seconds_is_positive():
    case = tiny_case("laplace", n=8)
    assert 0 < step_seconds(RunConfig("laplace", "pinn"), case, steps=5) < 1


@pytest.mark.slow
def test_compare_time_budget_measures_once_and_matches_methods(tmp_path, capsys):
    out = tmp_path / "cmp"
    argv = ["compare", "laplace", "--methods", "lnn,pinn", "--seeds", "1"]
    argv += ["--budget", "time", "--iterations", "40", "--out", str(out)]
    argv += ["--no-progress", "--workers", "1"]
    assert cli.main(argv) == 0
    budget = json.loads((out / "budget.json").read_text())
    assert budget["method"] == "lnn" and budget["steps"] == 40
    # every method may take more steps than the reference (a cap of 20x)
    recs = {
        m: json.loads((out / m / "seed-1" / "metrics.json").read_text())
        for m in ("lnn", "pinn")
    }
    for rec in recs.values():
        assert rec["budget"] == "time" and rec["seconds"] == budget["seconds"]
        assert rec["iterations"] == 800
    assert "Verdict" in (out / "summary.md").read_text()
    # repeated: the saved budget is reused, so are the finished runs
    assert cli.main(argv) == 0
    assert "done, reused" in capsys.readouterr().out


def test_seconds_flag_is_checked_by_the_cli(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "laplace", "--seconds", "-3"])
    assert e.value.code == 2
    assert "seconds" in capsys.readouterr().err
