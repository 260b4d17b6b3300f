"""Types are part of the test command: mypy finds no error in the package, at
the strictness that setup.cfg's ``[mypy]`` section states (its comment, and
docs/usage.md's tests section). Mypy comes with the package's `test` extra."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_nothing():
    assert importlib.util.find_spec("mypy"), "mypy is missing: pip install -e '.[test]'"
    # this interpreter's mypy and site-packages (torch's types); the cache in the
    # checkout's ignored .mypy_cache: a cold run takes ~35 s of CPU, a warm one ~1 s
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "setup.cfg"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, f"`mypy` in {ROOT}:\n{out.stdout}{out.stderr}"
