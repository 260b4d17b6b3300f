r"""The stored heat reference: convergence tables, figure, field and manifest.

:func:`write_reference` runs the convergence study and writes
``convergence.csv``, ``convergence.md``, ``convergence.png``, optionally
``heat_reference.npz`` (the finest T and θ on the heat case's grid) and
``manifest.json`` (SHA-256 of every file, parameters, versions).
:func:`load_reference` reads the field back after checking it against the
manifest; by default it reads the copy shipped as package data
(``deepxde_lnn.reference/circular_heat``).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.resources
import io
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import scipy
import skfem

from deepxde_lnn.runs.atomic import (
    atomic_write_text,
    save_figure,
    save_npz,
    sha256_file,
    writable_folder,
    write_json,
)
from deepxde_lnn.runs.csvtext import formula_safe
from deepxde_lnn.runs.errors import FolderError
from deepxde_lnn.runs.records import MAX_ARTIFACT_BYTES, npz_arrays, read_bytes

from .convergence import ConvergenceStudy, convergence_study
from .heat_problem import HEAT, HeatProblem, InvalidReferenceError, points_sha256
from .norms import probe_matrix

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

__all__ = ["load_reference", "write_reference"]

REFERENCE_PACKAGE = "deepxde_lnn.reference"
REFERENCE_NAME = "circular_heat"
FIELD_FILE = "heat_reference.npz"
FILES = ("convergence.csv", "convergence.md", "convergence.png", FIELD_FILE)
# the arrays of FIELD_FILE: name -> (dtype kinds, dimensions)
ARRAYS = {"T": ("f", 1), "theta": ("f", 1), "points_nd": ("f", 2)}
MANIFEST = "manifest.json"
GENERATOR = "deepxde_lnn.fem.write_reference"
FORMAT_VERSION = 1
# a reference must show convergence: at least two inter-level differences (so
# three levels) and their L² order near P1's 2
MIN_LEVELS = 3
MIN_L2_ORDER = 1.5
BOUNDARY_HANDLING = {
    "inter_level": (
        "nested prolongation along the refinement: vertices inherited from the "
        "coarse mesh keep their values, coarse-edge midpoints get the edge "
        "average; for boundary midpoints (projected onto r = R, outside the "
        "coarse polygon) this is the coarse solution at the radial clamp onto "
        "the coarse polygon (P1); P2 probes the coarse solution at the fine DOF "
        "locations radially clamped onto the coarse polygon"
    ),
    "sampling": (
        "points with r <= R(1 + 1e-9) outside the finest polygon are clamped "
        "radially onto it (distance <= R(1 - cos(pi/N_b)))"
    ),
}

# The paper's printed MATLAB PDE Toolbox study (quadratic meshes, Hmax_l =
# 0.015/2^(l-1)), shown next to ours for comparison; see docs/heat.md.
PAPER_MATLAB: dict[str, Any] = {
    "levels": [1, 2, 3, 4, 5, 6],
    "Hmax": [1.5e-2, 7.5e-3, 3.75e-3, 1.875e-3, 9.370e-4, 4.690e-4],
    "nodes": [1485, 6161, 24901, 92941, 365565, 1377045],
    "elements": [710, 3018, 12324, 46218, 182280, 687516],
    "diff_L2": [None, 2.2400e-4, 6.1744e-5, 1.4904e-5, 3.6877e-6, 9.3069e-7],
    "local_order_L2": [None, None, 1.859, 2.051, 2.015, 1.986],
    "slope_L2": 1.989,
    "slope_H1": 1.008,
}

CSV_COLUMNS = [
    "level",
    "nrefs",
    "element",
    "h",
    "nodes",
    "elements",
    "dofs",
    "diff_L2",
    "diff_H1",
    "order_diff_L2",
    "order_diff_H1",
    "err_L2",
    "err_H1",
    "err_max",
    "order_err_L2",
    "order_err_H1",
    "T_centre",
    "err_centre",
    "iterations",
    "residual",
]

# ----------------------------------------------------------------------------
# tables and figure


def _fmt(v: Any, spec: str = ".4e") -> str:
    if v is None:
        return "—"
    if isinstance(v, (int, np.integer)):
        return f"{v:,}"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def _csv_text(rows: Sequence[dict]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        writer.writerow(
            [
                (
                    ""
                    if r[c] is None
                    else repr(r[c]) if isinstance(r[c], float) else formula_safe(r[c])
                )
                for c in CSV_COLUMNS
            ]
        )
    return buf.getvalue()


def _table_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _md_header(rows: Sequence[dict], pb: HeatProblem, element: str) -> list[str]:
    return [
        "# Circular heat: scikit-fem convergence study",
        "",
        f"−k ΔT = Q in the disk r < R, −k ∂T/∂n = h(T − T∞) on r = R; "
        f"R = {pb.R} m, k = {pb.k} W/(m·K), h = {pb.h} W/(m²·K), Q = {pb.Q} W/m³, "
        f"T∞ = {pb.T_inf} K. Exact T*(r) = T∞ + QR/(2h) + Q(R² − r²)/(4k), "
        f"centre {pb.exact(0.0):.7f} K.",
        "",
        f"Element {element} on `MeshTri.init_circle(nrefs)` scaled by R "
        f"(nrefs {rows[0]['nrefs']}…{rows[-1]['nrefs']}); "
        f"h = longest edge. Differences are integrated exactly on the fine mesh. "
        f"Boundary handling: {BOUNDARY_HANDLING['inter_level']}.",
        "",
    ]


def _md_differences(rows: Sequence[dict]) -> list[str]:
    lines = [
        "## Inter-level differences (the paper's study)",
        "",
        "D_i = ‖T_i − P T_{i−1}‖ with h_f = h_i; local order at level i = "
        "log(D_{i−1}/D_i)/log(h_{i−1}/h_i) (the paper's (i−2)–(i−1)–i order).",
        "",
        _table_row(
            ["level", "nrefs", "h (m)", "nodes", "elements", "D L² (K·m)"]
            + ["D H¹ (K)", "order L²", "order H¹"]
        ),
        "|---" * 9 + "|",
    ]
    for r in rows:
        lines.append(
            _table_row(
                [_fmt(r["level"]), _fmt(r["nrefs"]), _fmt(r["h"], ".3e")]
                + [_fmt(r["nodes"]), _fmt(r["elements"]), _fmt(r["diff_L2"])]
                + [_fmt(r["diff_H1"]), _fmt(r["order_diff_L2"], ".3f")]
                + [_fmt(r["order_diff_H1"], ".3f")]
            )
        )
    return lines + [""]


def _md_errors(rows: Sequence[dict], slopes: dict) -> list[str]:
    lines = [
        "## Errors against the closed form T* (beyond the paper)",
        "",
        "Integrated exactly over the mesh polygon; max over the DOFs; local "
        "order at level i from levels i−1 and i.",
        "",
        _table_row(
            ["level", "nrefs", "h (m)", "‖T−T*‖ L² (K·m)", "\\|T−T*\\| H¹ (K)"]
            + ["max \\|T−T*\\| (K)", "order L²", "order H¹", "T centre (K)"]
        ),
        "|---" * 9 + "|",
    ]
    for r in rows:
        lines.append(
            _table_row(
                [_fmt(r["level"]), _fmt(r["nrefs"]), _fmt(r["h"], ".3e")]
                + [_fmt(r["err_L2"]), _fmt(r["err_H1"]), _fmt(r["err_max"])]
                + [_fmt(r["order_err_L2"], ".3f"), _fmt(r["order_err_H1"], ".3f")]
                + [_fmt(r["T_centre"], ".7f")]
            )
        )
    names = {
        "diff_L2": "inter-level L² difference",
        "diff_H1": "inter-level H¹-seminorm difference",
        "err_L2": "L² error vs T*",
        "err_H1": "H¹-seminorm error vs T*",
        "err_max": "max nodal error vs T*",
    }
    lines += ["", "Least-squares slopes of log(quantity) vs log(h):", ""]
    lines += ["| quantity | slope |", "|---|---|"]
    lines += [f"| {name} | {_fmt(slopes[k], '.3f')} |" for k, name in names.items()]
    return lines + [""]


def _md_paper() -> list[str]:
    m = PAPER_MATLAB
    lines = [
        "## For comparison: the paper's MATLAB PDE Toolbox numbers",
        "",
        "Printed by the paper, not computed here: quadratic (6-node) meshes with "
        "Hmax_l = 0.015/2^(l−1), so ~4× more nodes than a P1 mesh with as many "
        "elements; magnitudes are not comparable one to one.",
        "",
        "| level | Hmax (m) | nodes | elements | D L² (K·m) | local order L² |",
        "|---|---|---|---|---|---|",
    ]
    for i in range(6):
        lines.append(
            f"| {m['levels'][i]} | {m['Hmax'][i]:.3e} | {m['nodes'][i]:,} | "
            f"{m['elements'][i]:,} | {_fmt(m['diff_L2'][i])} | "
            f"{_fmt(m['local_order_L2'][i], '.3f')} |"
        )
    return lines + [
        "",
        f"Paper: global L² slope {m['slope_L2']}, global H¹-seminorm slope "
        f"{m['slope_H1']}.",
        "",
    ]


def _markdown(study: ConvergenceStudy, problem: HeatProblem, element: str) -> str:
    rows = study.rows
    return "\n".join(
        _md_header(rows, problem, element)
        + _md_differences(rows)
        + _md_errors(rows, study.slopes)
        + _md_paper()
    )


def _figure(rows: Sequence[dict], slopes: dict):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = np.array([r["h"] for r in rows])
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    series = [
        ("diff_L2", "o-", "inter-level ‖T_f − P T_c‖ L² (K·m)"),
        ("diff_H1", "s-", "inter-level |T_f − P T_c| H¹ (K)"),
        ("err_L2", "o--", "‖T_h − T*‖ L² (K·m)"),
        ("err_H1", "s--", "|T_h − T*| H¹ (K)"),
        ("err_max", "^:", "max nodal |T_h − T*| (K)"),
    ]
    for key, style, label in series:
        e = np.array([np.nan if r[key] is None else r[key] for r in rows])
        ax.loglog(h, e, style, label=f"{label}, slope {_fmt(slopes[key], '.2f')}")
    for order, anchor in ((2, "err_L2"), (1, "err_H1")):
        ref = rows[-1][anchor] * (h / h[-1]) ** order * 0.5
        ax.loglog(h, ref, "k-", lw=0.8, alpha=0.5)
        ax.annotate(f"slope {order}", (h[0], ref[0]), fontsize=8)
    ax.set_xlabel("h = longest edge (m)")
    ax.set_ylabel("difference / error")
    ax.set_title("Circular heat, scikit-fem convergence")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, plt


# ----------------------------------------------------------------------------
# writing


def _write_field(
    out: Path, study: ConvergenceStudy, problem: HeatProblem, points_nd: np.ndarray
) -> dict[str, Any]:
    """Sample the finest θ at R·points_nd into ``heat_reference.npz``; returns
    the manifest's ``points`` entry."""
    pts = np.asarray(points_nd, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"points_nd must have shape (M, 2), got {pts.shape}")
    Pm, shift = probe_matrix(study.finest, problem.R * pts.T)
    theta = Pm @ study.finest.theta
    save_npz(out / FIELD_FILE, T=problem.T_inf + theta, theta=theta, points_nd=pts)
    return {
        "n_points": int(pts.shape[0]),
        "points_sha256": points_sha256(pts),
        "max_clamp_m": shift,
        "nrefs": study.finest.nrefs,
    }


def _manifest(
    out: Path, study: ConvergenceStudy, params: dict, points: dict | None
) -> dict[str, Any]:
    names = list(FILES[: 3 + (points is not None)])
    finest = ("nrefs", "h", "nodes", "err_L2", "err_H1", "err_max", "T_centre")
    return {
        "format_version": FORMAT_VERSION,
        "generator": GENERATOR,
        "parameters": params,
        "points": points,
        "slopes": study.slopes,
        "finest": {k: study.rows[-1][k] for k in finest},
        "versions": {
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "scikit-fem": getattr(skfem, "__version__", "unknown"),
        },
        "files": {
            name: {
                "sha256": sha256_file(out / name),
                "bytes": (out / name).stat().st_size,
            }
            for name in names
        },
    }


def check_out(out_dir: str | Path, overwrite: bool = False) -> Path:
    """``FolderError`` (naming ``out``) unless ``out_dir`` can take a reference:
    an empty or new writable folder, or (with ``overwrite``) one holding a
    reference and nothing else. Checked before the study, which takes minutes."""
    out = Path(out_dir)
    try:
        names = set(os.listdir(out)) if out.is_dir() else set()
    except OSError as err:
        raise FolderError(f"out: {out}: {err.strerror}") from None
    foreign = sorted(names - {*FILES, MANIFEST})
    if foreign:
        raise FolderError(
            f"out: {out} holds files that are not a heat reference "
            f"({', '.join(map(repr, foreign[:3]))}); choose an empty folder"
        )
    if names and not overwrite:
        shipped = _is_shipped(out)
        raise FolderError(
            f"out: {out} already holds "
            + (
                "the heat reference shipped with deepxde-lnn"
                if shipped
                else "a reference"
            )
            + f" ({', '.join(sorted(names))}); pass --overwrite to replace it"
        )
    writable_folder(out)
    return out


def _is_shipped(out: Path) -> bool:
    try:
        return out.resolve() == Path(str(_package_dir())).resolve()
    except (InvalidReferenceError, OSError):
        return False


def write_reference(
    out_dir: str | Path,
    levels: int = 6,
    first_nrefs: int = 5,
    problem: HeatProblem = HEAT,
    points_nd: np.ndarray | None = None,
    element: str = "P1",
    overwrite: bool = False,
) -> list[dict[str, Any]]:
    """Run :func:`convergence_study` and write its tables and figure into
    ``out_dir``; with ``points_nd`` ((M, 2) nondimensional points x = X/R on the
    unit disk) also ``heat_reference.npz`` with the finest T (K) and θ = T - T∞
    at R·points; then ``manifest.json``.  ``out_dir`` is checked first
    (:func:`check_out`: a reference there is replaced only with ``overwrite``).
    Returns the study's rows."""
    if isinstance(levels, int) and levels < MIN_LEVELS:
        raise ValueError(
            f"levels: a reference needs at least {MIN_LEVELS} levels (two "
            f"inter-level differences show convergence), got {levels}"
        )
    out = check_out(out_dir, overwrite)
    study = convergence_study(levels, first_nrefs, problem, element)
    params = {
        "problem": problem.to_dict(),
        "element": element,
        "levels": int(levels),
        "nrefs": [r["nrefs"] for r in study.rows],
        "mesh": "skfem.MeshTri.init_circle(nrefs) scaled by R",
        "boundary_handling": dict(BOUNDARY_HANDLING),
    }
    atomic_write_text(out / "convergence.csv", _csv_text(study.rows))
    atomic_write_text(out / "convergence.md", _markdown(study, problem, element))
    fig, plt = _figure(study.rows, study.slopes)
    save_figure(out / "convergence.png", fig, dpi=120)
    plt.close(fig)
    points = None
    if points_nd is not None:
        points = _write_field(out, study, problem, points_nd)
    write_json(out / MANIFEST, _manifest(out, study, params, points))
    return list(study.rows)


# ----------------------------------------------------------------------------
# loading


def _package_dir() -> Traversable:
    """``circular_heat/`` of the installed ``deepxde_lnn.reference`` package."""
    try:
        return importlib.resources.files(REFERENCE_PACKAGE) / REFERENCE_NAME
    except ModuleNotFoundError as err:
        raise InvalidReferenceError(
            f"{REFERENCE_PACKAGE}/{REFERENCE_NAME}/{FIELD_FILE} is not installed "
            f"(no package {REFERENCE_PACKAGE}: reinstall deepxde-lnn)"
        ) from err


def _read_bytes(path: Traversable) -> bytes:
    """A reference file's bytes: as every file read back
    (:func:`~deepxde_lnn.runs.records.read_bytes`: regular, no link, capped),
    but from a zipped package's data; ``InvalidReferenceError`` naming it."""
    if not isinstance(path, Path):  # package data inside a zip
        try:
            return path.read_bytes()
        except OSError as err:
            raise InvalidReferenceError(f"{path} is missing or unreadable: {err}")
    try:
        return read_bytes(path, MAX_ARTIFACT_BYTES)
    except FolderError as err:
        raise InvalidReferenceError(f"{path} is missing or unreadable: {err}") from None


def _manifest_entries(root: Traversable) -> tuple[str, dict, str]:
    """The field's SHA-256, the problem constants and the points' SHA-256 as
    recorded in ``root/manifest.json``, after checking that it records a
    converged study (:func:`_check_convergence`)."""
    path = root / MANIFEST
    raw = _read_bytes(path)
    try:
        manifest = json.loads(raw)
        entries = (
            manifest["files"][FIELD_FILE]["sha256"],
            manifest["parameters"]["problem"],
            manifest["points"]["points_sha256"],
        )
        params, slopes = manifest["parameters"], manifest["slopes"]
    except (ValueError, KeyError, TypeError, RecursionError) as err:
        why = "nested too deeply" if isinstance(err, RecursionError) else repr(err)
        raise InvalidReferenceError(f"{path} is not a valid manifest: {why}") from None
    _check_convergence(path, params, slopes)
    return entries


def _check_convergence(path, params, slopes) -> None:
    """``InvalidReferenceError`` unless the manifest records at least
    ``MIN_LEVELS`` levels (one nrefs each) and an inter-level L² order of at
    least ``MIN_L2_ORDER``."""
    levels = params.get("levels") if isinstance(params, dict) else None
    nrefs = params.get("nrefs") if isinstance(params, dict) else None
    if not isinstance(levels, int) or levels < MIN_LEVELS:
        raise InvalidReferenceError(
            f"{path}: a reference needs a study of at least {MIN_LEVELS} levels, "
            f"this one has {levels!r}"
        )
    if not isinstance(nrefs, list) or len(nrefs) != levels:
        raise InvalidReferenceError(f"{path}: nrefs does not list {levels} levels")
    order = slopes.get("diff_L2") if isinstance(slopes, dict) else None
    if (
        not isinstance(order, (int, float))
        or isinstance(order, bool)
        or not math.isfinite(order)
        or order < MIN_L2_ORDER
    ):
        raise InvalidReferenceError(
            f"{path}: the study does not converge (inter-level L² order "
            f"{order!r}, expected at least {MIN_L2_ORDER})"
        )


def load_reference(
    directory: str | Path | None = None,
    problem: HeatProblem = HEAT,
    points_nd: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Load ``heat_reference.npz`` after checking it against ``manifest.json``.

    ``directory`` defaults to the package data ``deepxde_lnn.reference``'s
    ``circular_heat/``.  Raises :class:`InvalidReferenceError` (a
    ``ValueError`` naming the file) when a file is missing, the field's SHA-256
    differs from the manifest (corrupted), or the manifest's constants differ
    from ``problem`` or, if given, its points from ``points_nd`` (stale).
    Returns the arrays ``T`` (K), ``theta`` (K) and ``points_nd``.
    """
    root = _package_dir() if directory is None else Path(directory)
    field_sha, constants, points_sha = _manifest_entries(root)
    path = root / FIELD_FILE
    raw = _read_bytes(path)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != field_sha:
        raise InvalidReferenceError(
            f"{path} is corrupted: SHA-256 {digest} != manifest {field_sha}"
        )
    if constants != problem.to_dict():
        raise InvalidReferenceError(
            f"{path} is stale: built for {constants}, requested {problem.to_dict()}"
        )
    if points_nd is not None and points_sha256(points_nd) != points_sha:
        raise InvalidReferenceError(
            f"{path} is stale: its points differ from the requested points"
        )
    try:  # the bytes whose digest was checked, read as any .npz read back
        arrays = npz_arrays(raw, ARRAYS, path)
    except FolderError as err:
        raise InvalidReferenceError(str(err)) from None
    if points_sha256(arrays["points_nd"]) != points_sha:
        raise InvalidReferenceError(f"{path}: stored points do not match the manifest")
    return arrays
