"""Time the scikit-fem heat convergence study and report its peak memory.

Each configuration (first nrefs, number of levels, element) runs in a fresh
Python process so that its peak resident memory (``ru_maxrss``) is its own.
Per level it prints the mesh (refinement + projection), assembly, solve and
measurement (inter-level differences, errors vs T*) times; then the total wall
time, the optional sampling of the 125,629-point heat grid on the finest mesh,
and the peak memory.  Not a test: the issue's target (six levels up to >= 1.3 M
nodes in <= 60 s and <= 4 GB on 2 cores) is read off this table.

    python benchmarks/fem_study.py                      # nrefs 5..10 and 4..9
    python benchmarks/fem_study.py --config 5:6 --sample
    python benchmarks/fem_study.py --config 2:5:P2 --init-circle
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB


def child(first: int, levels: int, element: str, sample: bool, init_circle: bool):
    import numpy as np

    from deepxde_lnn import fem

    out = {"first": first, "levels": levels, "element": element}
    if init_circle:  # stock mesh generator alone, for comparison
        from skfem import MeshTri

        t = time.perf_counter()
        MeshTri.init_circle(first + levels - 1)
        out["init_circle_s"] = time.perf_counter() - t
    t0 = time.perf_counter()
    study = fem.convergence_study(levels, first, element=element)
    out["study_s"] = time.perf_counter() - t0
    out["study_peak_gib"] = _peak_gib()
    out["rows"] = list(study.rows)
    out["slopes"] = study.slopes
    if sample:
        pts = fem.disk_grid()
        t = time.perf_counter()
        T = fem.sample_solution(study.finest, fem.HEAT.R * pts)
        out["sample_s"] = time.perf_counter() - t
        r = fem.HEAT.R * np.hypot(pts[:, 0], pts[:, 1])
        out["sample_max_err"] = float(np.max(np.abs(T - fem.exact_temperature(r))))
    out["peak_gib"] = _peak_gib()
    print(json.dumps(out))


def report(res: dict) -> None:
    print(
        f"\n== nrefs {res['first']}..{res['first'] + res['levels'] - 1}"
        f" ({res['element']}) =="
    )
    head = (
        f"{'nrefs':>5} {'nodes':>10} {'elements':>10} {'mesh s':>7} {'asm s':>7}"
        f" {'solve s':>7} {'its':>4} {'meas s':>7} {'err L2':>10} {'diff L2':>10}"
    )
    print(head)
    for r in res["rows"]:
        diff = "—" if r["diff_L2"] is None else f"{r['diff_L2']:.3e}"
        print(
            f"{r['nrefs']:>5} {r['nodes']:>10,} {r['elements']:>10,}"
            f" {r['time_mesh']:>7.2f} {r['time_assemble']:>7.2f}"
            f" {r['time_solve']:>7.2f} {r['iterations']:>4}"
            f" {r['time_measure']:>7.2f} {r['err_L2']:>10.3e} {diff:>10}"
        )
    s = res["slopes"]
    print(
        f"study {res['study_s']:.1f} s, peak {res['study_peak_gib']:.2f} GiB;"
        f" slopes diff L2 {s['diff_L2']:.3f} H1 {s['diff_H1']:.3f},"
        f" err L2 {s['err_L2']:.3f} H1 {s['err_H1']:.3f}"
    )
    if "init_circle_s" in res:
        print(f"stock MeshTri.init_circle alone: {res['init_circle_s']:.1f} s")
    if "sample_s" in res:
        print(
            f"sampling 125,629 points on the finest mesh: {res['sample_s']:.1f} s,"
            f" max |T - T*| {res['sample_max_err']:.2e} K;"
            f" peak {res['peak_gib']:.2f} GiB"
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--config",
        action="append",
        help="FIRST:LEVELS[:ELEMENT], repeatable (default 5:6 and 4:6)",
    )
    ap.add_argument("--sample", action="store_true", help="also sample disk_grid()")
    ap.add_argument("--init-circle", action="store_true", help="time init_circle")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        first, levels, element = args.child.split(":")
        child(int(first), int(levels), element, args.sample, args.init_circle)
        return
    for config in args.config or ["5:6", "4:6"]:
        parts = config.split(":")
        parts += ["P1"] * (3 - len(parts))
        cmd = [sys.executable, __file__, "--child", ":".join(parts)]
        cmd += ["--sample"] * args.sample + ["--init-circle"] * args.init_circle
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            raise SystemExit(f"configuration {config} failed")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        report(res)
        print(f"process wall time (imports included): {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
