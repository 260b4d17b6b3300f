"""A newcomer's two commands: `make demo` and `make test` set up the environment
the way the README's by-hand steps do, reuse it on a second call, and CI runs
`make test` and `make demo` itself (the README's two commands on a clean clone)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from deepxde_lnn.study import readme

ROOT = Path(__file__).resolve().parents[1]
SUB_MAKE = ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")  # set by a `make` above the tests
pytestmark = pytest.mark.skipif(
    shutil.which("make") is None, reason="make is not installed"
)


def _make_n(target: str, venv: Path) -> list[str]:
    """The commands `make TARGET` would run with its environment in ``venv``."""
    # not as a sub-make when the tests run under `make test`
    env = {k: v for k, v in os.environ.items() if k not in SUB_MAKE}
    out = subprocess.run(
        ["make", "--no-print-directory", "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.splitlines()


def _code_block_after(heading: str) -> list[str]:
    """The commands (comments dropped) of the first code block below ``heading``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines()]


def _by_hand(venv: Path) -> list[str]:
    """The README's by-hand steps as they run in ``venv`` (no activation)."""
    steps = _code_block_after("## Without make")
    assert steps[0] == "python3 -m venv .venv && . .venv/bin/activate"
    return [f"python3 -m venv {venv}"] + [f"{venv}/bin/{cmd}" for cmd in steps[1:]]


def test_readme_first_commands_are_make_demo_and_make_test():
    assert _code_block_after("## Two commands") == ["make demo", "make test"]


@pytest.mark.parametrize("target, last", [("demo", 3), ("test", 4)])
def test_make_runs_the_readmes_steps_by_hand(target, last, tmp_path):
    venv = tmp_path / "venv"
    install, run = _by_hand(venv)[:3], _by_hand(venv)[last]
    commands = _make_n(target, venv)
    # set-up first (a pip upgrade may come between), the README's command last
    assert [c for c in commands if c in install] == install
    assert commands[0] == install[0] and commands[-1] == run


def test_a_second_call_reuses_the_environment(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").touch()  # what the first call leaves, after setup.cfg
    assert _make_n("demo", venv) == [f"{venv}/bin/deepxde-lnn compare laplace"]
    assert _make_n("test", venv) == [
        f'{venv}/bin/python -m pytest -q -n 2 -m "not slow and not backends and not slurm"'
    ]


def test_the_readmes_main_comparison_is_the_one_make_demo_runs(tmp_path):
    last = _make_n("demo", tmp_path / "venv")[-1]
    command = " ".join(readme.MAIN_COMPARISON)
    assert last == f"{tmp_path / 'venv'}/bin/deepxde-lnn {command}"


def test_ci_runs_the_readmes_two_commands_and_nothing_else():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [line for line in lines if line and not line.startswith("#")]
    setup = ["set -euo pipefail", 'cd "$(dirname "$0")/.."']
    slurm = ".ci/slurm.sh install"  # best effort: the SLURM tests skip without it
    tests = ["make test", "make test-slow", "make test-backends", slurm]
    tests.append("make test-slurm")
    assert commands == [*setup, *tests, "make demo"]


def test_make_test_slurm_runs_the_marked_tests(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").touch()
    assert _make_n("test-slurm", venv) == [f"{venv}/bin/python -m pytest -q -m slurm"]


def test_make_test_slow_runs_the_tier_make_test_leaves_out(tmp_path):
    # together the two select every test but those of the backends and SLURM,
    # which have targets of their own
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").touch()
    assert _make_n("test-slow", venv) == [
        f'{venv}/bin/python -m pytest -q -n 2 -m "slow and not backends and not slurm"'
    ]


def test_make_test_backends_installs_the_extra_and_runs_their_tests(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").touch()
    assert _make_n("test-backends", venv) == [
        f'{venv}/bin/pip install -e ".[backends]"',
        f"touch {venv}/.backends",
        f"{venv}/bin/python -m pytest -q -n 2 -m backends",
    ]
