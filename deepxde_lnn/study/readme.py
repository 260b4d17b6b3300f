"""The README's generated blocks, rebuilt from committed run records.

A block is the text between a line ``<!-- BEGIN generated: NAME ... -->`` and the
line ``<!-- END generated: NAME -->``. ``deepxde-lnn report RUNS_DIR --readme
README.md`` rewrites every block from the records below RUNS_DIR, with the code
that prints or writes the same text elsewhere:

* ``main-job``: what the main comparison (``make demo``: ``deepxde-lnn compare laplace``)
  prints at its end, its summary, from the records of exactly those runs;
* ``answer``: what the study-level verdicts say, in at most five sentences
  (:func:`~.answer.answer`), beside the report's forest plot of them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ..analysis.summaries import build_summary
from ..analysis.table import prepare
from ..config import RunConfig
from ..problems.methods import COMPARED
from .answer import answer
from .catalog import info
from .pooled_verdicts import pooled_verdicts
from .reproduction import load

__all__ = [
    "MAIN_COMPARISON",
    "main_comparison_configs",
    "main_comparison_output",
    "answer",
    "blocks",
    "fill",
    "rebuild",
]

# the main comparison's command line (the Makefile's `demo` target runs it)
MAIN_COMPARISON = ("compare", "laplace")
_BLOCK = re.compile(
    r"^(<!-- BEGIN generated: ([\w-]+)\b[^\n]*-->\n)"  # 1: the line, 2: the name
    r"(.*?)"  # 3: the body, rewritten
    r"^(<!-- END generated: \2 -->)$",
    re.S | re.M,
)


def main_comparison_configs() -> list[RunConfig]:
    """The runs :data:`MAIN_COMPARISON` makes: its default methods and seeds, resolved
    against the case's catalog entry (without torch)."""
    case = info(MAIN_COMPARISON[1])
    profile = "quick"  # compare's default profile
    return [
        RunConfig(case.name, m, s, profile=profile).resolved(case)
        for m in COMPARED
        for s in case.profile(profile).seeds
    ]


def _main_comparison_runs(runs: list[dict]) -> list[dict]:
    """The record of each run of the main comparison (a ``ValueError`` naming the first
    one missing): the record the main comparison would reuse for it."""
    kept, _ = prepare(runs)
    found = []
    for cfg in main_comparison_configs():
        want = cfg.identity()
        match = [r for r in kept if RunConfig.identity_of(r) == want]
        if not match:
            raise ValueError(
                f"readme: no record of the main comparison's run {cfg.case} {cfg.method} "
                f"seed {cfg.seed} (profile {cfg.profile}, {cfg.iterations} steps); "
                "run `make demo` and add its runs' metrics.json files"
            )
        found.append({k: v for k, v in match[0].items() if k not in ("sets", "group")})
    return found


def main_comparison_output(runs: list[dict]) -> str:
    """The summary the main comparison prints, as a fenced text block."""
    found = _main_comparison_runs(runs)
    case = info(found[0]["case"])
    seed = case.profile(found[0]["profile"]).seed  # as `compare` summarises
    text = build_summary(found, paper_seed=seed, paper_table=case.paper_table).markdown
    folders = sorted({Path(r["_dir"]).parent.parent.as_posix() for r in found})
    return (
        "```text\n" + text.rstrip("\n") + "\n```\n\n"
        "(Rebuilt from the committed records of these runs, in "
        + ", ".join(f"`{f}/`" for f in folders)
        + ".)\n"
    )


def blocks(runs: list[dict]) -> dict[str, str]:
    """Every generated block's text for records from
    :func:`deepxde_lnn.study.reproduction.load`."""
    return {
        "main-job": main_comparison_output(runs),
        "answer": answer(pooled_verdicts(runs), runs),
    }


def fill(text: str, new: dict[str, str], name: str = "README") -> str:
    """``text`` with each generated block's body replaced by ``new[NAME]``; a
    ``ValueError`` naming ``name`` when a block is unknown, missing or repeated."""
    names = [m.group(2) for m in _BLOCK.finditer(text)]
    for block in sorted(set(names) | set(new)):
        if block not in new:
            raise ValueError(f"readme: {name} has an unknown block {block!r}")
        if names.count(block) != 1:
            raise ValueError(
                f"readme: {name} needs one generated block {block!r} "
                f"(<!-- BEGIN generated: {block} --> ... "
                f"<!-- END generated: {block} -->), found {names.count(block)}"
            )
    return _BLOCK.sub(lambda m: m.group(1) + new[m.group(2)] + m.group(4), text)


def rebuild(readme: str | os.PathLike, roots: Sequence[str | os.PathLike]) -> str:
    """The text of ``readme`` with its blocks rebuilt from the runs below
    ``roots``; nothing is written."""
    path = Path(readme)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"readme: cannot read {path} ({err.strerror})") from err
    return fill(text, blocks(load(roots)), name=str(path))
