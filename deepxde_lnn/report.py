"""Tables and figures built from result folders (never from live runs).

* :func:`run_figures` — one run folder: exact / prediction / |error| maps per field
  and the loss history;
* :func:`summarize` — a folder of runs (``METHOD/seed-S/``): ``summary.csv`` and
  ``summary.md`` with mean ± std (and median, min, max) over seeds per method and
  field, the paper-seed run as its own row, the paper's number beside it, and one
  combined figure.

Records and artifacts are read as untrusted data (:mod:`deepxde_lnn.records`):
checked before use, every string escaped in the markdown.

Called as a function, ``deepxde_lnn.report(runs_dirs, out=...)`` builds the
reproduction report (:func:`deepxde_lnn.experiments.report`).
"""

from __future__ import annotations

import csv
import io
import sys
import types
import zipfile
from pathlib import Path

import numpy as np

from . import atomic as aio
from .errors import FolderError
from .folder import record_decay
from .metrics import METRICS, summary_field
from .names import lr_text
from .records import MAX_ARTIFACT_BYTES, check, escape, load_runs, metric_sets
from .records import read_bytes, read_record
from .sequential import looks_of
from .stats import LEVEL, MARGIN, RatioCI, holm, ratio_ci

__all__ = [
    "run_figures",
    "figure_names",
    "summarize",
    "load_runs",
    "one_case",
    "sweep_table",
    "verdicts",
]


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


def _load_fields(run: Path) -> dict:
    """``fields.npz`` of a run folder (arrays only, never pickles)."""
    path = run / "fields.npz"
    data = read_bytes(path, MAX_ARTIFACT_BYTES)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise FolderError(f"{path}: unreadable ({err})") from None


def load_loss(run: Path) -> tuple[list[str], np.ndarray]:
    """``loss.csv`` of a run folder: its header and its rows."""
    path = run / "loss.csv"
    data = read_bytes(path, MAX_ARTIFACT_BYTES)
    try:
        text = data.decode("utf-8")
        table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    except ValueError as err:  # bad UTF-8 or numbers
        raise FolderError(f"{path}: unreadable ({err})") from None
    return text.partition("\n")[0].strip().split(","), table


def figure_names(inputs: int) -> list[str]:
    """The figures :func:`run_figures` draws for a case with ``inputs`` inputs."""
    return (["fields.png"] if inputs == 2 else []) + ["loss.png"]


def run_figures(run: str | Path) -> list[Path]:
    """Write ``fields.png`` (2-D inputs) and ``loss.png`` into a run folder."""
    plt = _plt()
    run = Path(run)
    meta = check(read_record(run / "metrics.json"), run / "metrics.json", "run")
    written = []
    f = _load_fields(run)
    names = [str(n) for n in f["fields"]]
    if "fields.png" in figure_names(f["axes"].shape[0]):
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


def one_case(runs: list[dict], case: str | None = None) -> str:
    """The one case of ``runs`` (``case``, or the first run's); ``FolderError``
    naming a record of another case."""
    case = case or runs[0]["case"]
    for r in runs:
        if r["case"] != case:
            raise FolderError(
                f"{Path(r['_dir']) / 'metrics.json'}: a run of {r['case']} among "
                f"runs of {case}; a summary holds one case"
            )
    return case


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
        f"{escape(fld)} {metric}: {ci.describe(escape(m), escape(baseline))}"
        + ("" if adj == ci.verdict else f" (Holm over {len(found)}: {adj})")
        for (m, fld, ci), adj in zip(found, adjusted)
    ]


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
    baseline: str = "pinn",
    margin: float = MARGIN,
) -> list[dict]:
    """Aggregate the runs below ``root`` into ``summary.csv``, ``summary.md`` and
    ``summary.png``; returns the csv rows. Verdicts against the method
    ``baseline`` use ``margin`` and the looks of a sequential design in ``root``
    (:func:`deepxde_lnn.sequential.looks_of`)."""
    root = Path(root)
    runs = load_runs(root)
    if not runs:
        raise ValueError(f"no finished runs (metrics.json) below {root}")
    rows, text = summary(
        runs, paper_seed, paper_table, baseline, margin, looks_of(root)
    )
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    aio.atomic_write_text(root / "summary.csv", buf.getvalue())
    aio.atomic_write_text(root / "summary.md", text)
    _summary_figure(root, runs, list(dict.fromkeys(r["method"] for r in runs)))
    return rows


def summary(
    runs: list[dict],
    paper_seed: int | None = None,
    paper_table: dict | None = None,
    baseline: str = "pinn",
    margin: float = MARGIN,
    looks: int = 1,
) -> tuple[list[dict], str]:
    """The rows of ``summary.csv`` and the text of ``summary.md`` (verdicts
    against the method ``baseline`` with ``margin``, over a design of ``looks``
    looks) for run records (their ``metrics`` are extended by every metric set,
    :func:`metric_sets`)."""
    case = one_case(runs)
    methods = list(dict.fromkeys(r["method"] for r in runs))
    for r in runs:
        r["metrics"] = metric_sets(r)
    # extra sets (e.g. heat's FEM cross-check) only where every run has them
    fields = [f for f in runs[0]["metrics"] if all(f in r["metrics"] for r in runs)]
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
    found = verdicts(runs, fields, baseline, margin=margin, looks=looks)
    return rows, _markdown(runs, rows, methods, fields, paper_seed, found, baseline)


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.3e}"


def verdict_rule(margin: float, looks: int = 1, baseline: str = "pinn") -> str:
    """How the verdicts were reached, in one paragraph (summaries, tables)."""
    m = f"{margin:g}"
    text = (
        f"Verdicts on the geometric-mean RMSE ratio to `{escape(baseline)}` over "
        f"seeds, with a {LEVEL:.0%} Student-t interval on log errors (paired over "
        "common seeds, otherwise Welch): 'better' / 'worse' when the whole interval "
        f"lies below / above 1, 'equivalent within ×{m}' when it lies inside "
        f"[1/{m}, {m}] (margin ×{m}), otherwise 'undecided', with the seeds that "
        "would likely decide it at the observed spread."
    )
    if looks > 1:
        text += (
            f" Seeds were added until decided over {looks} looks: each interval "
            f"has level {1 - (1 - LEVEL) / looks:.4g} (Bonferroni over the looks)."
        )
    return text


def _markdown(runs, rows, methods, fields, paper_seed, found, baseline="pinn") -> str:
    r0 = {k: escape(v) if isinstance(v, str) else v for k, v in runs[0].items()}
    looks = found[0][2].looks if found else 1
    lines = [
        f"# {r0['case']}: " + " vs ".join(map(escape, methods)),
        "",
        f"Profile `{r0['profile']}`, {r0['iterations']} iterations, lr {r0['lr']:g}"
        + _schedule(r0)
        + f", {r0['dtype']}, device {r0['device']} ({r0.get('device_name', '')}). "
        "Mean ± sample std over seeds; metrics in float64 on "
        f"{r0['grid_points']} grid points. 'paper' = the paper's single-seed number "
        "(its own protocol, hardware and seed).",
        "",
        verdict_rule(found[0][2].margin if found else MARGIN, looks, baseline),
        "",
    ]
    get = {(r["method"], r["field"], r["metric"]): r for r in rows}
    for fld in fields:
        lines += [f"## {escape(fld)}", ""]
        head = "| method | seeds | " + " | ".join(METRICS) + " | train s |"
        lines += [head, "|" + "---|" * (len(METRICS) + 3)]
        for m in methods:
            cells = []
            for metric in (*METRICS, "train_seconds"):
                s = get[(m, fld, metric)]
                cells.append(f"{s['mean']:.3e} ± {s['std']:.1e}")
            lines.append(
                f"| {escape(m)} | {get[(m, fld, 'RMSE')]['n']} | "
                + " | ".join(cells)
                + " |"
            )
        for m in methods:
            s = get[(m, fld, "RMSE")]
            if s["paper_seed_run"] is not None:
                cells = [
                    _fmt(get[(m, fld, k)]["paper_seed_run"])
                    for k in (*METRICS, "train_seconds")
                ]
                lines.append(
                    f"| {escape(m)}, seed {paper_seed} | 1 | "
                    + " | ".join(cells)
                    + " |"
                )
        for m in methods:
            if get[(m, fld, "RMSE")]["paper"] is not None:
                cells = [
                    _fmt(get[(m, fld, k)]["paper"]) for k in (*METRICS, "train_seconds")
                ]
                lines.append(f"| {escape(m)}, paper | 1 | " + " | ".join(cells) + " |")
        lines.append("")
    if found:
        lines += [
            "## Verdict",
            "",
            *[f"- {line}" for line in verdict_lines(found, baseline)],
            "",
        ]
    return "\n".join(lines)


def _schedule(record: dict) -> str:
    decay = record_decay(record)
    return "" if decay is None else " with decay (" + ", ".join(map(str, decay)) + ")"


def _summary_figure(root: Path, runs, methods) -> None:
    plt = _plt()
    fig = summary_figure(runs, methods)
    aio.save_figure(root / "summary.png", fig, dpi=110)
    plt.close(fig)


def error_norm(errors: list[np.ndarray], decades: float = 6.0):
    """One logarithmic colour scale for several |error| maps, so that a map ten
    times worse is one decade brighter: from the largest value over all maps down
    to the 1st percentile of the positive ones (the few points where an error
    changes sign do not stretch it), at most ``decades`` below the top."""
    from matplotlib.colors import LogNorm

    values = np.concatenate([np.ravel(e) for e in errors])
    values = values[np.isfinite(values) & (values > 0)]
    if not values.size:
        return LogNorm(vmin=10**-decades, vmax=1.0)
    top = float(values.max())
    low = float(np.percentile(values, 1))
    return LogNorm(vmin=max(low, top * 10**-decades), vmax=top)


def summary_figure(runs, methods):
    """The first seed's |error| map per method (mean over fields, on one shared
    scale, :func:`error_norm`) and the loss histories over seeds."""
    plt = _plt()
    first = {
        m: min((r for r in runs if r["method"] == m), key=lambda r: r["seed"])
        for m in methods
    }
    fields = {m: _load_fields(Path(first[m]["_dir"])) for m in methods}
    # the mean over fields
    errors = {m: f["abs_error"].mean(axis=1) for m, f in fields.items()}
    norm = error_norm(list(errors.values()))
    ncols = len(methods) + 1
    fig, axs = plt.subplots(1, ncols, figsize=(4.2 * ncols, 3.6), squeeze=False)
    axs = axs[0]
    for ax, m in zip(axs, methods):
        f = fields[m]
        if f["axes"].shape[0] == 2:
            a = f["axes"]
            im = ax.imshow(
                _image(np.maximum(errors[m], norm.vmin), f["mask"]),
                origin="lower",
                cmap="magma",
                norm=norm,
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
    return fig


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
        f"# {escape(one_case(runs))}: learning-rate sweep ({escape(key)})",
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
        lines.append(
            f"| {lr_text(lr)} | {escape(m)} | {len(rs)} | " + " | ".join(txt) + " |"
        )
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


class _CallableModule(types.ModuleType):
    """This module, callable as ``deepxde_lnn.report(...)`` (the Python API's
    name for the reproduction report) while ``from deepxde_lnn import report``
    keeps giving the module."""

    def __call__(self, *args, **kwargs):
        from .experiments import report  # torch and DeepXDE only when called

        return report(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
