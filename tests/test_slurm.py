"""``--backend slurm``: bad input refused in one line with nothing written (no
SLURM needed), and on a real one-node SLURM that the fixture starts
(``.ci/slurm.sh``: root and Debian's slurm-wlm, else the test skips saying why)
the same bytes as a local run of the same seeds."""

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import run_cli, tiny_case

import deepxde_lnn

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["laplace", "--iterations", "20", "--seeds", "1,2", "--methods", "pinn"]
# a record's fields that time the run or name the command, not its result
UNTIMED = {
    "train_seconds",
    "seconds_per_step",
    "cpu_seconds",
    "cpu_share",
    "load_average",
    "stack_wall_seconds",
    "stack_cpu_seconds",
    "command",
}


def _fake(folder: Path, name: str, text: str = "") -> None:
    """An executable ``name`` in ``folder`` that prints ``text``."""
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\nprintf '{text}'\n")
    (folder / name).chmod(0o755)


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """``sbatch`` and ``sinfo`` (partition ``debug``) that submit nothing."""
    if importlib.util.find_spec("dask_jobqueue") is None:
        pytest.skip("dask-jobqueue is not installed (pip install deepxde-lnn[slurm])")
    bin_ = tmp_path / "bin"
    _fake(bin_, "sbatch")
    _fake(bin_, "sinfo", "debug\\n")
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    return bin_


def _refused(argv, capsys, tmp_path, expected: str, small=SMALL) -> None:
    out = tmp_path / "out"
    code, cap = run_cli(["compare", *small, "--out", str(out), *argv], capsys)
    lines = cap.err.strip().splitlines()
    assert code != 0 and len(lines) == 1 and expected in lines[0], cap.err
    assert not out.exists()


def test_no_sbatch_refused(capsys, tmp_path, monkeypatch, fake_slurm):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    _refused(["--backend", "slurm"], capsys, tmp_path, "sbatch on the PATH")


def test_no_jobqueue_refused(capsys, tmp_path, monkeypatch, fake_slurm):
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # import fails
    _refused(["--backend", "slurm"], capsys, tmp_path, "deepxde-lnn[slurm]")


def test_unknown_partition_refused(capsys, tmp_path, fake_slurm):
    argv = ["--backend", "slurm", "--partition", "gpu"]
    _refused(argv, capsys, tmp_path, "partition: 'gpu' is not one of")


def test_short_walltime_refused(capsys, tmp_path, fake_slurm):
    argv = ["--backend", "slurm", "--walltime", "0:20"]
    expected = "walltime: '0:20' (20 s) is shorter than a worker's start (30 s) plus"
    _refused(argv, capsys, tmp_path, expected)


def test_walltime_under_a_checkpoint_interval_refused(capsys, tmp_path, fake_slurm):
    # a minute holds a worker's start, not 100000 steps between checkpoints
    long = ["laplace", "--iterations", "100000", "--seeds", "1", "--methods", "pinn"]
    argv = ["--backend", "slurm", "--walltime", "1", "--checkpoint-every", "100000"]
    expected = "plus one checkpoint interval (100000 steps of pinn at "
    _refused(argv, capsys, tmp_path, expected, long)


def test_the_walltime_rule_counts_a_checkpoint_interval():
    from deepxde_lnn.config import RunConfig
    from deepxde_lnn.experiments.jobs import START_SECONDS, check_walltime

    case = tiny_case()
    slurm = SimpleNamespace(backend="slurm", walltime="1", threads=None)

    def check(every: int) -> None:
        cfg = RunConfig("laplace", "pinn", seed=1, iterations=10**5)
        check_walltime(
            slurm, [replace(cfg, checkpoint_every=every).resolved(case)], case
        )

    check(20)  # 60 s hold the start and 20 steps
    with pytest.raises(ValueError, match="walltime: '1' \\(60 s\\)") as err:
        check(10**5)  # not 100000 steps, at over 0.3 ms each
    interval = float(re.search(r"measured here: ([\d.e+]+) s", str(err.value))[1])
    assert interval > 60 - START_SECONDS


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--walltime", "1:2:3:4"], "walltime must be a SLURM time limit"),
        (["--job-memory", "lots"], "job-memory must be an amount"),
        (["--partition", "debug"], "partition: only --backend slurm uses it"),
        (["--backend", "slurm", "--threads", "4"], "threads: 4 threads is more"),
    ],
)
def test_bad_slurm_options_refused(argv, expected, capsys, tmp_path, fake_slurm):
    _refused(argv, capsys, tmp_path, expected)


def test_walltimes_read_as_slurm_does():
    from deepxde_lnn.config import walltime_seconds

    assert [walltime_seconds(t) for t in ("5", "5:30", "1:00:00", "2-3")] == [
        300,
        330,
        3600,
        (2 * 24 + 3) * 3600,
    ]
    assert walltime_seconds("1-0:0:1") == 24 * 3600 + 1


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A one-node SLURM started by ``.ci/slurm.sh`` (its SLURM_CONF set
    meanwhile), or a skip saying why it cannot be."""
    if importlib.util.find_spec("dask_jobqueue") is None:
        pytest.skip("dask-jobqueue is not installed (pip install deepxde-lnn[slurm])")
    if shutil.which("slurmctld") is None or shutil.which("sbatch") is None:
        pytest.skip("SLURM is not installed (Debian: apt-get install slurm-wlm)")
    if os.geteuid() != 0:
        pytest.skip("starting SLURM's daemons here needs root")
    state = tmp_path_factory.mktemp("slurm")
    script = [str(ROOT / ".ci" / "slurm.sh")]
    done = subprocess.run(
        [*script, "start", str(state)], capture_output=True, text=True
    )
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(state / "slurm.conf")
    try:
        if done.returncode:
            pytest.skip(f"SLURM did not start: {done.stderr.strip()}")
        yield state
    finally:
        subprocess.run([*script, "stop", str(state)], check=False)
        if before is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = before


def _results(out: Path) -> dict:
    """Each run's loss.csv bytes and metrics.json without its timing fields and
    whether it was resumed."""
    found = {}
    for loss in sorted(out.glob("*/seed-*/loss.csv")):
        record = json.loads((loss.parent / "metrics.json").read_text())
        untimed = {k: v for k, v in record.items() if k not in {*UNTIMED, "resumed"}}
        found[str(loss.parent.relative_to(out))] = (loss.read_bytes(), untimed)
    return found


def _compare(out: Path, **execution):
    return deepxde_lnn.compare(
        tiny_case(),
        methods=["pinn"],
        seeds=[1, 2],
        iterations=20,
        out=out,
        progress=False,
        verbose=False,
        **execution,
    )


@pytest.mark.slurm
@pytest.mark.slow
def test_slurm_equals_local_runs(slurm, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # SLURM's job logs (slurm-JOB.out) land here
    _compare(tmp_path / "local", workers=1)
    _compare(tmp_path / "slurm", backend="slurm", job_cores=2, walltime="10:00")
    local, on_slurm = _results(tmp_path / "local"), _results(tmp_path / "slurm")
    assert sorted(local) == ["pinn/seed-1", "pinn/seed-2"]
    assert on_slurm == local
    assert list(tmp_path.glob("slurm-*.out"))  # the workers ran as SLURM jobs


def _command(out: Path, *argv: str) -> list[str]:
    cli = [sys.executable, "-m", "deepxde_lnn.cli", "compare", *SMALL[:1]]
    steps = ["--iterations", "400", "--checkpoint-every", "20", "--seeds", "1,2"]
    tail = ["--methods", "pinn", "--no-progress", "--out", str(out), *argv]
    return [*cli, *steps, *tail]


def _wait_for(path: Path, proc, seconds: float = 300) -> None:
    deadline = time.time() + seconds
    while not path.exists():
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.2)


def _cancel_job() -> None:
    subprocess.run(["scancel", "--full", "--name", "dask-worker"], check=True)


def _workers() -> list[int]:
    """The Dask worker processes in SLURM jobs."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            environ = (proc / "environ").read_bytes()
            argv = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"SLURM_JOB_ID=" in environ and b"spawn_main" in argv:
            found.append(int(proc.name))
    assert found, "no Dask worker process found in a SLURM job"
    return found


def _kill_worker() -> None:
    """SIGKILL to a Dask worker process in a SLURM job (its nanny starts another)."""
    os.kill(_workers()[0], signal.SIGKILL)


def _outlast_walltime() -> None:
    """The Dask workers paused (SIGSTOP) until SLURM ends their job at its
    walltime: a run of any speed is then mid-way, and gets what a run still
    training at its walltime gets (SIGCONT, SIGTERM, then SIGKILL)."""
    for pid in _workers():
        os.kill(pid, signal.SIGSTOP)
    deadline = time.time() + 180
    while not any("DUE TO TIME LIMIT" in p.read_text() for p in Path().glob("slurm-*")):
        assert time.time() < deadline, "no job ended at its walltime"
        time.sleep(1)


# each fault, with the options of its jobs
FAULTS = {
    "a job of two workers cancelled": (_cancel_job, ["--job-cores", "2"]),
    "a worker killed": (_kill_worker, []),
    "a job out of walltime": (_outlast_walltime, ["--walltime", "1"]),
}


def _pooled_once(out: Path) -> bool:
    """Whether the summary pools seeds 1 and 2, once each."""
    rows = (out / "summary.csv").read_text().splitlines()
    rmse = [r.split(",") for r in rows if ",RMSE," in r]
    return len(rmse) == 1 and rmse[0][9:11] == ["2", "1 2"]


@pytest.fixture(scope="module")
def longer(tmp_path_factory):
    """The longer runs' results, made locally."""
    out = tmp_path_factory.mktemp("local") / "local"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    subprocess.run(_command(out, "--workers", "1"), env=env, check=True)
    return _results(out)


@pytest.mark.slurm
@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_fault_mid_run_resumes_exactly(fault, slurm, longer, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    strike, options = FAULTS[fault]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    argv = [*_command(tmp_path / "slurm"), "--backend", "slurm", *options]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    seed = tmp_path / "slurm" / "pinn" / "seed-1"
    _wait_for(seed / "checkpoint.pt", proc)
    strike()
    assert not (seed / "metrics.json").exists()  # it struck mid-run
    _, err = proc.communicate(timeout=600)  # a new job or worker resumes the runs
    assert proc.returncode == 0, err
    assert _results(tmp_path / "slurm") == longer
    assert json.loads((seed / "metrics.json").read_text())["resumed"]
    again = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr  # the same command: all reused
    assert again.stdout.count("done, reused") == 2, again.stdout
    assert _results(tmp_path / "slurm") == longer
    assert _pooled_once(tmp_path / "slurm")


@pytest.mark.slurm
@pytest.mark.slow
def test_a_job_that_cannot_start_its_workers_stops_the_command(slurm, tmp_path):
    # its job script fails before its worker starts: one line naming the job
    # and its log, where the command waited for ever before
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",
        "DASK_JOBQUEUE__SLURM__JOB_SCRIPT_PROLOGUE": '["exit 3"]',
    }
    cli = [sys.executable, "-m", "deepxde_lnn.cli", "compare", *SMALL]
    argv = [*cli, "--no-progress", "--out", "out", "--backend", "slurm"]
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert done.returncode == 1 and len(errors) == 1, done.stderr  # beside Dask's
    job = re.fullmatch(r"error: SLURM job (\d+) ended \(FAILED\) before .*", errors[0])
    assert job and f"(its log: slurm-{job[1]}.out)" in errors[0], errors[0]
    assert "not finished: laplace pinn seed 1 lr 0.001, laplace pinn" in errors[0]


def test_a_job_pending_long_is_said_once_per_reason(tmp_path, monkeypatch, capsys):
    """A job can wait in SLURM's queue for ever (a partition down, a limit it
    exceeds) and the command with it: past ``PENDING_NOTICE`` it says which job
    waits and SLURM's reason, once per reason (a fake ``squeue``, a fake
    cluster; no SLURM needed)."""
    import asyncio

    from deepxde_lnn.experiments import jobs

    reason = tmp_path / "reason"
    bin_ = tmp_path / "bin"
    _fake(bin_, "squeue")
    (bin_ / "squeue").write_text(f'#!/bin/sh\necho "41 PENDING $(cat {reason})"\n')
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    cluster = SimpleNamespace(
        scheduler_info={"workers": {}},
        workers={"w0": SimpleNamespace(job_id="41")},
        worker_spec={"w0": {}},
        scale=lambda jobs: None,
        sync=lambda f, *args: asyncio.run(f(*args)),
    )
    keeper = jobs._JobKeeper(cluster, jobs=1)
    now = [1000.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: now[0])
    said = []
    for step, why in enumerate(
        ["Resources", "Resources", "Resources", "PartitionDown"]
    ):
        reason.write_text(why)
        now[0] = 1000.0 + 100 * step  # 0, 100, 200, 300 s in the queue
        keeper.check(lambda: "every run")
        said.append(capsys.readouterr().err)
    assert said[:2] == ["", ""]  # under PENDING_NOTICE (120 s): nothing yet
    assert said[2] == (
        "slurm: job 41 is still pending after 3 min (SLURM's reason: Resources); "
        "the runs wait for it (`squeue -j 41` says more; `scancel 41` or Ctrl-C "
        "stops the command, and rerunning it goes on)\n"
    )
    assert said[3].startswith("slurm: job 41 is still pending after 5 min (SLURM's")
    assert "reason: PartitionDown)" in said[3]
    assert jobs.PENDING_NOTICE == 120
