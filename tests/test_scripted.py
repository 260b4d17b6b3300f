"""Route 1: the user's training function, ``compare(train=fn, nets=...)``."""

import functools
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn.runs.records import read_record

ROOT = Path(__file__).resolve().parents[1]
SIZES = [2, 8, 8, 1]
NETS = {
    "fnn": lambda: dde.nn.FNN(SIZES, "tanh", "Glorot uniform"),
    "lnn": lambda: deepxde_lnn.LNN(SIZES, "tanh", "Glorot uniform"),
}


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs/examples" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inverse_data(c):
    """The docs example's inverse diffusion problem, with fewer points."""
    inverse = _example("diffusion_inverse.py")
    return inverse.diffusion_data(c, points=16, sides=6, start=4, seen=5, test=30)


def recipe(net):
    """Everything a DeepXDE user's recipe may hold: an unknown, loss weights, a
    schedule, a resampling callback, Adam then L-BFGS."""
    c = dde.Variable(2.0)
    data = _inverse_data(c)
    model = dde.Model(data, net)
    model.compile(
        "adam",
        lr=1e-3,
        loss_weights=[1, 2, 2, 5],
        decay=("inverse time", 10, 0.5),
        external_trainable_variables=c,
    )
    resample = dde.callbacks.PDEPointResampler(period=5)
    model.train(iterations=20, display_every=5, callbacks=[resample], verbose=0)
    dde.optimizers.config.set_LBFGS_options(maxiter=10)
    dde.optimizers.config.LBFGS_options.update(iter_per_step=5, fun_per_step=6)
    model.compile("L-BFGS", external_trainable_variables=c)
    model.train(verbose=0)
    return model


def wild(net):
    """Adam, then at a far too large lr: the best model is not the last."""
    model = dde.Model(_inverse_data(dde.Variable(2.0)), net)
    model.compile("adam", lr=1e-2)
    model.train(iterations=10, display_every=5, verbose=0)
    model.compile("adam", lr=10.0)
    model.train(iterations=5, display_every=5, verbose=0)
    return model


def short(net):
    c = dde.Variable(2.0)
    model = dde.Model(_inverse_data(c), net)
    model.compile("adam", lr=1e-2, external_trainable_variables=c)
    model.train(iterations=15, display_every=5, verbose=0)
    return model


def _loss(folder: Path) -> np.ndarray:
    return np.loadtxt(folder / "loss.csv", delimiter=",", skiprows=1, ndmin=2)


@pytest.fixture
def lbfgs_options():
    """DeepXDE's global L-BFGS options, restored after the test."""
    kept = dict(dde.optimizers.config.LBFGS_options)
    yield
    dde.optimizers.config.LBFGS_options.clear()
    dde.optimizers.config.LBFGS_options.update(kept)


@pytest.mark.slow
def test_a_recipe_trains_as_the_same_calls_in_a_plain_script(tmp_path, lbfgs_options):
    """Same seed: the run's loss history and learned C are the plain script's,
    step for step (loss weights, decay, resampling, L-BFGS, the unknown C)."""
    res = deepxde_lnn.run(
        train=recipe, nets=NETS, method="lnn", seed=3, out=tmp_path / "r"
    )
    dde.config.set_random_seed(3)
    model = recipe(NETS["lnn"]())
    history = model.losshistory
    expected = np.array([np.ravel(v) for v in history.loss_train])
    table = _loss(tmp_path / "r")
    assert table[:, 0].tolist() == history.steps
    np.testing.assert_allclose(table[:, 2:], expected, rtol=1e-6, atol=0)
    c = float(model.external_trainable_variables[0].detach())
    assert res.record["variables"]["var"]["final"] == pytest.approx(c, rel=1e-6)
    assert c != 2.0
    assert res.record["steps"] == model.train_state.step > 20  # Adam, then L-BFGS
    assert "L-BFGS" in res.record["optimizer"] or "LBFGS" in res.record["optimizer"]


@pytest.mark.slow
def test_the_inverse_example_records_and_judges_the_unknown(tmp_path, monkeypatch):
    example = _example("diffusion_inverse.py")
    monkeypatch.setattr(example, "ITERATIONS", 30)
    kw = dict(train=example.train, nets=example.NETS, true_values={"C": 1.0})
    result = deepxde_lnn.compare(
        **kw,
        seeds=[0, 1],
        workers=1,
        out=tmp_path / "inv",
        verbose=False,
        progress=False,
    )
    judged = {(v.method, v.field) for v in result.verdicts}
    # against fnn, the first net: the fields and the unknown
    assert judged == {(m, f) for m in ("lnn", "fnn-matched") for f in ("u", "C")}
    for run in result.runs:
        rec = read_record(run.out / "metrics.json")
        learned = rec["variables"]["C"]
        assert learned["true"] == 1.0 and learned["final"] != 2.0  # it moved
        assert rec["extra_metrics"]["C"]["RMSE"] == pytest.approx(
            abs(learned["final"] - 1.0)
        )
        assert rec["lr"] is None and rec["profile"] == "quick"
        trajectory = np.loadtxt(
            run.out / "variables.csv", delimiter=",", skiprows=1, ndmin=2
        )
        assert trajectory[0].tolist() == [0.0, 2.0]
        assert trajectory[-1, 1] == pytest.approx(learned["final"])
        assert (run.out / "train.log").is_file()
    text = (tmp_path / "inv" / "summary.md").read_text()
    assert "## C" in text and "Trained by your function" in text
    assert "paper" not in text  # a user's problem has no paper note
    again = deepxde_lnn.compare(
        **kw, seeds=[0, 1], workers=1, out=tmp_path / "inv", verbose=False
    )
    assert {r.status for r in again.runs} == {"reused"}


def test_best_is_deepxdes_best_model(tmp_path):
    res = deepxde_lnn.run(
        train=wild, nets=NETS, method="fnn", seed=0, out=tmp_path / "b", score="best"
    )
    dde.config.set_random_seed(0)
    model = wild(NETS["fnn"]())
    assert model.train_state.best_step != model.train_state.step
    x, y = model.data.test()[:2]
    best = model.train_state.best_y
    rmse = float(np.sqrt(np.mean((best.astype(np.float64) - y) ** 2)))
    assert res.record["metrics"]["u"]["RMSE"] == pytest.approx(rmse, rel=1e-6)
    assert "best model" in res.record["optimizer"]
    final = deepxde_lnn.run(train=wild, nets=NETS, method="fnn", out=tmp_path / "f")
    assert final.record["metrics"] != res.record["metrics"]


def _returns(value):
    def train(net):
        return value(net)

    return train


def _untrained(net):
    model = dde.Model(_inverse_data(dde.Variable(1.0)), net)
    model.compile("adam", lr=1e-3)
    return model


def _trains_then(value):
    """A ``train`` that trains and then returns ``value`` (not its model)."""

    def train(net):
        model = short(net)
        return value(model)

    return train


def _reads_its_history(net):
    """Reads its loss history after training (empty in the dry call): fine."""
    model = short(net)
    assert model.losshistory.loss_train[-1] is not None
    return model


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(train=_returns(lambda net: net)), "train: the function returned FNN"),
        # issue 55, item 12: found by the dry call, before any run trains
        (dict(train=_trains_then(lambda m: None)), "returned NoneType, not the dde"),
        (dict(train=_trains_then(lambda m: "done")), "returned str, not the dde"),
        (dict(train=_untrained), "train: .* without calling model.train"),
        (dict(train=_returns(lambda net: 1 / 0)), "train raised ZeroDivisionError"),
        (dict(train=short, lr=1e-3), "^lr: with train="),
        (dict(train=short, iterations=10), "^iterations: with train="),
        (dict(train=short, true_values=[1.0, 2.0]), "true_values: 2 values"),
        (dict(train=short, true_values="C"), "true_values must be"),
        # issue 55, item 12: a scalar or complex reference, refused by name
        (dict(train=short, reference=(np.ones((3, 1)), 3.0)), "reference: Y must be"),
        (dict(train=short, reference=(np.ones((3, 1)), np.ones(3) * 1j)), "complex"),
        # issue 55, item 2: an unknown named like a field would replace it
        (dict(train=short, true_values={"u": 2.0}), "true_values: 'u' names a field"),
        # issue 63, item 14: names one case-insensitive file system would merge
        (dict(train=short, true_values={"C": 1.0, "c": 2.0}), "true_values: 'C' and"),
        (dict(train=short, true_values={"U": 2.0}), "true_values: 'U' names a field"),
        (dict(train=short, fields=["u", "U"]), "fields: 'u' and 'U' differ only"),
        (dict(train=short, reference=(1, 2, 3)), "reference must be"),
        (dict(train="short"), "train must be a function"),
        (
            dict(
                train=short,
                nets={
                    "a": NETS["fnn"],
                    "b": lambda: dde.nn.FNN([2, 4, 3], "tanh", "Glorot uniform"),
                },
            ),
            "nets: the networks differ in their outputs",
        ),
    ],
)
def test_bad_input_is_one_error_naming_the_argument(tmp_path, kwargs, match):
    kwargs.setdefault("nets", {"fnn": NETS["fnn"]})
    with pytest.raises(ValueError, match=match):
        deepxde_lnn.compare(
            **kwargs, seeds=[0], workers=1, out=tmp_path / "o", verbose=False
        )
    assert not (tmp_path / "o").exists()  # found before anything was written


class _NaNWhenScored(dde.nn.FNN):
    """A network whose training losses are finite but whose predictions, made in
    eval mode as a run is scored, are NaN."""

    def forward(self, x):
        out = super().forward(x)
        return out if self.training else out * float("nan")


@pytest.mark.slow
def test_an_error_that_is_not_a_number_is_a_failed_run_and_the_comparison_ends(
    tmp_path,
):
    # reliability item 2: "metrics.u.RMSE is nan" and a true value of 5e-324
    # (relative error inf) once left loss.csv without a record, every call again
    nets = {
        "fnn": NETS["fnn"],
        "bad": lambda: _NaNWhenScored(SIZES, "tanh", "Glorot uniform"),
    }
    kw = dict(train=short, nets=nets, seeds=[0, 1], true_values={"C": 5e-324})
    kw.update(workers=1, out=tmp_path / "o", verbose=False, progress=False)
    result = deepxde_lnn.compare(**kw)
    assert {r.status for r in result.runs} == {"done"}
    for run in result.runs:
        rec = read_record(run.out / "metrics.json")
        assert rec["variables"]["C"]["relative_error"] is None
        failed = set(rec["metrics"]["u"].values()) == {None}
        assert failed == (run.method == "bad")
    rmse = {
        (r["method"], r["field"]): r for r in result.summary if r["metric"] == "RMSE"
    }
    assert rmse["bad", "u"]["failures"] == 2 and rmse["bad", "C"]["failures"] == 0
    assert {(v.method, v.field) for v in result.verdicts} == {("bad", "C")}
    again = deepxde_lnn.compare(**kw)
    assert {r.status for r in again.runs} == {"reused"}


def test_code_after_the_skipped_training_is_not_held_against_the_function():
    from deepxde_lnn.problems.scripted_problem import ScriptedProblem

    problem = ScriptedProblem(_reads_its_history, {"fnn": NETS["fnn"]})
    assert problem.probe.outputs == 1


def test_best_is_refused_where_the_runner_trains(tmp_path):
    with pytest.raises(ValueError, match="^score: 'best' is not offered"):
        deepxde_lnn.compare("laplace", seeds=[0], score="best", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_operator_data_without_solution_needs_a_reference(tmp_path):
    from helpers import no_solution

    nets = {"fnn": lambda: dde.nn.FNN([1, 4, 1], "tanh", "Glorot uniform")}
    with pytest.raises(ValueError, match="^reference: the model's test data"):
        deepxde_lnn.run(train=no_solution, nets=nets, out=tmp_path / "a")
    x = np.linspace(0, 1, 7)[:, None]
    res = deepxde_lnn.run(
        train=no_solution, nets=nets, out=tmp_path / "b", reference=(x, x * (1 - x) / 2)
    )
    assert res.record["grid_points"] == 7
    res = deepxde_lnn.run(
        train=no_solution,
        nets=nets,
        out=tmp_path / "c",
        reference=lambda x: x * (1 - x) / 2,
    )
    assert res.record["grid_points"] == 5
    json.dumps(res.record)


def test_the_operator_example_compares_through_route_1(tmp_path):
    example = _example("poisson_operator.py")
    nets = {k: example.NETS[k] for k in ("deeponet", "liquid-both")}
    train = functools.partial(example.train, adam=4, lbfgs=0, functions=4, points=8)
    result = deepxde_lnn.compare(
        train=train,
        nets=nets,
        name="poisson_operator",
        reference=example.reference(functions=5, points=11),
        seeds=[0, 1],
        workers=1,
        out=tmp_path / "op",
        verbose=False,
    )
    ((method, field),) = {(v.method, v.field) for v in result.verdicts}
    assert (method, field, result.baseline) == ("liquid-both", "u", "deeponet")
    for run in result.runs:
        assert run.record["grid_points"] == 55  # 5 sources x 11 points
        assert run.record["steps"] == 4 and run.record["fields"] == ["u"]
    assert (tmp_path / "op" / "summary.png").is_file()


@pytest.mark.parametrize(
    "x, kind",
    [
        (np.linspace(0, 1, 9)[:, None], "line"),
        (np.tile(np.linspace(0, 1, 3)[:, None], (4, 1)), "line"),  # 4 functions
        (np.random.default_rng(0).uniform(size=(30, 2)), "points"),
        (np.random.default_rng(0).uniform(size=(40, 3)), "points"),
    ],
)
def test_error_panels_draw_scattered_points(x, kind):
    from deepxde_lnn.analysis.figures import error_panel, plt_module
    from deepxde_lnn.analysis.summaries import error_norm

    plt = plt_module()
    error = np.abs(np.sin(7 * x.sum(1))) + 1e-3
    f = dict(x=x, axes=np.array(()), mask=np.ones(len(x), bool))
    fig, ax = plt.subplots()
    error_panel(ax, fig, f, error, error_norm([error]))
    drawn = ax.get_lines() if kind == "line" else ax.collections
    assert len(drawn) == 1
    if kind == "line":
        assert len(drawn[0].get_xdata()) == len(np.unique(x[:, 0]))
    else:
        assert 0 < len(drawn[0].get_offsets()) <= len(x)
    plt.close(fig)


def test_the_remaining_time_is_estimated_from_the_pace_so_far():
    from deepxde_lnn.experiments.orchestration import remaining_time

    assert (
        remaining_time(2, 8, 60)
        == "2/8 runs finished in 60 s; about 3 min left at this pace"
    )
    assert remaining_time(8, 8, 7200) == "8/8 runs finished in 2.0 h"


def test_a_problem_is_named_after_its_script_when_its_function_says_nothing(tmp_path):
    # issue 52, item 6: every user's function is called train
    from deepxde_lnn.problems.deepxde_problem import default_name

    script = tmp_path / "allen_cahn.py"
    script.write_text(
        "def train(net):\n    return net\n\ndef heat_1d(net):\n    pass\n"
    )
    space = {}
    exec(compile(script.read_text(), str(script), "exec"), space)
    assert default_name(space["train"], "script") == "allen_cahn"
    assert default_name(space["heat_1d"], "script") == "heat_1d"
    typed = {}
    exec(compile("train = lambda net: net", "<stdin>", "exec"), typed)
    assert default_name(typed["train"], "script") == "script"  # a lambda, no file


def reads_its_data(net):
    """Reads its points by a relative path, as DeepXDE's inverse examples do, and
    writes by relative paths what DeepXDE writes for it."""
    x = np.loadtxt("dataset/points.dat")[:, None]
    data = dde.data.PDE(
        dde.geometry.Interval(0, 1),
        lambda x, u: dde.grad.hessian(u, x) + 1,
        [],
        num_domain=4,
        anchors=x,
        num_test=5,
        solution=lambda x: x * (1 - x) / 2,
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    check = dde.callbacks.ModelCheckpoint("ckpt/model", period=2)
    history, state = model.train(iterations=2, callbacks=[check], verbose=0)
    dde.saveplot(history, state, issave=True, isplot=False)
    return model


@pytest.mark.parametrize(
    "workers",
    [1, pytest.param(2, marks=pytest.mark.slow)],  # 2: a pool starts
)
def test_train_reads_where_it_was_launched_and_writes_in_each_runs_files(
    tmp_path, monkeypatch, workers
):
    # issue 52, item 7: a relative data path works; DeepXDE's files never collide
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dataset").mkdir()
    np.savetxt(tmp_path / "dataset/points.dat", np.linspace(0.1, 0.9, 5))
    nets = {"fnn": lambda: dde.nn.FNN([1, 4, 1], "tanh", "Glorot uniform")}
    result = deepxde_lnn.compare(
        train=reads_its_data, nets=nets, seeds=[0, 1], out="out", workers=workers,
        verbose=False, progress=False,
    )  # fmt: skip
    for run in result.runs:
        files = run.out / "files"
        assert {p.name for p in files.iterdir()} == {"ckpt", *DATS}
        assert list((files / "ckpt").glob("model-*.pt"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset", "out"]
    assert Path.cwd() == tmp_path


DATS = ("loss.dat", "train.dat", "test.dat")


def test_what_deepxde_writes_by_a_relative_path_is_redirected_and_put_back(tmp_path):
    from deepxde.utils import external

    from deepxde_lnn.problems.user_files import PATH_ARGUMENTS, writing_to

    before = {key: getattr(*key) for key in PATH_ARGUMENTS}
    with writing_to(tmp_path / "f") as folder:
        value = dde.callbacks.VariableValue(dde.Variable(1.0), filename="sub/v.dat")
        value.file.close()
        assert Path(value.file.name) == folder / "sub/v.dat"
        assert dde.saveplot is not before[(external, "saveplot")]
        absolute = tmp_path / "mine.dat"
        value = dde.callbacks.VariableValue(dde.Variable(1.0), filename=absolute)
        value.file.close()
    assert (tmp_path / "mine.dat").is_file()  # an absolute path is the user's
    assert {key: getattr(*key) for key in PATH_ARGUMENTS} == before
    assert dde.saveplot is before[(external, "saveplot")]
