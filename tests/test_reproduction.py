"""The reproduction report: numbers, verdicts, gaps, determinism, bad input, CLI."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import registered_case
from scipy import stats

from deepxde_lnn import cli
from deepxde_lnn.analysis.figures import plt_module
from deepxde_lnn.analysis.sequential import Design, write_design
from deepxde_lnn.runs.folder import FolderError
from deepxde_lnn.runs.records import escape
from deepxde_lnn.study import answer, pooled_verdicts, readme, reproduction

SEEDS = (888888, 888889, 888890)
# RMSE per seed; laplace lnn/pinn differ by a seed-dependent factor around 0.5
LAPLACE = {
    "lnn": (1e-3, 2e-3, 4e-3),
    "pinn": (2e-3, 4.4e-3, 7.2e-3),
    "pinn-matched": (1e-3, 8e-3, 4e-3),
}
BEAM = {"lnn": (3e-4, 6e-4), "pinn": (1e-3, 1.1e-3, 0.9e-3)}


def _metrics(rmse: float) -> dict:
    return {"RMSE": rmse, "MSE": rmse**2, "MAE": rmse / 2, "relL2": 10 * rmse,
            "MaxErr": 3 * rmse}  # fmt: skip


def _write(root, case, method, seed, rmse, **over) -> None:
    """A run record as the runner writes it (the fields the report reads)."""
    fields = {"beam": "u", "heat": "theta", "drift_decay": "u"}
    field = fields.get(case, "phi")
    steps, lr = (5000, 3e-4) if case == "beam" else (8000, 1e-3)
    rec = {
        "case": case,
        "method": method,
        "seed": seed,
        "lr": lr,
        "iterations": steps,
        "profile": "paper",
        "dtype": "float32",
        "device": "cpu",
        "device_name": "Test CPU",
        "parameters": 29633 if method == "lnn" else 12737,
        "train_seconds": 8.0,
        "cpu_seconds": 8.0,  # one thread busy all along: timed on an idle core
        "threads": 1,
        "seconds_per_step": 0.002 if method == "lnn" else 0.001,
        "versions": {"python": "3.12.3", "torch": "2.11.0", "deepxde": "1.15.0"},
        "metrics": {field: _metrics(rmse)},
        **over,
    }
    if case == "beam":
        rec["extra_grid_metrics"] = {"150x150": {"u": _metrics(rmse * 1.01)}}
    tag = "-".join(str(v) for v in over.values() if not isinstance(v, dict))
    out = root / case / tag / method / f"seed-{seed}"  # a run's folder: METHOD/seed-S
    out.mkdir(parents=True)
    (out / "metrics.json").write_text(json.dumps(rec))


@pytest.fixture
def runs_dir(tmp_path):
    root = tmp_path / "runs"
    for table, case in ((LAPLACE, "laplace"), (BEAM, "beam")):
        for method, errs in table.items():
            for seed, rmse in zip(SEEDS, errs):
                _write(root, case, method, seed, rmse)
    # not the paper's protocol: other groups, never counted as paper runs
    for seed in SEEDS:
        _write(root, "laplace", "rba", seed, 5e-3, profile="quick", iterations=100)
    _write(root, "laplace", "pinn", SEEDS[0], 1e-2, budget="time")
    return root


def _row(md: str, case: str, group: int, field: str, method: str) -> list[str]:
    """The cells of ``method``'s row in one table of the report."""
    section = md.split(f"\n## {case}\n")[1].split("\n## ")[0]
    part = section.split(f"\n### [{group}] ")[1].split("\n### ")[0]
    table = part.split(f"\n#### {field}\n")[1].split("\n\n#### ")[0]
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == f"`{method}`":
            return cells
    raise AssertionError(f"no row for {method}")


def _render(root) -> str:
    return reproduction.render(reproduction.load([root]), [root])


def test_table_numbers_and_verdicts(runs_dir):
    md = _render(runs_dir)
    lnn = _row(md, "laplace", 1, "phi", "lnn")
    a, b = np.log(LAPLACE["lnn"]), np.log(LAPLACE["pinn"])
    d = a - b  # paired by seed
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / np.sqrt(3)
    ratio, low, high = np.exp([d.mean(), d.mean() - half, d.mean() + half])
    assert high < 1
    assert lnn[:4] == ["`lnn`", "3", "29,633", "0.002"]
    assert lnn[4] == "2.333e-03 ± 1.5e-03"  # mean, sample std of 1, 2, 4 (x 1e-3)
    assert lnn[5] == "2.000e-03"  # median
    assert lnn[6] == "2.058e-03"  # the paper's LNN row (Table 3)
    assert lnn[7] == f"{np.mean(LAPLACE['lnn']) / 2.058e-3:.3g}" == "1.13"
    assert lnn[8] == f"{ratio:.3g} ({low:.3g}–{high:.3g})"
    assert lnn[9] == "better"
    assert lnn[12] == "2.333e-02 ± 1.5e-02" and lnn[13] == "7.000e-03 ± 4.6e-03"
    pinn = _row(md, "laplace", 1, "phi", "pinn")
    assert pinn[6] == "1.367e-02" and pinn[8:10] == ["—", "—"]
    matched = _row(md, "laplace", 1, "phi", "pinn-matched")
    assert matched[6:8] == ["—", "—"] and matched[9] == "undecided (~12 seeds)"


def test_groups_extra_sets_and_paper_column(runs_dir):
    md = _render(runs_dir)
    assert (
        "### [1] profile `paper`, 8000 steps, lr 0.001, float32, budget `steps`" in md
    )
    assert "### [2] profile `paper`, 8000 steps, lr 0.001, float32, budget `time`" in md
    assert "### [3] profile `quick`, 100 steps, lr 0.001, float32" in md
    assert _row(md, "laplace", 2, "phi", "pinn")[1] == "1"  # never pooled
    assert _row(md, "laplace", 3, "phi", "rba")[6] == "—"  # no paper value: quick
    # beam: lnn has 2 of pinn's 3 seeds, paired over those; extra grid is a field
    lnn = _row(md, "beam", 1, "u", "lnn")
    d = np.log(BEAM["lnn"]) - np.log(BEAM["pinn"][:2])
    assert lnn[1] == "2" and lnn[8].startswith(f"{np.exp(d.mean()):.3g} (")
    assert not lnn[8].endswith(", Welch)")
    assert _row(md, "beam", 1, "u@150x150", "pinn")[6] == "9.643e-04"
    assert "hardware: Test CPU (cpu); software: torch 2.11.0, deepxde 1.15.0" in md
    assert md.index("## laplace") < md.index("## beam")  # the package's case order


def _headline(md: str) -> dict[tuple[str, str], list[str]]:
    """(case, configuration) -> the cells of its headline row."""
    part = md.split("\n## Headline\n")[1].split("\n## ")[0]
    rows = [
        [c.strip() for c in line.strip("|").split("|")] for line in part.split("\n")
    ]
    return {
        (r[0], r[2]): r for r in rows if len(r) == 12 and r[0] not in ("case", "---")
    }


def test_headline_repeats_the_lnn_and_matched_ratios(runs_dir):
    md = _render(runs_dir)
    head = _headline(md)
    # laplace: the paper protocol and the time-budget group (no lnn there: no row)
    assert list(head) == [
        ("laplace", "[1] paper, 8000 steps, lr 0.001 (the paper's protocol)"),
        ("beam", "[1] paper, 5000 steps, lr 0.0003 (the paper's protocol)"),
    ]
    row = head[("laplace", "[1] paper, 8000 steps, lr 0.001 (the paper's protocol)")]
    lnn = _row(md, "laplace", 1, "phi", "lnn")
    matched = _row(md, "laplace", 1, "phi", "pinn-matched")
    assert row[1] == "phi" and row[3] == "3 / 3"
    assert row[4:6] == ["2.33e-03", f"{np.mean(LAPLACE['pinn']):.2e}"]
    assert row[6:9] == lnn[8:11] and row[10:12] == matched[8:10]
    assert (
        row[9]
        == "0/3; 0/3"
        == f"{lnn[11]}; {_row(md, 'laplace', 1, 'phi', 'pinn')[11]}"
    )
    beam = head[("beam", "[1] paper, 5000 steps, lr 0.0003 (the paper's protocol)")]
    assert beam[3] == "2 / 3" and beam[10:] == ["—", "—"]  # no pinn-matched runs


def _write_settled(root, case: str, errors: dict) -> None:
    """Records of ``case``'s settled profile (as `compare CASE --profile settled`
    writes them), one per method and seed of ``errors``."""
    from deepxde_lnn.study import catalog

    prof = catalog.info(case).profile("settled")
    over = dict(profile="settled", iterations=prof.iterations, lr=prof.lr)
    for method, errs in errors.items():
        for seed, rmse in zip(prof.seeds, errs):
            _write(root / "settled", case, method, seed, rmse, **over,
                   decay=list(prof.decay))  # fmt: skip


def test_the_headline_opens_with_the_settled_rows(runs_dir):
    """With records of the settled profile, the report's headline (and its
    figure) opens with one row per case under it, then the other configurations,
    the paper's protocol among them."""
    outlier = (1e-3, 1.1e-3, 0.9e-3, 1.2e-3, 1e-3, 0.8e-3, 1e-3, 0.1)
    _write_settled(runs_dir, "beam", {"lnn": [5e-4] * 8, "pinn": outlier})
    _write_settled(runs_dir, "laplace", {"lnn": [1e-3] * 8, "pinn": [1e-3] * 8})
    md = _render(runs_dir)
    head = list(_headline(md))
    assert [case for case, _ in head] == ["laplace", "beam", "laplace", "beam"]
    assert head[0][1].startswith("[4] settled, 3000 steps, lr 0.001 with decay")
    assert head[1][1].startswith("[2] settled, 800 steps, lr 0.001 with decay")
    assert head[2][1].endswith("(the paper's protocol)")
    beam = _headline(md)[head[1]]
    # every lnn seed below every pinn seed, yet pinn's outlier leaves the ratio
    # undecided: the companion says what the ratio cannot
    assert beam[7].startswith("undecided") and beam[8] == "1.00 (1.00–1.00)"
    assert beam[9] == "0/8; 1/8"  # pinn's 100x seed: one failure
    same = _headline(md)[head[0]]
    assert same[8] == "0.50 (0.50–0.50)" and same[9] == "0/8; 0/8"
    table = reproduction.headline_table(reproduction.load([runs_dir]))
    assert table.splitlines()[2].startswith("| laplace | phi | [4] settled, ")


def test_the_answer_says_what_the_pooled_verdicts_say(runs_dir):
    """The README's answer comes from the study-level verdicts: the settled
    profile's pool of `lnn` / `pinn` over the paper's cases, its ratio the
    geometric mean of the cases' ratios (by hand here), and the case that helps."""
    beam = {
        "lnn": [5e-4, 6e-4, 4e-4, 5e-4, 5.5e-4, 4.5e-4, 5e-4, 6e-4],
        "pinn": [1e-3, 1.1e-3, 0.9e-3, 1.2e-3, 1e-3, 0.8e-3, 1e-3, 1.1e-3],
    }
    laplace = {"lnn": [1e-3, 1.1e-3, 0.9e-3, 1e-3, 1e-3, 1.2e-3, 0.9e-3, 1e-3],
               "pinn": [1e-3, 1e-3, 1e-3, 1.1e-3, 0.9e-3, 1e-3, 1e-3, 1.1e-3]}  # fmt: skip
    _write_settled(runs_dir, "beam", beam)
    _write_settled(runs_dir, "laplace", laplace)
    verdicts = pooled_verdicts.pooled_verdicts(reproduction.load([runs_dir]))
    (settled,) = [
        v for v in verdicts
        if (v.study, v.profile, v.pooled.a, v.pooled.b)
        == ("paper", "settled", "lnn", "pinn")
    ]  # fmt: skip
    logs = [np.mean(np.log(c["lnn"]) - np.log(c["pinn"])) for c in (beam, laplace)]
    ratio = float(np.exp(np.mean(logs)))
    assert settled.pooled.ratio == pytest.approx(ratio, rel=1e-12)
    said = answer.answer(verdicts)
    assert said.startswith(
        "Over the paper's cases, the liquid block's error relative to the same "
        "network without it (`lnn` / `pinn`, geometric mean over cases, 95 % "
        f"interval over seeds and cases) is ×{ratio:.3g} ("
    )
    assert "under short training (the settled profile, 2 cases)" in said
    assert "\n- Under short training the block helps on beam (×" in said
    lead, bullets = said.split("\n\n")  # a lead sentence, then one bullet each
    assert lead.count(". ") == 0 and bullets.startswith("- ")


def test_the_answer_opens_with_both_studies_pooled_per_strength(runs_dir):
    """The one answer: each training strength's pool over both studies (the
    paper's cases at settled, PINNacle's at quick), every problem weighing the
    same; it leads the answer and the report's table."""
    beam = {"lnn": [5e-4] * 7 + [6e-4], "pinn": [1e-3] * 7 + [1.1e-3]}
    laplace = {"lnn": [1e-3] * 7 + [1.2e-3], "pinn": [1e-3] * 7 + [0.9e-3]}
    _write_settled(runs_dir, "beam", beam)
    _write_settled(runs_dir, "laplace", laplace)
    ns = {"lnn": (1e-2, 2e-2, 3e-2), "pinn": (2e-2, 3e-2, 5e-2)}
    for method, errs in ns.items():
        for seed, rmse in zip(SEEDS, errs):
            _write(runs_dir, "ns2d_lid_driven", method, seed, rmse, profile="quick",
                   iterations=3000,
                   metrics={f: _metrics(1.0) for f in ("u", "v", "p", "Avg")},
                   extra_metrics={"joint": _metrics(rmse)})  # fmt: skip
    for method in ns:  # one seed each: left apart, and said why
        _write(runs_dir, "poisson_nd", method, 0, 1e-3, profile="quick",
               iterations=3000, metrics={"u": _metrics(1e-3)})  # fmt: skip
    verdicts = pooled_verdicts.pooled_verdicts(reproduction.load([runs_dir]))
    first = verdicts[0]
    assert (first.study, first.profile, first.pooled.a, first.pooled.b) == (
        "both", "short", "lnn", "pinn")  # fmt: skip
    assert sorted(first.pooled.problems) == ["beam", "laplace", "ns2d_lid_driven"]
    logs = [np.mean(np.log(c["lnn"]) - np.log(c["pinn"])) for c in (beam, laplace)]
    logs.append(np.mean(np.log(ns["lnn"]) - np.log(ns["pinn"])))
    assert first.pooled.ratio == pytest.approx(np.exp(np.mean(logs)), rel=1e-12)
    assert not [v for v in verdicts if (v.study, v.profile) == ("both", "strong")]
    said = answer.answer(verdicts)
    assert said.startswith(
        "Over the paper's cases and PINNacle's problems together (each problem "
        f"weighing the same), `lnn` / `pinn` is ×{first.pooled.ratio:.3g} ("
    )
    assert "under short training (3 problems; 1 not pooled: fewer than 2 seeds)" in (
        said.split(". ")[0]
    )
    assert "On PINNacle's problems" not in said  # one problem: nothing to pool
    table = "\n".join(pooled_verdicts.pooled_table(verdicts))
    assert (
        "| both studies | short training (settled, quick) | `lnn` / `pinn` | 3 |"
        in (table)
    )


def test_the_answer_places_the_block_among_the_alternatives(runs_dir):
    """Each alternative is pooled against `lnn` and `pinn` like the block, and the
    answer names where the block beats them, where one beats it, and where only
    an alternative converged."""
    low = [1e-3, 1.1e-3, 0.9e-3, 1e-3, 1.05e-3, 0.95e-3, 1e-3, 1.02e-3]
    scaled = lambda k: [k * e for e in low]  # noqa: E731
    _write_settled(runs_dir, "beam", {"lnn": scaled(0.1), "pinn": low,
        "laaf": low, "pirate": scaled(0.5), "fourier": low})  # fmt: skip
    _write_settled(runs_dir, "laplace", {"lnn": low, "pinn": low,
        "laaf": scaled(0.1), "pirate": low, "fourier": scaled(4)})  # fmt: skip
    failed = [2.0] * 7 + [2.1]
    _write_settled(runs_dir, "heat", {"lnn": failed, "pinn": failed,
        "laaf": failed, "pirate": failed, "fourier": low})  # fmt: skip
    _write_settled(runs_dir, "drift_decay", {"lnn": low, "pinn": low,
        "laaf": low, "pirate": low, "fourier": failed})  # fmt: skip
    verdicts = pooled_verdicts.pooled_verdicts(reproduction.load([runs_dir]))
    pools = {(v.pooled.a, v.pooled.b): v.pooled for v in verdicts}
    for m in ("laaf", "pirate", "fourier"):
        assert {(m, "pinn"), (m, "lnn")} <= set(pools)
    laaf = pools[("laaf", "lnn")]
    assert laaf.problems["beam"].verdict == "worse"
    assert laaf.problems["laplace"].verdict == "better"
    said = answer.answer(verdicts).split("What a researcher would pick instead")[1]
    table = [line for line in said.splitlines() if line.startswith("| / ")]
    for line, against in zip(table, ("lnn", "pinn"), strict=True):  # one row each
        cells = line.split(" | ")
        assert cells[0] == f"| / `{against}`, the paper's cases, short (`settled`)"
        for cell, m in zip(cells[1:], ("laaf", "pirate", "fourier"), strict=True):
            p = pools[(m, against)]
            assert cell.startswith(f"×{p.ratio:.3g} (") and p.verdict in cell
    assert (
        "the block beats `laaf` (×10), `pirate` (×5) and `fourier` (×10) on beam"
        in (said)
    )
    assert "the block is beaten by `laaf` (×0.1) on laplace" in said
    assert "`fourier` did not converge on drift_decay;" in said
    assert "on laplace;" not in said.split("did not converge")[1]  # worse, converged
    assert "`fourier` converged on heat" in said
    assert "`laaf` converged" not in said


def test_a_case_where_neither_converged_is_listed_apart(runs_dir):
    """A case where neither network converged is named apart, never pooled as a
    ratio: with one case left there is nothing to pool."""
    _write_settled(runs_dir, "beam", {"lnn": [5e-4] * 7 + [6e-4],
                                      "pinn": [1e-3] * 7 + [1.1e-3]})  # fmt: skip
    _write_settled(runs_dir, "laplace", {"lnn": [2.0] * 7 + [2.1],
                                         "pinn": [2.0] * 7 + [2.2]})  # fmt: skip
    verdicts = pooled_verdicts.pooled_verdicts(reproduction.load([runs_dir]))
    settled = {
        (v.pooled.a, v.pooled.b): v.pooled for v in verdicts if v.profile == "settled"
    }[("lnn", "pinn")]
    assert settled.excluded == {"laplace": "neither converged"}
    assert list(settled.problems) == ["beam"] and settled.ratio is None
    assert "settled" not in answer.answer(verdicts)


def test_the_report_draws_the_headlines_verdicts(runs_dir, tmp_path):
    """`_verdicts.png`: one row per headline row, `lnn` / `pinn` on the left and
    `pinn-matched` / `pinn` on the right, coloured by the table's verdicts."""
    from matplotlib.colors import to_hex

    from deepxde_lnn.analysis.forest import COLOURS, kind

    out = reproduction.build_report([runs_dir], tmp_path / "R.md")
    md = out.read_text()
    assert f"](R/{reproduction.FOREST})" in md
    assert md.index(reproduction.FOREST) < md.index("| case | field |")
    png = (tmp_path / "R" / reproduction.FOREST).read_bytes()
    assert png.startswith(b"\x89PNG") and b"Software" not in png
    rows = reproduction.headline(reproduction.load([runs_dir]))
    fig = reproduction.verdicts_figure(rows)
    left, right = fig.axes
    labels = [t.get_text() for t in left.get_yticklabels()]
    assert labels[:2] == [
        "laplace phi, 8000 steps",
        "beam u, 5000 steps",
    ]
    assert "paper profile" in labels  # the section's heading names the profile
    for ax, cis in ((left, [h.lnn for h in rows]), (right, [h.matched for h in rows])):
        points = [line for line in ax.get_lines() if line.get_gid() == "ratio"]
        drawn = [ci for ci in cis if ci is not None]
        assert len(points) == len(drawn)
        assert [to_hex(p.get_markeredgecolor()) for p in points] == [
            COLOURS[kind(ci.verdict)].lower() for ci in drawn
        ]
    assert [ax.get_title() for ax in fig.axes] == ["lnn / pinn", "pinn-matched / pinn"]


def test_missing_rows(runs_dir):
    md = _render(runs_dir)
    missing = md.split("\n## Missing\n")[1]
    assert "| laplace | `rba` (0/3), `xpinn` (0/3) |" in missing
    assert (
        "| beam | `lnn` (2/3), `pinn-matched` (0/3), `rba` (0/3), `xpinn` (0/3) |"
        in missing
    )
    assert "| heat | `lnn` (0/3), `pinn` (0/3), `pinn-matched` (0/3)," in missing
    runs = reproduction.load([runs_dir])
    assert reproduction.missing(runs)["laplace"] == {"rba": 0, "xpinn": 0}


@pytest.mark.registered
def test_a_registered_case_of_yours_is_never_a_missing_row(runs_dir):
    """Issue 67: a case registered without a study (tests/registered_case.py) is
    of yours: its own study, no paper columns, never a row of the paper's
    Missing section."""
    name = registered_case.NAME
    for method, errs in LAPLACE.items():
        for seed, rmse in zip(SEEDS, errs):
            _write(runs_dir, name, method, seed, rmse, metrics={"u": _metrics(rmse)})
    md = _render(runs_dir)
    missing = md.split("\n## Missing\n")[1]
    assert "| laplace |" in missing and escape(name) not in missing
    section = md.split(f"\n## {escape(name)}\n")[1].split("\n## ")[0]
    assert "paper RMSE" not in section and "Verdicts against `pinn`." in section
    runs = reproduction.load([runs_dir])
    assert name not in reproduction.missing(runs)
    mine = [r for r in runs if r["case"] == name]
    assert pooled_verdicts.study_of(name, mine) == "yours"


def test_deterministic_and_duplicates(runs_dir, tmp_path):
    runs = reproduction.load([runs_dir])
    md = reproduction.render(runs, [runs_dir])
    assert reproduction.render(runs[::-1], [runs_dir]) == md  # order-free
    a = reproduction.build_report([runs_dir], tmp_path / "a" / "REPRODUCTION.md")
    b = reproduction.build_report([runs_dir], tmp_path / "b" / "REPRODUCTION.md")
    assert a.read_bytes() == b.read_bytes() == md.encode()
    # a folder given twice counts once; a copied run is listed, not pooled
    twice = reproduction.load([runs_dir, runs_dir])
    assert reproduction.render(twice, ["R"]) == reproduction.render(runs, ["R"])
    copy = tmp_path / "copy"
    _write(copy, "laplace", "lnn", SEEDS[0], 1.0)
    both = reproduction.render(reproduction.load([runs_dir, copy]), [runs_dir, copy])
    assert _row(both, "laplace", 1, "phi", "lnn")[4] == "2.333e-03 ± 1.5e-03"
    assert "## Duplicates" in both and f"`{copy.as_posix()}/laplace/lnn/" in both


@pytest.mark.parametrize(
    "text, problem",
    [
        ("{not json", "unreadable"),
        ("[1, 2]", "not a JSON object"),
        ('{"case": "laplace"}', "missing method, profile"),
    ],
)
def test_malformed_record_names_the_file(runs_dir, text, problem):
    bad = runs_dir / "laplace" / "lnn" / "bad"
    bad.mkdir()
    (bad / "metrics.json").write_text(text)
    with pytest.raises(FolderError, match=problem) as err:
        reproduction.load([runs_dir])
    assert str(bad / "metrics.json") in str(err.value)


@pytest.mark.parametrize(
    "value, problem",
    [
        (float("nan"), "NaN is not a finite number"),  # Python's json writes NaN
        (-1.0, "RMSE must be a finite number >= 0"),
    ],
)
def test_bad_metric_value_is_refused(runs_dir, value, problem):
    path = next(runs_dir.rglob("metrics.json"))
    rec = json.loads(path.read_text())
    rec["metrics"][next(iter(rec["metrics"]))]["RMSE"] = value
    path.write_text(json.dumps(rec))
    with pytest.raises(FolderError, match=problem) as err:
        reproduction.load([runs_dir])
    assert str(path) in str(err.value)


@pytest.mark.slow
def test_cli_writes_report_and_figures(runs_dir, tmp_path):
    out = tmp_path / "X" / "REPRODUCTION.md"
    argv = [sys.executable, "-m", "deepxde_lnn.cli", "report", str(runs_dir)]
    proc = subprocess.run([*argv, "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    md = out.read_text()
    assert md.startswith("# Reproduction report\n\nGenerated by `deepxde-lnn report`")
    for case in ("laplace", "beam"):
        for name in (f"{case}.png", f"{case}{reproduction.COST_SUFFIX}"):
            assert f"](REPRODUCTION/{name})" in md
            png = (tmp_path / "X" / "REPRODUCTION" / name).read_bytes()
            assert png.startswith(b"\x89PNG") and b"Software" not in png
    assert not list(tmp_path.rglob("*.tmp"))


def test_the_cost_figure_rings_the_pareto_front():
    plt = plt_module()
    fig, ax = plt.subplots()
    points = {
        "lnn": [(10.0, 1e-3, 1), (1.0, 1e-2, 2)],  # both on the front
        "pinn": [(10.0, 1e-2, 1), (0.5, 1e-1, 2)],  # beaten; cheapest: on it
    }
    colours = {"lnn": "C0", "pinn": "C1"}
    reproduction._cost_panel(ax, "u", points, colours)
    rings = np.vstack([c.get_offsets() for c in ax.collections])
    assert sorted(map(tuple, rings.tolist())) == [
        (0.5, 0.1),
        (1.0, 0.01),
        (10.0, 0.001),
    ]
    line = ax.lines[0].get_xydata().tolist()  # a method's groups joined by cost
    assert line == [[1.0, 0.01], [10.0, 0.001]]
    plt.close(fig)


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope"], "nope: no such folder"),
        (["empty"], "no finished runs"),
        (["runs", "--out", "R.txt"], "must be a .md file"),
        (["runs", "--out", "runs"], "must be a .md file"),
    ],
)
def test_cli_bad_paths_exit_2(runs_dir, tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    before = sorted(tmp_path.rglob("*"))
    argv = ["report", *args] + ([] if "--out" in args else ["--out", "o/R.md"])
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]
    assert sorted(tmp_path.rglob("*")) == before  # nothing written


def test_raw_and_scaled_lbfgs_records_are_never_pooled():
    Group = reproduction.Group
    base = {"profile": "accurate", "iterations": 2000, "lr": 1e-3}
    base.update(dtype="float64", lbfgs=3000)
    raw, scaled = Group.of(base), Group.of({**base, "lbfgs_loss_scale": 1e4})
    assert raw != scaled and "+ at most 3000 L-BFGS on the raw loss," in raw.label()
    assert "raw" not in scaled.label() and "+ at most 3000 L-BFGS," in scaled.label()
    assert Group.of({**base, "lbfgs": 0}).lbfgs_loss == ""


def test_mixed_hardware_names_the_device_of_each_step_time(runs_dir):
    assert _row(_render(runs_dir), "laplace", 1, "phi", "lnn")[3] == "0.002"
    for seed in SEEDS:  # rba on a GPU, beside the CPU runs of the same protocol
        _write(runs_dir, "laplace", "rba", seed, 3e-3, device="cuda")
    md = _render(runs_dir)
    assert _row(md, "laplace", 1, "phi", "rba")[3] == "0.001 (cuda)"
    assert _row(md, "laplace", 1, "phi", "lnn")[3] == "0.002 (cpu)"
    assert "hardware: Test CPU (cpu); Test CPU (cuda);" in md


def test_one_seed_gets_a_ratio_but_no_interval(runs_dir):
    _write(runs_dir, "laplace", "xpinn", SEEDS[0], 4e-3)
    row = _row(_render(runs_dir), "laplace", 1, "phi", "xpinn")
    ratio = 4e-3 / stats.gmean(LAPLACE["pinn"])  # unpaired: one seed
    assert row[1] == "1" and row[8] == f"{ratio:.3g} (no interval)"
    assert row[9] == "undecided (one seed: no spread yet)"


def test_welch_is_marked_where_fewer_than_two_seeds_are_common(runs_dir):
    for seed, rmse in ((777, 1e-3), (778, 3e-3)):  # seeds pinn never ran
        _write(runs_dir, "beam", "rba", seed, rmse)
    row = _row(_render(runs_dir), "beam", 1, "u", "rba")
    assert row[8].endswith(", Welch)")


def _verdict_rows(md, case, group, field):
    section = md.split(f"\n## {case}\n")[1].split(f"\n### [{group}] ")[1]
    return section.split(f"\n#### {field}\n")[1].split("\n\n####")[0]


def test_holm_within_a_table_shows_raw_and_adjusted(runs_dir):
    """Three more methods: one clearly better, one undecided, one barely better
    at 95 % (p ~ 0.04), which Holm over the table's 5 verdicts undoes."""
    pinn = LAPLACE["pinn"]
    for method, logs in (
        ("rba", (-2.0, -2.1, -1.9)),
        ("xpinn", (1.0, -1.0, 0.3)),
        ("ra-gated", (-0.4, -0.25, -0.55)),
    ):
        for seed, p, x in zip(SEEDS, pinn, logs):
            _write(runs_dir, "laplace", method, seed, p * np.exp(x))
    md = _render(runs_dir)
    assert "5 verdicts in this table." in _verdict_rows(md, "laplace", 1, "phi")
    assert _row(md, "laplace", 1, "phi", "rba")[9] == "better"
    assert _row(md, "laplace", 1, "phi", "xpinn")[9].startswith("undecided (~")
    assert _row(md, "laplace", 1, "phi", "ra-gated")[9] == "better (Holm: undecided)"
    wide = reproduction.render(reproduction.load([runs_dir]), [runs_dir], margin=3)
    assert "'equivalent within ×3' when it lies inside [1/3, 3]" in wide


def test_a_sequential_design_widens_its_intervals(runs_dir):
    plain = _row(_render(runs_dir), "laplace", 1, "phi", "lnn")
    design = Design(first=3, batch=3, max_seeds=15)  # 5 looks: each at 99 %
    write_design(runs_dir / "laplace", design)
    lnn = _row(_render(runs_dir), "laplace", 1, "phi", "lnn")
    d = np.log(LAPLACE["lnn"]) - np.log(LAPLACE["pinn"])
    half = stats.t.ppf(1 - 0.05 / 5 / 2, 2) * d.std(ddof=1) / np.sqrt(3)
    low, high = np.exp([d.mean() - half, d.mean() + half])
    assert lnn[8].endswith(f"({low:.3g}–{high:.3g})") and lnn[8] != plain[8]


def test_records_of_another_lr_schedule_are_never_pooled(runs_dir):
    """Quick runs with a cosine decay, quick runs at constant lr, and an older
    record whose schedule only its optimizer text names: three configurations."""
    adam = "Adam(betas=(0.9, 0.999), eps=1e-08, weight_decay=0)"
    for seed in SEEDS:
        _write(runs_dir, "laplace", "rba", seed, 4e-3, profile="quick",
               iterations=100, decay=["cosine", 100, 1e-05])  # fmt: skip
        _write(runs_dir, "laplace", "rba", seed, 4e-3, profile="quick",
               iterations=100, optimizer=f"{adam}, lr decay ('step', 50, 0.5), "
               "final iterate")  # fmt: skip
    md = _render(runs_dir)
    for k, lr in ((3, "lr 0.001"), (4, "lr 0.001 with decay (cosine, 100, 1e-05)"),
                  (5, "lr 0.001 with decay (step, 50, 0.5)")):  # fmt: skip
        assert f"### [{k}] profile `quick`, 100 steps, {lr}, float32" in md
        assert _row(md, "laplace", k, "phi", "rba")[1] == "3"


def test_committed_report_is_rebuilt_from_the_committed_records(monkeypatch):
    """docs/REPRODUCTION.md is exactly what `deepxde-lnn report docs/results`
    writes from the records in docs/results (no hand edits, no stale tables)."""
    repo = Path(__file__).resolve().parents[1]
    committed = repo / "docs" / "REPRODUCTION.md"
    if not committed.exists():  # an installed copy of the tests without docs
        pytest.skip("docs/REPRODUCTION.md is not beside the tests")
    monkeypatch.chdir(repo)
    roots = ["docs/results"]
    text = reproduction.render(reproduction.load(roots), roots)
    assert text == committed.read_text(encoding="utf-8")


# ---------------------------------------------------------------- the README


def _write_main_comparison(root) -> None:
    """Records of every run of the main comparison (`make demo`), lnn ahead of pinn."""
    for cfg in readme.main_comparison_configs():
        rmse = (2e-3 if cfg.method == "lnn" else 4e-3) * (1 + cfg.seed % 3)
        over = {k: v for k, v in cfg.identity().items() if k in ("profile", "decay")}
        over.update(iterations=cfg.iterations, lr=cfg.lr)
        _write(root, cfg.case, cfg.method, cfg.seed, rmse, grid_points=9, **over)


STALE_README = """# title

<!-- BEGIN generated: main-job (rebuild: make docs) -->
stale output
<!-- END generated: main-job -->

text between

<!-- BEGIN generated: answer -->
<!-- END generated: answer -->
tail
"""


def test_readme_blocks_are_rebuilt_from_the_records(runs_dir, tmp_path):
    _write_main_comparison(runs_dir)
    runs = reproduction.load([runs_dir])
    text = readme.fill(STALE_README, readme.blocks(runs))
    assert "stale output" not in text
    assert text.startswith("# title\n\n<!-- BEGIN generated: main-job (rebuild")
    assert "<!-- END generated: main-job -->\n\ntext between\n\n" in text
    assert text.endswith("<!-- END generated: answer -->\ntail\n")
    main = text.split("main-job (rebuild: make docs) -->\n")[1].split("<!-- END")[0]
    # what compare prints: its summary, over every seed of the main comparison
    assert main.startswith("```text\n# laplace: lnn vs pinn\n")
    assert "- phi RMSE: lnn/pinn error ratio 0.5 (95% CI 0.5–0.5, n=8/8" in main
    (job,) = {p.parent for p in runs_dir.glob("laplace/*/lnn")}  # its root
    assert f"`{job.as_posix()}/`" in main
    said = text.split("generated: answer -->\n")[1].split("<!-- END")[0]
    assert said == answer.answer(pooled_verdicts.pooled_verdicts(runs))
    assert said == "No study-level verdict yet.\n"  # one case: nothing to pool
    assert readme.fill(text, readme.blocks(runs)) == text  # a rebuild is stable


@pytest.mark.parametrize(
    "text, error",
    [
        ("no blocks\n", "needs one generated block 'answer' (<!-- BEGIN"),
        (STALE_README + STALE_README, "needs one generated block 'answer'"),
        (
            STALE_README
            + "<!-- BEGIN generated: other -->\n<!-- END generated: other -->\n",
            "has an unknown block 'other'",
        ),
    ],
)
def test_readme_blocks_are_checked(text, error):
    with pytest.raises(ValueError, match=re.escape(f"readme: X {error}")):
        readme.fill(text, {"main-job": "a\n", "answer": "b\n"}, name="X")


def test_report_rewrites_the_readme_or_writes_nothing(runs_dir, tmp_path, capsys):
    page, out = tmp_path / "README.md", tmp_path / "out" / "R.md"
    page.write_text(STALE_README)
    argv = ["report", str(runs_dir), "--out", str(out), "--readme", str(page)]
    assert cli.main(argv) == 2  # no record of the main comparison: nothing written
    err = capsys.readouterr().err
    assert err.startswith(
        "error: readme: no record of the main comparison's run laplace"
    )
    assert page.read_text() == STALE_README and not out.exists()
    _write_main_comparison(runs_dir)
    assert cli.main(argv) == 0
    assert "stale output" not in page.read_text() and out.exists()
    page.write_text("no blocks\n")
    out.unlink()
    assert cli.main(argv) == 2
    assert "error: readme: " in capsys.readouterr().err and not out.exists()


def test_committed_readme_is_rebuilt_from_the_committed_records(monkeypatch):
    """README.md's generated blocks (the main comparison's output, the answer) are what `deepxde-lnn report docs/results --readme README.md` writes."""
    repo = Path(__file__).resolve().parents[1]
    if not (repo / "docs" / "results").is_dir():
        pytest.skip("docs/results is not beside the tests")
    monkeypatch.chdir(repo)
    committed = Path("README.md").read_text(encoding="utf-8")
    assert readme.rebuild("README.md", ["docs/results"]) == committed


# ---------------------------------------------------------------- no torch


def _modules_after(code: str, tmp_path) -> list[str]:
    """Which of torch and DeepXDE a fresh interpreter holds after ``code``."""
    repo = Path(__file__).resolve().parents[1]
    probe = "\nimport sys\nprint([m for m in ('torch', 'deepxde') if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code + probe, str(tmp_path / "R.md")],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return eval(out.stdout.strip().splitlines()[-1])  # the probe's list


@pytest.mark.slow
def test_package_and_case_catalog_import_no_torch(tmp_path):
    code = (
        "import deepxde_lnn, os\n"
        "from deepxde_lnn.study import catalog\n"
        "assert catalog.info('laplace').profile('quick').n_seeds == 8\n"
        "assert os.environ['DDE_BACKEND'] == 'pytorch'"
    )
    assert _modules_after(code, tmp_path) == []


@pytest.mark.slow
def test_the_report_and_readme_are_rendered_without_torch_or_deepxde(tmp_path):
    """``make docs``'s report, in place over the committed one (a report of
    ours is replaced), byte for byte as committed, figures included, and the
    README's generated blocks as committed; neither it nor the API's report
    imports torch or DeepXDE."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    if not (docs / "results").is_dir():
        pytest.skip("docs/results is not beside the tests")
    (tmp_path / "docs").mkdir()
    committed = tmp_path / "docs" / "REPRODUCTION.md"
    shutil.copy2(docs / "REPRODUCTION.md", committed)
    shutil.copytree(docs / "REPRODUCTION", tmp_path / "docs" / "REPRODUCTION")
    code = (
        "import shutil, sys, deepxde_lnn\n"
        "from pathlib import Path\n"
        "from deepxde_lnn import cli\n"
        f"out = Path({str(committed)!r})\n"
        "page = str(shutil.copy('README.md', out.with_name('README.md')))\n"
        "argv = ['report', 'docs/results', '--out', str(out), '--readme', page]\n"
        "assert cli.main(argv) == 0\n"
        "assert Path(page).read_text() == Path('README.md').read_text()\n"
        "small = ['docs/results/compare-laplace-quick']\n"
        "deepxde_lnn.report(small, out=Path(sys.argv[1]))"
    )
    assert _modules_after(code, tmp_path) == []
    assert committed.read_bytes() == (docs / "REPRODUCTION.md").read_bytes()
    figures = sorted(p.name for p in (tmp_path / "docs" / "REPRODUCTION").iterdir())
    assert figures == sorted(p.name for p in (docs / "REPRODUCTION").iterdir())


def test_an_ablation_among_the_folders_gets_its_table(tmp_path):
    """An ablate folder (ROOT/steps, ROOT/time) among the records: the report
    carries its table, rebuilt from the records, variants against pinn."""
    for method, errs in (("lnn", LAPLACE["lnn"]), ("pinn", LAPLACE["pinn"])):
        for seed, rmse in zip(SEEDS, errs):
            _write(tmp_path / "written", "laplace", method, seed, rmse)
    for path in (tmp_path / "written").rglob("metrics.json"):  # as ablate reads
        rec = json.loads(path.read_text())
        rec.update(grid_points=9, final_loss={"total": 1e-6})
        path.write_text(json.dumps(rec))
    root = tmp_path / "runs"
    (root / "ablate-laplace").mkdir(parents=True)
    (tmp_path / "written" / "laplace").rename(root / "ablate-laplace" / "steps")
    assert "## Ablations" not in _render(root)  # a compare's steps/, not ablate's
    (root / "ablate-laplace" / "ablation.md").write_text("not read")
    md = _render(root)
    section = md.split("\n## Ablations\n")[1]
    assert "### Ablation: laplace (`ablate-laplace`)" in section
    assert "#### phi" in section
    assert "| `lnn` |" in section and "baseline" in section
    assert "## Ablations" not in _render(_plain_runs(tmp_path))


def _plain_runs(tmp_path):
    root = tmp_path / "plain"
    for seed, rmse in zip(SEEDS, LAPLACE["lnn"]):
        _write(root, "laplace", "lnn", seed, rmse)
    return root


def test_a_report_of_your_own_folder_speaks_of_your_problem(tmp_path):
    # issue 52, item 5: no paper columns, your baseline, no paper "Missing"
    from helpers import write_record

    problem = {"problem": "sha256:" + "ab" * 32, "profile": "script",
               "iterations": None, "lr": None, "budget": "script",
               "fields": ["u"], "steps": 200}  # fmt: skip
    for seed, (a, b) in enumerate([(0.01, 0.02), (0.011, 0.019), (0.012, 0.025)]):
        for method, rmse in (("lnn", a), ("fnn", b)):
            write_record(tmp_path, method, seed, rmse, case="mine", **problem,
                         metrics={"u": {"RMSE": rmse, "MSE": rmse**2, "MAE": rmse,
                                        "relL2": rmse, "MaxErr": rmse}})  # fmt: skip
    text = reproduction.render(reproduction.load([tmp_path]), [str(tmp_path)])
    assert "### [1] trained by your function (its own steps" in text
    assert "Verdicts against `fnn`." in text
    assert "| RMSE / fnn (95 % CI) | verdict | P(< fnn) (95 % CI) |" in text
    assert "paper RMSE" not in text and "## Missing" not in text
    assert "None steps" not in text and "lr yours" not in text
    (lnn,) = [line for line in text.splitlines() if line.startswith("| `lnn`")]
    assert "| better |" in lnn
    groups = reproduction.by_case(
        reproduction.prepare(reproduction.load([tmp_path]))[0]
    )
    fig = reproduction.case_figure("mine", groups["mine"])
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["seed", "geometric mean"]  # no paper star to name


def test_a_report_of_several_of_your_problems_pools_them(tmp_path, capsys):
    """Issue 64, item 4: several of a user's own compares in one folder give the
    study-level verdict over their problems, in Python and on the command line;
    a problem where the baseline did not converge is listed apart."""
    from helpers import write_record

    import deepxde_lnn

    def problem(name: str, digits: str) -> dict:
        return {"case": name, "problem": "sha256:" + digits * 32,
                "profile": "script", "iterations": None, "lr": None,
                "budget": "script", "fields": ["u"], "steps": 200}  # fmt: skip

    gains = {"p1": 0.5, "p2": 0.6, "p3": 0.45, "p4": 0.55}
    for k, (name, gain) in enumerate(gains.items()):
        for seed in range(4):
            for method, rmse in (("lnn", 0.01 * gain), ("fnn", 0.01)):
                rmse *= 1 + 0.05 * ((seed * 7 + k) % 3)
                write_record(tmp_path / name, method, seed, rmse,
                             **problem(name, f"{k + 1:02d}"),
                             metrics={"u": {"RMSE": rmse, "MSE": rmse**2, "MAE": rmse,
                                            "relL2": rmse, "MaxErr": rmse}})  # fmt: skip
    for seed in range(4):  # a problem where fnn did not converge
        for method, rmse in (("lnn", 0.3), ("fnn", 0.9 + seed / 100)):
            write_record(tmp_path / "p5", method, seed, rmse, **problem("p5", "ee"),
                         metrics={"u": {"RMSE": rmse, "MSE": rmse**2, "MAE": rmse,
                                        "relL2": rmse, "MaxErr": rmse}})  # fmt: skip
    res = deepxde_lnn.report(tmp_path, out=tmp_path / "out" / "R.md")
    (mine,) = res.verdicts
    assert (mine.study, mine.pooled.a, mine.pooled.b) == ("yours", "lnn", "fnn")
    assert sorted(mine.pooled.problems) == ["p1", "p2", "p3", "p4"]
    assert mine.pooled.excluded == {"p5": "fnn did not converge"}
    assert mine.pooled.verdict == "better"
    assert mine.text().startswith("your problems, profile quick: lnn/fnn over 4 ")
    assert "## The answer over problems" in res.out.read_text()
    assert (
        cli.main(["report", str(tmp_path), "--out", str(tmp_path / "o2" / "R.md")]) == 0
    )
    assert mine.text() in capsys.readouterr().out


def test_pinnacles_problems_have_their_own_headline_family_and_figure(
    runs_dir, tmp_path
):
    """Issue 53: PINNacle's rows (on the pooled error where there are several
    fields) are a family of their own, with their own figure; never Missing."""
    ns = ("u", "v", "p")
    table = {
        "lnn": (1e-2, 2e-2, 3e-2),
        "pinn": (2e-2, 3e-2, 5e-2),
        "pinn-matched": (2e-2, 3e-2, 4e-2),
    }
    for method, errs in table.items():
        for seed, rmse in zip(SEEDS, errs):
            _write(
                runs_dir,
                "ns2d_lid_driven",
                method,
                seed,
                rmse,
                profile="quick",
                iterations=3000,
                metrics={f: _metrics(rmse) for f in (*ns, "Avg")},
                extra_metrics={"joint": _metrics(rmse / 2)},
            )
    md = _render(runs_dir)
    paper = md.split("## Headline\n")[1].split("\n## ")[0]
    pinnacle = md.split("\n## PINNacle\n")[1].split("\n## ")[0]
    assert "ns2d_lid_driven" not in paper and "| laplace |" in paper
    assert "The table's 2 verdicts are their own family" in pinnacle
    (row,) = [line for line in pinnacle.splitlines() if line.startswith("| ns2d")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "joint" and cells[3] == "3 / 3"
    assert "ns2d_lid_driven" not in md.split("## Missing")[1]
    for method in (
        "lnn",
        "pinn",
    ):  # both fail (relL2 = 10 RMSE = 1): the figure says so
        for seed in SEEDS:
            bad = {"u": _metrics(0.1)}
            _write(runs_dir, "wave1d", method, seed, 0.1, profile="quick", metrics=bad)
    rows = reproduction.headline(reproduction.load([runs_dir]), study="pinnacle")
    fig = reproduction.verdicts_figure(rows)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    noted = {
        label.split()[0]: label.endswith("(neither converged)") for label in labels
    }
    assert noted["wave1d"] and not noted["ns2d_lid_driven"]
    out = reproduction.build_report([runs_dir], tmp_path / "R.md")
    assert (tmp_path / "R" / "_pinnacle_verdicts.png").is_file()
    assert "](R/_pinnacle_verdicts.png)" in out.read_text()


def test_pinn_alone_at_pinnacles_strong_profile_is_set_beside_theirs(runs_dir):
    """Our `pinn` at PINNacle's strong CPU profile is set beside PINNacle's own
    number (on the pooled error) even before `lnn` has run there."""
    ns = ("u", "v", "p")
    for profile, methods, joint in (
        ("quick", ("lnn", "pinn"), 0.3),
        ("accurate", ("pinn",), 0.004),
    ):
        for method in methods:
            for seed in SEEDS[:2]:
                _write(
                    runs_dir,
                    "ns2d_lid_driven",
                    method,
                    seed,
                    joint / 10,
                    profile=profile,
                    iterations=3000,
                    metrics={f: _metrics(1.0) for f in (*ns, "Avg")},
                    extra_metrics={"joint": _metrics(joint / 10)},
                )
    md = _render(runs_dir)
    table = md.split("## PINNacle's published errors beside ours\n")[1]
    (row,) = [line for line in table.splitlines() if line.startswith("| ns2d")]
    # relL2 is 10 x RMSE in these records: 0.3 at quick, 0.004 at accurate
    assert row.startswith("| ns2d_lid_driven | NS 2d-C | 0.3 (2) | 0.047 ± 0.00112 |")
    assert row.endswith("| 0.004 (2) | yes |")


def test_an_alternative_that_rescues_a_single_problem_is_named(runs_dir):
    """Where neither network converged on the one problem a study ran the
    alternatives on (nothing to pool), the answer still names the alternative
    that converged there, and the one that did not."""
    for method, rmse in (("lnn", 0.1), ("pinn", 0.1), ("fourier", 1e-3),
                         ("laaf", 0.1)):  # fmt: skip
        for i, seed in enumerate(SEEDS):  # relL2 = 10 × RMSE: 1 fails, 0.01 not
            err = rmse * (1 + i / 50)
            _write(runs_dir, "heat2d_multiscale", method, seed, err, profile="quick",
                   iterations=3000, metrics={"u": _metrics(err)})  # fmt: skip
    said = answer.answer(pooled_verdicts.pooled_verdicts(reproduction.load([runs_dir])))
    assert "| error ratio |" not in said  # one problem: no pooled row
    assert said.endswith(
        "On PINNacle's problems under short training, `laaf` did not converge on "
        "heat2d_multiscale; where neither `lnn` nor `pinn` converged, `fourier` "
        "converged on heat2d_multiscale.\n"
    )
