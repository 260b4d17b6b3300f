"""The answer: a lead sentence, five bullets and a table, generated from the
study-level verdicts (:mod:`.pooled_verdicts`), each linked to its rows in the
report:

- the lead: what the block does over every shipped problem, both studies
  pooled, under short and under strong training (:data:`~.shipped.STRENGTHS`);
- what it does on average over the paper's cases at each strength, and which
  cases were not pooled;
- where it helps or hurts under short training, and whether that survives
  strong training;
- whether a plain network of its parameter count does the same;
- what PINNacle's problems add;
- where our `pinn` and PINNacle's published one agree on converging, and
  whether ours comes near theirs under strong training;
- the table: each of what a researcher would pick instead
  (:data:`~deepxde_lnn.problems.methods.ALTERNATIVES`) over the block and over
  the plain network, per study and strength where they ran, and a sentence on
  the problems that decide it.

A sentence whose verdicts are missing is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.pooled import Pooled
from ..analysis.stats import DECIDING, RatioCI
from ..analysis.table import BASELINE, MATCHED, SUBJECT
from ..problems.methods import ALTERNATIVES
from .pooled_verdicts import STUDY_NAMES, StudyVerdict, interval_text
from .published import (
    MATCH_WITHIN,
    STRONG_PROFILE,
    beside_published,
)
from .shipped import STRENGTHS

__all__ = ["answer"]

#: where each sentence's rows are (anchors of docs/REPRODUCTION.md)
POOLED_ROWS = "docs/REPRODUCTION.md#the-answer-over-problems"
PUBLISHED_ROWS = "docs/REPRODUCTION.md#pinnacles-published-errors-beside-ours"


def _find(
    verdicts: Sequence[StudyVerdict],
    study: str,
    profile: str,
    a: str,
    b: str,
    unpooled: bool = False,
) -> Pooled | None:
    """The pool of ``a`` / ``b`` over ``study`` at ``profile``, where it has a
    ratio (or, ``unpooled``, where it has rows at all: a single problem)."""
    for v in verdicts:
        if (v.study, v.profile, v.pooled.a, v.pooled.b) == (study, profile, a, b):
            return v.pooled if v.pooled.ratio is not None or unpooled else None
    return None


def _and(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _effect(p: Pooled) -> str:
    """``×0.88 (0.554–1.43): equivalent within ×2``."""
    return f"×{p.ratio:.3g} ({interval_text(p)}): {p.verdict}"


def _apart(p: Pooled) -> str:
    """``; rel_b and rel_c not pooled: neither converged``."""
    whys = dict.fromkeys(p.excluded.values())
    parts = [_and([n for n, w in p.excluded.items() if w == why]) for why in whys]
    return "".join(f"; {names} not pooled: {why}" for names, why in zip(parts, whys))


def _profile(study: str, strength: str) -> str:
    """The profile of ``strength`` in ``study`` (over both studies, the
    strength itself: :class:`~.pooled_verdicts.StudyVerdict`'s)."""
    return strength if study == "both" else STRENGTHS[strength][study]


def _strengths(verdicts, study: str, a: str, b: str) -> dict[str, Pooled]:
    """The pools of ``a`` / ``b`` over ``study`` per training strength."""
    found = {s: _find(verdicts, study, _profile(study, s), a, b) for s in STRENGTHS}
    return {s: p for s, p in found.items() if p is not None}


def _where_pooled(p: Pooled, study: str, strength: str) -> str:
    """`` (the settled profile, 4 cases; rel_b and rel_c not pooled: neither
    converged)``; over both studies, counted by reason: `` (9 problems; 9 not
    pooled: a network did not converge)``."""
    if study != "both":
        profile = STRENGTHS[strength][study]
        return f" (the {profile} profile, {len(p.problems)} cases{_apart(p)})"
    whys = [_reason(why) for why in p.excluded.values()]
    apart = "".join(f"; {whys.count(w)} not pooled: {w}" for w in dict.fromkeys(whys))
    return f" ({len(p.problems)} problems{apart})"


def _reason(why: str) -> str:
    """A pool's reason for leaving a problem apart, without the problem's own
    detail: ``a network did not converge``, ``fewer than 2 seeds``."""
    return "a network did not converge" if "converge" in why else why.split(" (")[0]


def _at_strengths(pools: dict[str, Pooled], study: str | None = "paper") -> str:
    """``×0.88 (0.554–1.43) under short training (the settled profile, 4 cases)
    and ×0.946 (0.675–1.29) under strong (...): equivalent within ×2 both
    times`` (without where the pools came from where ``study`` is None)."""
    parts = []
    for strength, p in pools.items():
        where = "" if study is None else _where_pooled(p, study, strength)
        parts.append(
            f"×{p.ratio:.3g} ({interval_text(p)}) under {strength} training{where}"
        )
    verdicts = {p.verdict for p in pools.values()}
    if len(verdicts) == 1:
        times = " both times" if len(pools) > 1 else ""
        return f"{_and(parts)}: {verdicts.pop()}{times}"
    return _and([f"{t}: {p.verdict}" for t, p in zip(parts, pools.values())])


def _overall(verdicts) -> str | None:
    """Both studies pooled: the block against the plain network, and against
    the plain network of its parameter count."""
    pools = _strengths(verdicts, "both", SUBJECT, BASELINE)
    if not pools:
        return None
    text = (
        f"Over {_and([STUDY_NAMES[s] for s in STRENGTHS['short']])} together (each "
        f"problem weighing the same), `{SUBJECT}` / `{BASELINE}` is "
        f"{_at_strengths(pools, 'both')}"
    )
    block = _strengths(verdicts, "both", SUBJECT, MATCHED)
    if block:
        same = _at_strengths(block, None)
        text += f"; against a plain network of its parameter count {same}"
    return text + f" ([rows]({POOLED_ROWS}))."


def _on_average(verdicts) -> str | None:
    pools = _strengths(verdicts, "paper", SUBJECT, BASELINE)
    if not pools:
        return None
    return (
        "Over the paper's cases, the liquid block's error relative to the same "
        f"network without it (`{SUBJECT}` / `{BASELINE}`, geometric mean over "
        f"cases, 95 % interval over seeds and cases) is {_at_strengths(pools)} "
        f"([rows]({POOLED_ROWS}))."
    )


def _decided(cis: dict[str, RatioCI]) -> dict[str, RatioCI]:
    return {n: ci for n, ci in cis.items() if ci.verdict in DECIDING}


def _where(verdicts) -> str | None:
    pools = _strengths(verdicts, "paper", SUBJECT, BASELINE)
    short, strong = pools.get("short"), pools.get("strong")
    if short is None:
        return None
    found = _decided(short.problems)
    if not found:
        return "Under short training no case's own verdict is decided either way."
    cases = [
        f"{'helps' if ci.verdict == 'better' else 'hurts'} on {n} (×{ci.ratio:.3g})"
        for n, ci in found.items()
    ]
    text = (
        f"Under short training the block {_and(cases)}: the cases disagree "
        f"(I² {short.i2:.2f})"
    )
    after = {n: strong.problems[n] for n in found if strong and n in strong.problems}
    if after:
        kept = [n for n, ci in after.items() if ci.verdict == found[n].verdict]
        held = (
            _and(kept) + " holds"
            if kept
            else "neither holds" if len(after) == 2 else "none holds"
        )
        said = "; ".join(
            f"{n} ×{ci.ratio:.3g}, {ci.verdict}" for n, ci in after.items()
        )
        text += f"; under strong training {held} ({said})"
    return text + "."


def _matched(verdicts) -> str | None:
    size = _strengths(verdicts, "paper", MATCHED, BASELINE)
    block = _strengths(verdicts, "paper", SUBJECT, MATCHED)
    if not block:
        return None
    text = (
        "Against a plain network of the block's parameter count, the block is "
        f"{_at_strengths(block, None)}"
    )
    if size:
        alone = _at_strengths(size, None)
        text += f", while that network against `{BASELINE}` is {alone}"
    return text + f" ([rows]({POOLED_ROWS}))."


def _pinnacle(verdicts) -> str | None:
    found = [_pinnacle_at(verdicts, strength) for strength in STRENGTHS]
    clauses = [c for c in found if c]
    if not clauses:
        return None
    return f"On PINNacle's problems {'; and '.join(clauses)} ([rows]({POOLED_ROWS}))."


def _pinnacle_at(verdicts, strength: str) -> str | None:
    """``at the CPU profile (quick), over the 5 of 12 where both converged, ...``."""
    profile = STRENGTHS[strength]["pinnacle"]
    lnn = _find(verdicts, "pinnacle", profile, SUBJECT, BASELINE)
    if lnn is None:
        return None
    block = _find(verdicts, "pinnacle", profile, SUBJECT, MATCHED)
    n = len(lnn.problems) + len(lnn.excluded)
    text = (
        f"under {strength} training (`{profile}`), over the {len(lnn.problems)} of "
        f"{n} where both converged, `{SUBJECT}` / `{BASELINE}` is {_effect(lnn)}"
    )
    if block is not None:
        text += f", and against the plain network of its size {_effect(block)}"
        if lnn.verdict == "better" and block.verdict != "better":
            text += " (the gain goes with the parameters)"
    failed = [name for name, why in lnn.excluded.items() if "converge" in why]
    if failed:
        text += f"; on the other {len(failed)} a network did not converge"
    return text


def _published(verdicts, runs: Sequence[dict] = ()) -> str | None:
    everything = beside_published(verdicts, runs)
    found = [b for b in everything if b.agree is not None]
    if not found:
        return None
    agree = [b.case for b in found if b.agree]
    differ = [
        f"{b.case} (ours {b.ours:.3g}, theirs {b.theirs:.3g})"
        for b in found
        if not b.agree
    ]
    text = (
        f"Our `{BASELINE}` and PINNacle's published vanilla PINN (its own protocol: "
        f"more points and 10× the steps) agree on converging or failing on "
        f"{len(agree)} of {len(found)} problems"
    )
    if differ:
        text += f"; they differ on {_and(differ)}"
    return text + _strong_match(everything) + f" ([rows]({PUBLISHED_ROWS}))."


def _seeds_each(found) -> str:
    """``1 seed each``, ``3–5 seeds each``."""
    n = sorted({b.strong_seeds for b in found})
    many = f"{n[0]}–{n[-1]}" if len(n) > 1 else f"{n[0]}"
    return f"{many} seed{'s' if n[-1] > 1 else ''} each"


def _strong_match(found) -> str:
    """``; at the strong CPU profile ours is within ×2 of theirs on 2 of 3 ...``
    ("" where ours has not run there on a problem where theirs converged)."""
    judged = [b for b in found if b.matches is not None]
    if not judged:
        return ""
    missed = [b.case for b in judged if not b.matches]
    text = (
        f"; at the strong CPU profile (`{STRONG_PROFILE}`: fewer points, Adam then "
        f"L-BFGS) ours is within ×{MATCH_WITHIN:g} of theirs on "
        f"{len(judged) - len(missed)} of the {len(judged)} problems where theirs "
        f"converged and ours ran ({_seeds_each(judged)})"
    )
    return text + (f" (not on {_and(missed)})" if missed else "")


def _alternatives(verdicts) -> str | None:
    """The table of each alternative over the block and over the plain network,
    one row per study, strength and comparison where they ran, and a sentence
    on the problems that decide it."""
    everywhere = [(study, s) for study in STRENGTHS["short"] for s in STRENGTHS]
    places = [p for p in everywhere if _pools_at(verdicts, *p, SUBJECT)]
    decided = [_decides(verdicts, *place) for place in everywhere]
    said = [s for s in decided if s]
    if not places and not said:
        return None
    blocks = [_alternatives_table(verdicts, places)] if places else []
    return "\n\n".join([*blocks, " ".join(said)] if said else blocks)


def _alternatives_table(verdicts, places: list[tuple[str, str]]) -> str:
    """The alternatives' table: a row per place (study, strength) and
    comparison (over the block, over the plain network), a column each."""
    head = ["error ratio", *(f"`{m}`" for m in ALTERNATIVES)]
    lines = [
        "What a researcher would pick instead of the block, each method's error "
        "over the block's and over the plain network's (95 % interval over seeds "
        f"and problems, [rows]({POOLED_ROWS})):",
        "",
        "| " + " | ".join(head) + " |",
        "|---" * len(head) + "|",
    ]
    for study, strength in places:
        profile = STRENGTHS[strength][study]
        for against in (SUBJECT, BASELINE):
            pools = _pools_at(verdicts, study, strength, against)
            cells = [_cell(pools.get(m)) for m in ALTERNATIVES]
            where = f"{STUDY_NAMES[study]}, {strength} (`{profile}`)"
            lines.append(f"| / `{against}`, {where} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pools_at(
    verdicts, study: str, strength: str, against: str, unpooled: bool = False
) -> dict[str, Pooled]:
    """Each alternative's pool against ``against`` over ``study``'s problems at
    ``strength`` (where there is one; ``unpooled``: where it has rows)."""
    profile = STRENGTHS[strength][study]
    each = {
        m: _find(verdicts, study, profile, m, against, unpooled) for m in ALTERNATIVES
    }
    return {m: p for m, p in each.items() if p is not None}


def _cell(p: Pooled | None) -> str:
    """``×0.715 (0.592–0.889) better`` (— where not pooled)."""
    return "—" if p is None else f"×{p.ratio:.3g} ({interval_text(p)}) {p.verdict}"


def _decides(verdicts, study: str, strength: str) -> str | None:
    """Over ``study``'s problems at ``strength``: per problem, the alternatives
    the block beats and those that beat it (decided, with their ratio to the
    block), those that did not converge, and those that converged where neither
    `lnn` nor `pinn` did (on one problem as on several)."""
    pools = _pools_at(verdicts, study, strength, SUBJECT, unpooled=True)
    cases = sorted({c for p in pools.values() for c in p.problems})
    said = []
    for verb, verdict in (("beats", "worse"), ("is beaten by", "better")):
        found = [(c, _saying(pools, c, verdict)) for c in cases]
        named = [f"{_and(names)} on {c}" for c, names in found if names]
        if named:
            said.append(f"the block {verb} {'; '.join(named)}")
    for m, p in pools.items():
        failed = [
            c
            for c, why in p.excluded.items()
            if why.startswith(("neither", f"{m} did"))
        ]
        if failed:
            said.append(f"`{m}` did not converge on {_and(failed)}")
    rescued = _rescued(verdicts, study, STRENGTHS[strength][study])
    if rescued:
        said.append(f"where neither `{SUBJECT}` nor `{BASELINE}` converged, {rescued}")
    if not said:
        return None
    text = "; ".join(said)
    return f"On {STUDY_NAMES[study]} under {strength} training, {text}."


def _saying(pools: dict[str, Pooled], case: str, verdict: str) -> list[str]:
    """``['`laaf` (×0.5)']``: the pools whose own verdict on ``case`` is
    ``verdict``."""
    found = {m: p.problems.get(case) for m, p in pools.items()}
    return [
        f"`{m}` (×{ci.ratio:.3g})"
        for m, ci in found.items()
        if ci is not None and ci.verdict == verdict
    ]


def _rescued(verdicts: Sequence[StudyVerdict], study: str, profile: str) -> str:
    """```laaf` converged on rel_b``: the alternatives that converged on a
    problem of ``study``'s where neither `lnn` nor `pinn` did."""
    pool = _find(verdicts, study, profile, SUBJECT, BASELINE, unpooled=True)
    apart = pool.excluded if pool else {}
    failed = [c for c, why in apart.items() if why.startswith("neither")]
    found = []
    for v in verdicts:
        m, against = v.pooled.a, v.pooled.b
        if (v.study, v.profile, against) != (study, profile, BASELINE):
            continue
        good = [c for c in failed if c in v.rows and v.rows[c][0].converged]
        if m in ALTERNATIVES and good:
            found.append(f"`{m}` converged on {_and(good)}")
    return _and(found) if found else ""


def answer(verdicts: Sequence[StudyVerdict], runs: Sequence[dict] = ()) -> str:
    """The answer in Markdown: a lead sentence, a bullet per further sentence and
    the alternatives' table, each from study-level verdicts (and ``runs``, the
    records, for our `pinn` beside PINNacle's published numbers)."""
    sentences = [
        s
        for s in (
            _overall(verdicts),
            _on_average(verdicts),
            _where(verdicts),
            _matched(verdicts),
            _pinnacle(verdicts),
            _published(verdicts, runs),
        )
        if s
    ]
    blocks = []
    if sentences:
        blocks.append(sentences[0])
    if sentences[1:]:
        blocks.append("\n".join(f"- {s}" for s in sentences[1:]))
    alternatives = _alternatives(verdicts)
    if alternatives:
        blocks.append(alternatives)
    return "\n\n".join(blocks) + "\n" if blocks else "No study-level verdict yet.\n"
