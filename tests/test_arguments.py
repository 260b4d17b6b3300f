"""Arguments, method options, folder names, the job pool and ``ResampledPDE``'s
inputs: each test reproduces one defect found by probing the CLI from outside."""

import os
import signal
import subprocess
import sys
import time

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import run_cli, tiny_case

from deepxde_lnn import LNN, api
from deepxde_lnn import case_script as example
from deepxde_lnn.config import RunConfig
from deepxde_lnn.experiments import jobs
from deepxde_lnn.problems.data import ResampledPDE, Term
from deepxde_lnn.problems.sampling import Box
from deepxde_lnn.runs import names
from deepxde_lnn.runs.folder import RunFolder
from deepxde_lnn.study import registry

ENV = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
CLI = [sys.executable, "-m", "deepxde_lnn.cli"]


def _cli(argv, capsys):
    return run_cli(argv, capsys)


def _one_error(io, *words):
    lines = io.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), io.err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# method options: a type each, no path in a folder name ----------------------------


def test_a_method_option_cannot_write_outside_out(tmp_path, capsys):
    out = tmp_path / "a" / "b" / "c" / "o"
    method = "lnn:block_activation=LAAF-10 tanh /../../../../escaped"
    argv = ["compare", "laplace", "--methods", method, "--seeds", "1"]
    code, io = _cli([*argv, "--iterations", "2", "--out", str(out)], capsys)
    assert code == 2
    _one_error(io, "block_activation", "LAAF-10 tanh /../../../../escaped")
    assert not (tmp_path / "a" / "b" / "escaped").exists()
    assert not (tmp_path / "a").exists()
    with pytest.raises(ValueError, match="block_activation"):
        RunConfig("laplace", method).resolved(registry.get("laplace"))
    with pytest.raises(ValueError, match="block_activation"):
        LNN([2, 8, 1], "tanh", "Glorot normal", block_activation="tanh /..")


@pytest.mark.parametrize(
    "option, message",
    [
        (
            "block_activation=LAAF-0 tanh",
            "LAAF scale n must be a finite number in [1, 1000]; got 0.0",
        ),
        (
            "block_activation=LAAF-inf tanh",
            "LAAF scale n must be a decimal number; got 'inf'",
        ),
        (
            "block_activation=LAAF-10 tanh x",
            "block_activation must be an activation name or 'LAAF-n NAME'",
        ),
        ("width=1000000000", "width must be an integer in [1, 4096]; got 1000000000"),
        ("width=1_0", "width must be an integer (digits 0-9); got '1_0'"),
        ("width=0", "width must be an integer in [1, 4096]; got 0"),
        ("alpha_init=1e308", "alpha_init must be a finite number in [-1000, 1000]"),
        ("alpha_init=nan", "alpha_init must be a decimal number; got 'nan'"),
        ("alpha_init=1_0", "alpha_init must be a decimal number; got '1_0'"),
        ("layout=../x", "layout must be one of standard, reduced; got '../x'"),
    ],
)
def test_method_option_values_are_checked(tmp_path, capsys, option, message):
    argv = ["run", "laplace", "--method", f"lnn:{option}", "--iterations", "2"]
    code, io = _cli([*argv, "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and not (tmp_path / "o").exists()
    _one_error(io, f"method 'lnn:{option}'", message)


def test_run_folders_are_safe_names_inside_out(tmp_path):
    for bad in ("..", ".", "a/b", "/abs", ".hidden", "-x", "a\nb", "", "x" * 201):
        with pytest.raises(ValueError, match="cannot name a folder"):
            names.run_folder(tmp_path, bad)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "lnn").symlink_to(tmp_path)  # a link leading outside
    with pytest.raises(ValueError, match="outside"):
        names.run_folder(tmp_path / "out", "lnn", "seed-1")
    ok = names.run_folder(tmp_path, "lnn:block_activation=LAAF-10 tanh", "seed-1")
    assert ok == tmp_path / "lnn:block_activation=LAAF-10 tanh" / "seed-1"


def test_the_same_method_twice_is_refused(tmp_path, capsys):
    for methods, said in [
        ("pinn,pinn", "'pinn' is given twice"),
        ("lnn,lnn:alpha_init=0.5", "'lnn:alpha_init=0.5' is the same as 'lnn'"),
        ("lnn:alpha_init=0,lnn:alpha_init=0.0", "is the same as"),
    ]:
        argv = ["compare", "laplace", "--methods", methods, "--iterations", "2"]
        code, io = _cli([*argv, "--out", str(tmp_path / "o")], capsys)
        assert code == 2 and not (tmp_path / "o").exists()
        _one_error(io, "methods:", said)


# sweep folders: one per learning rate ----------------------------------------------


def test_lr_folder_names_are_injective_and_keep_the_usual_names():
    usual = {1e-2: "0.01", 3e-3: "0.003", 1e-3: "0.001", 3e-4: "0.0003", 1e-5: "1e-05"}
    assert {lr: names.lr_text(lr) for lr in usual} == usual
    assert names.lr_name(1e-3) == "lr-0.001"
    assert names.lr_name(1.0000001e-3) == "lr-0.0010000001"
    rng = np.random.default_rng(0)
    lrs = [*10.0 ** rng.uniform(-8, 1, 2000), *np.nextafter(1e-3, [0, 1]), 1.0]
    texts = [names.lr_text(float(lr)) for lr in lrs]
    assert [float(t) for t in texts] == [float(lr) for lr in lrs]  # reads back
    assert len(set(texts)) == len(set(lrs))


def test_sweep_puts_close_learning_rates_in_different_folders(
    tmp_path, capsys, monkeypatch
):
    seen = []

    def record(o, problem, methods, seeds, root, *rest):
        seen.append(root)  # the comparison of one learning rate, not trained

    monkeypatch.setattr(api, "compare_runs", record)
    monkeypatch.setattr(api, "sweep_table", lambda *a: "")
    argv = ["sweep", "laplace", "--lrs", "1e-3,1.0000001e-3", "--iterations", "2"]
    code, _ = _cli([*argv, "--out", str(tmp_path / "s")], capsys)
    assert code == 0 and len(seen) == 2
    assert [p.relative_to(tmp_path / "s").parts[0] for p in seen] == [
        "lr-0.001",
        "lr-0.0010000001",
    ]


@pytest.mark.parametrize(
    "argv, said",
    [
        (["sweep", "laplace", "--lrs", "1e-3,0.001"], "lrs: 0.001 is given twice"),
        (["compare", "laplace", "--seeds", "5,5"], "seeds: 5 is given twice"),
        (["sweep", "laplace", "--lrs", "1e-3", "--seeds", "1,2,1"], "seeds: 1 is"),
    ],
)
def test_repeated_seeds_and_learning_rates_are_refused(tmp_path, capsys, argv, said):
    code, io = _cli([*argv, "--iterations", "2", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and not (tmp_path / "o").exists()
    _one_error(io, said)


# a tiny comparison, whose options each test changes
_TINY = ["--methods", "pinn", "--workers", "1", "--no-progress"]


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--seeds", "1", "--seeds", "2"], "argument --seeds: given more than once"),
        (["--seeds=1", "--seeds", "2"], "argument --seeds: given more than once"),
        (["--seeds", "1", "--overwrite", "--overwrite"], "--overwrite: given more"),
        (["--seeds", "1", "--iter", "2"], "unrecognized arguments: --iter 2"),
        (["--seed", "1", "--iterations", "2"], "unrecognized arguments: --seed 1"),
    ],
    ids=["repeated", "repeated-with-equals", "repeated-switch", "abbrev", "abbrev2"],
)
def test_an_option_is_given_once_and_in_full(tmp_path, capsys, argv, said):
    out = tmp_path / "o"
    code, io = _cli(["compare", "laplace", *_TINY, *argv, "--out", str(out)], capsys)
    assert code == 2 and not out.exists()
    _one_error(io, said)
    with pytest.raises(SystemExit):  # the case scripts' flags too
        example.parse_args(registry.get("laplace"), ["--iter", "2"])


# numbers on the command line: one rule, one message --------------------------------


@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["--threads", "0"],
            "threads must be an integer in [1, 1024]; got 0",
        ),
        (["--iterations", "1_0"], "iterations must be an integer (digits 0-9)"),
        (["--iterations", "inf"], "iterations must be an integer (digits 0-9)"),
        (["--lbfgs", "Infinity"], "lbfgs must be an integer (digits 0-9)"),
        (["--lbfgs", "-1"], "lbfgs must be an integer (digits 0-9); got '-1'"),
        (["--seed", "1_0"], "seed must be an integer (digits 0-9)"),
        (["--seed", "4294967296"], "seed must be an integer in [0, 4294967295]"),
        (["--seconds", "Infinity"], "seconds must be a decimal number; got 'Infinity'"),
        (["--seconds", "1e400"], "seconds must be a finite number > 0; got inf"),
        (["--lr", "nan"], "lr must be a decimal number; got 'nan'"),
        (["--lr", "0"], "lr must be a finite number > 0; got 0.0"),
        (["--checkpoint-every", "1_000"], "checkpoint-every must be an integer"),
    ],
)
def test_numbers_on_the_command_line(tmp_path, capsys, argv, said):
    out = tmp_path / "o"
    code, io = _cli(["run", "laplace", *argv, "--out", str(out)], capsys)
    assert code == 2 and not out.exists()
    line = _one_error(io, said)
    assert "finite an" not in line and "finite a number" not in line


def test_the_api_and_the_cli_say_the_same(capsys):
    with pytest.raises(ValueError) as api:
        RunConfig("laplace", iterations=0).resolved(registry.get("laplace"))
    code, io = _cli(["run", "laplace", "--iterations", "0"], capsys)
    assert (
        code == 2
        and str(api.value)
        == "iterations must be an integer in [1, 1000000000000000]; got 0"
    )
    _one_error(io, str(api.value))


# the job pool ------------------------------------------------------------------------


def test_unreachable_dask_scheduler_is_one_error_before_anything(
    tmp_path, capsys, monkeypatch
):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(jobs, "CONNECT_SECONDS", 1, raising=False)
    out = tmp_path / "o"
    argv = ["compare", "laplace", "--backend", "dask", "--address", "tcp://127.0.0.1:1"]
    t = time.perf_counter()
    code, io = _cli([*argv, "--iterations", "2", "--out", str(out)], capsys)
    assert code == 2 and time.perf_counter() - t < 15 and not out.exists()
    _one_error(io, "address:", "tcp://127.0.0.1:1")
    code, io = _cli(["compare", "laplace", "--address", "tcp://h:1"], capsys)
    assert code == 2
    _one_error(io, "address: only --backend dask uses an address")


def test_ray_is_refused_saying_why_and_what_instead(tmp_path, capsys):
    # joblib's Ray backend cannot hand back runs as they finish (issue 43)
    out = tmp_path / "o"
    argv = ["compare", "laplace", "--backend", "ray", "--iterations", "2"]
    code, io = _cli([*argv, "--out", str(out)], capsys)
    assert code == 2 and not out.exists()
    said = _one_error(io, "--backend", "'ray'", "return_as='generator'", "'dask'")
    with pytest.raises(ValueError) as refused:
        api.compare("laplace", backend="ray", iterations=2, out=out)
    assert str(refused.value) in said and not out.exists()
    with pytest.raises(ValueError, match="'ray' is no longer offered"):
        jobs.run_jobs([], backend="ray", problem=tiny_case())


@pytest.mark.slow  # trains for seconds
def test_workers_are_capped_at_the_runs_and_the_cores(tmp_path, capsys, monkeypatch):
    import joblib

    asked = []

    class Serial:  # joblib.Parallel run here, recording the workers asked for
        def __init__(self, n_jobs, **kw):
            asked.append(n_jobs)

        def __call__(self, tasks):
            return [f(*a, **k) for f, a, k in tasks]

    monkeypatch.setattr(joblib, "Parallel", Serial)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    cfgs = [RunConfig("laplace", "pinn", seed=s, iterations=2) for s in (1, 2, 3)]
    todo = [(c, tmp_path / f"seed-{c.seed}") for c in cfgs]
    outcomes = jobs.run_jobs(todo, workers=64, problem=tiny_case())
    assert [o.status for o in outcomes] == ["done"] * 3
    assert asked == [2]
    assert "workers: 64 capped at 2 (2 cores here)" in capsys.readouterr().err
    assert jobs.capped_workers(64, 3, "dask") == 3
    assert "workers: 64 capped at 3 (3 to run)" in capsys.readouterr().err


def _group_alive(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    alive = []
    for stat in os.listdir("/proc"):
        try:
            with open(f"/proc/{stat}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            alive.append(int(stat))
    return alive


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_workers_stop_when_the_command_is_killed(tmp_path):
    # SIGKILL to `compare`: its loky workers notice that their parent is gone,
    # stop at a checkpoint, release their folders' locks and exit
    out = tmp_path / "cmp"
    argv = [*CLI, "compare", "laplace", "--methods", "pinn", "--seeds", "1,2"]
    argv += ["--workers", "2", "--threads", "1", "--stack", "off"]
    argv += ["--iterations", "100000", "--checkpoint-every", "10", "--no-progress"]
    proc = subprocess.Popen(
        [*argv, "--out", str(out)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, workers included
    )
    folders = [out / "pinn" / f"seed-{s}" for s in (1, 2)]
    try:
        # two workers importing torch on a loaded two-core machine (the suite runs
        # beside this test) took over 120 s once; the deadline is for a hang only
        deadline = time.time() + 600
        while not all((f / "checkpoint.pt").exists() for f in folders):
            assert proc.poll() is None, "compare ended before both runs checkpointed"
            assert time.time() < deadline, "no checkpoint from both workers in 600 s"
            time.sleep(0.1)
        proc.kill()
        proc.wait()
        deadline = time.time() + 60
        while _group_alive(proc.pid):
            assert time.time() < deadline, "workers still running after their parent"
            time.sleep(0.2)
        for f in folders:
            with RunFolder(f).locked():  # FolderLocked if a worker still held it
                pass
            assert (f / "checkpoint.pt").exists() and not (f / "metrics.json").exists()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.slow
def test_sigterm_at_start_up_exits_130():
    script = (
        "import os, signal, sys, time\n"
        "from deepxde_lnn import cli\n"
        "def stop(args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(30)\n"
        "cli.COMMANDS['list'] = stop\n"
        "sys.exit(cli.main(['list']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=ENV, capture_output=True, text=True
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.strip().splitlines() == ["interrupted"]


# ResampledPDE's inputs -------------------------------------------------------------


def _train(terms, steps=2):
    data = ResampledPDE(terms, seed=0)
    net = dde.nn.FNN([1, 8, 1], "tanh", "Glorot normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=steps, display_every=10**9, verbose=0)
    return data, model


def _pde(x, y):
    return dde.grad.hessian(y, x) + 1


def test_float64_sampler_points_are_cast_to_the_network_type():
    geom = dde.geometry.Interval(0, 1)
    bc = dde.icbc.DirichletBC(geom, lambda x: 0 * x[:, :1], lambda _, on: on)

    def float64(n, rng):
        return rng.random((n, 1))

    terms = [Term("pde", float64, 8, _pde, kind="pde"), Term("bc", float64, 4, bc)]
    data, model = _train(terms)
    assert data.train_x.dtype == np.float32 and data.test()[0].dtype == np.float32
    assert np.isfinite(model.losshistory.loss_train[-1]).all()


@pytest.mark.parametrize(
    "residual, got",
    [
        (lambda x, y: y[:-1], r"\(7, 1\)"),
        (lambda x, y: torch.cat([y, y]), r"\(16, 1\)"),
        (lambda x, y: y[:, :0], r"\(8, 0\)"),
        (lambda x, y: y.sum(), r"\(\)"),
        (lambda x, y: 0.5, "float"),
        (lambda x, y: None, "NoneType"),
        (lambda x, y: y.detach().numpy(), "ndarray"),
        (lambda x, y: [y, torch.cat([y, y], 1)], r"\[\(8, 1\), \(8, 2\)\]"),
        (lambda x, y: [], r"\[\]"),
    ],
)
def test_residuals_of_the_wrong_shape_are_refused(residual, got):
    term = Term("r", Box((0,), (1,)), 8, residual, kind="operator")
    with pytest.raises(ValueError, match=f"Term 'r': the residual .*; got {got}"):
        _train([term])


def test_zero_column_sampler_is_refused():
    term = Term("a", lambda n, rng: np.zeros((n, 0)), 3, lambda x, y: y)
    with pytest.raises(ValueError, match=r"Term 'a': sampler returned shape \(3, 0\)"):
        ResampledPDE([term])


def test_a_sweep_judges_against_one_baseline(tmp_path):
    # sweep.md has one baseline column: several are refused before anything
    # trains (they trained, then sweep.md failed with a TypeError)
    with pytest.raises(ValueError, match=r"^baseline: a sweep takes one method"):
        api.sweep(
            "laplace",
            lrs=[1e-3],
            methods="lnn,pinn,pinn-matched",
            seeds=[0],
            baseline="pinn,pinn-matched",
            iterations=1,
            out=tmp_path / "s",
            progress=False,
        )
    assert not (tmp_path / "s").exists()


def test_a_large_sweep_is_capped_and_checked_once_per_method(tmp_path, monkeypatch):
    # issue 55, item 14: 1000 lrs x 1000 seeds printed nothing for 150 s
    many = [1e-3 * (1 + i) for i in range(101)]
    with pytest.raises(ValueError, match=r"^lrs: at most 100 learning rates"):
        api.sweep("laplace", lrs=many, out=tmp_path / "s", progress=False)
    assert not (tmp_path / "s").exists()
    resolved = []
    real = RunConfig.resolved

    def counted(self, case):
        resolved.append((self.method, self.seed))
        return real(self, case)

    monkeypatch.setattr(RunConfig, "resolved", counted)
    from deepxde_lnn.experiments.orchestration import check_configs

    o = api._options({"iterations": 2}, api.sweep)
    problem = api.problem_of("laplace", None, None, None)
    check_configs(o, problem, ["lnn", "pinn"], list(range(1000)))
    assert resolved == [("lnn", 0), ("pinn", 0)]
    with pytest.raises(ValueError, match="seed must be an integer"):
        check_configs(o, problem, ["lnn"], [0, -1])
