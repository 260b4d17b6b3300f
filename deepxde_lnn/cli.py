"""``deepxde-lnn`` command line: list, run, compare, sweep, reference, report.

Bad input prints one ``error:`` line and exits with status 2 before anything is
written; an interrupted run exits with 130 (checkpoint saved), a diverged one with 1.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import replace
from pathlib import Path

from ._backend import ensure_pytorch_backend

ensure_pytorch_backend()

SEED_MAX = 2**32 - 1


class Parser(argparse.ArgumentParser):
    """``argparse`` with one-line errors and exit status 2."""

    def error(self, message):
        self.exit(2, f"error: {message}\n")


def _positive_int(name):
    return _positive(name, int, "an integer")


def _nonnegative_int(name):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}")
        if v < 0:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= 0, got {v}")
        return v

    return parse


def _positive_float(name):
    return _positive(name, float, "a number")


def _positive(name, kind, what):
    """An argparse type: a finite ``kind`` > 0, or an error naming ``name``."""

    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}")
        if not 0 < v < float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a finite {what} > 0")
        return v

    return parse


def parse_seed(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer, got {text!r}")
    if not 0 <= v <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"seed must be in [0, 2**32 - 1], got {v}")
    return v


def _seeds(text):
    return [parse_seed(s.strip()) for s in text.split(",") if s.strip()] or parse_seed(
        ""
    )


def _lr(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"lr must be a number, got {text!r}")
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"lr must be a finite number > 0, got {text}")
    return v


def _margin(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"margin must be a number, got {text!r}")
    if not 1 < v < float("inf"):
        raise argparse.ArgumentTypeError(
            f"margin must be a finite number > 1, got {text}"
        )
    return v


def add_margin(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--margin",
        type=_margin,
        default=2.0,
        help="equivalence margin m: 'equivalent within xm' when the error ratio's "
        "whole 95%% interval lies in [1/m, m] (default 2)",
    )


def _lrs(text):
    return [_lr(s.strip()) for s in text.split(",") if s.strip()] or _lr("")


def add_training_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``run``/``compare``/``sweep`` and the case scripts."""
    p.add_argument(
        "--profile",
        default="quick",
        help="quick (default), paper or accurate (float64, fixed points, Adam "
        "with decay, then L-BFGS)",
    )
    p.add_argument("--lr", type=_lr, help="Adam learning rate (default: profile's)")
    p.add_argument("--iterations", type=_positive_int("iterations"), help="Adam steps")
    p.add_argument(
        "--dtype", help="float32 or float64 (default: the profile's; accurate: float64)"
    )
    p.add_argument(
        "--lbfgs",
        type=_nonnegative_int("lbfgs"),
        help="L-BFGS iterations after Adam, at most (default: the profile's; "
        "accurate: 3000, others 0)",
    )


def _common(p):
    p.add_argument("case", help="benchmark name (see `deepxde-lnn list`)")
    add_training_options(p)
    p.add_argument(
        "--checkpoint-every", type=_positive_int("checkpoint-every"), default=1000
    )
    p.add_argument("--threads", type=_positive_int("threads"), help="torch CPU threads")
    p.add_argument(
        "--force-threads", action="store_true", help="allow more threads than cores"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress output")
    p.add_argument(
        "--seconds",
        type=_positive_float("seconds"),
        help="wall-clock training budget per run (then --iterations is a cap, "
        "default 20x the profile's steps)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace finished results of another configuration in --out",
    )


def _parallel(p):
    p.add_argument(
        "--workers",
        type=_positive_int("workers"),
        help="runs at a time (default: as many as cores, at most the runs)",
    )
    p.add_argument(
        "--backend",
        default="loky",
        choices=("loky", "dask", "ray"),
        help="joblib backend: local processes (default), a Dask or a Ray cluster",
    )
    p.add_argument("--address", help="Dask scheduler / Ray cluster address")
    p.add_argument(
        "--batch",
        default="auto",
        choices=("auto", "on", "off"),
        help="train the seeds of a method as one stacked model (auto: on a GPU, "
        "and on a CPU for small point sets, where it was measured faster)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="deepxde-lnn", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    sub.add_parser("list", help="cases, methods, profiles and parameter counts")

    p = sub.add_parser("run", help="train one case with one method and seed")
    _common(p)
    p.add_argument("--method", default="lnn")
    p.add_argument("--seed", type=parse_seed, help="default: the profile's seed")
    p.add_argument("--out", help="result folder (default runs/CASE/METHOD/seed-S)")
    p.add_argument("--resume", action="store_true", help="continue from checkpoint")

    p = sub.add_parser("compare", help="methods x seeds, then a summary")
    _common(p)
    _parallel(p)
    p.add_argument(
        "--budget",
        default="steps",
        choices=("steps", "time"),
        help="steps: every method the same number of steps (the paper's); time: "
        "every method the same wall-clock seconds (--seconds, or the first "
        "method's measured time for the profile's steps, kept in OUT/budget.json)",
    )
    p.add_argument("--methods", default="lnn,pinn")
    p.add_argument(
        "--seeds",
        type=_seeds,
        help="comma-separated (default: the profile's seeds; with --until-decided "
        "the first look's)",
    )
    p.add_argument("--out", help="result folder (default runs/compare-CASE-PROFILE)")
    add_margin(p)
    p.add_argument(
        "--until-decided",
        action="store_true",
        help="add seeds in batches (as many as the first look's) to the comparisons "
        "with pinn still undecided, until each decides or reaches --max-seeds; "
        "the error rate is spread over the looks (docs/verdicts.md)",
    )
    p.add_argument(
        "--max-seeds",
        type=_positive_int("max-seeds"),
        help="with --until-decided: at most this many seeds per method (default 15)",
    )

    p = sub.add_parser("ablate", help="LNN/MLP variants, step- and time-matched")
    _common(p)
    _parallel(p)
    p.add_argument(
        "--budget",
        default="both",
        choices=("steps", "time", "both"),
        help="step-matched, time-matched or both (default)",
    )
    p.add_argument(
        "--methods",
        help="variants (default: lnn, alpha_init=0, the other layout, widths 32/98, "
        "pinn, pinn:width=32, pinn-matched)",
    )
    p.add_argument("--seeds", type=_seeds, help="comma-separated (default: 3 seeds)")
    p.add_argument("--out", help="result folder (default runs/ablate-CASE-PROFILE)")
    add_margin(p)

    p = sub.add_parser("sweep", help="learning-rate sweep: lrs x methods x seeds")
    _common(p)
    _parallel(p)
    p.add_argument(
        "--lrs", type=_lrs, required=True, help="comma-separated, e.g. 1e-3,1e-4"
    )
    p.add_argument("--methods", default="lnn")
    p.add_argument(
        "--seeds", type=_seeds, help="comma-separated (default: the profile seed)"
    )
    p.add_argument("--out", help="result folder (default runs/sweep-CASE-PROFILE)")
    add_margin(p)

    p = sub.add_parser("reference", help="regenerate a FEM reference")
    p.add_argument("case", help="only 'heat'")
    p.add_argument("--levels", type=_positive_int("levels"), default=6)
    p.add_argument("--out", default="reference/circular_heat")

    p = sub.add_parser("report", help="reproduction report from result folders")
    p.add_argument(
        "runs_dirs",
        nargs="+",
        metavar="RUNS_DIR",
        help="folders searched for finished runs (metrics.json)",
    )
    p.add_argument(
        "--out",
        default="docs/REPRODUCTION.md",
        help="markdown file; figures go to the folder of its name without .md",
    )
    add_margin(p)
    return parser


def _config(args, method, seed):
    from .runner import RunConfig

    return RunConfig(
        case=args.case,
        method=method,
        seed=seed,
        lr=args.lr,
        iterations=args.iterations,
        profile=args.profile,
        dtype=args.dtype,
        checkpoint_every=args.checkpoint_every,
        seconds=args.seconds,
        lbfgs=args.lbfgs,
    )


def cmd_list(args) -> int:
    from . import cases
    from .methods import METHODS, parameter_count
    from .accurate import ADAM_STEPS, LBFGS_STEPS
    from .case import PROFILES

    print(
        "profiles: " + ", ".join(PROFILES) + "  (quick: small counts, few steps; "
        f"accurate: float64, fixed points, {ADAM_STEPS} Adam steps with decay, "
        f"then at most {LBFGS_STEPS} L-BFGS iterations)"
    )
    print("methods:  " + ", ".join(METHODS))
    print("cases (parameters per method):")
    for name in cases.available():
        c = cases.get(name)
        pp, q = c.paper, c.quick
        counts = ", ".join(f"{m} {parameter_count(m, c):,}" for m in METHODS)
        print(f"  {name:12s} {c.title}")
        print(
            f"  {'':12s} paper: {pp.iterations} steps, lr {pp.lr:g}, seed {pp.seed}; "
            f"quick: {q.iterations} steps; {counts}"
        )
    return 0


def _progress(args, label):
    from .controller import Progress

    return Progress.auto(label, enabled=not args.no_progress)


def cmd_run(args) -> int:
    from .runner import run

    cfg = _config(args, args.method, args.seed).resolved()  # validate before writing
    out = Path(args.out or f"runs/{cfg.case}/{cfg.method}/seed-{cfg.seed}")
    label = f"{cfg.case} {cfg.method} seed {cfg.seed}"
    rec = run(
        cfg,
        out,
        resume=args.resume,
        overwrite=args.overwrite,
        progress=_progress(args, label),
    )
    _print_record(rec, out)
    return 0


def _print_record(rec, out):
    print(
        f"{rec['case']} {rec['method']} seed {rec['seed']}: "
        f"{rec.get('steps', rec['iterations'])} steps in {rec['train_seconds']:.1f} s "
        f"({rec['seconds_per_iteration'] * 1e3:.1f} ms/step, {rec['parameters']} params)"
    )
    for field, m in rec["metrics"].items():
        print(
            f"  {field:8s} RMSE {m['RMSE']:.3e}  relL2 {m['relL2']:.3e}  "
            f"MaxErr {m['MaxErr']:.3e}"
        )
    print(f"  -> {out}", flush=True)


def _methods(args) -> list[str]:
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        raise ValueError("methods: give at least one method")
    return methods


def _run_all(jobs, args) -> None:
    """Run (config, folder) jobs, ``--workers`` at a time: finished ones (same
    configuration) are reused, unfinished ones (a checkpoint) resumed. Every
    folder is checked first, so a bad one stops the command before any training."""
    from .folder import RunFolder
    from .jobs import iter_jobs

    todo = []
    for cfg, out in jobs:
        folder = RunFolder(out)
        if not args.overwrite and folder.finished(cfg.identity()) is not None:
            print(f"{cfg.method} seed {cfg.seed} lr {cfg.lr:g}: done, reused")
            continue
        folder.prepare()
        todo.append((cfg, out))
    outcomes = iter_jobs(
        todo,
        batch=_batching(args, todo),
        workers=args.workers,
        backend=args.backend,
        address=args.address,
        overwrite=args.overwrite,
        progress=None if args.no_progress else (lambda label: _progress(args, label)),
    )
    stopped = []
    for o in outcomes:  # as they finish
        if o.status == "done":
            _print_record(o.record, o.out)
        else:
            print(f"{o.config.method} seed {o.config.seed}: {o.status}: {o.message}")
            stopped += [o] if o.status == "interrupted" else []
    if stopped:
        from .runner import RunInterrupted

        raise RunInterrupted(f"{len(stopped)} run(s) interrupted; rerun to resume")


def _batching(args, todo) -> bool:
    if args.batch != "auto" or not todo:
        return args.batch == "on"
    from . import cases
    from .batched import batch_pays

    return batch_pays(cases.get(args.case), args.profile)


def cmd_compare(args) -> int:
    from . import cases

    case = cases.get(args.case)
    prof = case.profile(args.profile)
    seeds = args.seeds or [prof.seed + i for i in range(prof.n_seeds)]
    default = f"runs/compare-{case.name}-{args.profile}" + (
        "-time" if args.budget == "time" else ""
    )
    root = Path(args.out or default)
    if args.until_decided:
        _until_decided(args, case, _methods(args), seeds, root)
    else:
        if args.max_seeds is not None:
            raise ValueError("max-seeds: only with --until-decided")
        _compare(args, case, _methods(args), seeds, root, args.budget)
    print((root / "summary.md").read_text())
    print(
        f"summary: {root / 'summary.md'}, {root / 'summary.csv'}, {root / 'summary.png'}"
    )
    return 0


def _compare(args, case, methods, seeds, root: Path, budget: str) -> None:
    """Train methods x seeds into ``root/METHOD/seed-S`` (same steps, or the same
    seconds with ``budget="time"``) and summarise them there."""
    _train(args, case, methods, seeds, root, budget)
    _summarize(args, case, root)


def _summarize(args, case, root: Path) -> None:
    from .report import summarize

    summarize(
        root,
        paper_seed=case.profile(args.profile).seed,
        paper_table=case.paper_table,
        margin=args.margin,
    )


def _train(args, case, methods, seeds, root: Path, budget: str) -> None:
    """Train methods x seeds into ``root/METHOD/seed-S``."""
    from .runner import TIME_CAP

    prof = case.profile(args.profile)
    iterations, seconds = args.iterations, args.seconds
    if budget == "time":
        steps = args.iterations or prof.iterations
        if seconds is None:
            seconds = _time_budget(args, case, methods[0], seeds[0], root)
        iterations = steps * TIME_CAP  # a cap: the budget decides
    jobs = [
        (
            replace(
                _config(args, m, s), iterations=iterations, seconds=seconds
            ).resolved(case),
            root / m / f"seed-{s}",
        )
        for m in methods
        for s in seeds
    ]  # all validated before anything runs
    _run_all(jobs, args)


MAX_SEEDS = 15  # --until-decided's default --max-seeds


def _until_decided(args, case, methods, seeds, root: Path) -> None:
    """``compare --until-decided``: batches of ``len(seeds)`` new seeds for the
    comparisons with pinn still undecided (:func:`deepxde_lnn.sequential.until_decided`),
    then the summary."""
    from .folder import RunFolder
    from .metrics import summary_field
    from .runner import TrainingDiverged
    from .sequential import Design, until_decided, write_design

    if args.max_seeds is not None and args.max_seeds < len(seeds):
        raise ValueError(f"max-seeds: at least the {len(seeds)} seeds of --seeds")
    if "pinn" not in methods:
        raise ValueError("methods: --until-decided compares with pinn; include it")
    n = max(args.max_seeds or MAX_SEEDS, len(seeds))
    design = Design(len(seeds), len(seeds), n, margin=args.margin)
    all_seeds = [*seeds, *range(max(seeds) + 1, max(seeds) + 1 + n - len(seeds))]
    if all_seeds[-1] > SEED_MAX:
        raise ValueError(f"max-seeds: the seeds after {max(seeds)} pass 2**32 - 1")
    for cfg_seed in all_seeds:  # every configuration checked before any training
        for m in methods:
            _config(args, m, cfg_seed).resolved(case)
    write_design(root, design)

    def train(ms, new):
        _train(args, case, ms, new, root, args.budget)
        out = {}
        for m in ms:
            out[m] = {}
            for s in new:
                folder = RunFolder(root / m / f"seed-{s}")
                if not folder.metrics.exists():
                    raise TrainingDiverged(f"{m} seed {s} did not finish; no verdict")
                metrics = folder.read_record()["metrics"]
                out[m][s] = metrics[summary_field(list(metrics))]["RMSE"]
        return out

    def on_look(n, cis):
        said = "; ".join(f"{m}: {ci.verdict_text()}" for m, ci in cis.items())
        print(
            f"look {design.looks.index(n) + 1}/{len(design.looks)} at {n} seeds: {said}"
        )

    until_decided(train, methods, all_seeds, design, on_look=on_look)
    _summarize(args, case, root)


def cmd_ablate(args) -> int:
    from . import atomic, cases
    from .ablation import table, variants

    case = cases.get(args.case)
    prof = case.profile(args.profile)
    seeds = args.seeds or [prof.seed + i for i in range(prof.n_seeds)]
    root = Path(args.out or f"runs/ablate-{case.name}-{args.profile}")
    methods = _methods(args) if args.methods else variants(case)
    budgets = ["steps", "time"] if args.budget == "both" else [args.budget]
    for budget in budgets:
        _compare(args, case, methods, seeds, root / budget, budget)
    text = table(root, case, args.margin)
    atomic.atomic_write_text(root / "ablation.md", text + "\n")
    print(text)
    print(f"ablation: {root / 'ablation.md'}")
    return 0


def _time_budget(args, case, method: str, seed: int, root: Path) -> float:
    """Seconds per run for ``--budget time``: ``method``'s measured s/step times
    the step count, measured once and kept in ``root/budget.json`` (so that a
    repeated command reuses its finished runs)."""
    import json

    from . import atomic
    from .runner import step_seconds

    path = root / "budget.json"
    if path.exists():
        try:
            seconds = float(json.loads(path.read_text())["seconds"])
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"--budget time: {path} is unreadable ({err})") from err
        print(f"time budget: {seconds:.2f} s per run (from {path})")
        return seconds
    cfg = _config(args, method, seed).resolved(case)
    per = step_seconds(cfg, case)
    seconds = per * cfg.iterations
    root.mkdir(parents=True, exist_ok=True)
    record = {"seconds": seconds, "method": method, "seconds_per_step": per}
    atomic.write_json(path, {**record, "steps": cfg.iterations})
    print(
        f"time budget: {seconds:.2f} s per run ({method}: {per * 1e3:.2f} ms/step "
        f"measured now x {cfg.iterations} steps; saved in {path})"
    )
    return seconds


def cmd_sweep(args) -> int:
    from . import cases
    from .report import summarize, sweep_table

    case = cases.get(args.case)
    methods = _methods(args)
    prof = case.profile(args.profile)
    seeds = args.seeds or [prof.seed]
    root = Path(args.out or f"runs/sweep-{case.name}-{args.profile}")
    jobs = []
    for lr in args.lrs:
        args.lr = lr
        jobs += [
            (_config(args, m, s).resolved(case), root / f"lr-{lr:g}" / m / f"seed-{s}")
            for m in methods
            for s in seeds
        ]
    _run_all(jobs, args)
    for lr in args.lrs:
        summarize(
            root / f"lr-{lr:g}",
            paper_seed=prof.seed,
            paper_table=case.paper_table,
            margin=args.margin,
        )
    print(sweep_table(root, args.margin))
    return 0


def cmd_reference(args) -> int:
    if args.case != "heat":
        raise ValueError(f"case: only 'heat' has a FEM reference, got {args.case!r}")
    _check_fem_levels(args.levels)
    from . import fem

    rows = fem.write_reference(args.out, levels=args.levels, points_nd=fem.disk_grid())
    print((Path(args.out) / "convergence.md").read_text())
    return 0 if rows else 1


def cmd_report(args) -> int:
    from .reproduction import build_report

    out = build_report(args.runs_dirs, args.out, margin=args.margin)
    print(f"report: {out}, figures in {out.parent / out.stem}")
    return 0


# Measured: the six-level study (finest mesh 2,099,201 nodes) peaks at 1.98 GiB;
# every further level has 4x the nodes.
_FEM_GIB_AT_6 = 2.0


def _check_fem_levels(levels: int) -> None:
    need = _FEM_GIB_AT_6 * 4.0 ** (levels - 6)
    have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    if need > 0.8 * have:
        raise ValueError(
            f"levels: {levels} levels need about {need:.0f} GiB of memory, this "
            f"machine has {have:.0f} GiB; use at most "
            f"{6 + int(math.log(max(0.8 * have / _FEM_GIB_AT_6, 1), 4))}"
        )


def _set_threads(args) -> None:
    n = getattr(args, "threads", None)
    if not n:
        return
    cores = os.cpu_count() or 1
    if n > cores and not args.force_threads:
        raise ValueError(
            f"threads: {n} is more than this machine's {cores} cores "
            "(pass --force-threads to allow it)"
        )
    import torch

    torch.set_num_threads(n)


COMMANDS = {
    "list": cmd_list,
    "run": cmd_run,
    "compare": cmd_compare,
    "ablate": cmd_ablate,
    "sweep": cmd_sweep,
    "reference": cmd_reference,
    "report": cmd_report,
}


def main(argv=None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # outside training (start-up, summaries)
        print("interrupted", file=sys.stderr)
        return 130


def _main(argv) -> int:
    args = build_parser().parse_args(argv)
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):  # DeepXDE's backend banner
        import deepxde  # noqa: F401

    from .runner import RunInterrupted, TrainingDiverged

    try:
        _set_threads(args)
        return COMMANDS[args.command](args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except RunInterrupted as err:
        print(f"interrupted: {err}", file=sys.stderr)
        return 130
    except TrainingDiverged as err:
        print(f"diverged: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
