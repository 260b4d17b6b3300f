"""Style is part of the test command: `ruff check` finds nothing in the repository
(pyflakes, pycodestyle's errors and isort's import order, as pyproject.toml
configures them). Ruff comes with the package's `test` extra."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_finds_nothing():
    assert importlib.util.find_spec("ruff"), "ruff is missing: pip install -e '.[test]'"
    # this interpreter's ruff (the environment's, also when it is not activated),
    # and no cache written into the checkout
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, f"`ruff check` in {ROOT}:\n{out.stdout}{out.stderr}"
