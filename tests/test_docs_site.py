"""The documentation site: the markdown pages and the API reference build with
Sphinx without a warning (``make docs``'s own command), and the reference names
every public name of ``deepxde_lnn``."""

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import deepxde_lnn

ROOT = Path(__file__).resolve().parents[1]


def _sphinx_command(out: Path) -> list[str]:
    """The Makefile's Sphinx command, run by this interpreter into ``out``."""
    (line,) = [
        line
        for line in (ROOT / "Makefile").read_text().splitlines()
        if " -m sphinx " in line
    ]
    args = shlex.split(line.strip())
    assert args[0] == "$(BIN)/python" and args[-1] == "build/docs"
    assert "-W" in args  # warnings are errors
    return [sys.executable, *args[1:-1], str(out)]


def test_api_page_names_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text()
    directives = re.findall(r"^\.\. auto\w+:: (\S+)$", text, re.M)
    documented = {d.rpartition(".")[2] for d in directives}
    missing = [
        name
        for name in deepxde_lnn.__all__
        if name not in documented and f"`deepxde_lnn.{name}`" not in text
    ]
    assert missing == []
    callables = [n for n in deepxde_lnn.__all__ if callable(getattr(deepxde_lnn, n))]
    assert {f"deepxde_lnn.{n}" for n in callables} <= set(directives)


@pytest.mark.slow
def test_site_builds_without_a_warning(tmp_path):
    assert importlib.util.find_spec("sphinx") and importlib.util.find_spec(
        "myst_parser"
    ), "sphinx or myst-parser is missing: pip install -e '.[docs]'"
    out = subprocess.run(
        _sphinx_command(tmp_path / "site"),
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    api = (tmp_path / "site" / "docs" / "api.html").read_text()
    for text in ("deepxde_lnn.compare", "margin", "Comparison", "LiquidDeepONet"):
        assert text in api, text
    assert (tmp_path / "site" / "README.html").exists()  # the README is a page too
