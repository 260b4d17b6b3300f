"""One home per option: the command line, the API, the case scripts, the records
and docs/options.md all derive from the fields of deepxde_lnn.config."""

import re
from pathlib import Path

import pytest
from helpers import run_cli

import deepxde_lnn
from deepxde_lnn import case_script as example
from deepxde_lnn import cli
from deepxde_lnn.config import (
    Execution,
    Options,
    RunConfig,
    Training,
    Verdicts,
    option_fields,
)
from deepxde_lnn.flags import options_markdown
from deepxde_lnn.study import registry

ROOT = Path(__file__).resolve().parents[1]


def _flags(parser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}


def test_docs_options_is_generated_from_the_fields():
    assert (ROOT / "docs" / "options.md").read_text() == options_markdown()


@pytest.mark.parametrize("command", ["compare", "sweep", "ablate"])
def test_every_option_has_its_flag(command):
    sub = cli.build_parser()._subparsers._group_actions[0].choices[command]
    for name, f in option_fields().items():
        dashed = name.replace("_", "-")
        flag = f"--no-{dashed}" if f.default is True else f"--{dashed}"
        assert (flag in _flags(sub)) == f.metadata["cli"], name


def test_a_no_flag_says_that_it_turns_its_option_off():
    """``--no-NAME`` (an option on by default) reads as what it does: it turns
    off what the option's help describes."""
    sub = cli.build_parser()._subparsers._group_actions[0].choices["compare"]
    helps = {a.option_strings[0]: a.help for a in sub._actions if a.option_strings}
    for name, f in option_fields().items():
        if f.default is True and f.metadata["cli"]:
            want = f"off: {f.metadata['help']} (on by default)".replace("%", "%%")
            assert helps[f"--no-{name.replace('_', '-')}"] == want


def test_run_and_the_scripts_take_the_training_options():
    run = cli.build_parser()._subparsers._group_actions[0].choices["run"]
    names = {n.replace("_", "-") for n in option_fields(Training)}
    assert {f"--{n}" for n in names} <= _flags(run)
    with pytest.raises(SystemExit):  # a script has no time budget
        example.parse_args(registry.get("laplace"), ["--seconds", "5"])


def test_a_flag_reaches_the_api_keyword_with_its_value():
    p = cli.build_parser()
    argv = ["compare", "laplace", "--decay", "inverse time,100,0.5", "--margin", "3"]
    got = cli._settings(p.parse_args([*argv, "--no-progress", "--workers", "2"]))
    assert got["decay"] == ("inverse time", 100.0, 0.5) and got["margin"] == 3.0
    assert got["progress"] is False and got["workers"] == 2
    o = Options.of(got, "compare()", option_fields())
    assert o.training.decay == ("inverse time", 100.0, 0.5)


def test_the_documented_text_forms_are_python_forms_too():
    """``decay`` and ``loss_weights`` as the docs and the command line write
    them are taken by the API as DeepXDE's tuples (issue 42, item 5)."""
    t = Training(decay="inverse time,1000,0.5", loss_weights="1,10,10")
    assert t.decay == ("inverse time", 1000.0, 0.5)
    assert t.loss_weights == (1.0, 10.0, 10.0)
    assert Training(decay=("inverse time", 1000, 0.5)).decay == t.decay


@pytest.mark.parametrize(
    "cls, kwargs, message",
    [
        (Training, dict(lr=0), r"^lr must be a finite number > 0"),
        (Training, dict(iterations=2.5), r"^iterations must be an integer"),
        (Training, dict(decay=5), r"^decay must be DeepXDE's \(name, numbers"),
        (
            Training,
            dict(compile_jets="yes"),
            r"^compile_jets must be True, False or 'auto'",
        ),
        (Execution, dict(overwrite="False"), r"^overwrite must be True or False"),
        (Execution, dict(progress=1), r"^progress must be True or False"),
        (Execution, dict(stack="maybe"), r"^stack must be one of auto, on, off"),
        (Verdicts, dict(margin=1), r"^margin must be a finite number > 1"),
        # issue 55, item 5: a count no record could hold
        (Training, dict(iterations=10**31), r"^iterations must be an integer in \[1, "),
    ],
)
def test_each_option_is_checked_by_its_field(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls(**kwargs)


@pytest.mark.parametrize(
    "text, said",
    [
        ("inverse time,0,0", "decay_steps of 'inverse time' must be a whole number"),
        (
            "cosine,0,0",
            "T_max of 'cosine' must be a whole number in [1, 1e+15]; got 0.0",
        ),
        (
            "step,0,0.5",
            "step_size of 'step' must be a whole number in [1, 1e+15]; got 0.0",
        ),
        ("step,10,0", "gamma of 'step' must be in (0, 1]; got 0.0"),
        ("lambda,1", "decay: 'lambda' is not a schedule here; use 'step', 'cosine'"),
        ("exponential,1e308", "gamma of 'exponential' must be in (0, 1]; got 1e+308"),
        ("inverse time,100,-0.5", "decay_rate of 'inverse time' must be > 0"),
        ("exponential", "decay: 'exponential' takes 1 number(s) (gamma)"),
        # issue 55, item 4: a floor above the learning rate (1e-3 here)
        ("cosine,10,1e308", "the floor eta_min of 'cosine' (1e+308) is above"),
        ("cosine,10,5", "the floor eta_min of 'cosine' (5) is above the learning"),
    ],
)
def test_a_decay_that_cannot_train_is_refused_before_anything(
    tmp_path, capsys, text, said
):
    # issue 43, item 8: these divided by zero, overflowed or raised a TypeError
    # once run folders existed, or trained with a growing or negative lr
    out, tiny = tmp_path / "o", dict(methods=["pinn"], seeds=[1], iterations=2)
    argv = ["compare", "laplace", "--methods", "pinn", "--seeds", "1"]
    argv += ["--iterations", "2", "--workers", "1", "--decay", text]
    code, io = run_cli([*argv, "--out", str(out)], capsys)
    assert code == 2 and io.err.count("\n") == 1 and said in io.err, io.err
    kind, *numbers = text.split(",")
    with pytest.raises(ValueError, match=re.escape(said)):
        deepxde_lnn.compare(
            "laplace", decay=(kind, *map(float, numbers)), out=out, workers=1, **tiny
        )
    assert not out.exists()


def test_a_decay_of_an_integer_beyond_floats_is_refused_by_name():
    # issue 55, item 12: an OverflowError before
    with pytest.raises(ValueError, match=r"^decay must be DeepXDE's \(name, numbers"):
        Training(decay=("step", 10**400, 0.5))


def test_the_api_refuses_a_non_bool_flag_and_an_unknown_option(tmp_path):
    quiet = dict(progress=False, verbose=False, iterations=2)
    for bad in (dict(overwrite="False"), dict(resume="no")):
        with pytest.raises(ValueError, match="must be True or False"):
            deepxde_lnn.run("laplace", out=tmp_path / "r", **quiet, **bad)
    with pytest.raises(ValueError, match=r"^workers: unknown option of run\(\)"):
        deepxde_lnn.run("laplace", out=tmp_path / "r", workers=2, **quiet)
    with pytest.raises(ValueError, match=r"^seeds must be a list of seeds; got 3"):
        deepxde_lnn.compare("laplace", seeds=3, out=tmp_path / "c", **quiet)
    assert not (tmp_path / "r").exists() and not (tmp_path / "c").exists()


def test_identity_holds_the_options_that_shape_a_run():
    case = registry.get("laplace")
    cfg = RunConfig("laplace", "pinn", 1, iterations=5, compile_jets=True)
    ident = cfg.resolved(case).identity()
    assert set(ident) == {
        "case",
        "method",
        "seed",
        "lr",
        "iterations",
        "profile",
        "dtype",
        "decay",
    }  # the quick profile decays the lr
    fast = RunConfig("laplace", "pinn", 1, iterations=5, checkpoint_every=2)
    assert fast.resolved(case).identity() == ident  # how it computes: not identity


def test_a_config_is_resolved_once_per_problem_object(monkeypatch):
    import copy
    import pickle
    from dataclasses import replace

    case = registry.get("drift_decay")
    calls = []
    real = type(case).profile
    monkeypatch.setattr(
        type(case), "profile", lambda self, n: calls.append(n) or real(self, n)
    )
    cfg = RunConfig("drift_decay", "lnn", 0).resolved(case)
    assert cfg.resolved(case) is cfg and calls == [cfg.profile]
    assert cfg.resolved(copy.copy(case)) == cfg  # another problem object: again
    again = pickle.loads(pickle.dumps(cfg))  # a worker resolves it for itself
    assert again == cfg and again.resolved(case) is not again
    changed = replace(cfg, seed=1)  # a changed config is checked anew
    assert changed.resolved(case) is not changed
    with pytest.raises(ValueError, match="seed"):
        replace(cfg, seed=-1).resolved(case)
    assert len(calls) == 4
