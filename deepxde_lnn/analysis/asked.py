"""Which records below a folder a call asked for: the runs of its identities, and the others counted by why they were left out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..config import RunConfig
from ..runs.records import escape
from .table import method_order, option_text

__all__ = ["asked_runs"]


def asked_runs(
    runs: Sequence[dict], asked: Sequence[Mapping]
) -> tuple[list[dict], list[str]]:
    """The records among ``runs`` of the runs ``asked`` for (their identity,
    :meth:`~deepxde_lnn.config.RunConfig.identity_of`, one of ``asked``; one
    record per run, the first by path), and in words the others, counted by why:
    another case, another problem of the same name, another configuration (what
    differs), a method or seed not asked for, another copy of a run asked for."""
    wanted = [dict(a) for a in asked]
    configs = [_configuration(a) for a in wanted]
    kept: list[dict] = []
    taken: list[dict] = []
    why: dict[str, dict[str, list[dict]]] = {}
    for r in runs:
        have = RunConfig.identity_of(r)
        if have in wanted and have not in taken:
            kept.append(r)
            taken.append(have)
            continue
        if have in taken:
            key = ("copy", "")
        elif _configuration(have) not in configs:
            key = _another(have, wanted[0])
        elif have["method"] not in {a["method"] for a in wanted}:
            key = ("method", have["method"])
        else:
            key = ("seed", have["seed"])
        why.setdefault(key[0], {}).setdefault(key[1], []).append(r)
    return kept, _excluded(why)


def _configuration(identity: Mapping) -> dict:
    """An identity without its method and seed: what a compare asks of all."""
    return {k: v for k, v in identity.items() if k not in ("method", "seed")}


def _another(have: dict, asked: dict) -> tuple[str, str]:
    """Why the run of identity ``have`` is of another configuration than the
    one ``asked``: its case, its problem, or the options that differ."""
    if have["case"] != asked["case"]:
        return ("case", escape(have["case"]))
    if have.get("problem") != asked.get("problem"):
        problem = have.get("problem")
        return ("problem", "the registered case" if problem is None else problem[:19])
    keys = dict.fromkeys([*asked, *have])
    differ = [k for k in _configuration(keys) if have.get(k) != asked.get(k)]
    return ("config", ", ".join(f"{k} {option_text(have.get(k))}" for k in differ))


_WHY = {
    "case": "of another case",
    "problem": "of another problem of this name",
    "config": "of another configuration",
}


def _excluded(why: dict) -> list[str]:
    """One phrase per reason: ``N runs of another configuration (iterations 5)``,
    ``1 run of a method not asked for (rezero)``."""

    def runs(group) -> str:
        return f"{len(group)} run" + ("s" if len(group) > 1 else "")

    out = [
        f"{runs(group)} {_WHY[kind]} ({detail})"
        for kind in _WHY
        for detail, group in why.get(kind, {}).items()
    ]
    for kind, what in (("method", "method"), ("seed", "seed")):
        if kind in why:
            names = sorted(why[kind], key=method_order if kind == "method" else None)
            group = [r for rs in why[kind].values() for r in rs]
            some = f"a {what}" if len(names) == 1 else f"{what}s"
            shown = ", ".join(option_text(n) for n in names)
            out.append(f"{runs(group)} of {some} not asked for ({shown})")
    if "copy" in why:
        out.append(f"{runs(why['copy'][''])} copying a run asked for")
    return out
