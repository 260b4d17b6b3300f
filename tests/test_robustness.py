"""Untrusted result folders, damaged checkpoints, locks, bounds and interruptions.

Each test reproduces one defect found by probing the CLI and API from outside.
"""

import functools
import json
import os
import pathlib
import shlex
import signal
import sys

import numpy as np
import pytest
import torch
from helpers import TINY, SignalAt, run_cli, tiny_case

import deepxde_lnn
from deepxde_lnn import cli
from deepxde_lnn.analysis import figures
from deepxde_lnn.config import RunConfig
from deepxde_lnn.problems.data import ResampledPDE, Term
from deepxde_lnn.problems.sampling import Box
from deepxde_lnn.runs.checkpoint import CheckpointError, load_checkpoint
from deepxde_lnn.runs.folder import FolderLocked, RunFolder, mark
from deepxde_lnn.study import registry
from deepxde_lnn.training import phases
from deepxde_lnn.training.runner import RunInterrupted, run


class Planted:
    """A pickle that would create a file when unpickled."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


def _cli(argv, capsys):
    return run_cli(argv, capsys)


def _interrupted(tmp_path, name="cut"):
    """An unfinished run (checkpoint at step 20) of the tiny Laplace case."""
    case, cfg = tiny_case(), RunConfig("laplace", "pinn", seed=1, **TINY)
    with pytest.raises(RunInterrupted):
        run(cfg, tmp_path / name, problem=case, callbacks=[SignalAt(23)])
    return case, cfg, tmp_path / name


# 1. a checkpoint cannot execute code -------------------------------------------


def test_planted_pickle_checkpoint_does_not_run(tmp_path, capsys):
    out, marker = tmp_path / "X", tmp_path / "pwned"
    (out / "pinn" / "seed-1").mkdir(parents=True)
    mark(out), mark(out / "pinn" / "seed-1")  # a result folder from someone else
    torch.save({"x": Planted(marker)}, out / "pinn" / "seed-1" / "checkpoint.pt")
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    code, io = _cli([*argv, "--iterations", "2", "--out", str(out)], capsys)
    assert not marker.exists()
    assert code == 2 and "checkpoint.pt" in io.err and "unreadable" in io.err
    with pytest.raises(CheckpointError):
        load_checkpoint(out / "pinn" / "seed-1" / "checkpoint.pt")


def test_checkpoint_loads_with_weights_only(tmp_path):
    _, _, out = _interrupted(tmp_path)
    outer = torch.load(out / "checkpoint.pt", weights_only=True)
    assert set(outer) == {"format", "sha256", "payload"}
    state = load_checkpoint(out / "checkpoint.pt")
    assert state["step"] in (23, 24) and state["loss"].shape[0] == state["step"]


# 2. a damaged checkpoint is refused, naming the file ------------------------------


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "zeros"])
def test_damaged_checkpoint_is_refused(tmp_path, damage):
    case, cfg, out = _interrupted(tmp_path)
    path = out / "checkpoint.pt"
    data = bytearray(path.read_bytes())
    if damage == "flip":  # a byte inside the payload (the weights)
        data[len(data) // 2] ^= 0x01
    elif damage == "truncate":
        data = data[: len(data) // 3]
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(len(data))
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=str(path)):
        run(cfg, out, problem=case, resume=True)
    assert path.exists() and not (out / "metrics.json").exists()


# 3. reuse trusts only complete, matching records ---------------------------------


@pytest.mark.parametrize(
    "edit, why",
    [
        (lambda r: {k: v for k, v in r.items() if k != "lr"}, "missing lr"),
        (lambda r: {}, "missing case"),
        (lambda r: [1, 2], "not a JSON object"),
        (None, "unreadable"),
    ],
)
def test_incomplete_metrics_are_not_reused(tmp_path, capsys, edit, why):
    out = tmp_path / "c"
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    argv += ["--iterations", "2", "--no-progress", "--out", str(out)]
    assert _cli(argv, capsys)[0] == 0
    path = out / "pinn" / "seed-1" / "metrics.json"
    text = path.read_text()
    path.write_text(
        text[: len(text) // 2] if edit is None else json.dumps(edit(json.loads(text)))
    )
    code, io = _cli([*argv, "--lr", "0.05"], capsys)
    assert code == 2 and str(path) in io.err and why in io.err
    assert "Traceback" not in io.err


def test_finished_run_of_another_configuration_needs_overwrite(tmp_path, capsys):
    case = tiny_case()
    out = tmp_path / "r"
    first = run(RunConfig("laplace", "pinn", seed=1, iterations=3), out, problem=case)
    with pytest.raises(ValueError, match=r"another configuration \(lr=0.001"):
        run(
            RunConfig("laplace", "pinn", seed=1, iterations=3, lr=0.01),
            out,
            problem=case,
        )
    again = run(RunConfig("laplace", "pinn", seed=1, iterations=3), out, problem=case)
    assert again == first  # same configuration: reused, not retrained
    cfg = RunConfig("laplace", "pinn", seed=1, iterations=3, lr=0.01)
    assert run(cfg, out, problem=case, overwrite=True)["lr"] == 0.01


# 4. the output folder is checked before training --------------------------------


def test_out_is_checked_before_training(tmp_path, capsys, monkeypatch):
    def no_training(*a, **k):
        raise AssertionError("trained before checking --out")

    monkeypatch.setattr(phases, "train", no_training)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker, blocker / "sub"):
        argv = ["run", "laplace", "--iterations", "5", "--out", str(out)]
        code, io = _cli(argv, capsys)
        assert code == 2 and io.err.startswith("error: out:") and str(blocker) in io.err


# 5. every seed is validated up front ----------------------------------------------


def test_seeds_beyond_32_bits_are_refused_up_front(tmp_path, capsys):
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1,4294967296"]
    code, io = _cli([*argv, "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "seed" in io.err and not (tmp_path / "o").exists()
    with pytest.raises(ValueError, match="seed"):
        RunConfig("laplace", seed=2**32).resolved(registry.get("laplace"))


def test_the_seeds_of_a_call_are_capped_before_anything(tmp_path, capsys, monkeypatch):
    # issue 43, item 9: seeds=range(10**5) once made 200,000 folders in a minute
    def no_training(*a, **k):
        raise AssertionError("trained before checking the seeds")

    monkeypatch.setattr(phases, "train", no_training)
    out = tmp_path / "o"
    argv = ["compare", "laplace", "--methods", "pinn", "--iterations", "2"]
    argv += ["--workers", "1", "--out", str(out)]
    code, io = _cli([*argv, "--seeds", ",".join(map(str, range(1001)))], capsys)
    assert code == 2 and "seeds: at most 1,000 seeds per method; got 1,001" in io.err
    for seeds in (range(10**5), range(10**100), iter(range(10**6))):
        with pytest.raises(ValueError, match=r"^seeds: at most 1,000 seeds per"):
            deepxde_lnn.compare("laplace", seeds=seeds, out=out, iterations=2)
    code, io = _cli([*argv, "--until-decided", "--max-seeds", "1001"], capsys)
    assert code == 2 and "max_seeds (--max-seeds): at most 1,000 seeds" in io.err
    assert not out.exists()


def test_a_runs_folder_is_made_when_the_run_starts(tmp_path, monkeypatch):
    out, made = tmp_path / "o", []
    train = phases.train

    def seeing(job, *args, **kwargs):
        made.append(sorted(p.name for p in (out / "pinn").iterdir()))
        return train(job, *args, **kwargs)

    monkeypatch.setattr(phases, "train", seeing)
    quiet = dict(workers=1, stack="off", progress=False, verbose=False)
    deepxde_lnn.compare(
        tiny_case(), methods=["pinn"], seeds=[1, 2], iterations=2, out=out, **quiet
    )
    assert made == [["seed-1"], ["seed-1", "seed-2"]]


# 6. a lock per run folder ----------------------------------------------------------


def test_locked_folder_is_refused_and_stale_lock_file_is_not(tmp_path):
    case, out = tiny_case(), tmp_path / "r"
    folder = RunFolder(out)
    folder.prepare()
    with folder.locked():
        with pytest.raises(FolderLocked, match="in use by another"):
            run(RunConfig("laplace", "pinn", seed=1, iterations=2), out, problem=case)
    assert not (out / "metrics.json").exists()
    # a lock file left by a killed process holds no OS lock: the run goes ahead
    (out / ".lock").write_text("12345")
    run(RunConfig("laplace", "pinn", seed=1, iterations=2), out, problem=case)
    assert (out / "metrics.json").exists()


# 7. upper bounds --------------------------------------------------------------------


def test_threads_and_fem_levels_are_bounded(tmp_path, capsys):
    code, io = _cli(["run", "laplace", "--threads", "1000"], capsys)
    assert code == 2 and "threads" in io.err and "cores" in io.err
    code, io = _cli(["run", "laplace", "--threads", "10000"], capsys)
    assert code == 2 and "threads must be an integer in [1, 1024]" in io.err
    code, io = _cli(["reference", "heat", "--levels", "12"], capsys)
    assert code == 2 and "levels" in io.err and "GiB" in io.err
    assert not (tmp_path / "reference").exists()


# 8. interruptions anywhere ----------------------------------------------------------


def test_orphan_temp_files_are_removed_on_resume(tmp_path):
    case, cfg, out = _interrupted(tmp_path)
    orphan = out / ".checkpoint.pt.abcd1234.tmp"
    orphan.write_bytes(b"half a checkpoint")
    run(cfg, out, problem=case, resume=True)
    assert not orphan.exists() and not (out / "checkpoint.pt").exists()


def test_sigint_while_writing_finishes_the_folder(tmp_path, monkeypatch):
    real = figures.run_figures

    def interrupted_figures(path):
        os.kill(os.getpid(), signal.SIGINT)
        return real(path)

    monkeypatch.setattr(figures, "run_figures", interrupted_figures)
    case, out = tiny_case(), tmp_path / "r"
    draw = functools.partial(figures.draw_missing, problem=case)  # as the experiments
    with pytest.raises(RunInterrupted, match="results in .* are complete"):
        cfg = RunConfig("laplace", "pinn", seed=1, iterations=3)
        run(cfg, out, problem=case, on_done=draw)
    assert (out / "metrics.json").exists() and (out / "fields.png").exists()
    assert not (out / "checkpoint.pt").exists()


def test_sigint_at_start_up_exits_130_without_traceback(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "list", interrupted)
    code, io = _cli(["list"], capsys)
    assert code == 130 and "Traceback" not in io.err


def test_stale_checkpoint_beside_finished_results_is_removed(tmp_path):
    case, out = tiny_case(), tmp_path / "r"
    cfg = RunConfig("laplace", "pinn", seed=1, iterations=3)
    rec = run(cfg, out, problem=case)
    (out / "checkpoint.pt").write_bytes(b"left by a kill after metrics.json")
    assert run(cfg, out, problem=case) == rec
    assert not (out / "checkpoint.pt").exists()


# 9. API validation -----------------------------------------------------------------


@pytest.mark.parametrize("weight", [float("nan"), float("inf"), -1.0, "1", None, True])
def test_term_weight_is_validated(weight):
    with pytest.raises(ValueError, match="Term 'a': weight"):
        Term("a", Box((0,), (1,)), 3, lambda x, y: y, weight=weight)


@pytest.mark.parametrize(
    "points, match",
    [
        (np.array([[0.1], [np.nan], [0.3]]), "NaN or inf"),
        (np.array([[0.1], [np.inf], [0.3]]), "NaN or inf"),
        (np.array([["a"], ["b"], ["c"]]), "non-numeric"),
    ],
)
def test_bad_sampler_output_is_refused(points, match):
    term = Term("a", lambda n, rng: points, 3, lambda x, y: y)
    with pytest.raises(ValueError, match=f"Term 'a': sampler returned {match}"):
        ResampledPDE([term])


def test_terms_of_different_dimension_and_bad_terms_argument():
    a = Term("a", Box((0,), (1,)), 3, lambda x, y: y)
    b = Term("b", Box((0, 0), (1, 1)), 3, lambda x, y: y)
    with pytest.raises(ValueError, match="different input dimensions .a: 1, b: 2"):
        ResampledPDE([a, b])
    for bad in (None, a, 3):
        with pytest.raises(ValueError, match="terms must be a sequence of Term"):
            ResampledPDE(bad)
    with pytest.raises(ValueError, match=r"terms\[1\] is not a Term"):
        ResampledPDE([a, "b"])


def test_lnn_accepts_a_numpy_layer_list():
    net = deepxde_lnn.LNN(np.array([2, 8, 1]), "tanh", "Glorot normal")
    assert net.layer_sizes == [2, 8, 1]


def test_conditions_needing_fixed_points_or_aux_vars_are_refused():
    import deepxde as dde

    geom = dde.geometry.Rectangle((0, 0), (1, 1))
    pts = dde.icbc.PointSetBC(np.zeros((2, 2)), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="Term 'p': PointSetBC is not supported"):
        Term("p", Box((0, 0), (1, 1)), 3, pts)
    aux = dde.icbc.DirichletBC(geom, lambda x, a: a, lambda _, on: on)
    with pytest.raises(ValueError, match="Term 'd': .*auxiliary variables"):
        Term("d", Box((0, 0), (1, 1)), 3, aux)


# 10. messages ----------------------------------------------------------------------


def test_heat_without_fem_reference_warns_and_records_why(tmp_path, capsys):
    # a small grid is not the reference's grid: the cross-check cannot be made
    case = tiny_case("heat", n=8, grid_n=31)
    rec = run(
        RunConfig("heat", "pinn", seed=0, iterations=2), tmp_path / "h", problem=case
    )
    err = capsys.readouterr().err
    assert "warning: FEM reference not available" in err
    assert rec["warnings"] and "FEM reference not available" in rec["warnings"][0]
    assert "stale" in rec["extra_metrics"]["fem"]


def test_command_is_shell_quoted(tmp_path, monkeypatch):
    argv = ["deepxde-lnn", "run", "laplace", "--out", str(tmp_path / "a b")]
    monkeypatch.setattr(sys, "argv", argv)
    rec = run(
        RunConfig("laplace", "pinn", iterations=2), tmp_path / "r", problem=tiny_case()
    )
    assert rec["command"] == shlex.join(argv) and shlex.split(rec["command"]) == argv
