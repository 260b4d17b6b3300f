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
from .checks import SEED_MAX, parse_int, parse_number, unique
from .names import lr_name, lr_text, run_folder, safe_name, seed_name
from .signals import sigterm_as_interrupt

ensure_pytorch_backend()


class Parser(argparse.ArgumentParser):
    """``argparse`` with one-line errors and exit status 2."""

    def error(self, message):
        self.exit(2, f"error: {message}\n")


def _arg(check, *args, **kwargs):
    """An argparse type from a :mod:`deepxde_lnn.checks` parser (its ValueError,
    which names the argument, becomes argparse's one-line error)."""

    def parse(text):
        try:
            return check(text.strip(), *args, **kwargs)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


def _positive_int(name):
    return _arg(parse_int, name, 1)


def _nonnegative_int(name):
    return _arg(parse_int, name, 0)


def _positive_float(name):
    return _arg(parse_number, name, 0, None, above=True)


parse_seed = _arg(parse_int, "seed", 0, SEED_MAX)
_lr = _positive_float("lr")


def _list(item, name):
    """A comma-separated list of ``item``, at least one, none repeated."""

    def parse(text):
        values = [item(s) for s in text.split(",") if s.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"{name}: give at least one value")
        try:
            return unique(values, name)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


def _out(text):
    """An argparse type for ``--out``: a path, not an empty string."""
    if not text.strip():
        raise argparse.ArgumentTypeError("out must be a path, got an empty string")
    return text


_seeds = _list(parse_seed, "seeds")
_lrs = _list(_lr, "lrs")


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
    p.add_argument(
        "--out", type=_out, help="result folder (default runs/CASE/METHOD/seed-S)"
    )
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
    p.add_argument("--seeds", type=_seeds, help="comma-separated (default: 3 seeds)")
    p.add_argument(
        "--out", type=_out, help="result folder (default runs/compare-CASE-PROFILE)"
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
    p.add_argument(
        "--out", type=_out, help="result folder (default runs/ablate-CASE-PROFILE)"
    )

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
    p.add_argument(
        "--out", type=_out, help="result folder (default runs/sweep-CASE-PROFILE)"
    )

    p = sub.add_parser("reference", help="regenerate a FEM reference")
    p.add_argument("case", help="only 'heat'")
    p.add_argument("--levels", type=_positive_int("levels"), default=6)
    p.add_argument(
        "--out",
        type=_out,
        default="reference/circular_heat",
        help="folder (default reference/circular_heat: from the repository's root, "
        "the reference shipped with the package)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a reference already there"
    )

    p = sub.add_parser("report", help="reproduction report from result folders")
    p.add_argument(
        "runs_dirs",
        nargs="+",
        metavar="RUNS_DIR",
        help="folders searched for finished runs (metrics.json)",
    )
    p.add_argument(
        "--out",
        type=_out,
        default="docs/REPRODUCTION.md",
        help="markdown file; figures go to the folder of its name without .md",
    )
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
    default = run_folder("runs", cfg.case, cfg.method, seed_name(cfg.seed))
    out = Path(args.out or default)
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
    """``--methods``: at least one, each a folder name, none twice (also not
    spelled another way, e.g. ``alpha_init=0`` and ``alpha_init=0.0``)."""
    from .methods import canonical

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        raise ValueError("methods: give at least one method")
    seen: dict[str, str] = {}
    for m in methods:
        first = seen.get(canonical(m))
        if first is not None:
            same = "is given twice" if m == first else f"is the same as {first!r}"
            raise ValueError(f"methods: {m!r} {same}")
        seen[canonical(m)] = m
    return [safe_name(m, "method") for m in methods]


def _run_all(jobs, args) -> None:
    """Run (config, folder) jobs, ``--workers`` at a time: finished ones (same
    configuration) are reused, unfinished ones (a checkpoint) resumed. Every
    folder is checked first, so a bad one stops the command before any training."""
    from . import cases
    from .folder import RunFolder
    from .jobs import iter_jobs
    from .runner import missing_figures

    todo = []
    for cfg, out in jobs:
        folder = RunFolder(out)
        folder.prepare()  # ours and writable, before anything is read or trained
        drawn = not missing_figures(out, cases.get(cfg.case))  # else redrawn in run
        if not args.overwrite and folder.finished(cfg.identity()) and drawn:
            print(f"{cfg.method} seed {cfg.seed} lr {lr_text(cfg.lr)}: done, reused")
            continue
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
    _compare(args, case, _methods(args), seeds, root, args.budget)
    print((root / "summary.md").read_text())
    print(
        f"summary: {root / 'summary.md'}, {root / 'summary.csv'}, {root / 'summary.png'}"
    )
    return 0


def _compare(args, case, methods, seeds, root: Path, budget: str) -> None:
    """Train methods x seeds into ``root/METHOD/seed-S`` (same steps, or the same
    seconds with ``budget="time"``) and summarise them there."""
    from .folder import claim
    from .report import summarize
    from .runner import TIME_CAP

    prof = case.profile(args.profile)
    iterations, seconds = args.iterations, args.seconds
    _check_configs(args, case, methods, seeds)
    claim(root)  # empty or ours: it gets summaries and budget.json
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
            run_folder(root, m, seed_name(s)),
        )
        for m in methods
        for s in seeds
    ]  # all validated before anything runs
    _run_all(jobs, args)
    summarize(root, paper_seed=prof.seed, paper_table=case.paper_table)


def _check_configs(args, case, methods, seeds) -> None:
    """Every method and seed resolved (``ValueError`` naming it) before a folder
    is created."""
    for m in methods:
        for s in seeds:
            _config(args, m, s).resolved(case)


def cmd_ablate(args) -> int:
    from . import atomic, cases
    from .ablation import table, variants
    from .folder import claim

    case = cases.get(args.case)
    prof = case.profile(args.profile)
    seeds = args.seeds or [prof.seed + i for i in range(prof.n_seeds)]
    root = Path(args.out or f"runs/ablate-{case.name}-{args.profile}")
    methods = _methods(args) if args.methods else variants(case)
    budgets = ["steps", "time"] if args.budget == "both" else [args.budget]
    _check_configs(args, case, methods, seeds)
    claim(root)  # empty or ours: it gets steps/, time/ and ablation.md
    for budget in budgets:
        _compare(args, case, methods, seeds, root / budget, budget)
    text = table(root, case)
    atomic.atomic_write_text(root / "ablation.md", text + "\n")
    print(text)
    print(f"ablation: {root / 'ablation.md'}")
    return 0


def _time_budget(args, case, method: str, seed: int, root: Path) -> float:
    """Seconds per run for ``--budget time``: ``method``'s measured s/step times
    the step count, measured once and kept in ``root/budget.json`` (so that a
    repeated command reuses its finished runs)."""
    from . import atomic
    from .records import read_budget
    from .runner import step_seconds

    path = root / "budget.json"
    if path.exists():  # in a root of ours (claimed by _compare)
        seconds = read_budget(path)  # FolderError naming the file
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
    from .folder import claim
    from .report import summarize, sweep_table

    case = cases.get(args.case)
    methods = _methods(args)
    prof = case.profile(args.profile)
    seeds = args.seeds or [prof.seed]
    root = Path(args.out or f"runs/sweep-{case.name}-{args.profile}")
    _check_configs(args, case, methods, seeds)
    for path in (root, *(root / lr_name(lr) for lr in args.lrs)):
        claim(path)  # empty or ours: they get summaries
    jobs = []
    for lr in args.lrs:
        args.lr = lr
        jobs += [
            (
                _config(args, m, s).resolved(case),
                run_folder(root, lr_name(lr), m, seed_name(s)),
            )
            for m in methods
            for s in seeds
        ]
    _run_all(jobs, args)
    for lr in args.lrs:
        summarize(
            root / lr_name(lr), paper_seed=prof.seed, paper_table=case.paper_table
        )
    print(sweep_table(root))
    return 0


def cmd_reference(args) -> int:
    if args.case != "heat":
        raise ValueError(f"case: only 'heat' has a FEM reference, got {args.case!r}")
    _check_fem_levels(args.levels)
    from . import fem

    rows = fem.write_reference(
        args.out,
        levels=args.levels,
        points_nd=fem.disk_grid(),
        overwrite=args.overwrite,
    )
    print((Path(args.out) / "convergence.md").read_text())
    return 0 if rows else 1


def cmd_report(args) -> int:
    from .reproduction import build_report

    out = build_report(args.runs_dirs, args.out)
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


def _check_backend(args) -> None:
    """``--backend``/``--address`` of the commands that spread runs: checked (a
    Dask scheduler must answer) before anything is created."""
    if hasattr(args, "backend"):
        from .jobs import check_backend

        check_backend(args.backend, args.address)


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
        with sigterm_as_interrupt():  # SIGTERM, like Ctrl-C, exits 130
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
        _check_backend(args)
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
