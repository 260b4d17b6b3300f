"""Independent runs spread by joblib: the local pool and a Dask cluster give the
same results as running in this process; a killed worker leaves a checkpoint."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import tiny_case

from deepxde_lnn.config import RunConfig
from deepxde_lnn.experiments.jobs import run_jobs
from deepxde_lnn.training.runner import run

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
    return [run(c, out, case=case)["metrics"] for c, out in _jobs(root)]


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_pool_equals_sequential_runs(backend, reference, tmp_path):
    outcomes = run_jobs(_jobs(tmp_path), workers=2, backend=backend, case=tiny_case())
    assert _metrics(outcomes) == reference
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
    deadline = time.time() + 120
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
