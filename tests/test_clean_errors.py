"""Clean errors (issue 36, items 11 and 12): a case is tried once before anything
trains (its exact solution's shape, its residuals, size caps), and a full disk
while writing a summary or a report, a bad ``DDE_BACKEND`` and a killed worker are
each one clear error, not a traceback."""

import errno
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import deepxde_lnn

# isort: split
import deepxde as dde
from helpers import run_cli, tiny_case

from deepxde_lnn import api
from deepxde_lnn.networks.limits import MAX_PARAMETERS
from deepxde_lnn.problems.case import Trunk, load_file
from deepxde_lnn.problems.problem import MAX_POINTS
from deepxde_lnn.runs.errors import FolderError
from deepxde_lnn.study import registry
from deepxde_lnn.training.outcome import WorkersLost

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "docs" / "results" / "compare-laplace-quick"
QUIET = dict(workers=1, progress=False, verbose=False)
# a tiny run of a case file on the command line (and its options in the API)
TINY = ["--methods", "pinn", "--seeds", "1", "--workers", "1", "--no-progress"]
TINY_API = dict(methods=["pinn"], seeds=[1], **QUIET)

# DeepXDE's 1-D Poisson problem as a case file, with the parts a test changes
CASE_FILE = """\
import os
import signal

import numpy as np

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn.problems.case import Case, Grid, Profile, Trunk
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge

LO, HI = (-1.0,), (1.0,)
ends = dde.icbc.DirichletBC(
    dde.geometry.Interval(-1, 1), lambda x: 0, lambda x, on: on
)


def pde(x, u):
    {before}
    return -dde.grad.hessian(u, x) - np.pi**2 * dde.backend.sin(np.pi * x)


def exact(x):
    return {exact}


CASE = Case(
    name="poisson_1d",
    title="Poisson in 1-D",
    inputs=("x",),
    fields=("u",),
    terms=[
        Term("pde", Box(LO, HI), 16, pde, kind="pde"),
        Term("left", Edge(LO, HI, axis=0, value=-1.0), 1, ends),
        Term("right", Edge(LO, HI, axis=0, value=1.0), 1, ends),
    ],
    exact=exact,
    grid=Grid(LO, HI, {grid_n}),
    trunk=Trunk(hidden={hidden}),
    profiles={{"quick": Profile(iterations={iterations}, lr=1e-3, seed=0)}},
)
"""


def case_file(folder: Path, **parts) -> Path:
    """The case file with ``parts`` changed (``before``: a statement the residual
    runs first; ``exact``: the exact solution's expression; ...)."""
    values = dict(
        before="pass",
        exact="np.sin(np.pi * x[:, 0:1])",
        grid_n=21,
        hidden=(8, 8),
        iterations=3,
    )
    path = folder / "my_case.py"
    path.write_text(CASE_FILE.format(**{**values, **parts}))
    return path


def one_error(code, printed, *words, status=2):
    """The command printed one ``error:`` line holding ``words``, no traceback."""
    lines = printed.err.strip().splitlines()
    assert code == status, printed.err[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), printed.err[-2000:]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------- item 11


@pytest.mark.parametrize(
    "exact, shown",
    [
        ("np.hstack([x, x])", "shape (5, 2)"),  # a column per field and one more
        ("'abc'", "str 'abc'"),
        ("np.sin(np.pi * x[:-1, 0:1])", "shape (4, 1)"),  # a row short
    ],
    ids=["columns", "string", "rows"],
)
def test_an_exact_solution_that_does_not_fit_is_refused_before_training(
    tmp_path, capsys, exact, shown
):
    path, out = case_file(tmp_path, exact=exact), tmp_path / "out"
    code, printed = run_cli(["compare", str(path), *TINY, "--out", str(out)], capsys)
    one_error(code, printed, str(path), "poisson_1d", "exact", shown)
    assert not out.exists()


def test_a_residual_that_raises_is_one_error_naming_the_case_and_the_term(
    tmp_path, capsys
):
    path = case_file(tmp_path, before="raise ZeroDivisionError('no way')")
    out = tmp_path / "out"
    code, printed = run_cli(
        ["run", str(path), "--method", "pinn", "--out", str(out)], capsys
    )
    words = ("term 'pde'", "residual", "ZeroDivisionError: no way")
    one_error(code, printed, str(path), *words)
    assert not out.exists()


@pytest.mark.parametrize(
    "parts, cap",
    [
        (dict(hidden=(200000, 200000)), f"more than {MAX_PARAMETERS:,}"),
        (dict(grid_n=10**10), f"more than {MAX_POINTS:,}"),
    ],
    ids=["parameters", "grid"],
)
def test_absurd_sizes_are_refused_before_anything_is_allocated(
    tmp_path, capsys, parts, cap
):
    path, out = case_file(tmp_path, **parts), tmp_path / "out"
    code, printed = run_cli(["compare", str(path), *TINY, "--out", str(out)], capsys)
    one_error(code, printed, str(path), cap)
    assert not out.exists()


def test_the_caps_hold_for_profiles_extra_grids_and_method_options(tmp_path):
    case = tiny_case()
    quick = case.profile("quick")
    for changed in (
        dict(profiles={"quick": replace(quick, grid_n=10**4)}),  # 10**8 in 2-D
        dict(profiles={"quick": replace(quick, counts={"pde": MAX_POINTS})}),
        dict(extra_grids={"fine": 10**4}),
    ):
        with pytest.raises(ValueError, match=f"more than {MAX_POINTS:,}"):
            replace(case, **changed)
    with pytest.raises(ValueError, match="hidden"):
        Trunk(hidden=(64, 0))
    deep = replace(case, trunk=Trunk(hidden=(8,) * 40))  # its trunk is small
    with pytest.raises(ValueError, match=f"'lnn:width=4096'.*{MAX_PARAMETERS:,}"):
        deepxde_lnn.compare(deep, methods=["lnn:width=4096"], out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_nets_still_names_the_trunk_with_a_warning():
    """``Nets`` and ``Case(nets=...)``, the names of ``Trunk`` and ``trunk``
    before, still work in a case file written then, with a DeprecationWarning."""
    from deepxde_lnn.problems import case as case_module

    with pytest.warns(DeprecationWarning, match="Trunk"):
        assert case_module.Nets is Trunk
    small = Trunk(hidden=(8, 8))
    with pytest.warns(DeprecationWarning, match="trunk"):
        old = replace(tiny_case(), nets=small)
    assert old.trunk == small and old == replace(tiny_case(), trunk=small)


def test_the_shipped_cases_pass_the_check():
    for name in registry.available():
        registry.get(name).check()
    load_file(ROOT / "docs" / "examples" / "poisson_case.py")  # checked as it loads


def _poisson_data(residual=None, solution=None):
    def data():
        def pde(x, u):
            return -dde.grad.hessian(u, x) - np.pi**2 * dde.backend.sin(np.pi * x)

        ends = dde.icbc.DirichletBC(
            dde.geometry.Interval(-1, 1), lambda x: 0, lambda x, on: on
        )
        return dde.data.PDE(
            dde.geometry.Interval(-1, 1),
            residual or pde,
            ends,
            num_domain=8,
            num_boundary=2,
            solution=solution or (lambda x: np.sin(np.pi * x)),
            num_test=10,
        )

    return data


def _raises(x, u):
    raise ZeroDivisionError("no way")


@pytest.mark.parametrize(
    "data, words",
    [
        (_poisson_data(residual=_raises), ("data", "ZeroDivisionError: no way")),
        (
            _poisson_data(solution=lambda x: np.vstack([x, x])),  # two rows a point
            ("solution", "a row per point"),
        ),
    ],
    ids=["residual", "solution"],
)
def test_plain_deepxde_data_is_tried_before_training(tmp_path, data, words):
    nets = {"fnn": lambda: dde.nn.FNN([1, 8, 1], "tanh", "Glorot uniform")}
    out = tmp_path / "out"
    with pytest.raises(ValueError) as err:
        deepxde_lnn.compare(data=data, nets=nets, iterations=2, out=out, **QUIET)
    assert all(w in str(err.value) for w in words), str(err.value)
    assert not out.exists()


def test_the_docs_state_the_caps():
    for page in (ROOT / "docs" / "guarantees.md", ROOT / "docs" / "usage.md"):
        text = " ".join(page.read_text().split())
        assert f"{MAX_PARAMETERS:,}" in text and f"{MAX_POINTS:,}" in text, page


# ---------------------------------------------------------------- item 12


def full_disk_at(monkeypatch, name: str) -> None:
    """Writing the file ``name`` fails as on a full disk: its atomic write's
    rename raises ENOSPC (the temporary file is written by then)."""
    real = os.replace

    def replace_(src, dst, **kwargs):
        if Path(dst).name == name:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", replace_)


def no_temporary_files(folder: Path) -> bool:
    return not [p for p in folder.rglob("*.tmp")]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A case file and a comparison of it whose run is finished (then reused)."""
    folder = tmp_path_factory.mktemp("finished")
    path = case_file(folder)
    deepxde_lnn.compare(str(path), out=folder / "cmp", **TINY_API)
    return path, folder / "cmp"


@pytest.mark.parametrize("name", ["summary.png", "summary.md"])
def test_a_full_disk_while_writing_a_summary_is_one_error(
    finished, tmp_path, monkeypatch, capsys, name
):
    path, done = finished
    for how in ("api", "cli"):
        root = tmp_path / how
        shutil.copytree(done, root)
        before = (root / name).read_bytes()
        full_disk_at(monkeypatch, name)
        if how == "api":
            with pytest.raises(FolderError, match=f"{name}.*No space left"):
                deepxde_lnn.compare(str(path), out=root, **TINY_API)
        else:
            argv = ["compare", str(path), *TINY, "--out", str(root)]
            one_error(*run_cli(argv, capsys), str(root / name), "No space left")
        monkeypatch.undo()
        assert (root / name).read_bytes() == before  # the last good file kept
        assert no_temporary_files(root)


@pytest.mark.parametrize("name", ["R.md", "laplace.png"])
def test_a_full_disk_while_writing_a_report_is_one_error(
    tmp_path, monkeypatch, capsys, name
):
    for how in ("api", "cli"):
        out = tmp_path / how / "R.md"
        full_disk_at(monkeypatch, name)
        if how == "api":
            with pytest.raises(FolderError, match=f"{name}.*No space left"):
                deepxde_lnn.report(RECORDS, out)
        else:
            argv = ["report", str(RECORDS), "--out", str(out)]
            one_error(*run_cli(argv, capsys), name, "No space left")
        monkeypatch.undo()
        assert not out.exists() and no_temporary_files(out.parent)


UNKNOWN = (
    "is not one of DeepXDE's backends "
    "(tensorflow.compat.v1, tensorflow, pytorch, jax, paddle)"
)


@pytest.mark.slow  # starts the command line in processes
@pytest.mark.parametrize("backend", ["tensorflow", "", "garbage"])
def test_a_backend_other_than_pytorch_is_one_error_on_the_command_line(backend):
    env = {**os.environ, "DDE_BACKEND": backend}
    # DeepXDE itself refuses a name not its own (NotImplementedError on import)
    known = backend == "tensorflow"
    engine = "the deepxde-lnn engine needs DeepXDE's 'pytorch' backend"
    said = (
        f"{engine}, but DDE_BACKEND='{backend}'"
        if known
        else f"{engine}, and DDE_BACKEND='{backend}' {UNKNOWN}"
    )
    script = Path(sys.executable).with_name("deepxde-lnn")
    for argv in ([str(script)], [sys.executable, "-m", "deepxde_lnn.cli"]):
        done = subprocess.run(
            [*argv, "list"], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2, done.stderr[-2000:]
        assert done.stderr.splitlines() == [
            f"error: {said}. Unset it or set DDE_BACKEND=pytorch."
        ], done.stderr[-2000:]
    # a program of the user's imports the package (its networks follow DeepXDE)
    # and its engine says what it needs in one line
    code = "import deepxde_lnn\ntry:\n    deepxde_lnn.compare\nexcept ImportError as e:\n    print(e)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    runs = (
        f"this process runs '{backend}': run it with DDE_BACKEND=pytorch "
        "(deepxde_lnn.LNN, MLP, ReZero and LiquidBlock work on every backend)"
        if known
        else f"DDE_BACKEND='{backend}' {UNKNOWN}: run it with DDE_BACKEND=pytorch"
    )
    assert done.stdout.splitlines() == [
        f"deepxde_lnn.compare runs on DeepXDE's 'pytorch' backend, and {runs}"
    ]


@pytest.mark.slow  # a pool of worker processes
def test_a_killed_worker_names_the_runs_it_cut_short_and_how_to_go_on(tmp_path):
    # the first worker to evaluate the residual kills itself (SIGKILL); this
    # process (which tries the residual before training) does not
    flag = tmp_path / "killed"
    kill = (
        f"if os.getpid() != {os.getpid()} and not os.path.exists({str(flag)!r}):\n"
        f"        open({str(flag)!r}, 'x').close()\n"
        "        os.kill(os.getpid(), signal.SIGKILL)"
    )
    path, out = case_file(tmp_path, before=kill, iterations=20), tmp_path / "cmp"
    options = dict(methods=["pinn"], seeds=[1, 2], stack="off", **QUIET)
    with pytest.raises(WorkersLost) as err:
        deepxde_lnn.compare(str(path), out=out, **{**options, "workers": 2})
    text = str(err.value)
    assert "SIGKILL" in text and "Rerun the same command" in text, text
    assert "poisson_1d pinn seed 1" in text or "poisson_1d pinn seed 2" in text
    assert flag.exists()
    again = deepxde_lnn.compare(str(path), out=out, **options)  # goes on
    assert sorted(r.seed for r in again.runs if r.record) == [1, 2]


def test_a_killed_worker_is_one_error_line_on_the_command_line(monkeypatch, capsys):
    def lost(*args, **kwargs):
        raise WorkersLost("a worker process died (SIGKILL(-9)) ...")

    monkeypatch.setattr(api, "compare", lost)
    code, printed = run_cli(["compare", "laplace"], capsys)
    one_error(code, printed, "a worker process died", status=1)


def _dynamo_out_of_memory():
    # issue 55, item 7: as torch.compile reports it, with --workers 2 and
    # compiled jets (the cause's text only, as a worker hands it back)
    raise torch._dynamo.exc.InternalTorchDynamoError(
        "MemoryError: std::bad_alloc\n\nfrom user code: ..."
    )


# issue 43, item 10: memory running out
@pytest.mark.parametrize(
    "allocate, said",
    [
        (lambda: torch.empty(2**50, dtype=torch.uint8), "allocate 1.0 PiB on the CPU"),
        (lambda: np.empty(2**50), "Unable to allocate 8.00 PiB for an array"),
        (lambda: [0] * 2**62, "Python could not allocate memory"),
        (_dynamo_out_of_memory, "memory could not be allocated (std::bad_alloc)"),
    ],
    ids=["torch", "numpy", "python", "compiled"],
)
def test_memory_running_out_is_one_error_line_naming_what(
    monkeypatch, capsys, allocate, said
):
    monkeypatch.setattr(api, "compare", lambda *args, **kwargs: allocate())
    code, printed = run_cli(["compare", "laplace"], capsys)
    one_error(code, printed, "out of memory", said, status=1)


def test_an_unusable_compile_cache_is_a_warning_and_a_fresh_folder(
    tmp_path, monkeypatch
):
    # issue 55, item 6: an 80-line traceback once the run's folder existed
    from deepxde_lnn.networks.compiled import usable_cache

    (tmp_path / "a-file").write_text("")
    for bad in (tmp_path / "a-file", tmp_path / "a-file" / "under"):
        monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(bad))
        with pytest.warns(RuntimeWarning, match="cannot be used"):
            usable_cache.__wrapped__()
        # PyTorch's own per-user folder, not a new folder per process
        assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    good = tmp_path / "cache"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(good))
    usable_cache.__wrapped__()  # usable: kept, made
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(good) and good.is_dir()


@pytest.mark.slow  # three stacked compares of 30 steps
def test_a_full_disk_at_a_stacks_checkpoint_resumes_the_stack_unchanged(
    tmp_path, monkeypatch
):
    # issue 55, item 9: the seeds' checkpoints stood at different steps, so the
    # rerun trained them apart and its numbers differed from the stack's
    kw = dict(methods=["pinn"], seeds=[1, 2], iterations=30, stack="on",
              checkpoint_every=10, **QUIET)  # fmt: skip
    deepxde_lnn.compare("laplace", out=tmp_path / "whole", **kw)
    real, calls = tempfile.mkstemp, []

    def full_at_seed_2s_second_checkpoint(*args, **kwargs):
        if str(kwargs.get("dir", "")).endswith("seed-2") and kwargs.get(
            "prefix", ""
        ).startswith(".checkpoint.pt"):
            calls.append(1)
            if len(calls) == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", full_at_seed_2s_second_checkpoint)
    with pytest.raises(FolderError, match="No space left"):
        deepxde_lnn.compare("laplace", out=tmp_path / "cut", **kw)
    monkeypatch.undo()
    deepxde_lnn.compare("laplace", out=tmp_path / "cut", **kw)  # resumes
    for seed in ("seed-1", "seed-2"):
        loss = [tmp_path / run / "pinn" / seed / "loss.csv" for run in ("whole", "cut")]
        assert loss[0].read_bytes() == loss[1].read_bytes()
