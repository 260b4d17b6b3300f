"""What a person reads: the command line prints nothing of DeepXDE's on import,
and the summary figure draws every method's |error| on one colour scale."""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import write_fields

from deepxde_lnn import _backend, cli
from deepxde_lnn.analysis.summaries import error_norm, summary_figure

BANNER = ("Using backend", "paddle")


def _python(args, cwd):
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    env.pop(_backend.QUIET, None)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def test_an_ascii_console_gets_escapes_not_an_error(tmp_path, monkeypatch):
    # PYTHONIOENCODING=ascii: the summary's "±" once failed the finished command
    console = {n: io.TextIOWrapper(io.BytesIO(), encoding="ascii") for n in "oe"}
    monkeypatch.setattr(sys, "stdout", console["o"])
    monkeypatch.setattr(sys, "stderr", console["e"])
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    argv += ["--iterations", "2", "--workers", "1", "--no-progress"]
    code = cli.main([*argv, "--out", str(tmp_path / "o")])
    for stream in console.values():
        stream.flush()
    printed = console["o"].buffer.getvalue().decode("ascii")
    assert code == 0, console["e"].buffer.getvalue()[-2000:]
    assert "\\xb1" in printed and "summary:" in printed


@pytest.mark.slow
def test_a_users_import_keeps_deepxdes_banner(tmp_path):
    out = _python(["-c", "import deepxde_lnn, deepxde"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert all(words in out.stderr for words in BANNER)


@pytest.mark.slow
def test_the_command_line_and_its_workers_print_no_deepxde_banner(tmp_path):
    argv = ["compare", "laplace", "--iterations", "1", "--seeds", "1,2"]
    argv += ["--workers", "2", "--stack", "off", "--no-progress", "--out", "r"]
    out = _python(["-m", "deepxde_lnn.cli", *argv], tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    printed = out.stdout + out.stderr
    assert not [words for words in BANNER if words in printed], printed[:2000]
    # the four runs, made by two workers (out made absolute before anything runs)
    assert printed.count(f"-> {(tmp_path / 'r').resolve()}/") == 4
    assert _backend.QUIET not in os.environ


def _fake_run(folder, method, seed, error):
    """A run folder with a 2-D |error| map of constant ``error`` (and its
    loss history), as the summary figure reads it."""
    folder.mkdir(parents=True)
    write_fields(folder, error, "u", exact_first=True)  # exact: the scale's bottom
    record = {"case": "laplace", "method": method, "seed": seed}
    (folder / "metrics.json").write_text(json.dumps(record))
    return {**record, "_dir": str(folder)}


def test_summary_maps_share_one_colour_scale(tmp_path):
    runs = [
        _fake_run(tmp_path / "lnn", "lnn", 1, 1e-3),
        _fake_run(tmp_path / "pinn", "pinn", 1, 1e-2),  # ten times worse
    ]
    fig = summary_figure(runs, ["lnn", "pinn"])
    maps = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(maps) == 2
    assert [m.get_clim() for m in maps] == [pytest.approx((1e-3, 1e-2))] * 2
    assert maps[0].norm is maps[1].norm
    # ten times worse is one decade up the shared scale; zero at its bottom
    levels = [m.norm(m.get_array()) for m in maps]
    assert float(levels[1][2, 2] - levels[0][2, 2]) == pytest.approx(1.0)
    assert float(levels[0][0, 0]) == pytest.approx(0.0)


def test_error_norm_spans_at_most_six_decades_above_rare_dips():
    norm = error_norm([np.logspace(-12, 0, 13), np.array([0.0, np.nan])])
    assert (norm.vmin, norm.vmax) == pytest.approx((1e-6, 1.0))
    # one point in 200 where the error changes sign does not set the bottom
    maps = [np.full(100, 1e-3), np.r_[np.full(99, 1e-2), 1e-9]]
    norm = error_norm(maps)
    assert norm.vmin == pytest.approx(1e-3) and norm.vmax == pytest.approx(1e-2)


def _two_field_runs(root, scale_k=0.01):
    """Runs of fnn and lnn on fields u (scale 1) and k (scale ``scale_k``) over
    one input, as records and artifacts (the lnn's errors 0.6 times the fnn's)."""
    from deepxde_lnn.problems.metrics import all_fields

    x = np.linspace(0, 1, 40)[:, None]
    exact = np.hstack([np.sin(np.pi * x), scale_k * (1 + x**2)])
    runs = []
    for m, factor in (("fnn", 1.0), ("lnn", 0.6)):
        for seed in range(3):
            d = root / m / f"seed-{seed}"
            d.mkdir(parents=True)
            wobble = np.hstack([0.05 * np.sin(3 * x), 0.2 * scale_k * np.cos(5 * x)])
            pred = exact + factor * (1 + 0.1 * seed) * wobble
            np.savez(
                d / "fields.npz", x=x, exact=exact, pred=pred,
                abs_error=np.abs(pred - exact), mask=np.ones(40, bool),
                axes=np.array(()), inputs=np.array(["x"]), fields=np.array(["u", "k"]),
            )  # fmt: skip
            (d / "loss.csv").write_text("step,total\n0,1.0\n500,0.1\n")
            rec = {
                "case": "mine", "method": m, "seed": seed, "_dir": str(d),
                "lr": 1e-3, "iterations": 500, "profile": "quick", "dtype": "float32",
                "device": "cpu", "device_name": "CPU", "parameters": 100,
                "train_seconds": 1.0, "seconds_per_step": 0.002,
                "final_loss": {"total": 0.1}, "grid_points": 40, "versions": {},
            }  # fmt: skip
            rec["metrics"] = all_fields(pred, exact, ["u", "k"])
            runs.append(rec)
    return runs


def test_every_field_has_its_row_and_a_function_is_drawn_against_its_truth(tmp_path):
    # issue 52, items 3 and 4
    runs = _two_field_runs(tmp_path)
    fig = summary_figure(runs, ["fnn", "lnn"])
    titles = [ax.get_title() for ax in fig.axes]
    for name in ("u", "k"):
        assert f"fnn: |error| of {name}\n(worst seed, 2)" in titles
        assert f"{name}: predicted and true" in titles
        assert any(t.startswith(f"{name}: every seed") for t in titles)
    (k,) = [ax for ax in fig.axes if ax.get_title() == "k: predicted and true"]
    true = [line for line in k.get_lines() if line.get_label() == "true"][0]
    assert max(true.get_ydata()) == pytest.approx(0.02)  # k's own scale
    maps = {t: ax for ax, t in zip(fig.axes, titles) if "|error| of" in t}
    assert maps["fnn: |error| of k\n(worst seed, 2)"].get_ylim()[1] < 0.01
    (loss,) = [ax for ax in fig.axes if ax.get_title().startswith("total loss")]
    assert loss.get_lines()[0].get_marker() == "o"  # two logged points: marked


def test_the_mean_of_fields_of_different_scales_gets_no_verdict(tmp_path):
    from deepxde_lnn.analysis.summaries import build_summary

    runs = _two_field_runs(tmp_path / "far")
    out = build_summary(runs, baseline="fnn")
    assert [v.field for v in out.verdicts] == ["u", "k"]
    assert "Avg (the mean of the fields' errors) has no verdict" in out.markdown
    near = _two_field_runs(tmp_path / "near", scale_k=0.5)
    out = build_summary(near, baseline="fnn")
    assert [v.field for v in out.verdicts] == ["u", "k", "Avg"]


def test_a_network_of_another_shape_is_described_by_its_layers():
    import deepxde as dde

    from deepxde_lnn.training.run_record import describe

    net = dde.nn.PFNN([2, [20, 20], [20, 20], 2], "tanh", "Glorot uniform")
    assert describe(net) == "PFNN(linear 2→20 ×2, 20→20 ×2, 20→1 ×2; 1,002 parameters)"
