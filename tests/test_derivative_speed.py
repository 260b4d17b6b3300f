"""``benchmarks/derivative_speed.py`` runs: its ``--quick`` smoke test prints a
row per case and method and the jets' record."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_derivative_speed_quick_prints_every_cell():
    script = ROOT / "benchmarks" / "derivative_speed.py"
    out = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [r.split(" | ") for r in out.stdout.splitlines()]
    cases = ("| drift_decay", "| burgers1d")
    cells = {(r[0], r[2]) for r in rows if r[0] in cases and r[1] == "quick"}
    assert len(cells) == 4, out.stdout
    assert "- burgers1d: Taylor-mode jets (pde)" in out.stdout


@pytest.mark.slow
def test_adam_step_compares_both_ways_on_the_same_numbers():
    """``benchmarks/adam_step.py`` times Adam one tensor at a time and all at
    once, and finds both at the same parameters bit for bit."""
    script = ROOT / "benchmarks" / "adam_step.py"
    out = subprocess.run(
        [sys.executable, str(script), "--cases", "laplace", "--steps", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (row,) = [r for r in out.stdout.splitlines() if r.startswith("| laplace |")]
    assert row.endswith("| yes |") and "29,633" in row
