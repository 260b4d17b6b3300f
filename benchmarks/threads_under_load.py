"""How much a run's timing moves when the machine is busy, per torch thread count.

The Euler beam (DeepXDE's example problem and point counts) with the LNN
``[1, 20, 20, 20, 1]``, Adam, trained through ``deepxde_lnn.run`` (the package's
own path: its timing is what a record holds). Each configuration (``threads`` 1
or 2, with 0 or ``--busy`` busy processes beside it) is run in alternation,
``--repeats`` times, in a fresh process, and its record's wall seconds, CPU
seconds and CPU share are printed: the median per configuration, and the ratio
of each busy median to the same threads' idle one. A ratio near 1 is a timing
that load does not move; the spinning threads of a two-thread run on a loaded
two-core machine are what made the committed timings wrong many times.

    python benchmarks/threads_under_load.py
    python benchmarks/threads_under_load.py --steps 2000 --repeats 3 --busy 1
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys
import deepxde_lnn
res = deepxde_lnn.run("beam", method="lnn", seed=0, iterations={steps},
                      threads={threads}, out={out!r}, verbose=False, progress=False)
rec = res.record
print(json.dumps({{k: rec.get(k) for k in ("train_seconds", "cpu_seconds",
                                          "cpu_share", "threads")}}))
"""


def _spin() -> None:
    while True:
        pass


def _one(steps: int, threads: int, out: str) -> dict:
    code = CHILD.format(steps=steps, threads=threads, out=out)
    env = {**os.environ, "DDE_BACKEND": "pytorch"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--busy", type=int, default=1, help="busy processes")
    args = parser.parse_args()
    found: dict[tuple[int, int], list[dict]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for r in range(args.repeats):
            for busy in (0, args.busy):
                spinners = [multiprocessing.Process(target=_spin) for _ in range(busy)]
                for p in spinners:
                    p.start()
                try:
                    for threads in (1, 2):
                        out = os.path.join(scratch, f"r{r}-b{busy}-t{threads}")
                        rec = _one(args.steps, threads, out)
                        found.setdefault((threads, busy), []).append(rec)
                finally:
                    for p in spinners:
                        p.terminate()
    print(f"beam, LNN, {args.steps} steps, {args.repeats} repeats (median)")
    print("threads  busy  wall s   CPU s   CPU share   wall / idle wall")
    for (threads, busy), recs in sorted(found.items()):
        wall = statistics.median(r["train_seconds"] for r in recs)
        cpu = statistics.median(r["cpu_seconds"] for r in recs)
        share = statistics.median(r["cpu_share"] for r in recs)
        idle = statistics.median(r["train_seconds"] for r in found[threads, 0])
        print(
            f"{threads:7d}  {busy:4d}  {wall:6.1f}  {cpu:6.1f}  {share:9.2f}"
            f"   {wall / idle:6.2f}"
        )


if __name__ == "__main__":
    main()
