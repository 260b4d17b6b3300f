"""The settled profiles: the quick (or paper) profile's counts and steps with
Adam's learning rate decaying to 1 % over the run, 8 seeds, stacked
(docs/protocol.md, The settled profile)."""

import json
import math

import pytest

from deepxde_lnn.config import RunConfig, stackable_training
from deepxde_lnn.study import catalog, registry, shipped

NAMES = shipped.names_of("paper")  # the settled profiles: the paper study's


@pytest.mark.parametrize("name", NAMES)
def test_settled_is_quick_with_a_decay_to_one_percent_and_8_seeds(name):
    case = catalog.info(name)  # what reports and the command line read
    quick, settled = case.profile("quick"), case.profile("settled")
    assert (settled.counts, settled.iterations, settled.lr, settled.seed) == (
        quick.counts,
        quick.iterations,
        quick.lr,
        quick.seed,
    )
    assert (settled.grid_n, settled.dtype, settled.lbfgs) == (None, "float32", 0)
    assert settled.n_seeds == 8 and settled.resample  # stackable: points redrawn
    kind, g = settled.decay
    assert kind == "exponential"
    # DeepXDE's exponential decay: lr_k = lr * g**k, 1 % of the start at the end
    assert g**settled.iterations == pytest.approx(0.01, rel=1e-9)
    cfg = RunConfig(name, "lnn", profile="settled").resolved(case)
    assert cfg.iterations == quick.iterations and cfg.decay == settled.decay
    assert stackable_training(settled, cfg)


@pytest.mark.parametrize("name", NAMES)
def test_settled_paper_is_the_papers_counts_and_steps_heat_fewer(name):
    case = catalog.info(name)
    paper, tier = case.profile("paper"), case.profile("settled-paper")
    steps = 8000 if name == "heat" else paper.iterations  # heat's paper: 50,000
    assert (tier.counts, tier.lr, tier.seed, tier.iterations) == (
        paper.counts,
        paper.lr,
        paper.seed,
        steps,
    )
    assert tier.n_seeds == 8 and tier.decay == shipped.exponential_to(steps)


def test_laplace_quick_is_already_settled():
    """The main comparison's profile is the settled recipe (its decay is the one
    definition, :func:`shipped.exponential_to`)."""
    case = catalog.info("laplace")
    assert case.profile("quick") == case.profile("settled")


def test_settled_is_in_the_catalog_and_the_record_names():
    text = registry.catalog_text()
    for name in NAMES:
        entry = json.loads(text)[name]["profiles"]
        assert {"settled", "settled-paper"} <= set(entry)
    assert {"settled", "settled-paper"} <= set(catalog.known().profiles)


def test_settled_point_sets_are_small_enough_to_stack_on_a_cpu():
    """`--stack auto` stacks a CPU's runs up to 2000 points per step
    (:func:`deepxde_lnn.training.timing.stacking_pays`)."""
    from deepxde_lnn.training import timing

    for name in NAMES:
        case = registry.get(name)
        points = sum(t.n for t in case.make_terms(case.profile("settled")))
        assert points <= 2000
        if not timing.torch.cuda.is_available():
            assert timing.stacking_pays(case, "settled")


@pytest.mark.slow
def test_compare_runs_the_settled_profile_stacked(tmp_path, capsys):
    """`deepxde-lnn compare CASE --profile settled --methods lnn,pinn,pinn-matched`
    (2 steps, 2 seeds): stacked runs of the settled profile, named in the
    summary; with --iterations the decay stays the profile's."""
    from deepxde_lnn import cli

    out = tmp_path / "settled"
    argv = ["compare", "laplace", "--profile", "settled", "--iterations", "2"]
    argv += ["--methods", "lnn,pinn,pinn-matched", "--seeds", "1,2", "--out", str(out)]
    assert cli.main([*argv, "--workers", "1", "--no-progress"]) == 0
    records = [json.loads(p.read_text()) for p in out.rglob("metrics.json")]
    assert len(records) == 6
    decay = list(catalog.info("laplace").profile("settled").decay)
    for r in records:
        assert (r["profile"], r["iterations"], r["decay"]) == ("settled", 2, decay)
        assert r["stacked_runs"] == 2
    assert math.isclose(decay[1] ** 3000, 0.01)
    assert "Profile `settled`, 2 iterations" in (out / "summary.md").read_text()
