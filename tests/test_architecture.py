"""docs/architecture.md is the code's path: every name on the page exists, each
stage's function where the page says it is defined, and a small compare of each
kind (a plain DeepXDE problem, a training function), traced by
benchmarks/call_path.py's tracer, first calls the stages' functions in the page's
order; the figures' ``on_done`` is called where the page says."""

import importlib
import importlib.util
import inspect
import itertools
import re
import sys
from pathlib import Path

import pytest

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn.analysis.figures import draw_missing, plt_module
from deepxde_lnn.training.scripted_run import warm_up

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
NAME = re.compile(r"`(deepxde_lnn(?:\.\w+)+)")
SCRIPTED = "with `train=`:"  # in a "starts at" cell: the function on that route
QUIET = dict(workers=1, progress=False, verbose=False)


def _call_path():
    """benchmarks/call_path.py as a module: its tracer and its tiny problem."""
    spec = importlib.util.spec_from_file_location(
        "call_path", ROOT / "benchmarks" / "call_path.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CALL_PATH = _call_path()


def _stages() -> list[tuple[str, str, str]]:
    """The page's table in order: (stage, its function, its function with
    ``train=``), from the column ``starts at``."""
    lines = PAGE.read_text().splitlines()
    top = next(i for i, line in enumerate(lines) if "| starts at |" in line)
    column = [c.strip() for c in lines[top].strip("|").split("|")].index("starts at")
    stages = []
    for row in itertools.takewhile(lambda r: r.startswith("|"), lines[top + 2 :]):
        cells = [c.strip() for c in row.strip("|").split("|")]
        plain, _, scripted = cells[column].partition(SCRIPTED)
        (name,) = NAME.findall(plain)
        stages.append((cells[1], name, (NAME.findall(scripted) or [name])[0]))
    return stages


def _resolve(dotted: str):
    """The object the full name ``dotted`` names, its modules imported on the
    way; AttributeError where there is none."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for n, attr in enumerate(parts[1:], 2):
        if inspect.ismodule(obj) and not hasattr(obj, attr):
            module = ".".join(parts[:n])
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as err:
                if err.name != module:
                    raise
        obj = getattr(obj, attr)
    return obj


def _key(dotted: str) -> tuple[str, str]:
    """A stage's function as the tracer names it: (module, function)."""
    func = inspect.unwrap(_resolve(dotted))
    return func.__module__, func.__code__.co_name


def test_every_name_on_the_page_is_the_codes():
    missing = []
    for dotted in sorted(set(NAME.findall(PAGE.read_text()))):
        try:
            _resolve(dotted)
        except AttributeError:
            missing.append(dotted)
    assert missing == [], f"{PAGE.name} names what the code no longer has"
    for _, *names in _stages():  # each where the page says it is defined
        for dotted in names:
            assert ".".join(_key(dotted)) == dotted, dotted


class _Trace(CALL_PATH.Trace):
    """call_path's trace, also noting who calls the figures' function."""

    def __init__(self):
        super().__init__()
        self.figures_called_by: set[str] = set()

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code is draw_missing.__code__:
            back = frame.f_back
            self.figures_called_by.add(
                f"{back.f_globals['__name__']}.{back.f_code.co_name}"
            )
        return super().__call__(frame, event, arg)


def _poisson():
    return dde.data.PDE(
        dde.geometry.Interval(0, 1),
        lambda x, u: dde.grad.hessian(u, x) + 1,
        [],
        num_domain=8,
        num_test=5,
        solution=lambda x: x * (1 - x) / 2,
    )


ROUTES = {
    "plain DeepXDE": dict(data=_poisson, iterations=2),
    "train=": dict(train=CALL_PATH.train),
}


@pytest.mark.slow
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_traced_compare_follows_the_pages_stages(route, tmp_path):
    stages = [
        (stage, _key(scripted if route == "train=" else name))
        for stage, name, scripted in _stages()
    ]
    warm_up()  # torch's first optimizer step and matplotlib: imported untraced
    plt_module()
    trace = _Trace()
    sys.setprofile(trace)
    try:
        deepxde_lnn.compare(
            nets={"fnn": CALL_PATH.NETS["fnn"]},  # one method: fewer figures
            seeds=[0, 1],
            out=tmp_path / "cmp",
            **ROUTES[route],
            **QUIET,
        )
    finally:
        sys.setprofile(None)
    first = trace.first["all"]  # the package's functions in order of first call
    never = [f"{stage}: {'.'.join(key)}" for stage, key in stages if key not in first]
    assert never == [], "stages whose function the compare never called"
    in_code = sorted(stages, key=lambda s: first.index(s[1]))
    assert [s for s, _ in in_code] == [s for s, _ in stages], "the code's order"
    named = set(NAME.findall(PAGE.read_text()))
    assert trace.figures_called_by and trace.figures_called_by <= named
