"""A non-editable install (a built wheel) works like the checkout: the cases are
``deepxde_lnn.cases`` and the heat FEM reference is package data."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # builds and installs a wheel, runs it in processes


def _sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


_BUILT = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__"
)


def _not_sources(folder, names):
    """What the copy leaves out: version control, environments, build outputs and
    the default output folder ``runs/`` (at the top only: ``deepxde_lnn/runs`` is
    a package)."""
    top = {"runs"} & set(names) if Path(folder) == ROOT else set()
    return top | _BUILT(folder, names)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The package built as a wheel and installed (no deps) into a folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # a copy: building in the checkout would leave build/ there
    shutil.copytree(ROOT, src, ignore=_not_sources)
    isolation = (
        []
        if importlib.util.find_spec("setuptools") is None
        else ["--no-build-isolation"]
    )
    build = _sh(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(src),
            "--no-deps",
            "-q",
            *isolation,
            "-w",
            str(tmp / "dist"),
        ]
    )
    assert build.returncode == 0, build.stderr
    wheel = next((tmp / "dist").glob("deepxde_lnn-*.whl"))
    inst = _sh(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(tmp / "site"),
            str(wheel),
        ]
    )
    assert inst.returncode == 0, inst.stderr
    return tmp / "site"


def _env(site):
    return {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg"}


def test_wheel_has_no_top_level_cases_and_ships_the_reference(site):
    assert not (site / "cases").exists()
    assert (site / "deepxde_lnn" / "cases" / "heat.py").exists()
    assert (site / "deepxde_lnn" / "study" / "catalog.json").exists()
    assert (site / "deepxde_lnn" / "study" / "paper_results.csv").exists()
    ref = site / "deepxde_lnn" / "reference" / "circular_heat"
    assert (ref / "heat_reference.npz").exists() and (ref / "manifest.json").exists()
    assert (ref.parent / "pinnacle" / "manifest.json").exists()  # the checksums
    code = (
        "import deepxde_lnn, deepxde_lnn.cases as c; from deepxde_lnn import fem; "
        "r = fem.load_reference(); "
        "print(deepxde_lnn.__file__); print(c.__file__); print(len(r['theta']))"
    )
    out = _sh([sys.executable, "-c", code], env=_env(site), cwd=site.parent)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert all(line.startswith(str(site)) for line in lines[:2])
    assert lines[2] == "125629"


def test_heat_run_from_the_wheel_reports_the_fem_cross_check(site, tmp_path):
    argv = ["run", "heat", "--method", "pinn", "--iterations", "5", "--no-progress"]
    out = _sh(
        [sys.executable, "-m", "deepxde_lnn.cli", *argv, "--out", "r"],
        env=_env(site),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "FEM reference not available" not in out.stderr
    rec = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert rec["extra_metrics"]["fem_vs_exact_theta"]["MaxErr"] < 1e-5
    assert "pred_vs_fem_theta" in rec["extra_metrics"]
