"""The README as a newcomer reads it: every code block in it runs in a test, its
links (and those of docs/) lead to files and headings of this repository, and it
stays two screens long."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the README's code blocks outside its generated ones, by their first line, and
#: the test that runs each
BLOCKS = {
    ("python", "import deepxde as dde"):
        "test_the_one_line_swap_runs",
    ("bash", "make demo    # the main comparison: does the liquid block help on a benchmark? (minutes on a CPU)"):
        "test_quickstart.py::test_readme_first_commands_are_make_demo_and_make_test",
    ("bash", "python3 -m venv .venv && . .venv/bin/activate   # or your own environment"):
        "test_quickstart.py::test_make_runs_the_readmes_steps_by_hand",
    ("python", "import numpy as np"): "test_your_own_problem_runs_as_written",
}  # fmt: skip
GENERATED = re.compile(
    r"<!-- BEGIN generated: ([\w-]+).*?<!-- END generated: \1 -->", re.S
)


def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of each fenced block outside the generated blocks."""
    text = GENERATED.sub("", text)
    return re.findall(r"^```(\w+)\n(.*?)^```$", text, re.S | re.M)


def block(first: str) -> str:
    """The README's block whose first line is ``first``."""
    (code,) = [c for _, c in code_blocks(README.read_text()) if c.startswith(first)]
    return code


def test_every_code_block_of_the_readme_is_run_by_a_test():
    found = [
        (lang, code.splitlines()[0]) for lang, code in code_blocks(README.read_text())
    ]
    assert found == list(BLOCKS)


def test_the_readme_is_two_screens():
    assert len(README.read_text().splitlines()) <= 170


def test_the_one_line_swap_runs():
    import torch

    import deepxde_lnn

    space = {}
    exec(block("import deepxde as dde"), space)
    net = space["net"]  # the line after: the LNN
    assert isinstance(net, deepxde_lnn.LNN)
    assert net(torch.zeros(3, 2)).shape == (3, 1)


@pytest.mark.slow
def test_your_own_problem_runs_as_written(tmp_path):
    code = block("import numpy as np")
    tiny = code.replace("iterations=2000", "iterations=10")
    tiny = tiny.replace("seeds=[0, 1, 2]", "seeds=[0, 1]")
    assert tiny.count("iterations=10") == tiny.count("seeds=[0, 1]") == 1
    assert "deepxde_lnn.compare(train=train, nets=NETS" in code
    (tmp_path / "mine.py").write_text(tiny)
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "mine.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "u RMSE: lnn/fnn error ratio" in out.stdout
    root = tmp_path / "runs" / "poisson_1d"
    assert len(list(root.rglob("metrics.json"))) == 4
    assert all(
        (root / f).is_file() for f in ("summary.md", "summary.csv", "summary.png")
    )


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _prose(text: str) -> str:
    return re.sub(r"^```.*?^```$", "", text, flags=re.S | re.M)


def test_links_lead_to_files_and_headings_of_the_repository():
    bad = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for link in re.findall(r"\]\(([^)\s]+)\)", _prose(page.read_text())):
            if re.match(r"[a-z]+:", link):
                continue  # a web address
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            if not target.exists() or ROOT not in target.parents:
                bad.append(f"{page.name}: {link} (no such file here)")
            elif anchor and target.suffix == ".md":
                heads = re.findall(r"^#+ (.*)$", _prose(target.read_text()), re.M)
                if anchor not in map(_slug, heads):
                    bad.append(f"{page.name}: {link} (no such heading)")
    assert bad == []


def test_the_readme_shows_the_reports_figure():
    from deepxde_lnn.study import reproduction

    figure = f"docs/REPRODUCTION/{reproduction.FOREST}"
    assert f"]({figure})" in README.read_text() and (ROOT / figure).is_file()
    assert (
        f"](REPRODUCTION/{reproduction.FOREST})"
        in (ROOT / "docs/REPRODUCTION.md").read_text()
    )
