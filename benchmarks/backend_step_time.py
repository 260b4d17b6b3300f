"""LNN / FNN time per training step on every DeepXDE backend.

The Euler beam (``y'''' = -1`` on [0, 1], clamped at 0, free at 1: DeepXDE's
example problem, its point counts), a ``[1, 20, 20, 20, 1]`` tanh network, Adam.
Each backend runs in a process of its own (DeepXDE fixes its backend once per
process) on one thread; there both networks are built, trained a few steps (a
backend that compiles its step does it then), and timed in alternating chunks
(FNN, LNN, FNN, ...), so both see the same machine. Printed per backend: the
median ms per step of each, wall and process CPU time, and LNN / FNN.

    python benchmarks/backend_step_time.py
    python benchmarks/backend_step_time.py --backends pytorch jax --steps 200

DeepXDE's Euler-beam example leaves JAX out: the beam's free end is two
``OperatorBC`` conditions on derivatives of the output, which DeepXDE's JAX
boundary conditions cannot take. On JAX the problem is the 1-D Poisson equation
of DeepXDE's example (second order, not fourth): its row says so.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

BACKENDS = ("pytorch", "tensorflow.compat.v1", "tensorflow", "jax", "paddle")
SIZES = [1, 20, 20, 20, 1]
# one thread for every backend's math library
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "TF_NUM_INTRAOP_THREADS": "1",
    "TF_NUM_INTEROP_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "CPU_NUM": "1",
}


def value(z):
    """A derivative's value (JAX's ``dde.grad`` gives ``(value, function)``)."""
    return z[0] if isinstance(z, tuple) else z


def poisson_data():
    import deepxde as dde
    import numpy as np

    geom = dde.geometry.Interval(-1, 1)

    def pde(x, y):
        return -value(dde.grad.hessian(y, x)) - np.pi**2 * dde.backend.sin(np.pi * x)

    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda _, on: on)
    return dde.data.PDE(geom, pde, bc, 16, 2, num_test=100)


def child(steps: int, repeats: int) -> None:
    """In the backend's process: the two models, timed alternately."""
    import deepxde as dde
    import numpy as np
    from deepxde.backend import backend_name
    from dropin_cost import data as beam_data  # the same beam, any backend

    import deepxde_lnn

    if backend_name == "pytorch":
        import torch

        torch.set_num_threads(1)
    problem = "poisson" if backend_name == "jax" else "beam"
    models, scopes = {}, {}
    for name, cls in (("fnn", dde.nn.FNN), ("lnn", deepxde_lnn.LNN)):
        # tensorflow.compat.v1: each model in a graph of its own
        graph = dde.backend.tf.Graph() if backend_name.endswith("v1") else None
        scopes[name] = graph.as_default if graph else contextlib.nullcontext
        with scopes[name]():
            dde.config.set_random_seed(0)
            data = poisson_data() if problem == "poisson" else beam_data()
            model = dde.Model(data, cls(SIZES, "tanh", "Glorot uniform"))
            model.compile("adam", lr=1e-3)
            model.train(iterations=steps, display_every=10**9, verbose=0)  # warm
        models[name] = model
    times = {name: {"wall": [], "cpu": []} for name in models}
    for _ in range(repeats):
        for name, model in models.items():
            wall, cpu = time.perf_counter(), time.process_time()
            with scopes[name]():
                model.train(iterations=steps, display_every=10**9, verbose=0)
            times[name]["wall"].append((time.perf_counter() - wall) / steps)
            times[name]["cpu"].append((time.process_time() - cpu) / steps)
    out = {
        name: {k: 1e3 * float(np.median(v)) for k, v in t.items()}
        for name, t in times.items()
    }
    print(json.dumps({"problem": problem, **out}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", nargs="+", default=BACKENDS, choices=BACKENDS)
    ap.add_argument("--steps", type=int, default=300, help="steps per timed chunk")
    ap.add_argument("--repeats", type=int, default=5, help="chunks per network")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.steps, args.repeats)
    print(f"Euler beam, {SIZES} tanh, Adam; median ms/step over {args.repeats} "
          f"alternated chunks of {args.steps} steps, one thread")  # fmt: skip
    print("| backend | problem | FNN ms/step (CPU) | LNN ms/step (CPU) | LNN/FNN |")
    print("|---|---|---|---|---|")
    for backend in args.backends:
        env = {**os.environ, **ONE_THREAD, "DDE_BACKEND": backend}
        argv = [sys.executable, __file__, "--child", "--steps", str(args.steps)]
        argv += ["--repeats", str(args.repeats)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode:
            print(f"| {backend} | failed: {done.stderr.strip().splitlines()[-1]} |")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        f, n = r["fnn"], r["lnn"]
        print(
            f"| {backend} | {r['problem']} | {f['wall']:.2f} ({f['cpu']:.2f}) | "
            f"{n['wall']:.2f} ({n['cpu']:.2f}) | {n['wall'] / f['wall']:.2f} |"
        )


if __name__ == "__main__":
    main()
