"""How a call runs: its (configuration, folder) jobs checked, finished runs
reused, the rest trained ``workers`` at a time (:mod:`.jobs`), and the runs
summarised with verdicts; a comparison over seeds, seeds added until decided, and
the time budget of a time-matched comparison."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from ..analysis.figures import missing_figures
from ..analysis.sequential import Design, write_design
from ..analysis.sequential import until_decided as seq_decide
from ..analysis.summaries import write_summary
from ..analysis.table import BASELINE
from ..checks import SEED_MAX, check_int, unique
from ..config import MARGIN, MAX_SEEDS, TIME_CAP, Options, RunConfig
from ..problems.metrics import errors_line, summary_field
from ..problems.problem import Problem, Profile
from ..runs import atomic
from ..runs.cost import cost
from ..runs.folder import RunFolder, claim, writing
from ..runs.names import lr_label, run_folder, seed_name
from ..runs.records import read_budget
from ..training.controller import Progress
from ..training.runner import (
    RunInterrupted,
    TrainingDiverged,
    stacking_pays,
    step_seconds,
)
from .jobs import check_walltime, iter_jobs, slurm_settings
from .results import Comparison, RunResult, Verdict
from .selection import check_seed_count

__all__ = [
    "config",
    "profile_name",
    "profile_of",
    "run_all",
    "compare_runs",
    "train_runs",
    "decide_runs",
    "check_configs",
    "summarized",
    "say",
    "progress_of",
    "print_record",
]


def config(o: Options, problem: Problem, method: str, seed: int | None) -> RunConfig:
    """The run of ``method`` and ``seed`` on ``problem`` under the call's options
    (with what the problem is, where its name does not say it)."""
    return RunConfig.of(o.training, problem.name, method, seed, problem.fingerprint)


def profile_of(o: Options, problem: Problem) -> Profile:
    """The call's profile (default: the problem's)."""
    return problem.profile(profile_name(o, problem))


def profile_name(o: Options, problem: Problem) -> str:
    return o.training.profile or problem.default_profile


def say(o: Options, text: str) -> None:
    if o.execution.verbose:
        print(text, flush=True)


def progress_of(o: Options, label: str) -> Progress:
    return Progress.auto(label, enabled=o.execution.progress)


# what a run's line adds to a flagged step cost (deepxde_lnn.runs.cost.timing_state)
_LOADED = {"loaded": " of CPU time: timed under load", "unknown": ", load unknown"}


def print_record(o: Options, rec: dict, out) -> None:
    c = cost(rec)
    assert c.step_seconds is not None  # a record just written keeps its timing
    lines = [
        f"{rec['case']} {rec['method']} seed {rec['seed']}: "
        f"{rec.get('steps', rec['iterations'])} steps in {rec['train_seconds']:.1f} s "
        f"({c.step_seconds * 1e3:.1f} ms/step{_LOADED.get(c.state, '')}, "
        f"{rec['parameters']} params)"
    ]
    lines += [errors_line(name, m) for name, m in rec["metrics"].items()]
    say(o, "\n".join([*lines, f"  -> {out}"]))


def run_all(jobs, o: Options, problem: Problem) -> list[RunResult]:
    """Run (config, folder) jobs, ``workers`` at a time: finished ones (same
    configuration) are reused, unfinished ones (a checkpoint) resumed. A finished
    run that still holds a checkpoint is a member of a stack cut short while it
    wrote its runs: it goes with the others, to ride along in their stack
    (:func:`deepxde_lnn.training.runner.run_stacked`), and is reported reused.
    Every folder is checked first, so a bad one stops the command before any
    training; a run's folder is created when the run starts."""
    todo, results, spare = [], [], set()
    for cfg, out in jobs:
        folder = RunFolder(out)
        folder.check()  # ours and writable, before anything is read or trained
        record = (
            None
            if o.execution.overwrite
            else folder.finished(cfg.identity(), RunConfig.identity_of)
        )
        if record is not None and folder.has_checkpoint():
            spare.add(folder.path)
        elif record is not None and not missing_figures(out, problem):  # else redrawn
            _reused(o, cfg)
            results.append(
                RunResult(cfg.method, cfg.seed, cfg.lr, folder.path, "reused", record)
            )
            continue
        todo.append((cfg, out))
    outcomes = iter_jobs(
        todo,
        stack=_stacking(o, problem, todo),
        workers=o.execution.workers,
        backend=o.execution.backend,
        address=o.execution.address,
        slurm=slurm_settings(o.execution),
        overwrite=o.execution.overwrite,
        threads=o.execution.threads,
        progress=(
            (lambda label: progress_of(o, label)) if o.execution.progress else None
        ),
        problem=problem,  # pickled to worker processes
    )
    stopped = []
    start = time.perf_counter()
    for n, oc in enumerate(outcomes, start=1):  # as they finish
        status = "reused" if oc.status == "done" and oc.out in spare else oc.status
        if status == "reused":
            _reused(o, oc.config)
        elif status == "done":
            print_record(o, oc.record, oc.out)
            say(o, remaining_time(n, len(todo), time.perf_counter() - start))
        else:
            say(
                o,
                f"{oc.config.method} seed {oc.config.seed}: {oc.status}: {oc.message}",
            )
            stopped += [oc] if oc.status == "interrupted" else []
        cfg = oc.config
        results.append(
            RunResult(
                cfg.method, cfg.seed, cfg.lr, oc.out, status, oc.record, oc.message
            )
        )
    if stopped:
        raise RunInterrupted(f"{len(stopped)} run(s) interrupted; rerun to resume")
    return results


def _reused(o: Options, cfg: RunConfig) -> None:
    say(o, f"{cfg.method} seed {cfg.seed}{lr_label(cfg.lr)}: done, reused")


def remaining_time(done: int, total: int, seconds: float) -> str:
    """One line: ``done`` of ``total`` runs finished in ``seconds``, and the time
    the rest will take at the mean pace so far (a rough estimate: methods differ
    in cost, and stacked seeds finish together)."""
    left = total - done
    if left <= 0:
        return f"{done}/{total} runs finished in {_duration(seconds)}"
    return (
        f"{done}/{total} runs finished in {_duration(seconds)}; about "
        f"{_duration(seconds / done * left)} left at this pace"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _stacking(o: Options, problem: Problem, todo) -> bool:
    if o.execution.stack != "auto" or not todo:
        return o.execution.stack == "on"
    if not any(problem.stackable(cfg.method) for cfg, _ in todo):
        return False
    return stacking_pays(problem, profile_name(o, problem))


def compare_runs(
    o: Options,
    problem: Problem,
    methods: list[str],
    seeds: list[int],
    root: Path,
    budget: str,
    baseline: str | list[str] = BASELINE,
) -> Comparison:
    """Train methods x seeds into ``root/METHOD/seed-S`` (same steps, or the same
    seconds with ``budget="time"``) and summarise them there (those runs only:
    other records in ``root`` are named as excluded), judged against
    ``baseline`` (several: each one's verdicts a family)."""
    check_configs(o, problem, methods, seeds)
    with claim(root):  # empty or ours, pinned: it gets summaries and budget.json
        asked, runs = train_runs(o, problem, methods, seeds, root, budget)
        _some_finished(runs)
        paper_seed = profile_of(o, problem).seed
        return summarized(
            root, problem, runs, asked, paper_seed, baseline, o.verdicts.margin
        )


def train_runs(
    o: Options,
    problem: Problem,
    methods: list[str],
    seeds: list[int],
    root: Path,
    budget: str,
) -> tuple[list[RunConfig], list[RunResult]]:
    """The runs of methods x seeds in ``root/METHOD/seed-S`` (see
    :func:`compare_runs`), trained or reused: their configurations and results.
    ``root`` is held by the caller (:func:`~deepxde_lnn.runs.folder.claim`),
    after :func:`check_configs`."""
    prof = profile_of(o, problem)
    iterations, seconds = o.training.iterations, o.training.seconds
    if budget == "time":
        steps = o.training.iterations or prof.iterations
        assert steps is not None  # a problem that trains itself has no time budget
        if seconds is None:
            seconds = _time_budget(o, problem, methods[0], seeds[0], root)
        iterations = steps * TIME_CAP  # a cap: the budget decides
    jobs = [
        (
            replace(
                config(o, problem, m, seed), iterations=iterations, seconds=seconds
            ).resolved(problem),
            run_folder(root, m, seed_name(seed)),
        )
        for m in methods
        for seed in seeds
    ]  # all validated before anything runs
    return [cfg for cfg, _ in jobs], run_all(jobs, o, problem)


def _some_finished(runs: list[RunResult]) -> None:
    """``TrainingDiverged`` naming every run when none finished (nothing to
    summarise)."""
    if runs and all(r.record is None for r in runs):
        said = "; ".join(f"{r.method} seed {r.seed}: {r.message}" for r in runs[:4])
        more = f"; and {len(runs) - 4} more" if len(runs) > 4 else ""
        raise TrainingDiverged(f"no run finished ({said}{more})")


def decide_runs(
    o: Options, problem, methods, seeds, root: Path, budget, baseline, max_seeds
) -> Comparison:
    """Batches of ``len(seeds)`` new seeds for the comparisons with ``baseline``
    (several: the first) still undecided (:func:`deepxde_lnn.analysis.sequential.until_decided`), then the
    summary over every seed run."""
    if max_seeds is not None:
        check_int(max_seeds, "max_seeds (--max-seeds)", len(seeds))
        check_seed_count(max_seeds, "max_seeds (--max-seeds)")
    first = baseline if isinstance(baseline, str) else baseline[0]
    if first not in methods:
        raise ValueError(f"methods: until_decided compares with {first}; include it")
    n = max(max_seeds or MAX_SEEDS, len(seeds))
    design = Design(len(seeds), len(seeds), n, margin=o.verdicts.margin)
    extra = range(max(seeds) + 1, max(seeds) + 1 + n - len(seeds))
    all_seeds = unique([*seeds, *extra], "seeds")
    if all_seeds[-1] > SEED_MAX:
        raise ValueError(f"max_seeds: the seeds after {max(seeds)} pass 2**32 - 1")
    check_configs(o, problem, methods, all_seeds)  # before any training
    with claim(root):
        return _decide(o, problem, methods, all_seeds, root, budget, baseline, design)


def _decide(o, problem, methods, all_seeds, root, budget, baseline, design):
    """:func:`decide_runs` in its claimed ``root``."""
    with writing(root):
        write_design(root, design)
    asked: list[RunConfig] = []
    runs: list[RunResult] = []

    def train(ms, new):
        configs, done = train_runs(o, problem, list(ms), list(new), root, budget)
        asked.extend(configs)
        runs.extend(done)
        out: dict[str, dict[int, float]] = {m: {} for m in ms}
        for r in done:
            if r.record is None:
                raise TrainingDiverged(f"{r.method} seed {r.seed} did not finish")
            metrics = r.record["metrics"]
            rmse = metrics[summary_field(list(metrics))]["RMSE"]
            if rmse is not None:  # a failed seed (an error not a number) has none
                out[r.method][r.seed] = rmse
        return out

    def on_look(n, cis):
        said = "; ".join(f"{m}: {ci.verdict_text()}" for m, ci in cis.items())
        look = design.looks.index(n) + 1
        say(o, f"look {look}/{len(design.looks)} at {n} seeds: {said}")

    first = baseline if isinstance(baseline, str) else baseline[0]  # the design's
    seq_decide(train, methods, all_seeds, design, baseline=first, on_look=on_look)
    paper_seed = profile_of(o, problem).seed
    margin = o.verdicts.margin
    return summarized(root, problem, runs, asked, paper_seed, baseline, margin)


def check_configs(o: Options, problem: Problem, methods, seeds) -> None:
    """Every method resolved and every seed checked (``ValueError`` naming it)
    before a folder is created: once per method (a method may build its network
    to check it), since nothing else of a run's configuration depends on its
    seed; then, on SLURM, the walltime against the methods' checkpoint
    intervals (:func:`~deepxde_lnn.experiments.jobs.check_walltime`)."""
    cfgs = [config(o, problem, m, seeds[0]).resolved(problem) for m in methods]
    for seed in seeds[1:]:
        check_int(seed, "seed", 0, SEED_MAX)
    check_walltime(o.execution, cfgs, problem)


def summarized(
    root: Path,
    problem,
    runs,
    asked: list[RunConfig],
    paper_seed,
    baseline: str | list[str],
    margin: float = MARGIN,
) -> Comparison:
    """Summarise the runs ``asked`` for, found below ``root``, there (the other
    records there are named as excluded, never pooled); the :class:`Comparison`."""
    with writing(root):  # a full disk: one error naming the file, no partial file
        summary = write_summary(
            root,
            paper_seed=paper_seed if problem.paper_table else None,  # its own row
            paper_table=problem.paper_table,
            baseline=baseline,
            margin=margin,
            asked=[cfg.identity() for cfg in asked],
        )
    verdicts = (
        Verdict(v.method, v.baseline, v.field, "RMSE", v.ci, v.adjusted, v.line)
        for v in summary.verdicts
    )
    baselines = [baseline] if isinstance(baseline, str) else list(baseline)
    return Comparison(
        root,
        problem.name,
        baselines[0],
        tuple(runs),
        tuple(summary.rows),
        tuple(verdicts),
        summary.markdown,
        summary.files,
        tuple(baselines),
        summary.excluded,
    )


def _time_budget(o: Options, problem, method: str, seed: int, root: Path) -> float:
    """Seconds per run for ``budget="time"``: ``method``'s measured s/step times
    the step count, measured once and kept in ``root/budget.json`` (so that a
    repeated command reuses its finished runs)."""
    path = root / "budget.json"
    if path.exists():
        seconds = read_budget(path)  # FolderError naming the file
        say(o, f"time budget: {seconds:.2f} s per run (from {path})")
        return seconds
    cfg = config(o, problem, method, seed).resolved(problem)
    assert cfg.iterations is not None  # resolved: a problem's steps
    per = step_seconds(cfg, problem)
    seconds = per * cfg.iterations
    record = {"seconds": seconds, "method": method, "seconds_per_step": per}
    with writing(root):
        root.mkdir(parents=True, exist_ok=True)
        atomic.write_json(path, {**record, "steps": cfg.iterations})
    say(
        o,
        f"time budget: {seconds:.2f} s per run ({method}: {per * 1e3:.2f} ms/step "
        f"measured now x {cfg.iterations} steps; saved in {path})",
    )
    return seconds
