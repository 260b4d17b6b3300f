"""Independent runs spread by joblib: every backend, on a cluster of its engine
that the test starts, gives the same results as running in this process; a
killed worker leaves a checkpoint."""

import contextlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import tiny_case

import deepxde_lnn
from deepxde_lnn.config import BACKENDS, RunConfig
from deepxde_lnn.experiments.jobs import check_backend, run_jobs
from deepxde_lnn.training.outcome import WorkersLost
from deepxde_lnn.training.runner import run

# isort: split
import deepxde as dde

pytestmark = pytest.mark.slow  # worker pools, and the command in a process


def _jobs(root):
    cfgs = [RunConfig("laplace", m, seed=7, iterations=6) for m in ("lnn", "pinn")]
    return [(c, root / c.method) for c in cfgs]


def _metrics(outcomes):
    assert [o.status for o in outcomes] == ["done", "done"]
    return [o.record["metrics"] for o in outcomes]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root, case = tmp_path_factory.mktemp("seq"), tiny_case()
    return [run(c, out, problem=case)["metrics"] for c, out in _jobs(root)]


@contextlib.contextmanager
def _started_by_jobs(tmp_path):
    """No address: the jobs start their own (loky's pool, Dask's LocalCluster)."""
    yield None


@contextlib.contextmanager
def _dask_commands(tmp_path):
    """`dask scheduler` and `dask worker` (two processes) started as commands, as
    a batch job's script does (docs/usage.md); yields the scheduler's address."""
    from dask.distributed import Client

    file = tmp_path / "scheduler.json"
    common = ["--scheduler-file", str(file), "--no-dashboard"]
    procs = []
    try:
        procs.append(
            _dask(tmp_path, "scheduler", "--host", "127.0.0.1", "--port", "0", *common)
        )
        address = _address_in(file, procs[0])
        procs.append(
            _dask(tmp_path, "worker", "--nworkers", "2", "--nthreads", "1", *common)
        )
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in reversed(procs):  # the worker first: it closes its processes
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _dask(tmp_path, command, *args):
    """``dask COMMAND ARGS`` of this interpreter, its output in ``COMMAND.log``."""
    with (tmp_path / f"{command}.log").open("w") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", command, *args],
            env={**os.environ, "MPLBACKEND": "Agg"},
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def _address_in(file, scheduler, seconds=300):
    """The address in the scheduler's file, once it has written it."""
    deadline = time.time() + seconds
    while True:
        with contextlib.suppress(OSError, ValueError):
            return json.loads(file.read_text())["address"]
        assert scheduler.poll() is None and time.time() < deadline
        time.sleep(0.2)


# each backend the command line offers, with the clusters of its engine that the
# tests start: a backend added without one fails test_every_backend_is_tested
# (slurm's: a one-node SLURM, in tests/test_slurm.py)
CLUSTERS = {
    "loky": {"local pool": _started_by_jobs},
    "dask": {"LocalCluster": _started_by_jobs, "commands": _dask_commands},
}


def test_every_backend_is_tested():
    assert sorted([*CLUSTERS, "slurm"]) == sorted(BACKENDS)


@pytest.mark.parametrize(
    "backend, cluster", [(b, c) for b in CLUSTERS for c in CLUSTERS[b]]
)
def test_pool_equals_sequential_runs(
    backend, cluster, reference, tmp_path, monkeypatch
):
    with CLUSTERS[backend][cluster](tmp_path) as address:
        check_backend(backend, address)  # what the command checks first
        if address:  # this machine's cores are not the workers'
            monkeypatch.setattr(os, "cpu_count", lambda: 16)
        outcomes = run_jobs(
            _jobs(tmp_path),
            workers=2,
            backend=backend,
            address=address,
            problem=tiny_case(),
        )
    assert _metrics(outcomes) == reference
    threads = 1  # one per run by default; Dask's workers: one each
    assert [o.record["threads"] for o in outcomes] == [threads, threads]
    for _, out in _jobs(tmp_path):
        assert (out / "metrics.json").exists() and (out / "fields.png").exists()


def test_killed_worker_leaves_a_resumable_checkpoint(tmp_path):
    out = tmp_path / "r"
    argv = [sys.executable, "-m", "deepxde_lnn.cli", "run", "laplace", "--method"]
    argv += ["pinn", "--iterations", "400", "--checkpoint-every", "20"]
    argv += ["--no-progress", "--threads", "1", "--out", str(out)]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.time() + 300
    while not (out / "checkpoint.pt").exists() and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # no handler can run: as a lost worker
    proc.wait()
    assert (out / "checkpoint.pt").exists() and not (out / "metrics.json").exists()
    done = subprocess.run([*argv, "--resume"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rec = json.loads((out / "metrics.json").read_text())
    assert rec["resumed"] and rec["iterations"] == 400
    assert not (out / "checkpoint.pt").exists()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("workers", [2, 1])
def test_a_signal_stops_the_jobs_at_a_checkpoint(tmp_path, workers):
    # SIGTERM to the command: the running runs (in worker processes, or in the
    # command's own process with one worker) stop at a checkpoint, and the queued
    # ones do not start
    out = tmp_path / "cmp"
    argv = [sys.executable, "-m", "deepxde_lnn.cli", "compare", "laplace"]
    argv += ["--methods", "pinn", "--seeds", "1,2,3", "--workers", str(workers)]
    argv += ["--threads", "1", "--stack", "off", "--iterations", "100000"]
    argv += ["--checkpoint-every", "10", "--no-progress", "--out", str(out)]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    try:
        _signal_after_checkpoints(proc, out, workers)
        if workers == 1:  # issue 55, item 13: a second Ctrl-C while it stops
            time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
        printed, _ = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == 130, printed
    assert printed.count(": interrupted: ") == 3, printed
    assert printed.count("not started") == 3 - workers, printed
    saved = {p: p.stat().st_mtime_ns for p in out.glob("pinn/seed-*/checkpoint.pt")}
    assert len(saved) == workers and not list(out.glob("pinn/seed-*/metrics.json"))
    time.sleep(3)  # nothing trains on behind the command's back
    assert saved == {p: p.stat().st_mtime_ns for p in saved}


def _signal_after_checkpoints(proc, out, count):
    deadline = time.time() + 300
    while len(list(out.glob("pinn/seed-*/checkpoint.pt"))) < count:
        assert time.time() < deadline and proc.poll() is None, proc.returncode
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)


DIE = "DEEPXDE_LNN_TEST_DIE"  # set: a Dask worker that trains _dying's runs dies


def _dying():
    """-u'' = 1 on [0, 1], u = x (1 - x) / 2; its residual kills the Dask worker
    process that evaluates it while ``DIE`` is set (as one killed, or out of
    memory), never the command's process (the dry call, a serial run)."""

    def pde(x, u):
        if os.environ.get(DIE) and multiprocessing.parent_process() is not None:
            os._exit(1)
        return dde.grad.hessian(u, x) + 1

    return dde.data.PDE(
        dde.geometry.Interval(0, 1),
        pde,
        [],
        num_domain=8,
        num_test=5,
        solution=lambda x: x * (1 - x) / 2,
    )


def test_a_run_whose_workers_die_is_given_up_then_resumed(tmp_path, monkeypatch):
    # Dask gives a task up once allowed-failures + 1 workers died running it;
    # joblib's Dask backend then waited for ever. Now: one error naming the run,
    # and the same command again trains each run once.
    import dask

    nets = {"fnn": lambda: dde.nn.FNN([1, 8, 1], "tanh", "Glorot uniform")}
    argv = dict(data=_dying, nets=nets, seeds=[1], iterations=4, out=tmp_path)
    quiet = dict(progress=False, verbose=False)
    monkeypatch.setenv(DIE, "1")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with pytest.raises(WorkersLost) as err:
            deepxde_lnn.compare(**argv, **quiet, backend="dask", workers=2)
    message = str(err.value)
    assert (
        "Dask gave " in message and "fnn seed 1 lr 0.001 up after 1 worker" in message
    )
    assert "allowed-failures is 0" in message and "Rerun the same command" in message
    assert not list(tmp_path.glob("*/seed-*/metrics.json"))
    monkeypatch.delenv(DIE)
    again = deepxde_lnn.compare(**argv, **quiet, workers=1)
    assert [(r.method, r.seed, r.status) for r in again.runs] == [("fnn", 1, "done")]
    assert np.isfinite(again.runs[0].record["metrics"]["u"]["RMSE"])
