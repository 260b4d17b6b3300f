"""A run's identity comes from the one declaration of the options
(``deepxde_lnn/config/__init__.py``): the API's keywords, the command line's and the case
scripts' flags, the type check of a record read back, the reuse of a finished run
and the configurations a report tells apart all follow it, for the options there
are (``loss_weights``) and for one added to it."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import tiny_case

import deepxde_lnn
from deepxde_lnn import case_script as example
from deepxde_lnn import cli

ROOT = Path(__file__).resolve().parents[1]
W = "1,100,100,100,100"  # laplace: pde, bottom, top, left, right
QUIET = dict(workers=1, progress=False, verbose=False)


def _report(*folders, out) -> tuple[int, str, str]:
    """``deepxde-lnn report FOLDERS --out OUT`` here: status, page, stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["report", *map(str, folders), "--out", str(out)])
    page = Path(out).read_text() if Path(out).exists() else ""
    return code, page, err.getvalue()


@pytest.mark.slow  # two comparisons of the registered case, tiny as they are
def test_runs_of_other_loss_weights_are_another_configuration_in_a_report(tmp_path):
    """Issue 43: runs that differ only by their loss weights were listed as
    duplicates of each other and left out of the report's tables."""
    kw = dict(iterations=5, seeds=[1], methods=["lnn", "pinn"], **QUIET)
    deepxde_lnn.compare("laplace", out=tmp_path / "a", **kw)
    weights = [float(w) for w in W.split(",")]
    deepxde_lnn.compare("laplace", out=tmp_path / "b", loss_weights=weights, **kw)
    code, page, err = _report(tmp_path / "a", tmp_path / "b", out=tmp_path / "r.md")
    assert code == 0, err
    assert "Duplicates" not in page
    groups = [line for line in page.splitlines() if line.startswith("### [")]
    assert len(groups) == 2, groups
    assert "loss_weights" not in groups[0]
    assert "loss_weights (1, 100, 100, 100, 100)" in groups[1]


def test_a_case_script_trains_with_its_loss_weights(capsys):
    """``--loss-weights`` reaches the script's ``Model.compile`` (it was accepted
    and ignored): weights of 1 train as none, others train otherwise."""
    case, base = tiny_case(), ["--method", "pinn", "--iterations", "3"]
    plain = example.main(case, base)
    ones = example.main(case, [*base, "--loss-weights", "1,1,1,1,1"])
    weighted = example.main(case, [*base, "--loss-weights", W])
    capsys.readouterr()
    rmse = [m["phi"]["RMSE"] for m in (plain, ones, weighted)]
    assert rmse[0] == rmse[1] and not np.isclose(rmse[0], rmse[2], rtol=1e-6)


# a training option added to config's Training (and one the case scripts do not
# honour, which they must refuse): the test's own, in a copy of the package
ADDED = """
    flavour: str | None = option(
        None,
        "a throwaway option of the tests",
        check=_name,
        parse=str,
        omit=None,
        script=True,
    )
    unhonoured: str | None = option(
        None, "another, not honoured by the case scripts", check=_name, parse=str
    )
"""
ANCHOR = "\n    def __post_init__(self):\n        _check_fields(self)\n\n\n"
ANCHOR += "@dataclass(frozen=True, kw_only=True)\nclass Execution:"

# run in a process importing the copy: each surface says whether it saw the option
SURFACES = r"""
import contextlib, io, json, re, shutil, sys
from pathlib import Path

import torch

torch.set_num_threads(1)
import deepxde_lnn
from deepxde_lnn import cli, case_script as example
from helpers import tiny_case

out, poisson = Path(sys.argv[1]), sys.argv[2]
seen, case = {}, tiny_case()
kw = dict(methods=["pinn"], seeds=[1], iterations=2, workers=1, progress=False,
          verbose=False)


def check(surface, test):
    try:
        seen[surface] = bool(test())
    except BaseException as err:  # noqa: BLE001 - the surface failed, say how
        seen[surface] = f"{type(err).__name__}: {err}"[:300]


def cli_call(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(list(argv))
        except SystemExit as e:
            code = e.code
    return code, err.getvalue()


def record(folder):
    return json.loads((Path(folder) / "metrics.json").read_text())


def api():
    deepxde_lnn.compare(case, flavour="x", out=out / "a", **kw)
    doc = deepxde_lnn.compare.__doc__
    return record(out / "a/pinn/seed-1")["flavour"] == "x" and "flavour:" in doc


def flag():
    where = out / "cli"
    code, err = cli_call("run", poisson, "--method", "pinn", "--iterations", "2",
                         "--flavour", "y", "--out", str(where), "--no-progress")
    return code == 0 and record(where)["flavour"] == "y"


def script_flag():
    args = example.parse_args(case, ["--flavour", "z", "--iterations", "2"])
    try:
        example.parse_args(case, ["--unhonoured", "q"])
    except SystemExit as e:
        refused = e.code == 2
    else:
        refused = False  # accepted, and nothing would use it
    return args.config.flavour == "z" and refused


def reuse():
    again = deepxde_lnn.compare(case, flavour="x", out=out / "a", **kw)
    try:
        deepxde_lnn.compare(case, flavour="x2", out=out / "a", **kw)
    except ValueError as err:
        other = "flavour" in str(err)
    else:
        other = False  # the finished run of flavour x passed for one of x2
    return [r.status for r in again.runs] == ["reused"] and other


def schema():
    bad = out / "bad"
    shutil.copytree(out / "a/pinn", bad / "pinn")
    path = bad / "pinn/seed-1/metrics.json"
    path.write_text(json.dumps({**record(path.parent), "flavour": ["not", "a name"]}))
    code, err = cli_call("report", str(bad), "--out", str(out / "bad.md"))
    return code == 2 and "flavour" in err and "metrics.json" in err


def report():
    deepxde_lnn.compare(case, flavour="x2", out=out / "c", **kw)
    code, err = cli_call("report", str(out / "a"), str(out / "c"),
                         "--out", str(out / "r.md"))
    page = (out / "r.md").read_text()
    groups = [s for s in page.splitlines() if s.startswith("### [")]
    named = sorted(re.search("flavour ([^,]+)", g)[1] for g in groups)
    return code == 0 and "Duplicates" not in page and named == ["x", "x2"]


for name, test in [("API keyword", api), ("CLI flag", flag),
                   ("case script flag", script_flag), ("reuse (identity)", reuse),
                   ("record schema", schema), ("report grouping", report)]:
    check(name, test)
print("SURFACES " + json.dumps(seen))
"""


def _package_with_the_option(tmp_path: Path) -> Path:
    """A copy of the package (its cases as an installed one has them) whose
    config declares the options of :data:`ADDED`, and nothing else changed."""
    pkg = tmp_path / "pkg" / "deepxde_lnn"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "deepxde_lnn", pkg, ignore=skip)
    shutil.copytree(ROOT / "cases", pkg / "cases", ignore=skip)
    config = pkg / "config" / "__init__.py"
    text = config.read_text()
    assert text.count(ANCHOR) == 1, "the end of Training moved: update ANCHOR"
    config.write_text(text.replace(ANCHOR, ADDED + ANCHOR))
    return pkg.parent


@pytest.mark.slow  # a Python process that trains a few tiny runs
def test_an_added_option_reaches_every_surface(tmp_path):
    """Declaring an option in the config package is all it takes: the API keyword, the CLI
    flag, the case scripts' flag (or their refusal), the record's type check, the
    identity that decides reuse, and the report's configurations all see it."""
    pkg = _package_with_the_option(tmp_path)
    script = tmp_path / "surfaces.py"
    script.write_text(SURFACES)
    path = os.pathsep.join([str(pkg), str(ROOT / "tests")])
    env = {**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg"}
    env.update(OMP_NUM_THREADS="1", DDE_BACKEND="pytorch")
    poisson = ROOT / "docs/examples/poisson_case.py"
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(script), str(out), str(poisson)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    lines = [s for s in proc.stdout.splitlines() if s.startswith("SURFACES ")]
    assert lines, proc.stderr[-3000:]
    seen = json.loads(lines[-1].split(" ", 1)[1])
    assert seen == dict.fromkeys(seen, True) and len(seen) == 6, seen
