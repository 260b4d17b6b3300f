"""How many of the package's modules one ``compare(train=...)`` passes through.

A tiny compare (DeepXDE's 1-D Poisson problem, an FNN and the LNN, two seeds, two
Adam steps, one worker) runs once untraced (every module imported), then again
under ``sys.setprofile``. Counted, over the package's functions (imports left
out), for the whole call and for the part before the first run trains:

* the modules it passes through;
* its climbs back, as a reader meets them: following the functions in the order
  of their first call, how often the next one to read lies in a module read
  before and left since, by module;
* its calls back: every call into a module that the call had left (it is not on
  the stack at that moment) after having been there before (a helper called
  twenty times counts twenty).

A newcomer follows the first number; the second is how often they must return
to a file they already read. What the user's own code runs (their ``train`` and
network factories, the ``LNN`` they build included) is theirs, not the path, and
is left out.

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
#: the networks a user builds: run by DeepXDE, they are the user's code
NETWORKS = f"{PACKAGE}.networks"
#: the module of the user's code: this script
USER = __name__
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
    """The package's modules on the stack, the ones visited, the order in which
    its functions are first called, and the calls back."""

    def __init__(self):
        self.stack: list[str | None] = []
        self.user = 0  # depth of the user's own code on the stack
        self.first: dict[str, list] = {"all": [], "before": []}
        self.calls: dict[str, collections.Counter] = {
            "all": collections.Counter(),
            "before": collections.Counter(),
        }
        self.training = False

    def __call__(self, frame, event, arg):
        if event == "return":
            if self.stack and self.stack.pop() == USER:
                self.user -= 1
            return
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if (module, frame.f_code.co_name) == TRAINING:
            self.training = True
        if module == USER or self._net_run_by_deepxde(module):
            self.user += 1
            self.stack.append(USER)
            return
        ours = (
            module.startswith(PACKAGE)
            and frame.f_code.co_name != "<module>"
            and not self.user
        )
        if ours:
            function = (module, frame.f_code.co_name)
            for part in ("all",) if self.training else ("all", "before"):
                if function not in self.first[part]:
                    self.first[part].append(function)
                seen = {m for m, _ in self.first[part]}
                if module in seen and module not in self.stack:
                    self.calls[part][module] += 1
        self.stack.append(module if ours else None)

    def _net_run_by_deepxde(self, module: str) -> bool:
        """The user's network, called by DeepXDE (or torch), not by the package."""
        return module.startswith(NETWORKS) and bool(self.stack) and not self.stack[-1]

    def climbs(self, part: str) -> collections.Counter:
        """Climbs back while reading the functions in the order of first call."""
        counts, read, last = collections.Counter(), set(), None
        for module, _ in self.first[part]:
            if module != last and module in read:
                counts[module] += 1
            read.add(module)
            last = module
        return counts


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
        climbs, calls = trace.climbs(part), trace.calls[part]
        modules = sorted({m for m, _ in trace.first[part]})
        print(
            f"{words}: {len(modules)} modules, {sum(climbs.values())} climbs back "
            f"in reading order, {sum(calls.values())} calls back"
        )
        print("  climbs: " + ", ".join(f"{m} {n}" for m, n in climbs.most_common()))
        if part == "before":
            print("  modules: " + ", ".join(m[len(PACKAGE) + 1 :] for m in modules))


if __name__ == "__main__":
    main()
