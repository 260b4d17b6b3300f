"""Your own problem through ``compare(train=...)`` on the first try: five
problems of kinds users bring (docs/examples), each run with tiny counts, and
every failure that can be found before training found there."""

import importlib.util
import io
import os
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import no_solution

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn.analysis.stats import bound_text, ratio_ci
from deepxde_lnn.analysis.verdict_text import judge
from deepxde_lnn.experiments.results import Verdict
from deepxde_lnn.runs.records import read_record
from deepxde_lnn.training.run_record import describe

ROOT = Path(__file__).resolve().parents[1]
QUIET = dict(verbose=False, progress=False, workers=1)

#: each example's counts, shrunk for a test
SMALL = {
    "lorenz_inverse": dict(ITERATIONS=30, POINTS=20),
    "burgers": dict(
        ADAM=20, LBFGS=5, POINTS=30, SIDES=8, START=8, TEST=50, RESAMPLE=10
    ),
    "wave_hard": dict(ITERATIONS=20, POINTS=30, START=10, TEST=40),
    "antiderivative": dict(ITERATIONS=20),
    "poisson_system": dict(ITERATIONS=20, POINTS=16, TEST=30, CHECKPOINT_EVERY=5),
}


def example(name: str):
    """``docs/examples/NAME.py`` as a module, its counts shrunk (:data:`SMALL`)."""
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "docs/examples" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    kept = dde.config.default_float()
    try:
        spec.loader.exec_module(module)
    finally:
        dde.config.set_default_float(kept)  # poisson_system sets float64
    for key, value in SMALL[name].items():
        setattr(module, key, value)
    return module


@pytest.fixture
def lbfgs_options():
    """DeepXDE's global L-BFGS options, restored after the test."""
    kept = dict(dde.optimizers.config.LBFGS_options)
    yield
    dde.optimizers.config.LBFGS_options.clear()
    dde.optimizers.config.LBFGS_options.update(kept)


@pytest.fixture
def float64():
    kept = dde.config.default_float()
    dde.config.set_default_float("float64")
    yield
    dde.config.set_default_float(kept)


def _records(result):
    return [read_record(r.out / "metrics.json") for r in result.runs]


# --- the five problems ---------------------------------------------------------------


@pytest.mark.slow
def test_observations_only_are_judged_on_the_unknowns(tmp_path, monkeypatch):
    """Lorenz inverse: no solution, three unknowns; the callback's file lands in
    each run's files/, the working directory keeps nothing."""
    monkeypatch.chdir(tmp_path)
    ex = example("lorenz_inverse")
    result = deepxde_lnn.compare(
        train=ex.train, nets=ex.NETS, true_values=ex.TRUE, fields=["x", "y", "z"],
        seeds=[0, 1], out="out", **QUIET,
    )  # fmt: skip
    assert {(v.method, v.field) for v in result.verdicts} == {
        ("lnn", f) for f in ("C1", "C2", "C3", "Avg")
    }
    for run, rec in zip(result.runs, _records(result)):
        assert rec["fields"] == ["C1", "C2", "C3"]
        learned = rec["variables"]["C1"]["final"]
        assert rec["metrics"]["C1"]["RMSE"] == pytest.approx(abs(learned - 10.0))
        assert "no solution" in rec["scored"]
        assert (run.out / "files" / "variables.dat").is_file()  # the callback's
        assert (run.out / "variables.csv").is_file()
    assert sorted(os.listdir(tmp_path)) == ["out"]  # nothing else written here
    assert os.getcwd() == str(tmp_path)
    assert (tmp_path / "out" / "summary.png").is_file()


@pytest.mark.slow
def test_a_reference_function_and_two_baselines(tmp_path, lbfgs_options):
    """Burgers: scored against the Cole-Hopf reference, resampling, Adam then
    L-BFGS limited to its maxiter; judged against the plain and the matched
    network, each a family, with the time each took."""
    ex = example("burgers")
    result = deepxde_lnn.compare(
        train=ex.train, nets=ex.NETS, reference=ex.cole_hopf, inputs=["x", "t"],
        baseline=["fnn", "fnn-matched"], seeds=[0, 1], out=tmp_path / "b", **QUIET,
    )  # fmt: skip
    assert result.baselines == ("fnn", "fnn-matched")
    assert [(v.method, v.baseline) for v in result.verdicts] == [
        ("lnn", "fnn"),
        ("lnn", "fnn-matched"),
    ]
    text = result.markdown
    assert "## Verdict against fnn" in text and "## Verdict against fnn-matched" in text
    assert all("time per run lnn" in str(v) for v in result.verdicts)
    for rec in _records(result):
        assert rec["scored"] == "the reference"
        assert "then L-BFGS" in rec["optimizer"]
        # maxiter held, not DeepXDE's 1000 per step (the trap); its loop may
        # overrun by a step of L-BFGS iterations
        assert rec["steps"] < ex.ADAM + 2 * ex.LBFGS


def test_the_cole_hopf_reference_is_the_heat_equations_transform():
    """At t = 0 it is the initial value; it stays odd in x and within [-1, 1]."""
    ex = example("burgers")
    x = np.linspace(-1, 1, 9)
    at = lambda t: ex.cole_hopf(np.stack([x, np.full_like(x, t)], 1))[:, 0]  # noqa
    np.testing.assert_allclose(at(0.0), -np.sin(np.pi * x), atol=1e-12)
    np.testing.assert_allclose(at(1e-6), -np.sin(np.pi * x), atol=1e-3)
    later = at(0.5)
    np.testing.assert_allclose(later, -later[::-1], atol=1e-9)
    assert np.abs(later).max() <= 1.0


@pytest.mark.slow
def test_a_hard_constraint_and_loss_weights(tmp_path):
    ex = example("wave_hard")
    result = deepxde_lnn.compare(
        train=ex.train, nets=ex.NETS, inputs=["x", "t"], seeds=[0, 1],
        out=tmp_path / "w", **QUIET,
    )  # fmt: skip
    for run, rec in zip(result.runs, _records(result)):
        assert "adam lr 0.001 (loss weights 1, 100, 100)" in rec["optimizer"]
        assert rec["optimizer"].startswith("script: ")
        with np.load(run.out / "fields.npz") as f:
            assert f["inputs"].tolist() == ["x", "t"]
    assert [v.field for v in result.verdicts] == ["u"]


@pytest.mark.slow
def test_an_aligned_deeponet_gives_both_relative_errors(tmp_path):
    ex = example("antiderivative")
    result = deepxde_lnn.compare(
        train=ex.train, nets=ex.NETS, seeds=[0, 1], out=tmp_path / "a", **QUIET
    )
    for rec in _records(result):
        per = rec["relL2_mean_per_function"]["u"]
        assert per > 0 and per != pytest.approx(rec["metrics"]["u"]["relL2"])
    assert "DeepXDE's operator metric, the mean of each function's relL2" in (
        result.markdown
    )


@pytest.mark.slow
def test_a_network_class_of_ones_own_float64_and_checkpoints(tmp_path, float64):
    """Two outputs from a class that does not say so; float64 set before
    compare holds in the worker processes; ModelCheckpoint's folder is made in
    each run's files/."""
    ex = example("poisson_system")
    result = deepxde_lnn.compare(
        train=ex.train, nets=ex.NETS, fields=["u", "v"], seeds=[0, 1],
        out=tmp_path / "p", verbose=False, progress=False, workers=2,
    )  # fmt: skip
    assert {(v.field) for v in result.verdicts} == {"u", "v", "Avg"}
    for run, rec in zip(result.runs, _records(result)):
        assert rec["fields"] == ["u", "v"] and rec["dtype"] == "float64"
        assert list((run.out / "files" / "ckpt").glob("model-*.pt"))
    assert "TwoHeads([1, 32, 32" not in _records(result)[0]["network"]  # not a FNN


# --- found before training, nothing written --------------------------------------


def _float64_inside(net):
    dde.config.set_default_float("float64")
    return no_solution(net)


def _float64_data(net):
    x = np.linspace(0, 1, 6)[:, None]  # NumPy's float64 into a float32 network
    data = dde.data.Triple(x, x, x, x)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=2, verbose=0)
    return model


def _empty_condition(net):
    line = dde.geometry.Interval(0, 1)
    nowhere = dde.icbc.DirichletBC(line, lambda x: 0, lambda x, on: False)
    data = dde.data.PDE(
        line, lambda x, u: dde.grad.hessian(u, x) + 1, [nowhere], 8, 2,
        solution=lambda x: x * (1 - x) / 2, num_test=5,
    )  # fmt: skip
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=2, verbose=0)
    return model


class _Wide(dde.nn.NN):
    """A network of its own with three outputs, saying nothing of them."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(1, 3)

    def forward(self, x):
        return torch.tanh(self.layer(x))


def _solved(net):
    data = dde.data.PDE(
        dde.geometry.Interval(0, 1), lambda x, u: dde.grad.hessian(u, x) + 1, [],
        8, 2, solution=lambda x: x * (1 - x) / 2, num_test=5,
    )  # fmt: skip
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    model.train(iterations=2, verbose=0)
    return model


FNN = {"fnn": lambda: dde.nn.FNN([1, 4, 1], "tanh", "Glorot uniform")}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(train=no_solution), "^reference: .* or true_values= to judge the unknowns"),
        (dict(train=_float64_inside), "^train: the function sets DeepXDE's float type"),
        (dict(train=_float64_data), r"^train: the first training step .*astype"),
        (dict(train=_empty_condition), "^train: the first training losses .* nan"),
        (dict(train=_solved, nets={"w": _Wide}), r"^nets\['w'\]: the network gives 15"),
        (dict(train=_solved, fields=["u", "v"]), "^fields: 2 names, but the network"),
        (dict(train=_solved, inputs=["x", "t"]), "^inputs: 2 names, but the scoring"),
        (dict(train=_solved, true_values=[1.0]), "^true_values: 1 values for the model's 0"),
        (dict(train=_solved, score="best", reference=(np.ones((3, 1)),) * 2),
         "^score: 'best'"),
    ],
)  # fmt: skip
def test_what_cannot_work_is_found_before_the_first_run_trains(tmp_path, kwargs, match):
    kwargs.setdefault("nets", FNN)
    kept = dde.config.default_float()
    with pytest.raises(ValueError, match=match):
        deepxde_lnn.compare(**kwargs, seeds=[0], out=tmp_path / "o", **QUIET)
    assert dde.config.default_float() == kept
    assert not (tmp_path / "o").exists()  # nothing written


def test_a_function_that_changes_directory_moves_no_result(tmp_path, monkeypatch):
    """Relative ``out`` is fixed before anything runs; the caller's working
    directory is restored after the function (issue 43, item 4)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "victim").mkdir()

    def wanders(net):
        os.chdir(tmp_path / "victim")
        return _solved(net)

    deepxde_lnn.compare(train=wanders, nets=FNN, seeds=[0], out="rel", **QUIET)
    assert os.getcwd() == str(tmp_path)
    assert (tmp_path / "rel" / "summary.md").is_file()
    assert (tmp_path / "rel" / "fnn" / "seed-0" / "metrics.json").is_file()
    assert not list((tmp_path / "victim").iterdir())


def test_labels_say_what_ran(tmp_path):
    """No variables.csv without unknowns; no "lr yours"; the FNN's sizes; the
    script's own recipe; a re-run's reuse said plainly."""
    kw = dict(train=_solved, nets=FNN, seeds=[0], out=tmp_path / "o")
    result = deepxde_lnn.compare(**kw, **QUIET)
    (run,) = result.runs
    rec = read_record(run.out / "metrics.json")
    assert not (run.out / "variables.csv").exists()
    assert rec["network"] == "FNN([1, 4, 1])"
    assert rec["optimizer"] == "script: adam lr 0.001; scored on the final iterate"
    printed = io.StringIO()
    with redirect_stdout(printed):
        deepxde_lnn.compare(**kw, workers=1, progress=False)
    assert "fnn seed 0: done, reused" in printed.getvalue()
    assert "yours" not in printed.getvalue()


def test_describe_reads_the_sizes_off_a_plain_torch_stack():
    assert describe(dde.nn.FNN([2, 8, 8, 1], "tanh", "Glorot uniform")) == (
        "FNN([2, 8, 8, 1])"
    )
    assert describe(_Wide()) == "_Wide(linear 1→3; 6 parameters)"  # issue 52, item 4


# --- what the console says is what summary.md says ----------------------------------


def _family_of_nine():
    """Nine comparisons each 'better' alone (p about 0.01), not after Holm."""
    base = {1: 1.0, 2: 1.0, 3: 1.0}
    a = {1: np.exp(-0.3), 2: np.exp(-0.2), 3: np.exp(-0.25)}
    return [("lnn", f"u{i}", ratio_ci(a, base)) for i in range(9)]


def test_a_verdict_is_its_familys_as_summary_md_says_it():
    found = _family_of_nine()
    judged = judge(found, "pinn")
    verdicts = [
        Verdict(j.method, j.baseline, j.field, "RMSE", j.ci, j.adjusted, j.line)
        for j in judged
    ]
    for v in verdicts:
        assert v.unadjusted == "better"
        assert v.verdict != "better"  # Holm over nine: not decided alone
        # the verdict that counts leads, the interval's own beside it
        assert str(v).startswith(f"{v.field} RMSE: {v.verdict} (Holm over 9; ")
        assert "alone: better" in str(v)


def test_print_of_a_comparison_gives_the_verdicts_first(tmp_path):
    result = deepxde_lnn.compare(
        train=_solved,
        nets={
            **FNN,
            "lnn": lambda: deepxde_lnn.LNN([1, 4, 1], "tanh", "Glorot uniform"),
        },
        seeds=[0, 1],
        out=tmp_path / "o",
        **QUIET,
    )
    lines = repr(result).splitlines()
    assert lines[1].startswith("  u RMSE: lnn/fnn error ratio")
    assert lines[1].strip() in result.markdown


def test_interval_bounds_keep_their_side_of_one():
    assert bound_text(1.0012) == "1.001"
    assert bound_text(0.99996) == "0.99996"
    assert bound_text(0.479) == "0.479" and bound_text(1.0) == "1"


def _exits(net):
    raise SystemExit(3)


def test_sys_exit_in_train_is_an_error_not_the_callers_exit(tmp_path):
    """(issue 43, item 13)"""
    with pytest.raises(ValueError, match="^train raised SystemExit: 3"):
        deepxde_lnn.compare(train=_exits, nets=FNN, seeds=[0], out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_a_case_file_that_exits_is_an_error(tmp_path):
    path = tmp_path / "exits.py"
    path.write_text("raise SystemExit(0)\n")
    with pytest.raises(ValueError, match="^case: .*exits.py failed: SystemExit"):
        deepxde_lnn.compare(str(path), seeds=[0], out=tmp_path / "o")


def _vector(net):
    c = dde.Variable(np.array([2.0, 3.0]))  # one variable, two unknowns
    data = dde.data.PDE(
        dde.geometry.Interval(0, 1), lambda x, u: dde.grad.hessian(u, x) + c[0] + c[1],
        [], 8, 2, solution=lambda x: x * (1 - x), num_test=5,
    )  # fmt: skip
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-2, external_trainable_variables=c)
    model.train(iterations=3, verbose=0)
    return model


def test_a_vector_unknown_is_one_unknown_per_entry(tmp_path):
    """(issue 43, item 11)"""
    result = deepxde_lnn.compare(
        train=_vector, nets=FNN, true_values={"a": 1.0, "b": 1.0}, seeds=[0],
        out=tmp_path / "o", **QUIET,
    )  # fmt: skip
    rec = result.runs[0].record
    assert set(rec["variables"]) == {"a", "b"}
    assert rec["variables"]["a"]["final"] != rec["variables"]["b"]["final"]
    assert np.loadtxt(result.runs[0].out / "variables.csv", delimiter=",",
                      skiprows=1, ndmin=2).shape[1] == 3  # fmt: skip


@pytest.mark.parametrize("name", ["-C", "ü", "=HYPERLINK(1)"])
def test_a_name_that_reaches_a_record_is_checked_before_training(tmp_path, name):
    """(issue 43, item 6) the reader's rule, before anything trains."""
    with pytest.raises(ValueError, match="true_values: a variable's name must be"):
        deepxde_lnn.compare(
            train=_vector, nets=FNN, true_values={name: 1.0, "b": 1.0}, seeds=[0],
            out=tmp_path / "o", **QUIET,
        )  # fmt: skip
    with pytest.raises(ValueError, match="fields: a name must be"):
        deepxde_lnn.compare(
            train=_solved, nets=FNN, fields=[name], seeds=[0], out=tmp_path / "o",
            **QUIET,
        )  # fmt: skip
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["-u", "ü", "=HYPERLINK(1)", "Avg"])
def test_a_case_files_field_names_are_checked_when_it_is_declared(name):
    import dataclasses

    from helpers import tiny_case

    with pytest.raises(ValueError, match="fields"):
        dataclasses.replace(tiny_case(), fields=(name,))


@pytest.mark.parametrize(
    "reference, match",
    [
        (lambda x: np.full(len(x), np.nan), "^reference: the values it returns must"),
        (lambda x: "abc", "^reference: the values it returns must"),
        ((np.array([[np.nan]]), np.ones((1, 1))), "^reference: X must"),
        ((np.ones((2, 1)), np.array([object(), 1])), "^reference: Y must"),
        ((np.zeros((10**7 + 1, 1), np.float32), np.ones(1)), "^reference: X has"),
        (lambda x: 1 / 0, "^reference raised ZeroDivisionError"),
    ],
)
def test_a_reference_is_checked_before_training(tmp_path, reference, match):
    """(issue 43, item 7) NaN, strings, objects, too many rows: before training."""
    with pytest.raises(ValueError, match=match):
        deepxde_lnn.compare(
            train=no_solution, nets=FNN, reference=reference, seeds=[0],
            out=tmp_path / "o", **QUIET,
        )  # fmt: skip
    assert not (tmp_path / "o").exists()
