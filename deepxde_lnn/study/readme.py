"""The README's generated blocks, rebuilt from committed run records.

A block is the text between a line ``<!-- BEGIN generated: NAME ... -->`` and the
line ``<!-- END generated: NAME -->``. ``deepxde-lnn report RUNS_DIR --readme
README.md`` rewrites every block from the records below RUNS_DIR, with the code
that prints or writes the same text elsewhere:

* ``main-job``: what the main job (``make demo``: ``deepxde-lnn compare laplace``)
  prints at its end, its summary, from the records of exactly those runs;
* ``answer``: what the headline's verdicts say, in three sentences
  (:func:`answer`), beside the report's forest plot of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ..analysis.forest import kind
from ..analysis.stats import UNDECIDED
from ..analysis.summaries import build_summary
from ..analysis.table import BASELINE, MATCHED, SUBJECT, prepare
from ..config import RunConfig
from ..problems.methods import COMPARED
from .catalog import info
from .reproduction import Headline, headline, load

__all__ = [
    "MAIN_JOB",
    "main_job_configs",
    "main_job_output",
    "answer",
    "blocks",
    "fill",
    "rebuild",
]

# the main job's command line (the Makefile's `demo` target runs it)
MAIN_JOB = ("compare", "laplace")
_BLOCK = re.compile(
    r"^(<!-- BEGIN generated: ([\w-]+)\b[^\n]*-->\n)"  # 1: the line, 2: the name
    r"(.*?)"  # 3: the body, rewritten
    r"^(<!-- END generated: \2 -->)$",
    re.S | re.M,
)


def main_job_configs() -> list[RunConfig]:
    """The runs :data:`MAIN_JOB` makes: its default methods and seeds, resolved
    against the case's catalog entry (without torch)."""
    case = info(MAIN_JOB[1])
    profile = "quick"  # compare's default profile
    return [
        RunConfig(case.name, m, s, profile=profile).resolved(case)
        for m in COMPARED
        for s in case.profile(profile).seeds
    ]


def _main_job_runs(runs: list[dict]) -> list[dict]:
    """The record of each run of the main job (a ``ValueError`` naming the first
    one missing): the record the main job would reuse for it."""
    kept, _ = prepare(runs)
    found = []
    for cfg in main_job_configs():
        want = cfg.identity()
        match = [r for r in kept if RunConfig.identity_of(r) == want]
        if not match:
            raise ValueError(
                f"readme: no record of the main job's run {cfg.case} {cfg.method} "
                f"seed {cfg.seed} (profile {cfg.profile}, {cfg.iterations} steps); "
                "run `make demo` and add its runs' metrics.json files"
            )
        found.append({k: v for k, v in match[0].items() if k not in ("sets", "group")})
    return found


def main_job_output(runs: list[dict]) -> str:
    """The summary the main job prints, as a fenced text block."""
    found = _main_job_runs(runs)
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


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _by_verdict(found: list[tuple[str, str]]) -> str:
    """``better on beam, worse on heat and equivalent within ×2 on laplace`` for
    ``(name, verdict)`` pairs, verdicts in a fixed order."""
    order = {k: i for i, k in enumerate(("better", "worse", "equivalent", UNDECIDED))}
    verdicts = sorted({v for _, v in found}, key=lambda v: order[kind(v)])
    return _and([f"{v} on {_and([n for n, w in found if w == v])}" for v in verdicts])


def _names(rows: list[Headline]) -> list[str]:
    """Each row's case, with its configuration's number where a case repeats."""
    cases = [h.case for h in rows]
    return [h.case if cases.count(h.case) == 1 else f"{h.case} [{h.k}]" for h in rows]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _survive(decided: int, kept: int) -> str:
    """How many decided verdicts survive Holm's adjustment, ending the sentence."""
    if not decided:
        return "."
    if decided == 1:
        return ", and the decided one " + (
            "survives Holm's adjustment."
            if kept
            else "does not survive Holm's adjustment."
        )
    return f", and {kept or 'none'} of the {decided} decided ones survive Holm's adjustment."


def _seeds(rows: list[Headline]) -> str:
    n = sorted({n for h in rows for n in (h.lnn.n_a, h.lnn.n_b)})
    return f"{n[0]}" if len(n) == 1 else f"{n[0]}–{n[-1]}"


def _adjusted(changed: list[tuple[str, str]], total: int) -> str:
    """``drift_decay and laplace are undecided, the others stand``."""
    parts = []
    for v in dict.fromkeys(v for _, v in changed):
        names = [c for c, w in changed if w == v]
        parts.append(f"{_and(names)} {'is' if len(names) == 1 else 'are'} {v}")
    rest = total - len(changed)
    others = (
        ""
        if not rest
        else ", the other one stands"
        if rest == 1
        else (", the others stand")
    )
    return "; ".join(parts) + others


def answer(rows: list[Headline]) -> str:
    """What the headline's verdicts (:func:`~.reproduction.headline`) say, in three
    sentences: the settled profile's `lnn` / `pinn` verdicts per case, what Holm's
    adjustment over the table and the parameter-matched control add, and how many
    of the other configurations' verdicts are decided."""
    settled = [h for h in rows if h.settled]
    other = [h for h in rows if not h.settled]
    n = sum(ci is not None for h in rows for ci in (h.lnn, h.matched))
    out = []
    if settled:
        names = _names(settled)
        out.append(
            f"At the settled profile ({_seeds(settled)} seeds per method, every seed "
            "ending settled), the liquid blocks against the same network without "
            f"them (`{SUBJECT}` / `{BASELINE}`, left) are "
            + _by_verdict([(c, h.lnn.verdict) for c, h in zip(names, settled)])
            + "."
        )
        changed = [
            (c, h.adjusted[0])
            for c, h in zip(names, settled)
            if h.adjusted[0] != h.lnn.verdict
        ]
        holm = f"After Holm's adjustment over the table's {n} verdicts, " + (
            _adjusted(changed, len(settled)) if changed else "each of these stands"
        )
        pairs = [(c, h) for c, h in zip(names, settled) if h.matched is not None]
        if pairs:
            holm += (
                f"; the plain network of the LNN's parameter count (`{MATCHED}` / "
                f"`{BASELINE}`, right) is "
                + _by_verdict([(c, h.matched.verdict) for c, h in pairs])
            )
            moved = [
                (c, h.adjusted[1])
                for c, h in pairs
                if h.adjusted[1] != h.matched.verdict
            ]
            if moved:
                holm += f" ({_adjusted(moved, len(moved))} after Holm's adjustment)"
        out.append(holm + ".")
    else:
        out.append("No case has runs at a settled profile yet.")
    if other:
        decided = [h for h in other if h.lnn.verdict != UNDECIDED]
        kept = [h for h in decided if h.adjusted[0] != UNDECIDED]
        profiles = _and(sorted({h.group.profile for h in other}))
        undecided = len(other) - len(decided)
        out.append(
            f"At the {_count(len(other), 'other configuration')} (profiles "
            f"{profiles}, {_seeds(other)} seeds per method), {undecided} of the "
            f"{len(other)} `{SUBJECT}` / `{BASELINE}` verdicts "
            + ("is" if undecided == 1 else "are")
            + " undecided"
            + _survive(len(decided), len(kept))
        )
    return " ".join(out) + "\n"


def blocks(runs: list[dict]) -> dict[str, str]:
    """Every generated block's text for records from
    :func:`deepxde_lnn.study.reproduction.load`."""
    return {"main-job": main_job_output(runs), "answer": answer(headline(runs))}


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


def rebuild(readme: str | Path, roots: Sequence[str | Path]) -> str:
    """The text of ``readme`` with its blocks rebuilt from the runs below
    ``roots``; nothing is written."""
    path = Path(readme)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"readme: cannot read {path} ({err.strerror})") from err
    return fill(text, blocks(load(roots)), name=str(path))
