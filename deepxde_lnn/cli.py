"""The ``deepxde-lnn`` command line: one subcommand per entry of :data:`COMMANDS`
(``deepxde-lnn --help`` names them all, from the parser itself).

Bad input prints one ``error:`` line and exits with status 2 before anything is
written; an interrupted run exits with 130 (checkpoint saved), a diverged one with 1,
and runs whose worker process died with one ``error:`` line (which runs, how to go
on) and 1.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from pathlib import Path

from ._backend import quiet_deepxde, require_pytorch
from .config import MAX_SEEDS, Execution, Training, Verdicts
from .flags import (
    Parser,
    add_options,
    chosen_options,
    lrs,
    names,
    out,
    parse_seed,
    positive_int,
    seeds,
)
from .runs.names import BOTH, BUDGETS
from .runs.records import MAX_JSON_BYTES, read_bytes
from .training.outcome import RunInterrupted, TrainingDiverged, WorkersLost
from .training.signals import ignore_further, sigterm_as_interrupt

# the profile decides how many (laplace's quick profile and every settled one: 8)
SEEDS_HELP = (
    "comma-separated (default: the profile's seed and the next ones, as many as "
    "the profile has: deepxde-lnn list)"
)


# the execution options of one run as of many (the others: _parallel)
RUN_EXECUTION = ("overwrite", "progress", "threads", "force_threads")


def _common(p):
    p.add_argument(
        "case",
        help="benchmark name (see: deepxde-lnn list) or a case file of your own "
        "(path/to/my_case.py, declaring CASE)",
    )
    add_options(p, Training)
    add_options(p, Execution, only=RUN_EXECUTION)


def _parallel(p):
    """The options of commands over many runs: execution and verdicts."""
    add_options(p, Execution, exclude=RUN_EXECUTION)
    add_options(p, Verdicts)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; its description names them, as the
    subparsers do (plain text: ``--help`` is read in a terminal)."""
    parser = Parser(prog="deepxde-lnn")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    sub.add_parser("list", help="cases, methods, profiles and parameter counts")
    _add_run(sub)
    _add_compare(sub)
    _add_ablate(sub)
    _add_sweep(sub)
    _add_reference(sub)
    _add_report(sub)
    parser.description = (
        "Liquid residual networks (LNN-PINN) for DeepXDE, from the command line. "
        "Commands: " + ", ".join(sub.choices) + " (deepxde-lnn COMMAND --help)."
    )
    return parser


def _add_run(sub) -> None:
    p = sub.add_parser("run", help="train one case with one method and seed")
    _common(p)
    p.add_argument("--method", default="lnn")
    p.add_argument("--seed", type=parse_seed, help="default: the profile's seed")
    p.add_argument(
        "--out", type=out, help="result folder (default runs/CASE/METHOD/seed-S)"
    )
    p.add_argument("--resume", action="store_true", help="continue from checkpoint")


def _add_compare(sub) -> None:
    p = sub.add_parser("compare", help="methods x seeds, then a summary")
    _common(p)
    _parallel(p)
    p.add_argument(
        "--budget",
        default="steps",
        choices=BUDGETS,
        help="steps: every method the same number of steps (the paper's); time: "
        "every method the same wall-clock seconds (--seconds, or the first "
        "method's measured time for the profile's steps, kept in OUT/budget.json)",
    )
    p.add_argument(
        "--methods", type=names("methods"), help="comma-separated (default: lnn,pinn)"
    )
    p.add_argument("--seeds", type=seeds, help=SEEDS_HELP)
    p.add_argument(
        "--out", type=out, help="result folder (default runs/compare-CASE-PROFILE)"
    )
    p.add_argument(
        "--until-decided",
        action="store_true",
        help="add seeds in batches (as many as the first look's) to the comparisons "
        "with pinn still undecided, until each decides or reaches --max-seeds; "
        "the error rate is spread over the looks (docs/verdicts.md)",
    )
    p.add_argument(
        "--max-seeds",
        type=positive_int("max-seeds"),
        help="with --until-decided: at most this many seeds per method "
        f"(default {MAX_SEEDS})",
    )


def _add_ablate(sub) -> None:
    p = sub.add_parser("ablate", help="LNN/MLP variants, step- and time-matched")
    _common(p)
    _parallel(p)
    p.add_argument(
        "--budget",
        default=BOTH,
        choices=(*BUDGETS, BOTH),
        help="step-matched, time-matched or both (default)",
    )
    p.add_argument(
        "--methods",
        type=names("methods"),
        help="variants (default: lnn, pinn, pinn-matched and the LNN with "
        "alpha_init=0, fixed gates, no residual path, blocks on the first half of "
        "the layers, sin blocks, the other layout)",
    )
    p.add_argument("--seeds", type=seeds, help=SEEDS_HELP)
    p.add_argument(
        "--out", type=out, help="result folder (default runs/ablate-CASE-PROFILE)"
    )


def _add_sweep(sub) -> None:
    p = sub.add_parser("sweep", help="learning-rate sweep: lrs x methods x seeds")
    _common(p)
    _parallel(p)
    p.add_argument(
        "--lrs", type=lrs, required=True, help="comma-separated, e.g. 1e-3,1e-4"
    )
    p.add_argument("--methods", type=names("methods"), default="lnn")
    p.add_argument(
        "--seeds", type=seeds, help="comma-separated (default: the profile seed)"
    )
    p.add_argument(
        "--out", type=out, help="result folder (default runs/sweep-CASE-PROFILE)"
    )


def _add_reference(sub) -> None:
    p = sub.add_parser("reference", help="regenerate a FEM reference")
    p.add_argument("case", help="only 'heat'")
    p.add_argument("--levels", type=positive_int("levels"), default=6)
    p.add_argument(
        "--out",
        type=out,
        default="reference/circular_heat",
        help="folder (default reference/circular_heat: from the repository's root, "
        "the reference shipped with the package)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a reference already there"
    )


def _add_report(sub) -> None:
    p = sub.add_parser("report", help="reproduction report from result folders")
    p.add_argument(
        "runs_dirs",
        nargs="+",
        metavar="RUNS_DIR",
        help="folders searched for finished runs (metrics.json)",
    )
    p.add_argument(
        "--out",
        type=out,
        default="docs/REPRODUCTION.md",
        help="markdown file; figures go to the folder of its name without .md",
    )
    p.add_argument(
        "--readme",
        metavar="README",
        help="also rewrite the generated blocks of this README (the main comparison's "
        "output, the headline table) from the same records",
    )
    add_options(p, Verdicts)


def cmd_list(args) -> int:
    from .problems.build import parameter_count
    from .problems.methods import METHODS
    from .study import registry as cases
    from .study.shipped import (
        ADAM_STEPS,
        LBFGS_STEPS,
        NNCG_STEPS,
        PINNACLE_CPU_SEEDS,
        PINNACLE_CPU_STEPS,
        PROFILES,
        SETTLED_FLOOR,
        SETTLED_SEEDS,
        SHIPPED,
        STUDIES,
    )

    print(
        "profiles: " + ", ".join(PROFILES) + "  (quick: small counts, few steps; "
        f"accurate: float64, fixed points, {ADAM_STEPS} Adam steps with decay, "
        f"then at most {LBFGS_STEPS} L-BFGS iterations; strong: accurate with "
        f"the settled decay, then {NNCG_STEPS} NNCG iterations, "
        f"{SETTLED_SEEDS} seeds (a GPU's); settled: quick's counts "
        f"and steps, Adam's lr decaying to {SETTLED_FLOOR:.0%} of its start, "
        f"{SETTLED_SEEDS} seeds; settled-paper: the same at the paper's counts)"
    )
    print(
        "PINNacle's problems: " + ", ".join(STUDIES["pinnacle"]) + "  (pinnacle: "
        "its published protocol; quick: the CPU profile, a share of its points, "
        f"{PINNACLE_CPU_STEPS} steps with the settled decay, "
        f"{PINNACLE_CPU_SEEDS} seeds)"
    )
    print("methods:  " + ", ".join(METHODS))
    print("cases (parameters per method):")
    for name in cases.available():
        c = cases.get(name)
        published = SHIPPED[name].study  # its published profile's name
        pp, q = c.profile(published), c.profile("quick")
        counts = ", ".join(_count_text(m, c, parameter_count) for m in METHODS)
        print(f"  {name:12s} {c.title}")
        print(
            f"  {'':12s} {published}: {pp.iterations} steps, lr {pp.lr:g}, "
            f"seed {pp.seed}; "
            f"quick: {q.iterations} steps, {q.n_seeds} seeds; {counts}"
        )
    return 0


def _count_text(method: str, case, parameter_count) -> str:
    """``method``'s parameter count on ``case``, or why it does not build there
    (the authors' 2-D XPINN split on a 3-D problem)."""
    try:
        return f"{method} {parameter_count(method, case):,}"
    except ValueError:
        return f"{method} (does not build here)"


def _settings(args) -> dict:
    """The API's option keywords from the parsed flags."""
    return chosen_options(args)


def cmd_run(args) -> int:
    from . import api

    api.run(
        args.case,
        method=args.method,
        seed=args.seed,
        out=args.out,
        resume=args.resume,
        **_settings(args),
    )
    return 0


def cmd_compare(args) -> int:
    from . import api

    res = api.compare(
        args.case,
        methods=args.methods,
        seeds=args.seeds,
        budget=args.budget,
        until_decided=args.until_decided,
        max_seeds=args.max_seeds,
        out=args.out,
        **_settings(args),
    )
    print(res.markdown)
    print("summary: " + ", ".join(map(str, res.files)))  # those written only
    return 0


def cmd_ablate(args) -> int:
    from . import api

    res = api.ablate(
        args.case,
        methods=args.methods,
        seeds=args.seeds,
        budget=args.budget,
        out=args.out,
        **_settings(args),
    )
    print(res.table)
    print(f"ablation: {res.out / 'ablation.md'}")
    return 0


def cmd_sweep(args) -> int:
    from . import api

    res = api.sweep(
        args.case,
        lrs=args.lrs,
        methods=args.methods,
        seeds=args.seeds,
        out=args.out,
        **_settings(args),
    )
    print(res.table)
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
    print(read_bytes(Path(args.out) / "convergence.md", MAX_JSON_BYTES).decode())
    return 0 if rows else 1


def cmd_report(args) -> int:
    from .study.report import report

    res = report(args.runs_dirs, args.out, readme=args.readme, margin=args.margin)
    print(f"report: {res.out}, figures in {res.figures}")
    for verdict in res.verdicts:
        print(verdict.text())
    if res.readme is not None:
        print(f"readme: {res.readme}")
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


COMMANDS = {
    "list": cmd_list,
    "run": cmd_run,
    "compare": cmd_compare,
    "ablate": cmd_ablate,
    "sweep": cmd_sweep,
    "reference": cmd_reference,
    "report": cmd_report,
}


# commands that read records only: no DeepXDE (nor torch) is imported for them
RECORDS_ONLY = ("report",)


def main(argv=None) -> int:
    _console_never_fails()
    try:
        with sigterm_as_interrupt():  # SIGTERM, like Ctrl-C, exits 130
            code = _main(argv)
    except KeyboardInterrupt:  # outside training (start-up, summaries)
        ignore_further()
        print("interrupted", file=sys.stderr)
        return 130
    if code == 130:  # stopping: a second Ctrl-C changes nothing now
        ignore_further()
    return code


def _console_never_fails() -> None:
    """Print what a narrow console encoding cannot show (``PYTHONIOENCODING=ascii``:
    the summary's ``±``) as backslash escapes instead of failing the command after
    its work is done."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _main(argv) -> int:
    args = build_parser().parse_args(argv)
    light = args.command in RECORDS_ONLY
    if not light:  # called in a process of the user's, on another backend
        try:
            require_pytorch(f"deepxde-lnn {args.command}")
        except ImportError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    # no DeepXDE banner here or in the workers (imported now unless not needed)
    with quiet_deepxde(now=not light):
        if light:
            return _run(args)
        try:
            return _run(args)
        except RunInterrupted as err:
            print(f"interrupted: {err}", file=sys.stderr)
            return 130
        except TrainingDiverged as err:
            print(f"diverged: {err}", file=sys.stderr)
            return 1
        except WorkersLost as err:
            print(f"error: {err}", file=sys.stderr)
            return 1


def _run(args) -> int:
    """The command's exit status; a ``ValueError`` is one ``error:`` line, 2, and
    memory running out one ``error:`` line naming what was not allocated, 1."""
    try:
        return COMMANDS[args.command](args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (MemoryError, RuntimeError) as err:
        what = out_of_memory(err)
        if what is None:
            raise
        print(
            f"error: out of memory: {what}; lower the problem's sizes (points, "
            "grids, widths) or --workers, or free memory",
            file=sys.stderr,
        )
        return 1


# PyTorch's messages when an allocation fails: on a CPU and on a CUDA device
_CPU_ALLOC = re.compile(r"can't allocate memory: you tried to allocate (\d+) bytes")
_BAD_ALLOC = re.compile(r"\bMemoryError\b|std::bad_alloc")
_GPU_ALLOC = re.compile(
    r"out of memory\. Tried to allocate (\d+(?:\.\d+)? [KMGTP]?i?B)"
)


def out_of_memory(err: BaseException) -> str | None:
    """What could not be allocated, in words, when ``err`` says memory ran out
    (Python's or NumPy's ``MemoryError``, PyTorch's allocators' errors); else
    None."""
    for e in _causes(err):  # e.g. torch.compile's error wrapping a MemoryError
        text = str(e).strip()
        if isinstance(e, MemoryError):
            return text.splitlines()[0] if text else "Python could not allocate memory"
        if (found := _CPU_ALLOC.search(text)) is not None:
            return f"PyTorch could not allocate {_size(int(found[1]))} on the CPU"
        if (found := _GPU_ALLOC.search(text)) is not None:
            return f"PyTorch could not allocate {found[1]} on the GPU"
        if _BAD_ALLOC.search(text):  # C++'s, as the compiler stack reports it
            return "memory could not be allocated (std::bad_alloc)"
    return None


def _causes(err: BaseException, most: int = 16) -> list[BaseException]:
    """``err`` and the exceptions it was raised from, nearest first."""
    found = [err]
    while len(found) < most:
        nxt = found[-1].__cause__ or found[-1].__context__
        if nxt is None or nxt in found:
            break
        found.append(nxt)
    return found


def _size(n: float) -> str:
    """A byte count in binary units, e.g. ``50.0 KiB``."""
    if n < 1024:
        return f"{n:.0f} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        n /= 1024
        if n < 1024 or unit == "PiB":
            break
    return f"{n:.1f} {unit}"


if __name__ == "__main__":
    sys.exit(main())
