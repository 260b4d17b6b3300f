"""Timings one can trust: records keep their process CPU time (carried across
resumes), one rule says which CPU runs were timed under load, and every table
shows a run's cost by that rule, marked where flagged."""

import shutil
import time

import pytest
import torch
from helpers import TINY, SignalAt, tiny_case, write_record

from deepxde_lnn.analysis.summaries import build_summary
from deepxde_lnn.analysis.table import TIMING_MARKS, rows
from deepxde_lnn.config import RunConfig, record_problem
from deepxde_lnn.experiments.ablation import table as ablation_table
from deepxde_lnn.runs.checkpoint import (
    CheckpointError,
    check_payload,
    load_checkpoint,
    save_checkpoint,
)
from deepxde_lnn.runs.cost import LOADED_SHARE, cost, cpu_share, timing_state
from deepxde_lnn.runs.records import load_runs, problem
from deepxde_lnn.study import reproduction
from deepxde_lnn.training.runner import RunInterrupted, run, run_stacked


def _rec(**over) -> dict:
    rec = {"device": "cpu", "threads": 2, "train_seconds": 10.0}
    rec.update(seconds_per_step=0.01, cpu_seconds=20.0)
    return {**rec, **over}


# ---------------------------------------------------------------- the rule


@pytest.mark.parametrize(
    "over, state",
    [
        ({}, "ok"),  # 2 threads busy all along: share 1.0
        ({"cpu_seconds": 10.0}, "loaded"),  # share 0.5
        ({"cpu_seconds": 2 * 10.0 * LOADED_SHARE}, "ok"),  # at the threshold
        ({"threads": 1, "cpu_seconds": 5.0}, "loaded"),
        ({"cpu_seconds": None}, "unknown"),  # a resumed pre-CPU-time checkpoint
        ({"cpu_seconds": "x"}, "unknown"),
        ({"device": "cuda", "cpu_seconds": 1.0}, "ok"),  # never by the CPU rule
        ({"device": "cuda", "cpu_seconds": None}, "ok"),
    ],
)
def test_the_rule(over, state):
    assert timing_state(_rec(**over)) == state


def test_records_without_cpu_time_are_unknown():
    old = _rec()
    del old["cpu_seconds"], old["threads"]
    assert timing_state(old) == "unknown"
    assert cost(old).step_seconds == 0.01 and cost(old).flagged


def test_the_cost_of_a_loaded_run_is_its_cpu_time():
    loaded = cost(_rec(threads=1, cpu_seconds=5.0))
    assert loaded.state == "loaded" and loaded.flagged
    assert loaded.step_seconds == pytest.approx(0.005)  # 0.01 s wall x 5 / 10
    assert loaded.run_seconds == 5.0
    quiet = cost(_rec())
    assert (quiet.step_seconds, quiet.run_seconds, quiet.flagged) == (0.01, 10.0, False)
    gpu = cost(_rec(device="cuda", cpu_seconds=1.0))
    assert (gpu.step_seconds, gpu.run_seconds) == (0.01, 10.0)


def test_cpu_share():
    assert cpu_share(5.0, 10.0, 1) == 0.5
    assert cpu_share(None, 10.0, 1) is None
    assert cpu_share(5.0, 0.0, 1) is None and cpu_share(5.0, 10.0, None) is None


# ---------------------------------------------------------------- records


def _pinn() -> RunConfig:
    return RunConfig("laplace", "pinn", seed=1, **TINY)


def test_a_record_keeps_its_cpu_time_threads_and_load(tmp_path):
    rec = run(_pinn(), tmp_path / "r", problem=tiny_case())
    assert rec["threads"] == torch.get_num_threads()
    assert rec["cpu_seconds"] > 0
    assert rec["cpu_share"] == pytest.approx(
        rec["cpu_seconds"] / (rec["train_seconds"] * rec["threads"])
    )
    assert len(rec["load_average"]) == 2 and min(rec["load_average"]) >= 0
    assert problem(rec, "run") is None


def test_malformed_timing_keys_are_refused(tmp_path):
    rec = run(_pinn(), tmp_path / "r", problem=tiny_case())
    for key, bad in [
        ("cpu_seconds", -1),
        ("cpu_seconds", "1"),
        ("threads", 0),
        ("load_average", [1.0]),
        ("stack_cpu_seconds", float("inf")),
    ]:
        assert key in problem({**rec, key: bad}, "run")
    assert problem({**rec, "cpu_seconds": None, "cpu_share": None}, "run") is None


@pytest.fixture
def cut(tmp_path):
    """A run interrupted after 23 steps: its folder with its checkpoint."""
    cfg = RunConfig("laplace", "lnn", seed=5, **TINY)
    with pytest.raises(RunInterrupted):
        run(cfg, tmp_path / "cut", problem=tiny_case(), callbacks=[SignalAt(23)])
    return cfg, tmp_path / "cut"


def test_a_resumed_run_adds_its_cpu_time_to_the_checkpoints(cut, monkeypatch):
    cfg, folder = cut
    spare = shutil.copytree(folder, folder.with_name("spare"))
    before = load_checkpoint(folder / "checkpoint.pt")["cpu_seconds"]
    assert before > 0
    resumed = run(cfg, folder, problem=tiny_case(), resume=True)
    assert resumed["cpu_seconds"] > before
    # a session that takes no CPU time leaves exactly the checkpoint's
    monkeypatch.setattr(time, "process_time", lambda: 7.0)
    frozen = run(cfg, spare, problem=tiny_case(), resume=True)
    assert frozen["cpu_seconds"] == pytest.approx(before)


def test_an_old_checkpoint_resumes_with_its_cpu_time_unknown(cut):
    cfg, folder = cut
    state = load_checkpoint(folder / "checkpoint.pt")
    del state["cpu_seconds"]  # as written before CPU time was kept
    save_checkpoint(folder / "checkpoint.pt", state)
    rec = run(cfg, folder, problem=tiny_case(), resume=True)
    assert rec["cpu_seconds"] is None and rec["cpu_share"] is None
    assert timing_state(rec) == "unknown" and problem(rec, "run") is None


def test_a_checkpoint_with_a_bad_cpu_time_is_refused(cut):
    state = load_checkpoint(cut[1] / "checkpoint.pt")
    for bad in (-1.0, float("nan"), True, "1"):
        with pytest.raises(CheckpointError, match="cpu_seconds"):
            check_payload({**state, "cpu_seconds": bad})


def test_a_stack_keeps_its_cpu_time_and_each_run_its_share(tmp_path):
    cfgs = [
        RunConfig("laplace", "lnn", seed=s, iterations=20, dtype="float64")
        for s in (1, 2)
    ]
    outs = [tmp_path / f"s{c.seed}" for c in cfgs]
    res = run_stacked(cfgs, outs, problem=tiny_case())
    for o in res:
        rec = o.record
        assert rec["stacked_runs"] == 2 and rec["stack_cpu_seconds"] > 0
        assert rec["cpu_seconds"] == pytest.approx(rec["stack_cpu_seconds"] / 2)


# ---------------------------------------------------------------- tables


TIMINGS = {  # per method: quiet, loaded (share 0.5) and unknown (no CPU time)
    "pinn": {"threads": 1, "cpu_seconds": 1.0},
    "lnn": {"threads": 1, "cpu_seconds": 0.5},
    "pinn-matched": {"threads": 1},
}


@pytest.fixture
def folder(tmp_path):
    for method, timing in TIMINGS.items():
        for seed, rmse in enumerate((1e-3, 2e-3, 4e-3), start=1):
            write_record(
                tmp_path / "steps", method, seed, rmse * (1 + seed / 10), **timing
            )
    return tmp_path


def _cells(text: str, method: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"| `{method}` "))
    return [c.strip() for c in line.strip("|").split("|")]


def test_rows_show_each_runs_cost_and_flag(folder):
    runs = load_runs(folder, options=record_problem)
    table = {row.method: row for row in rows(runs, "phi")}
    assert table["pinn"].s_per_step_text == "0.01"
    assert table["lnn"].s_per_step_text == "0.005" + TIMING_MARKS["loaded"]
    assert table["pinn-matched"].s_per_step_text == "0.01" + TIMING_MARKS["unknown"]


def test_the_report_and_ablation_mark_and_explain_flagged_timings(folder):
    md = reproduction.render(reproduction.load([folder]), [folder])
    assert _cells(md, "lnn")[3] == "0.005†" and _cells(md, "pinn")[3] == "0.01"
    assert _cells(md, "pinn-matched")[3] == "0.01‡"
    assert "† timed under load" in md and "‡ timing unknown" in md
    ab = ablation_table(folder, "laplace", ["phi"])
    assert _cells(ab, "lnn")[2] == "0.005†" and "† timed under load" in ab


def test_the_summary_marks_its_times(folder):
    runs = load_runs(folder / "steps", options=record_problem)
    text = build_summary(runs).markdown
    net = [line for line in text.splitlines() if line.count("|") == 5]
    assert "| lnn |  | 100 | 5† |" in net  # ms/step of CPU time
    assert "| pinn |  | 100 | 10 |" in net and "| pinn-matched |  | 100 | 10‡ |" in net
    assert "| 5.000e-01 ± 0.0e+00† |" in text  # train s
    assert "time per run lnn 0.5 s†, pinn 1 s" in text
    assert "† timed under load" in text and "‡ timing unknown" in text


def test_the_cost_of_a_decision_is_the_missing_seeds_times_a_runs_core_seconds(
    tmp_path,
):
    """Issue 65, item 4: an undecided verdict is priced in core-hours: the seeds
    it would need beyond those it has, times the median core-seconds of a run of
    each method (its process's CPU seconds, every thread's)."""
    from deepxde_lnn.study import decision_cost, headline

    lnn = [1.0e-3, 1.6e-3, 0.7e-3, 1.3e-3]
    pinn = [1.1e-3, 1.0e-3, 1.2e-3, 0.9e-3]
    for seed, (a, b) in enumerate(zip(lnn, pinn)):
        # lnn: 30 s on 2 threads, timed under load: 40-43 CPU seconds
        write_record(tmp_path, "lnn", seed, a, threads=2, train_seconds=30.0,
                     cpu_seconds=40.0 + seed)  # fmt: skip
        write_record(tmp_path, "pinn", seed, b, threads=1, train_seconds=10.0,
                     cpu_seconds=10.0)  # fmt: skip
    (row,) = headline.headline(reproduction.load([tmp_path]))
    assert row.lnn.verdict == "undecided"
    needed = row.lnn.seeds_needed
    assert needed > 4
    lnn_seconds = (41.0 + 42.0) / 2  # the median of 40..43
    hours = (needed - 4) * (lnn_seconds + 10.0) / 3600
    assert decision_cost.decision_cost(row.lnn, *row.rows[:2]) == (
        needed - 4,
        pytest.approx(hours),
    )
    section = "\n".join(decision_cost.cost_section([row]))
    assert f"| 4 | {needed} | {lnn_seconds:.3g} / 10 | {hours:.2g} |" in section
