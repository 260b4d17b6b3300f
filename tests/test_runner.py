"""Runner and CLI: artifacts, exact resume after SIGINT, NaN stop, clean errors."""

import json
from dataclasses import replace

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import TINY, SignalAt, tiny_case

from deepxde_lnn import cli
from deepxde_lnn.analysis.figures import draw_missing
from deepxde_lnn.config import RunConfig
from deepxde_lnn.problems.data import Term
from deepxde_lnn.runs.checkpoint import load_checkpoint
from deepxde_lnn.study import registry
from deepxde_lnn.training.runner import RunInterrupted, TrainingDiverged, run


def test_run_writes_artifacts(tmp_path):
    case = tiny_case()
    rec = run(
        RunConfig("laplace", "pinn", seed=1, **TINY), tmp_path / "r", problem=case
    )
    files = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"metrics.json", "loss.csv", "fields.npz", "model.pt"} <= files
    assert "checkpoint.pt" not in files and not any(f.endswith(".tmp") for f in files)
    assert not any(f.endswith(".png") for f in files)  # the runner draws none
    drawn = draw_missing(tmp_path / "r", case)  # the caller draws them
    assert sorted(p.name for p in drawn) == ["fields.png", "loss.png"]
    assert draw_missing(tmp_path / "r", case) == []  # only where one is missing
    meta = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert meta == json.loads(json.dumps(rec))
    assert meta["parameters"] == 12_737 and meta["iterations"] == 40
    assert meta["counts"] == {t.name: 16 for t in case.terms}
    assert set(meta["metrics"]["phi"]) == {"RMSE", "MSE", "MAE", "relL2", "MaxErr"}
    loss = np.loadtxt(tmp_path / "r" / "loss.csv", delimiter=",", skiprows=1)
    assert loss.shape == (40, 2 + len(case.terms))
    np.testing.assert_allclose(loss[:, 1], loss[:, 2:].sum(1), rtol=1e-6)
    with np.load(tmp_path / "r" / "fields.npz") as f:
        assert f["x"].shape == (441, 2)
        np.testing.assert_allclose(f["abs_error"], np.abs(f["pred"] - f["exact"]))
        m = meta["metrics"]["phi"]
        assert m["RMSE"] == pytest.approx(np.sqrt(np.mean(f["abs_error"] ** 2)))


def test_adam_steps_its_tensors_at_once_with_the_same_numbers(tmp_path, monkeypatch):
    """The runner's Adam steps every tensor at once (``foreach``, also on a CPU):
    its loss history and result are those of torch's one-tensor-at-a-time Adam,
    bit for bit."""
    from deepxde_lnn.training import phases

    seen = []

    class Look(dde.callbacks.Callback):
        def on_train_begin(self):
            seen.append(self.model.opt.param_groups[0]["foreach"])

    case, cfg = tiny_case(), RunConfig("laplace", "lnn", seed=3, **TINY)
    fast = run(cfg, tmp_path / "fast", problem=case, callbacks=[Look()])
    monkeypatch.setattr(phases, "multi_tensor", lambda opt: None)
    slow = run(cfg, tmp_path / "slow", problem=case, callbacks=[Look()])
    assert seen == [True, None]
    assert fast["metrics"] == slow["metrics"]
    a, b = (np.loadtxt(tmp_path / d / "loss.csv", delimiter=",", skiprows=1)
            for d in ("fast", "slow"))  # fmt: skip
    np.testing.assert_array_equal(a, b)


def test_interrupt_then_resume_matches_uninterrupted_run(tmp_path):
    case = tiny_case()
    cfg = RunConfig("laplace", "lnn", seed=5, **TINY)
    full = run(cfg, tmp_path / "full", problem=case)
    with pytest.raises(RunInterrupted, match=r"interrupted at step 2[34];"):
        run(cfg, tmp_path / "cut", problem=case, callbacks=[SignalAt(23)])
    assert (tmp_path / "cut" / "checkpoint.pt").exists()
    assert not (tmp_path / "cut" / "metrics.json").exists()
    with pytest.raises(ValueError, match="--resume"):
        run(cfg, tmp_path / "cut", problem=case)
    with pytest.raises(
        ValueError, match=r"checkpoint.pt was made with another configuration \(lr: "
    ):
        run(replace(cfg, lr=2e-3), tmp_path / "cut", problem=case, resume=True)
    resumed = run(cfg, tmp_path / "cut", problem=case, resume=True)
    assert resumed["resumed"]
    assert resumed["metrics"] == full["metrics"]
    a = np.loadtxt(tmp_path / "full" / "loss.csv", delimiter=",", skiprows=1)
    b = np.loadtxt(tmp_path / "cut" / "loss.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(a, b)
    assert not (tmp_path / "cut" / "checkpoint.pt").exists()


def test_nan_loss_stops_and_keeps_last_good_checkpoint(tmp_path):
    case = tiny_case()
    calls = {"n": 0}

    def poisoned(x, y):
        calls["n"] += 1
        r = y - 1.0
        return r * float("nan") if calls["n"] > 25 else r

    terms = [
        Term("top", t.sampler, t.n, poisoned, kind="value") if t.name == "top" else t
        for t in case.terms
    ]
    case = replace(case, terms=terms)
    with pytest.raises(TrainingDiverged, match="non-finite loss at step"):
        run(RunConfig("laplace", "lnn", seed=0, **TINY), tmp_path / "r", problem=case)
    ck = load_checkpoint(tmp_path / "r" / "checkpoint.pt")
    assert ck["step"] == 20
    assert torch.isfinite(ck["loss"]).all()
    loss = np.loadtxt(tmp_path / "r" / "loss.csv", delimiter=",", skiprows=1)
    assert np.isfinite(loss).all() and len(loss) < 40
    assert not (tmp_path / "r" / "metrics.json").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "nope"], "unknown case"),
        (["run", "laplace", "--method", "xyz"], "method"),
        (["run", "laplace", "--profile", "long"], "profile"),
        (["run", "laplace", "--lr", "0"], "lr"),
        (["run", "laplace", "--lr", "-1e-3"], "lr"),
        (["run", "laplace", "--iterations", "0"], "iterations"),
        (["run", "laplace", "--seed", "1.5"], "seed"),
        (["run", "laplace", "--dtype", "float16"], "dtype"),
        (["compare", "laplace", "--seeds", "1,x"], "seed"),
        (["compare", "laplace", "--methods", "lnn,bogus"], "method"),
        (["sweep", "laplace", "--lrs", "1e-3,-1"], "lr"),
        (["compare", "laplace", "--margin", "1"], "margin"),
        (["ablate", "laplace", "--margin", "x"], "margin"),
        (["compare", "laplace", "--max-seeds", "9"], "max-seeds"),
        (["compare", "laplace", "--until-decided", "--methods", "lnn"], "methods"),
        (
            [
                "compare",
                "laplace",
                "--until-decided",
                "--seeds",
                "1,2,3",
                "--max-seeds",
                "2",
            ],
            "max-seeds",
        ),  # fmt: skip
    ],
)
def test_cli_errors_exit_2_and_write_nothing(
    argv, message, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    try:
        code = cli.main([*argv, "--out", str(tmp_path / "out")])
    except SystemExit as e:  # argparse-level errors
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]
    assert list(tmp_path.iterdir()) == []


def test_cli_list(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "laplace" in out and "drift_decay" in out and "pinn-matched" in out


@pytest.mark.slow
def test_heat_trains_in_quick_profile(tmp_path):
    """The quick profile learns the 3 K offset and the paraboloid (error from ~3 K)."""
    rec = run(RunConfig("heat", "lnn"), tmp_path / "heat", problem=registry.get("heat"))
    assert rec["iterations"] == 1500 and rec["parameters"] == 21_249
    assert rec["metrics"]["theta"]["RMSE"] < 0.05
    assert rec["extra_metrics"]["fem_vs_exact_theta"]["MaxErr"] < 1e-5


def test_summary_from_run_folders(tmp_path):
    from deepxde_lnn.analysis.summaries import write_summary

    case = tiny_case()
    recs = {}
    for m in ("lnn", "pinn"):
        for s in (3, 4):
            cfg = RunConfig("laplace", m, seed=s, iterations=5)
            recs[m, s] = run(cfg, tmp_path / m / f"seed-{s}", problem=case)
    rows = write_summary(tmp_path, paper_seed=3, paper_table=case.paper_table).rows
    row = next(
        r
        for r in rows
        if (r["method"], r["field"], r["metric"]) == ("lnn", "phi", "RMSE")
    )
    vals = [recs["lnn", s]["metrics"]["phi"]["RMSE"] for s in (3, 4)]
    assert row["mean"] == pytest.approx(np.mean(vals))
    assert row["std"] == pytest.approx(np.std(vals, ddof=1))
    assert row["n"] == 2 and row["paper_seed_run"] == vals[0]
    assert row["paper"] == 2.058e-3  # paper Table 3, LNN
    md = (tmp_path / "summary.md").read_text()
    assert "| lnn, seed 3 |" in md and "| pinn, paper |" in md
    assert (tmp_path / "summary.csv").exists() and (tmp_path / "summary.png").exists()


@pytest.mark.slow
def test_cli_sweep(tmp_path, capsys):
    out = tmp_path / "sw"
    argv = ["sweep", "laplace", "--lrs", "1e-3,1e-2", "--iterations", "4"]
    assert cli.main([*argv, "--no-progress", "--out", str(out)]) == 0
    for lr in ("0.001", "0.01"):
        rec = json.loads(
            (out / f"lr-{lr}" / "lnn" / "seed-888888" / "metrics.json").read_text()
        )
        assert rec["lr"] == float(lr) and rec["iterations"] == 4
        assert (out / f"lr-{lr}" / "summary.md").exists()
    table = (out / "sweep.md").read_text()
    assert (out / "sweep.png").stat().st_size > 0
    assert "| 0.01 | lnn | 1 |" in table and "| 0.001 | lnn | 1 |" in table
    # a second call reuses the finished runs
    assert cli.main([*argv, "--no-progress", "--out", str(out)]) == 0
    assert "done, reused" in capsys.readouterr().out


@pytest.mark.slow
def test_compare_until_decided_adds_stacked_seeds_to_the_undecided(
    tmp_path, monkeypatch, capsys
):
    """Two seeds first (one degree of freedom at 97.5 %: undecided here),
    then one more look at four, trained as stacked batches; the summary's intervals
    are the design's (two looks) and its header names the margin."""
    tiny = tiny_case("laplace", n=8, grid_n=9)
    monkeypatch.setattr(registry, "get", lambda name: tiny)
    out = tmp_path / "seq"
    argv = ["compare", "laplace", "--until-decided", "--seeds", "1,2"]
    argv += ["--max-seeds", "4", "--iterations", "20", "--margin", "3"]
    argv += ["--workers", "1", "--stack", "on", "--no-progress", "--out", str(out)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "look 1/2 at 2 seeds: lnn: undecided (~" in printed
    assert "look 2/2 at 4 seeds: lnn: " in printed
    design = json.loads((out / "until-decided.json").read_text())
    assert design["looks"] == [2, 4] and design["margin"] == 3
    for m in ("lnn", "pinn"):
        rec = json.loads((out / m / "seed-4" / "metrics.json").read_text())
        assert rec["stacked_runs"] == 2  # seeds 3 and 4, one stacked model
    md = (out / "summary.md").read_text()
    assert "'equivalent within ×3' when it lies inside [1/3, 3]" in md
    assert "over 2 looks: each interval has level 0.975" in md
    assert "(97.5% CI " in md and "n=4/4, paired by seed" in md


def test_a_finished_run_of_another_lr_schedule_is_not_reused(tmp_path):
    """Records before the ``decay`` key: their optimizer text names the schedule.
    A constant-lr record is another configuration than a decayed run; an older
    accurate-profile record (inverse-time decay in its text) is the same."""
    from deepxde_lnn.runs.folder import FolderError, RunFolder, record_decay

    adam = "Adam(betas=(0.9, 0.999), eps=1e-08, weight_decay=0)"
    cfg = RunConfig("laplace", "lnn", seed=1, decay=("exponential", 0.99)).resolved(
        registry.get("laplace")
    )
    ident = cfg.identity()
    assert ident["decay"] == ["exponential", 0.99]
    old = {**ident, "optimizer": f"{adam}, constant lr, final iterate"}
    del old["decay"]
    folder = RunFolder(tmp_path / "old")
    folder.path.mkdir()
    folder.metrics.write_text(json.dumps(old))
    with pytest.raises(FolderError, match=r"decay=None \(asked \['exponential'"):
        folder.finished(ident, RunConfig.identity_of)
    text = f"{adam}, lr decay ('inverse time', 1000, 0.5) for 2000 steps, then LBFGS"
    assert record_decay({"optimizer": text}) == ["inverse time", 1000, 0.5]
    acc = RunConfig("laplace", "lnn", seed=1, profile="accurate").resolved(
        registry.get("laplace")
    )
    rec = {**acc.identity(), "optimizer": text}
    del rec["decay"]
    folder.metrics.write_text(json.dumps(rec))
    # the same configuration: no FolderError (None: this bare record has no
    # artifacts to reuse, so the run would be trained again)
    assert folder.finished(acc.identity(), RunConfig.identity_of) is None
    assert record_decay({"optimizer": "lr decay (__import__('os'))"}) is None
