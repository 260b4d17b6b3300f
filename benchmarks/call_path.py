"""How many of the package's modules one ``compare(train=...)`` passes through.

A tiny compare (DeepXDE's 1-D Poisson problem, an FNN and the LNN, two seeds, two
Adam steps, one worker) runs once untraced (every module imported), then again
under ``sys.setprofile``. Counted, over the package's functions (imports left
out), for the whole call and for the part before the first run trains:

* the modules it passes through;
* its climbs back: calls into a module that the call had left (it is not on the
  stack at that moment) after having been there before, by module.

A newcomer follows the first number; the second is how often they must return
to a file they already read.

    python benchmarks/call_path.py
"""

from __future__ import annotations

import collections
import os
import sys
import tempfile

os.environ.setdefault("DDE_BACKEND", "pytorch")

import deepxde as dde  # noqa: E402

import deepxde_lnn  # noqa: E402

PACKAGE = "deepxde_lnn"
#: the function whose first call is the first run's training
TRAINING = ("deepxde_lnn.training.scripted_run", "_train")


def train(net):
    data = dde.data.PDE(
        dde.geometry.Interval(0, 1),
        lambda x, u: dde.grad.hessian(u, x) + 1,
        [],
        num_domain=8,
        num_test=5,
        solution=lambda x: x * (1 - x) / 2,
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=2, verbose=0)
    return model


NETS = {
    "fnn": lambda: dde.nn.FNN([1, 4, 1], "tanh", "Glorot uniform"),
    "lnn": lambda: deepxde_lnn.LNN([1, 4, 1], "tanh", "Glorot uniform"),
}


class Trace:
    """The package's modules on the stack, the ones visited, and the climbs."""

    def __init__(self):
        self.stack: list[str | None] = []
        self.visited: dict[str, set] = {"all": set(), "before": set()}
        self.climbs: dict[str, collections.Counter] = {
            "all": collections.Counter(),
            "before": collections.Counter(),
        }
        self.training = False

    def __call__(self, frame, event, arg):
        if event == "return":
            if self.stack:
                self.stack.pop()
            return
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if (module, frame.f_code.co_name) == TRAINING:
            self.training = True
        ours = module.startswith(PACKAGE) and frame.f_code.co_name != "<module>"
        if ours:
            parts = ("all",) if self.training else ("all", "before")
            for part in parts:
                if module in self.visited[part] and module not in self.stack:
                    self.climbs[part][module] += 1
                self.visited[part].add(module)
        self.stack.append(module if ours else None)


def main() -> None:
    scratch = tempfile.mkdtemp()
    quiet = dict(seeds=[0, 1], workers=1, progress=False, verbose=False)
    deepxde_lnn.compare(train=train, nets=NETS, out=f"{scratch}/warm", **quiet)
    trace = Trace()
    sys.setprofile(trace)
    try:
        deepxde_lnn.compare(train=train, nets=NETS, out=f"{scratch}/traced", **quiet)
    finally:
        sys.setprofile(None)
    for part, words in (("before", "before training"), ("all", "whole compare")):
        climbs = trace.climbs[part]
        print(
            f"{words}: {len(trace.visited[part])} modules, "
            f"{sum(climbs.values())} climbs back"
        )
        for module, n in climbs.most_common(6):
            print(f"  {n:4d}  {module}")


if __name__ == "__main__":
    main()
