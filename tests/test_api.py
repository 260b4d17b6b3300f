"""The Python API (deepxde_lnn.compare/sweep/ablate/run/report) and the two routes
to a problem of your own: a case file, and plain DeepXDE data and networks."""

import ast
import importlib.util
import json
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import deepxde_lnn

# isort: split
import deepxde as dde
from helpers import SignalAt

from deepxde_lnn import cli
from deepxde_lnn.config import RunConfig
from deepxde_lnn.problems.deepxde_problem import DeepXDEProblem
from deepxde_lnn.training.runner import RunInterrupted, run

ROOT = Path(__file__).resolve().parents[1]
CASE_FILE = ROOT / "docs" / "examples" / "poisson_case.py"
SCRIPT = ROOT / "docs" / "examples" / "poisson_1d.py"
QUIET = dict(workers=1, progress=False, verbose=False)


def _example():
    """docs/usage.md's plain-DeepXDE example, imported as a module."""
    spec = importlib.util.spec_from_file_location("poisson_1d_example", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EX = _example()


def _record(path) -> dict:
    return json.loads((Path(path) / "metrics.json").read_text())


def _geomean_ratio(a, b) -> float:
    return float(np.exp(np.mean(np.log(a)) - np.mean(np.log(b))))


# --- plain DeepXDE ------------------------------------------------------------------


def test_plain_deepxde_compare_writes_records_summary_and_verdict(tmp_path):
    kw = dict(data=EX.poisson_1d, nets=EX.NETS, baseline="fnn", seeds=[0, 1])
    res = deepxde_lnn.compare(**kw, iterations=15, out=tmp_path / "cmp", **QUIET)
    recs = {
        (m, s): _record(tmp_path / "cmp" / m / f"seed-{s}")
        for m in ("lnn", "fnn")
        for s in (0, 1)
    }
    for (m, s), rec in recs.items():
        assert (rec["case"], rec["method"], rec["seed"]) == ("poisson_1d", m, s)
        assert rec["profile"] == "quick" and rec["iterations"] == rec["steps"] == 15
        # scored on DeepXDE's test points: its 2 boundary and 100 uniform points
        f = np.load(tmp_path / "cmp" / m / f"seed-{s}" / "fields.npz")
        expected_x = EX.poisson_1d().test()[0]
        np.testing.assert_array_equal(f["x"], expected_x.astype(np.float64))
        exact = np.sin(np.pi * f["x"])
        err = f["pred"] - exact
        rel = np.linalg.norm(err) / np.linalg.norm(exact)
        assert rec["metrics"]["u"]["relL2"] == pytest.approx(rel, rel=1e-12)
        rmse = np.sqrt(np.mean(err**2))
        assert rec["metrics"]["u"]["RMSE"] == pytest.approx(rmse, rel=1e-12)
        loss = np.loadtxt(
            tmp_path / "cmp" / m / f"seed-{s}" / "loss.csv", delimiter=",", skiprows=1
        )
        assert loss.shape == (15, 4)  # step, total, pde, bc1
        assert rec["final_loss"]["total"] == pytest.approx(loss[-1, 1])
    # the verdict: LNN against the named baseline, over the paired seeds
    (v,) = res.verdicts
    assert (v.method, v.baseline, v.field, v.metric) == ("lnn", "fnn", "u", "RMSE")
    want = _geomean_ratio(
        [recs[("lnn", s)]["metrics"]["u"]["RMSE"] for s in (0, 1)],
        [recs[("fnn", s)]["metrics"]["u"]["RMSE"] for s in (0, 1)],
    )
    assert v.ci.ratio == pytest.approx(want) and v.ci.paired
    assert str(v) in res.markdown and "lnn/fnn" in str(v)
    assert (tmp_path / "cmp" / "summary.md").read_text() == res.markdown
    assert {(r.method, r.seed, r.status) for r in res.runs} == {
        (m, s, "done") for m in ("lnn", "fnn") for s in (0, 1)
    }
    rows = [r for r in res.summary if r["metric"] == "relL2"]
    assert {r["method"]: r["n"] for r in rows} == {"lnn": 2, "fnn": 2}
    text = repr(res)
    assert text.startswith("Comparison('poisson_1d'") and str(v) in text
    assert "relL2" in repr(res.runs[0]) and "seed" in repr(res.runs[0])
    # repeated, the records as written before one default profile and steps
    # (``custom``, ``seconds_per_iteration``): reused, the verdict is the same
    for (m, s), rec in recs.items():
        old = {**rec, "profile": "custom"}
        old["seconds_per_iteration"] = old.pop("seconds_per_step")
        path = tmp_path / "cmp" / m / f"seed-{s}" / "metrics.json"
        path.write_text(json.dumps(old))
    again = deepxde_lnn.compare(**kw, iterations=15, out=tmp_path / "cmp", **QUIET)
    assert {r.status for r in again.runs} == {"reused"}
    assert again.verdicts[0].ci == v.ci


def test_plain_deepxde_trains_as_deepxde_does_and_resumes_exactly(tmp_path):
    # the runner trains the user's Data and network through dde.Model: the same
    # weights as DeepXDE's own compile/train with the same seed
    res = deepxde_lnn.run(
        data=EX.poisson_1d,
        nets=EX.NETS,
        method="fnn",
        seed=3,
        iterations=12,
        out=tmp_path / "run",
        progress=False,
        verbose=False,
    )
    assert res.record["case"] == "poisson_1d" and res.status == "done"
    dde.config.set_random_seed(3)
    data = EX.poisson_1d()
    model = dde.Model(data, EX.NETS["fnn"]())
    model.compile("adam", lr=1e-3, verbose=0)
    model.train(iterations=12, verbose=0)
    saved = torch.load(tmp_path / "run" / "model.pt", weights_only=True)
    for k, v in model.net.state_dict().items():
        torch.testing.assert_close(saved[k], v, rtol=0, atol=0)
    # interrupted at a checkpoint and resumed: the uninterrupted result
    problem = DeepXDEProblem(EX.poisson_1d, EX.NETS)
    cfg = RunConfig(
        "poisson_1d", "lnn", seed=1, iterations=20, profile="quick", checkpoint_every=5
    )
    full = run(cfg, tmp_path / "full", problem=problem)
    with pytest.raises(RunInterrupted):
        run(cfg, tmp_path / "cut", problem=problem, callbacks=[SignalAt(8)])
    resumed = run(cfg, tmp_path / "cut", problem=problem, resume=True)
    assert resumed["resumed"] and resumed["metrics"] == full["metrics"]


def _pde_without_solution():
    line = dde.geometry.Interval(-1, 1)
    bc = dde.icbc.DirichletBC(line, lambda x: 0, lambda x, on: on)
    return dde.data.PDE(line, lambda x, u: dde.grad.hessian(u, x), bc, 8, 2)


def _raises():
    raise RuntimeError("no GPU here")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(data=_pde_without_solution), r"^data: .*no exact solution"),
        (dict(data=42), r"^data must be a function"),
        (dict(data=lambda: "text"), r"^data: .*returned str, not a deepxde"),
        (dict(nets={"lnn": _raises}), r"^nets\['lnn'\] raised RuntimeError: no GPU"),
        (
            dict(nets={"two": lambda: dde.nn.FNN([1, 8, 2], "tanh", "Glorot normal")}),
            r"^nets\['two'\]: the network gives \(2,\) outputs .* the solution 1",
        ),
        (
            dict(nets={"lin": lambda: torch.nn.Linear(1, 1)}),
            r"^nets\['lin'\]: .*returned Linear, not a deepxde.nn.NN",
        ),
        (dict(nets={}), r"^nets must be a non-empty dict"),
        (dict(nets={"a/b": EX.NETS["fnn"]}), r"^nets: a network's name must be"),
        (dict(name="../up"), r"^name must be a name"),
        (dict(iteration=5), r"^iteration: unknown option of compare\(\)"),
        (dict(optimizer="sgd"), r"^optimizer: unknown option of compare\(\)"),
        (dict(profile="paper"), r"^profile must be one of quick"),
        (dict(baseline="pinn"), r"^baseline must be one of lnn, fnn"),
        (dict(methods=["lnn", "cnn"]), r"^method must be one of lnn, fnn; got 'cnn'"),
        (dict(seeds=[2**32]), r"^seed must be an integer in \[0, 4294967295\]"),
        (dict(lr=-1.0), r"^lr must be a finite number > 0"),
        (dict(case="laplace"), r"^case: give a case, or data= and nets=, not both"),
    ],
)
def test_bad_plain_deepxde_input_is_one_error_before_training(
    kwargs, message, tmp_path
):
    args = dict(data=EX.poisson_1d, nets=EX.NETS, iterations=5, out=tmp_path / "o")
    with pytest.raises(ValueError, match=message):
        deepxde_lnn.compare(**{**args, **kwargs}, **QUIET)
    assert not (tmp_path / "o").exists()


# --- a case file of your own ---------------------------------------------------------


def _cli(argv, capsys):
    try:
        code = cli.main([*argv, "--no-progress"])
    except SystemExit as e:  # argparse-level errors
        code = e.code
    return code, capsys.readouterr()


@pytest.mark.slow
def test_case_file_runs_with_every_command(tmp_path, capsys):
    path = str(CASE_FILE)
    # compare: in worker processes (the case travels to them pickled), records
    # named by the case, a verdict against pinn
    argv = ["compare", path, "--seeds", "1,2", "--iterations", "10", "--workers", "2"]
    code, io = _cli([*argv, "--stack", "off", "--out", str(tmp_path / "cmp")], capsys)
    assert code == 0, io.err
    recs = [_record(p.parent) for p in (tmp_path / "cmp").rglob("metrics.json")]
    assert len(recs) == 4 and {r["case"] for r in recs} == {"poisson_1d"}
    assert {r["grid_points"] for r in recs} == {201}
    assert (
        "u RMSE: lnn/pinn error ratio" in (tmp_path / "cmp" / "summary.md").read_text()
    )
    # run, sweep, ablate
    argv = ["run", path, "--method", "pinn", "--iterations", "5"]
    assert _cli([*argv, "--out", str(tmp_path / "one")], capsys)[0] == 0
    assert _record(tmp_path / "one")["method"] == "pinn"
    argv = ["sweep", path, "--lrs", "1e-3,1e-2", "--iterations", "5", "--seeds", "0"]
    code, io = _cli([*argv, "--workers", "1", "--out", str(tmp_path / "sw")], capsys)
    assert (
        code == 0 and "| 0.01 | lnn | 1 |" in io.out and "| 0.001 | lnn | 1 |" in io.out
    )
    argv = ["ablate", path, "--methods", "lnn,pinn", "--seeds", "1,2"]
    argv += ["--iterations", "5", "--workers", "1", "--out", str(tmp_path / "ab")]
    code, io = _cli(argv, capsys)
    assert code == 0, io.err
    text = (tmp_path / "ab" / "ablation.md").read_text()
    assert text.startswith("# Ablation: poisson_1d") and "| `lnn` |" in text


def test_case_file_from_python_accepts_a_path_a_name_or_a_case(tmp_path):
    from deepxde_lnn.problems.case import load_file

    case = load_file(CASE_FILE)
    res = deepxde_lnn.compare(
        case, methods="pinn", seeds=[0], iterations=5, out=tmp_path / "a", **QUIET
    )
    assert res.case == "poisson_1d" and res.verdicts == ()  # no second method
    again = deepxde_lnn.compare(
        str(CASE_FILE),
        methods=["pinn"],
        seeds=[0],
        iterations=5,
        out=tmp_path / "a",
        **QUIET,
    )
    assert [r.status for r in again.runs] == ["reused"]
    with pytest.raises(ValueError, match="unknown case 'poisson_1d'.*case file"):
        deepxde_lnn.compare("poisson_1d", out=tmp_path / "b", **QUIET)
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize(
    "text, message",
    [
        (
            CASE_FILE.read_text().replace('name="poisson_1d"', 'name="../evil"'),
            "case name must be a name of letters",
        ),
        ("X = 1\n", "does not declare CASE = Case(...)"),
        ("import no_such_module\n", "failed: ModuleNotFoundError"),
    ],
)
def test_bad_case_file_is_one_error_line(text, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(text)
    code, io = _cli(["compare", "mine.py", "--iterations", "2"], capsys)
    err = io.err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: case")
    assert message in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.py"]


# --- the API as a whole ------------------------------------------------------------


def test_help_documents_the_api():
    text = pydoc.render_doc(deepxde_lnn.compare, renderer=pydoc.plaintext)
    for word in (
        "data:",
        "nets:",
        "seeds:",
        "baseline",
        "budget:",
        "Comparison",
        "ValueError",
        "workers:",
        "iterations",
    ):
        assert word in text
    assert deepxde_lnn.report.__module__ == "deepxde_lnn.study.report"  # not a module
    api = ("run", "compare", "sweep", "ablate", "report")
    assert set(api) <= set(deepxde_lnn.__all__)
    assert all(callable(getattr(deepxde_lnn, n)) for n in api)


def test_seed_bound_is_one_rule_for_the_api_and_the_cli(tmp_path, capsys):
    with pytest.raises(ValueError) as api:
        deepxde_lnn.compare("laplace", seeds=[2**32], out=tmp_path / "o", **QUIET)
    code, io = _cli(["compare", "laplace", "--seeds", str(2**32)], capsys)
    assert code == 2 and str(api.value) in io.err


def test_no_library_module_imports_the_cli():
    package = ROOT / "deepxde_lnn"
    offenders = []
    for path in package.rglob("*.py"):
        if path.name == "cli.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
                if "cli" in names or node.module == "deepxde_lnn.cli":
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def _usage_example() -> str:
    """docs/usage.md's plain-DeepXDE example: the Python block of its section
    "Your own problem" that defines ``poisson_1d``."""
    text = (ROOT / "docs" / "usage.md").read_text()
    text = text.split("## Your own problem", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    return next(b for b in blocks if "def poisson_1d" in b)


@pytest.mark.slow
def test_the_plain_deepxde_example_runs_as_written(tmp_path):
    code = _usage_example()
    tiny = code.replace("iterations=2000", "iterations=10")
    tiny = tiny.replace("seeds=[0, 1, 2]", "seeds=[0, 1]")
    assert tiny.count("iterations=10") == tiny.count("seeds=[0, 1]") == 1
    (tmp_path / "example.py").write_text(tiny)
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "example.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Comparison('poisson_1d'" in out.stdout
    assert "u RMSE: lnn/fnn error ratio" in out.stdout
    recs = list((tmp_path / "runs" / "poisson_1d").rglob("metrics.json"))
    assert len(recs) == 4
    # docs/usage.md shows the script in docs/examples, which the other tests use
    script = SCRIPT.read_text()
    for line in ("def poisson_1d():", "SIZES = [1, 50, 50, 50, 1]", "num_test=100"):
        assert line in code and line in script


def test_threads_beyond_the_cores_are_refused_before_anything(tmp_path, monkeypatch):
    # issue 52, item 1: runs at a time x threads never exceed the cores given
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    out = tmp_path / "cmp"
    kw = dict(data=EX.poisson_1d, nets=EX.NETS, seeds=[1], iterations=5, out=out)
    with pytest.raises(ValueError, match="threads: 2 runs at a time x 2 threads"):
        deepxde_lnn.compare(**kw, workers=2, threads=2, progress=False)
    with pytest.raises(ValueError, match="threads: 3 threads is more than"):
        deepxde_lnn.run(
            data=EX.poisson_1d, nets=EX.NETS, method="fnn", out=out, threads=3
        )
    assert not out.exists()


def test_a_run_here_takes_one_thread_unless_asked_and_gives_them_back(tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        kw = dict(data=EX.poisson_1d, nets=EX.NETS, method="fnn", seed=1)
        kw |= dict(iterations=5, progress=False, verbose=False)
        one = deepxde_lnn.run(**kw, out=tmp_path / "one")
        assert one.record["threads"] == 1
        assert torch.get_num_threads() == 2  # the caller's setting, put back
        two = deepxde_lnn.run(**kw, out=tmp_path / "two", threads=2, force_threads=True)
        assert two.record["threads"] == 2
    finally:
        torch.set_num_threads(before)
