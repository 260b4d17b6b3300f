"""Tables and figures built from result folders (never from live runs).

* :func:`run_figures` — one run folder: exact / prediction / |error| maps per field
  and the loss history;
* :func:`summarize` — a folder of runs (``METHOD/seed-S/``): ``summary.csv`` and
  ``summary.md`` with mean ± std (and median, min, max) over seeds per method and
  field, the paper-seed run as its own row, the paper's number beside it, and one
  combined figure.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np

from . import atomic as aio
from .folder import RunFolder, record_decay
from .metrics import METRICS, summary_field
from .sequential import looks_of
from .stats import LEVEL, MARGIN, RatioCI, holm, ratio_ci

__all__ = ["run_figures", "summarize", "load_runs", "sweep_table", "verdicts"]


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _image(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Grid values (masked points only) back to an image, NaN outside the mask.
    Grid order is ``meshgrid(indexing="ij")``: transpose so axis 0 is horizontal."""
    img = np.full(mask.shape, np.nan)
    img[mask] = values
    return img.T


def _load_fields(run: Path):
    with np.load(run / "fields.npz") as f:
        return {k: f[k] for k in f.files}


def load_loss(run: Path) -> tuple[list[str], np.ndarray]:
    with open(run / "loss.csv") as f:
        header = f.readline().strip().split(",")
    table = np.loadtxt(run / "loss.csv", delimiter=",", skiprows=1, ndmin=2)
    return header, table


def run_figures(run: str | Path) -> list[Path]:
    """Write ``fields.png`` (2-D inputs) and ``loss.png`` into a run folder."""
    plt = _plt()
    run = Path(run)
    meta = json.loads((run / "metrics.json").read_text())
    written = []
    f = _load_fields(run)
    names = [str(n) for n in f["fields"]]
    if f["axes"].shape[0] == 2:
        ext = [f["axes"][0][0], f["axes"][0][-1], f["axes"][1][0], f["axes"][1][-1]]
        fig, axs = plt.subplots(
            len(names), 3, figsize=(12, 3.4 * len(names)), squeeze=False
        )
        for i, name in enumerate(names):
            panels = [
                (f["exact"][:, i], f"exact {name}", "viridis"),
                (f["pred"][:, i], f"{meta['method']} prediction", "viridis"),
                (
                    f["abs_error"][:, i],
                    f"|error| (max {f['abs_error'][:, i].max():.2e})",
                    "magma",
                ),
            ]
            # exact and prediction share one colour scale so they can be compared
            lim = (f["exact"][:, i].min(), f["exact"][:, i].max())
            for j, (ax, (v, title, cmap)) in enumerate(zip(axs[i], panels)):
                vmin, vmax = lim if j < 2 else (None, None)
                im = ax.imshow(
                    _image(v, f["mask"]),
                    origin="lower",
                    extent=ext,
                    cmap=cmap,
                    aspect="auto",
                    vmin=vmin,
                    vmax=vmax,
                )
                ax.set_title(title, fontsize=9)
                ax.set_xlabel(str(f["inputs"][0]))
                ax.set_ylabel(str(f["inputs"][1]))
                fig.colorbar(im, ax=ax)
        fig.suptitle(f"{meta['case']} — {meta['method']}, seed {meta['seed']}")
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))
        written.append(aio.save_figure(run / "fields.png", fig, dpi=110))
        plt.close(fig)
    header, table = load_loss(run)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for j, name in enumerate(header[1:], start=1):
        ax.semilogy(table[:, 0], table[:, j], lw=1.6 if j == 1 else 0.8, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    ax.set_title(f"{meta['case']} — {meta['method']} loss history")
    fig.tight_layout()
    written.append(aio.save_figure(run / "loss.png", fig, dpi=110))
    plt.close(fig)
    return written


def load_runs(root: str | Path) -> list[dict]:
    """Every finished run (a ``metrics.json``, read as JSON only) below ``root``,
    with its folder; a record that cannot be read is a ``FolderError`` naming it."""
    runs = []
    for path in sorted(Path(root).rglob("metrics.json")):
        rec = RunFolder(path.parent).read_record()
        rec["_dir"] = str(path.parent)
        runs.append(rec)
    return runs


def verdicts(
    runs: list[dict],
    fields,
    baseline: str = "pinn",
    metric: str = "RMSE",
    margin: float = MARGIN,
    looks: int = 1,
) -> list[tuple[str, str, RatioCI]]:
    """``(method, field, ratio CI)`` of every method against ``baseline``: the
    geometric-mean ``metric`` ratio over seeds (paired by seed when possible),
    judged with ``margin`` over a design of ``looks`` looks (:mod:`.stats`)."""
    methods = list(dict.fromkeys(r["method"] for r in runs))
    if baseline not in methods:
        return []
    out = []
    for m in methods:
        if m == baseline:
            continue
        for fld in fields:
            err = {
                k: {
                    r["seed"]: r["metrics"][fld][metric]
                    for r in runs
                    if r["method"] == k
                }
                for k in (m, baseline)
            }
            ci = ratio_ci(err[m], err[baseline], LEVEL, margin, looks)
            out.append((m, fld, ci))
    return out


def judged(cis: list[RatioCI | None]) -> list[str]:
    """Each verdict of one table (a family), with Holm's adjusted verdict where it
    differs, e.g. ``better (Holm: undecided)``; "—" for no comparison."""
    adjusted = holm(cis, LEVEL)
    out = []
    for ci, adj in zip(cis, adjusted):
        if ci is None:
            out.append("—")
            continue
        raw = ci.verdict_text()
        out.append(raw if adj == ci.verdict else f"{raw} (Holm: {adj})")
    return out


def verdict_lines(found, baseline: str = "pinn", metric: str = "RMSE") -> list[str]:
    """One line per verdict of ``found`` (one family), with Holm's adjusted
    verdict where it differs."""
    adjusted = holm([ci for _, _, ci in found], LEVEL)
    return [
        f"{fld} {metric}: {ci.describe(m, baseline)}"
        + ("" if adj == ci.verdict else f" (Holm over {len(found)}: {adj})")
        for (m, fld, ci), adj in zip(found, adjusted)
    ]


def metric_sets(record: dict) -> dict:
    """Every set of the five metrics in a run record: the fields, then extra sets
    (e.g. heat's absolute-T modes, ``name@grid`` for other evaluation grids)."""
    sets = dict(record["metrics"])
    for name, v in record.get("extra_metrics", {}).items():
        if isinstance(v, dict) and set(METRICS) <= set(v):
            sets[name] = v
    for label, per_field in record.get("extra_grid_metrics", {}).items():
        for fld, v in per_field.items():
            sets[f"{fld}@{label}"] = v
    return sets


def _stats(values) -> dict:
    v = np.asarray(values, float)
    return {
        "mean": float(v.mean()),
        "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
        "median": float(np.median(v)),
        "min": float(v.min()),
        "max": float(v.max()),
        "n": int(len(v)),
    }


def summarize(
    root: str | Path,
    paper_seed: int | None = None,
    paper_table: dict | None = None,
    margin: float = MARGIN,
) -> list[dict]:
    """Aggregate the runs below ``root`` into ``summary.csv``, ``summary.md`` and
    ``summary.png``; returns the csv rows. Verdicts use ``margin`` and the looks
    of a sequential design in ``root`` (:func:`deepxde_lnn.sequential.looks_of`)."""
    root = Path(root)
    runs = load_runs(root)
    if not runs:
        raise ValueError(f"no finished runs (metrics.json) below {root}")
    case = runs[0]["case"]
    methods = list(dict.fromkeys(r["method"] for r in runs))
    for r in runs:
        r["metrics"] = metric_sets(r)
    fields = list(runs[0]["metrics"])
    rows = []
    for m in methods:
        mine = sorted((r for r in runs if r["method"] == m), key=lambda r: r["seed"])
        for fld in fields:
            for metric in (*METRICS, "train_seconds"):
                vals = [
                    (
                        r["train_seconds"]
                        if metric == "train_seconds"
                        else r["metrics"][fld][metric]
                    )
                    for r in mine
                ]
                seed_run = [r for r in mine if r["seed"] == paper_seed]
                ref = (paper_table or {}).get(m, {})
                paper = (
                    ref.get("train_s")
                    if metric == "train_seconds"
                    else ref.get(fld, {}).get(metric)
                )
                rows.append(
                    {
                        "case": case,
                        "method": m,
                        "field": fld,
                        "metric": metric,
                        **_stats(vals),
                        "seeds": " ".join(str(r["seed"]) for r in mine),
                        "paper_seed_run": (
                            (
                                seed_run[0]["train_seconds"]
                                if metric == "train_seconds"
                                else seed_run[0]["metrics"][fld][metric]
                            )
                            if seed_run
                            else None
                        ),
                        "paper": paper,
                    }
                )
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    aio.atomic_write_text(root / "summary.csv", buf.getvalue())
    found = verdicts(runs, fields, margin=margin, looks=looks_of(root))
    aio.atomic_write_text(
        root / "summary.md", _markdown(runs, rows, methods, fields, paper_seed, found)
    )
    _summary_figure(root, runs, methods)
    return rows


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.3e}"


def verdict_rule(margin: float, looks: int = 1) -> str:
    """How the verdicts were reached, in one paragraph (summaries, tables)."""
    m = f"{margin:g}"
    text = (
        "Verdicts on the geometric-mean RMSE ratio to `pinn` over seeds, with a "
        f"{LEVEL:.0%} Student-t interval on log errors (paired over common seeds, "
        "otherwise Welch): 'better' / 'worse' when the whole interval lies below "
        f"/ above 1, 'equivalent within ×{m}' when it lies inside [1/{m}, {m}] "
        f"(margin ×{m}), otherwise 'undecided', with the seeds that would likely "
        "decide it at the observed spread."
    )
    if looks > 1:
        text += (
            f" Seeds were added until decided over {looks} looks: each interval "
            f"has level {1 - (1 - LEVEL) / looks:.4g} (Bonferroni over the looks)."
        )
    return text


def _markdown(runs, rows, methods, fields, paper_seed, found) -> str:
    r0 = runs[0]
    looks = found[0][2].looks if found else 1
    lines = [
        f"# {r0['case']}: " + " vs ".join(methods),
        "",
        f"Profile `{r0['profile']}`, {r0['iterations']} iterations, lr {r0['lr']:g}"
        + _schedule(r0)
        + f", {r0['dtype']}, device {r0['device']} ({r0.get('device_name', '')}). "
        "Mean ± sample std over seeds; metrics in float64 on "
        f"{r0['grid_points']} grid points. 'paper' = the paper's single-seed number "
        "(its own protocol, hardware and seed).",
        "",
        verdict_rule(found[0][2].margin if found else MARGIN, looks),
        "",
    ]
    get = {(r["method"], r["field"], r["metric"]): r for r in rows}
    for fld in fields:
        lines += [f"## {fld}", ""]
        head = "| method | seeds | " + " | ".join(METRICS) + " | train s |"
        lines += [head, "|" + "---|" * (len(METRICS) + 3)]
        for m in methods:
            cells = []
            for metric in (*METRICS, "train_seconds"):
                s = get[(m, fld, metric)]
                cells.append(f"{s['mean']:.3e} ± {s['std']:.1e}")
            lines.append(
                f"| {m} | {get[(m, fld, 'RMSE')]['n']} | " + " | ".join(cells) + " |"
            )
        for m in methods:
            s = get[(m, fld, "RMSE")]
            if s["paper_seed_run"] is not None:
                cells = [
                    _fmt(get[(m, fld, k)]["paper_seed_run"])
                    for k in (*METRICS, "train_seconds")
                ]
                lines.append(
                    f"| {m}, seed {paper_seed} | 1 | " + " | ".join(cells) + " |"
                )
        for m in methods:
            if get[(m, fld, "RMSE")]["paper"] is not None:
                cells = [
                    _fmt(get[(m, fld, k)]["paper"]) for k in (*METRICS, "train_seconds")
                ]
                lines.append(f"| {m}, paper | 1 | " + " | ".join(cells) + " |")
        lines.append("")
    if found:
        lines += [
            "## Verdict",
            "",
            *[f"- {line}" for line in verdict_lines(found)],
            "",
        ]
    return "\n".join(lines)


def _schedule(record: dict) -> str:
    decay = record_decay(record)
    return "" if decay is None else " with decay (" + ", ".join(map(str, decay)) + ")"


def _summary_figure(root: Path, runs, methods) -> None:
    plt = _plt()
    first = {
        m: min((r for r in runs if r["method"] == m), key=lambda r: r["seed"])
        for m in methods
    }
    f0 = _load_fields(Path(first[methods[0]]["_dir"]))
    two_d = f0["axes"].shape[0] == 2
    ncols = len(methods) + 1
    fig, axs = plt.subplots(1, ncols, figsize=(4.2 * ncols, 3.6), squeeze=False)
    axs = axs[0]
    for ax, m in zip(axs, methods):
        f = _load_fields(Path(first[m]["_dir"]))
        err = f["abs_error"].mean(axis=1)  # mean over fields
        if two_d:
            a = f["axes"]
            im = ax.imshow(
                _image(err, f["mask"]),
                origin="lower",
                cmap="magma",
                aspect="auto",
                extent=[a[0][0], a[0][-1], a[1][0], a[1][-1]],
            )
            fig.colorbar(im, ax=ax)
        ax.set_title(f"{m}: |error| (seed {first[m]['seed']})", fontsize=9)
    ax = axs[-1]
    for m in methods:
        curves = [load_loss(Path(r["_dir"]))[1] for r in runs if r["method"] == m]
        n = min(len(c) for c in curves)
        total = np.array([c[:n, 1] for c in curves])
        steps = curves[0][:n, 0]
        line = ax.semilogy(
            steps, np.exp(np.log(total).mean(0)), label=f"{m} (geo. mean)"
        )[0]
        ax.fill_between(
            steps, total.min(0), total.max(0), alpha=0.2, color=line.get_color()
        )
    ax.set_xlabel("step")
    ax.set_title("total loss, min–max over seeds", fontsize=9)
    ax.legend(fontsize=8)
    fig.suptitle(runs[0]["case"])
    fig.tight_layout()
    aio.save_figure(root / "summary.png", fig, dpi=110)
    plt.close(fig)


def sweep_table(root: str | Path, margin: float = MARGIN) -> str:
    """``sweep.md`` for a learning-rate sweep folder (``lr-X/METHOD/seed-S``): per lr
    and method, mean ± std over seeds of the final loss J and the first field's
    RMSE, relL2 and MaxErr (the 8-field average where there is one), and the
    verdict against ``pinn`` at the same lr (where the sweep ran it)."""
    root = Path(root)
    runs = load_runs(root)
    if not runs:
        raise ValueError(f"no finished runs below {root}")
    key = summary_field(list(runs[0]["metrics"]))
    lines = [
        f"# {runs[0]['case']}: learning-rate sweep ({key})",
        "",
        verdict_rule(margin),
        "",
        "| lr | method | seeds | J(final) | RMSE | relL2 | MaxErr | train s "
        "| RMSE / pinn (95 % CI) | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = {}
    for r in runs:
        groups.setdefault((r["lr"], r["method"]), []).append(r)
    for (lr, m), rs in sorted(groups.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
        cells = [
            [r["final_loss"]["total"] for r in rs],
            *[[r["metrics"][key][k] for r in rs] for k in ("RMSE", "relL2", "MaxErr")],
            [r["train_seconds"] for r in rs],
        ]
        txt = [f"{_stats(c)['mean']:.3e} ± {_stats(c)['std']:.1e}" for c in cells]
        txt += _versus(
            rs, groups.get((lr, "pinn")) if m != "pinn" else None, key, margin
        )
        lines.append(f"| {lr:g} | {m} | {len(rs)} | " + " | ".join(txt) + " |")
    text = "\n".join(lines) + "\n"
    aio.atomic_write_text(root / "sweep.md", text)
    sweep_figure(root, groups, key)
    return text


def _versus(runs, base, key: str, margin: float) -> list[str]:
    """The ratio cell and verdict of ``runs`` against ``base`` (None: "—")."""
    if not base:
        return ["—", "—"]
    rmse = [{r["seed"]: r["metrics"][key]["RMSE"] for r in rs} for rs in (runs, base)]
    ci = ratio_ci(*rmse, LEVEL, margin)
    return [f"{ci.ratio:.3g} ({ci.low:.3g}–{ci.high:.3g})", ci.verdict_text()]


def sweep_figure(root: Path, groups: dict, key: str) -> Path:
    """``sweep.png``: RMSE against the learning rate per method, mean ± std over
    seeds (log-log)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in dict.fromkeys(m for _, m in sorted(groups)):
        lrs = sorted(lr for lr, mm in groups if mm == m)
        vals = [[r["metrics"][key]["RMSE"] for r in groups[(lr, m)]] for lr in lrs]
        mean = np.array([np.mean(v) for v in vals])
        std = np.array([np.std(v, ddof=1) if len(v) > 1 else 0.0 for v in vals])
        ax.errorbar(lrs, mean, yerr=std, marker="o", capsize=3, label=m)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel(f"{key} RMSE (mean ± std over seeds)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = aio.save_figure(root / "sweep.png", fig, dpi=110)
    plt.close(fig)
    return path
