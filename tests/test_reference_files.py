"""The shipped reference files are checked (SHA-256 included) before anything
trains, and a damaged one is one error naming it."""

import gzip
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from helpers import run_cli

import deepxde_lnn  # noqa: F401

# isort: split
from deepxde_lnn.problems import reference_data
from deepxde_lnn.problems.reference_data import MANIFEST, ShippedTable, load_table
from deepxde_lnn.study import registry

SHIPPED = Path(__file__).resolve().parents[1] / "reference" / "pinnacle"
BURGERS = ("pinnacle", "burgers1d.dat.gz")


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """The shipped PINNacle folder copied under ``tmp_path``, read in its place;
    the copy's ``burgers1d.dat.gz``."""
    shutil.copytree(SHIPPED, tmp_path / "pinnacle")
    monkeypatch.setattr(reference_data, "_path", lambda *p: tmp_path.joinpath(*p))
    return tmp_path.joinpath(*BURGERS)


def _times_ten(path):
    text = gzip.decompress(path.read_bytes()).decode()
    rows = [
        line
        if line.startswith("%")
        else " ".join(str(10 * float(v)) for v in line.split())
        for line in text.splitlines()
    ]
    path.write_bytes(gzip.compress("\n".join(rows).encode()))


def _link(path):
    path.rename(path.with_name("elsewhere.gz"))
    path.symlink_to(path.with_name("elsewhere.gz"))


def _folder(path):
    path.unlink()
    path.mkdir()


def _fifo(path):
    path.unlink()
    os.mkfifo(path)


DAMAGES = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:500]),
    "not gzip": lambda p: p.write_bytes(b"x y u\n0 0 1\n"),
    "missing": lambda p: p.unlink(),
    "link": _link,
    "folder": _folder,
    "fifo": _fifo,
    "values x 10": _times_ten,
    "not UTF-8": lambda p: p.write_bytes(gzip.compress(b"% \xff\n0 0 1\n")),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_shipped_reference_is_one_error_naming_it(copy, damage):
    DAMAGES[damage](copy)
    with pytest.raises(ValueError, match=re.escape(f"reference file {copy}: ")):
        ShippedTable(BURGERS, 2, 1, time_stacked=True)  # declared: checked


def test_a_damaged_manifest_is_an_error_naming_it(copy):
    (copy.parent / MANIFEST).write_text('{"files": [1]}')
    with pytest.raises(ValueError, match=f"{MANIFEST}: not a valid manifest"):
        ShippedTable(BURGERS, 2, 1, time_stacked=True)


def test_a_damaged_reference_stops_the_command_before_anything_is_written(
    copy, monkeypatch, tmp_path, capsys
):
    copy.write_bytes(copy.read_bytes()[:500])
    # burgers1d's module imported afresh: its reference declared again
    monkeypatch.delitem(registry._CASES, "burgers1d", raising=False)
    monkeypatch.delitem(sys.modules, "deepxde_lnn.cases.burgers1d", raising=False)
    out = tmp_path / "out"
    argv = ["run", "burgers1d", "--method", "pinn", "--iterations", "2"]
    code, printed = run_cli([*argv, "--out", str(out)], capsys)
    lines = printed.err.strip().splitlines()
    assert code == 2 and len(lines) == 1, printed.err[-2000:]
    assert lines[0].startswith(f"error: reference file {copy}: not a whole gzip")
    assert not out.exists()


def test_a_file_is_hashed_once_per_process_and_state(copy, monkeypatch):
    calls = []
    sha256 = reference_data.hashlib.sha256
    monkeypatch.setattr(
        reference_data.hashlib, "sha256", lambda b: calls.append(1) or sha256(b)
    )
    for _ in range(3):
        ShippedTable(BURGERS, 2, 1, time_stacked=True)
    assert len(calls) == 1
    _times_ten(copy)  # a new state: checked again, and refused
    with pytest.raises(ValueError, match="not the shipped ones"):
        ShippedTable(BURGERS, 2, 1, time_stacked=True)


def test_the_manifest_lists_what_the_readme_lists():
    recorded = json.loads((SHIPPED / MANIFEST).read_text())["files"]
    readme = (SHIPPED / "README.md").read_text()
    listed = dict(
        re.findall(
            r"^\| `(\S+\.(?:dat\.gz|csv))` \|.*\| `([0-9a-f]{64})` \|$", readme, re.M
        )
    )
    assert listed == {n: e["uncompressed_sha256"] for n, e in recorded.items()}
    shipped = [*SHIPPED.glob("*.dat.gz"), *SHIPPED.glob("*.csv")]
    assert sorted(listed) == sorted(p.name for p in shipped)


@pytest.mark.parametrize(
    "text, said",
    [
        ("% x y u\n0 1 nan\n2 3 nan\n", "no row without NaN"),
        ("% x y u\n0 1 5\n2 3\n", "not a table of numbers"),
        ("% x y u\n0 1 5 6\n", "4 columns, expected 2 + 1"),
    ],
    ids=["all NaN", "ragged", "columns"],
)
def test_a_table_that_does_not_fit_is_an_error_naming_its_file(tmp_path, text, said):
    path = tmp_path / "t.dat"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(f"{path}: {said}")):
        load_table(path, 2, 1)
    path.write_bytes(b"% \xff\n0 1 5\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}: not UTF-8")):
        load_table(path, 2, 1)
