"""Every case: the exact solution satisfies its residuals and conditions; grids and
protocol numbers are the paper's (docs/protocol.md, docs/cases.md)."""

import deepxde as dde
import numpy as np
import pytest
import registered_case
import torch
from helpers import ExactNet

from deepxde_lnn.problems.build import build_net, matched_width
from deepxde_lnn.problems.data import ResampledPDE
from deepxde_lnn.problems.data.reductions import as_columns
from deepxde_lnn.study import registry, shipped

# Sum of u*^2 on the evaluation grid and the relL2/RMSE ratio (docs/cases.md)
GRID_FACTS = {
    "drift_decay": (40_000, 30_358.755, 1.14786),
    "laplace": (40_000, 13_366.834, 1.72988),
    "beam": (40_000, 3_490.227, 3.38535),
    "heat": (125_629, 125_629 * 3.0354558**2, 1 / 3.0354558),
}


from deepxde_lnn.problems import relativistic as rel  # noqa: E402

EXACT_TORCH = {
    "drift_decay": lambda x: 6 * torch.exp(-3 * x[:, 0:1] - 2 * x[:, 1:2]),
    "laplace": lambda x: x[:, 1:2] * 1.0,
    "heat": lambda x: (
        0.2830188679245283 / 4 * (1 - (x**2).sum(1, keepdim=True))
        + 0.2830188679245283 / (2 * 0.04716981132075472)
    ),
    "beam": lambda x: x[:, 0:1] ** 2 * torch.exp(-x[:, 1:2]),
    "rel_b": rel.exact_state_b,
    "rel_c": rel.exact_state_c,
    registered_case.NAME: registered_case.exact_torch,
}
#: the cases checked against their exact solution; the 1-D one registered for
#: the test (one input) keeps the checks free of any case's dimension
ALL = [registered_case.PARAM if n == registered_case.NAME else n for n in EXACT_TORCH]


@pytest.mark.parametrize("name", ALL)
def test_exact_solution_has_zero_residuals(name, float64):
    case = registry.get(name)
    data = ResampledPDE(case.make_terms(case.profile("paper")), seed=0)
    net = ExactNet(EXACT_TORCH[name])
    model = dde.Model(data, net)
    X = data.train_next_batch()[0]
    x = torch.as_tensor(X).requires_grad_()
    losses = data.losses_train(None, net(x), None, x, model)
    assert len(losses) == len(case.terms)
    assert max(float(v.detach()) for v in losses) < 1e-24
    xg, _ = case.grid.points()
    np.testing.assert_allclose(
        case.exact(xg), EXACT_TORCH[name](torch.as_tensor(xg)).numpy()
    )


@pytest.mark.parametrize("name", ALL)
def test_wrong_solution_is_caught(name, float64):
    """The residual check can fail: a perturbed solution gives non-zero losses."""
    case = registry.get(name)
    data = ResampledPDE(case.make_terms(case.profile("quick")), seed=0)
    f = EXACT_TORCH[name]
    net = ExactNet(lambda x: f(x) + 0.01 * (x**2).prod(1, keepdim=True))
    x = torch.as_tensor(data.train_next_batch()[0]).requires_grad_()
    losses = data.losses_train(None, net(x), None, x, dde.Model(data, net))
    assert float(losses[0].detach()) > 1e-6


@pytest.mark.parametrize("name", list(GRID_FACTS))
def test_grid_and_regression_ratio(name):
    case = registry.get(name)
    m, sum_sq, ratio = GRID_FACTS[name]
    x, _ = case.grid.points()
    u = case.exact(x)
    assert len(x) == m
    assert x.min(0).tolist() == list(case.grid.lo) and x.max(0).tolist() == list(
        case.grid.hi
    )
    assert np.sum(u**2) == pytest.approx(sum_sq, rel=1e-7)
    assert np.sqrt(m / np.sum(u**2)) == pytest.approx(ratio, rel=1e-5)


def test_paper_protocol_numbers():
    d, lap = registry.get("drift_decay"), registry.get("laplace")
    assert {t.name: t.n for t in d.terms} == {"pde": 2000, "ic": 1000, "inflow": 1000}
    assert {t.name: t.n for t in lap.terms} == dict(
        pde=1000, bottom=1000, top=1000, left=1000, right=1000
    )
    for c in (d, lap):
        assert (
            c.profile("paper").iterations,
            c.profile("paper").lr,
            c.profile("paper").seed,
        ) == (8000, 1e-3, 888888)
        assert c.grid.n == 200


def test_methods_parameter_counts():
    lap = registry.get("laplace")
    assert build_net("lnn", lap).num_trainable_parameters() == 29_633
    assert build_net("pinn", lap).num_trainable_parameters() == 12_737
    assert matched_width(lap) == 98
    assert build_net("pinn-matched", lap).num_trainable_parameters() == 29_499


@pytest.mark.registered
def test_a_registered_case_that_sets_its_own_network_or_profiles_is_refused():
    """Its entry in SHIPPED is the one home of its profiles and network
    settings: a case module that sets them too (as a case file of one's own does,
    such as docs/examples/poisson_case.py) is one error naming them, never
    overridden silently; without them the case gets its entry's."""
    from dataclasses import replace
    from pathlib import Path

    from deepxde_lnn.problems.case import Profile, Trunk, load_file

    mine, name = registered_case.CASE, registered_case.NAME
    for key, value in (
        ("trunk", Trunk(hidden=(50, 50, 50))),
        ("profiles", {"quick": Profile(iterations=2000, lr=1e-3, seed=0)}),
    ):
        with pytest.raises(ValueError, match=f"{name}: a registered case takes {key}="):
            registry.attach(replace(mine, **{key: value}))
    example = Path(__file__).parents[1] / "docs" / "examples" / "poisson_case.py"
    copied = replace(load_file(example), name=name)
    with pytest.raises(ValueError, match="takes profiles= and trunk= from the study"):
        registry.attach(copied)
    case = registry.get(name)
    assert case.trunk == registered_case.ENTRY.trunk
    assert case.profile("quick") == registered_case.ENTRY.quick


def test_every_case_module_is_shipped_and_every_shipped_entry_has_its_module():
    """A case is its module and its entry in SHIPPED (docs/extending.md): one
    without the other is named, not left out of the list of cases."""
    import pkgutil

    import deepxde_lnn.cases

    found = pkgutil.iter_modules(deepxde_lnn.cases.__path__)
    modules = {m.name for m in found if not m.name.startswith("_")}
    for name in sorted(modules - set(shipped.SHIPPED)):
        pytest.fail(f"cases/{name}.py is not shipped: add SHIPPED[{name!r}]")
    for name in sorted(set(shipped.SHIPPED) - modules):
        pytest.fail(f"SHIPPED[{name!r}] has no case module: add cases/{name}.py")


def test_every_case_has_its_section():
    """docs/cases.md (or docs/pinnacle.md for PINNacle's) names every case
    (docs/extending.md's last step)."""
    from pathlib import Path

    docs = Path(__file__).parents[1] / "docs"
    for name in registry.NAMES:
        page = "pinnacle.md" if name in shipped.names_of("pinnacle") else "cases.md"
        assert f"`{name}`" in (docs / page).read_text(), (
            f"{name}: describe it in docs/{page}"
        )


def test_a_shipped_case_is_of_a_study_of_the_package():
    """A Shipped without a study is of yours (never the paper's by default), its
    published profile ``paper``; another name is refused, naming the studies."""
    entry = registered_case.ENTRY
    assert entry.study == "yours" and shipped.published_profile(entry.study) == "paper"
    with pytest.raises(ValueError, match="paper, pinnacle, yours; got 'mine'"):
        shipped.Shipped(entry.published, entry.quick, study="mine")


def test_unknown_case():
    with pytest.raises(ValueError, match="unknown case"):
        registry.get("poisson")


def test_heat_robin_sign_matches_deepxde_convention():
    """theta* satisfies d theta/dn = -h_nd theta; the anti-cooling sign does not."""
    dde.config.set_default_float("float64")
    try:
        case = registry.get("heat")
        robin = case.terms[1].residual
        x = np.random.default_rng(0).normal(size=(50, 2))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        xt = torch.as_tensor(x).requires_grad_()
        theta = EXACT_TORCH["heat"](xt)
        assert robin.error(x, xt, theta, 0, 50).abs().max() < 1e-14
        # a wrong sign in func would leave 2 h_nd theta ~ 0.28
        wrong = dde.icbc.RobinBC(
            robin.geom, lambda x, y: 0.04716981132075472 * y, lambda _, on: on
        )
        assert float(wrong.error(x, xt, theta, 0, 50).detach().abs().min()) > 0.28
    finally:
        dde.config.set_default_float("float32")


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("method", ["lnn", "pinn", "pinn-matched"])
def test_smoke_every_case_and_method_float32(name, method):
    """20 steps, tiny point sets, float32: no dtype errors, finite losses."""
    case = registry.get(name)
    dde.config.set_random_seed(0)
    data = ResampledPDE(
        [t.__class__(**{**t.__dict__, "n": 8}) for t in case.terms], seed=0
    )
    model = dde.Model(data, build_net(method, case))
    model.compile("adam", lr=1e-3)
    model.train(iterations=20, display_every=1000, verbose=0)
    assert torch.isfinite(data.last_losses).all()
    assert model.predict(case.grid.points(5)[0].astype(np.float32)).shape == (
        len(case.grid.points(5)[0]),
        len(case.fields),
    )


def test_heat_metrics_include_fem_cross_check():
    case = registry.get("heat")
    x, _ = case.grid.points()
    exact = case.exact(x)
    out = case.extra_metrics(x, exact + 0.01, exact)
    assert "fem" not in out, out.get("fem")
    assert out["fem_vs_exact_theta"]["MaxErr"] < 1e-5  # FEM error << PINN errors
    assert out["theta_mean_offset"] == pytest.approx(0.01)
    assert out["theta_offset_removed_RMSE"] < 1e-12
    assert out["T_float64"]["relL2"] == pytest.approx(0.01 / 803.035387, rel=1e-5)
    # float32 paper mode: errors are multiples of the float32 spacing at ~803 K
    ulp = 2.0**-14
    assert out["T_paper_float32"]["MaxErr"] / ulp == pytest.approx(
        round(out["T_paper_float32"]["MaxErr"] / ulp)
    )


def _random_net(method, case):
    from deepxde_lnn.problems.build import build_net

    torch.manual_seed(3)
    net = build_net(method, case)
    with torch.no_grad():
        for blk in getattr(net, "blocks", []):
            blk.alpha.uniform_(-1.0, 1.0)  # not the init value: every term matters
    return net


JET_CASES = [n for n in registry.NAMES if any(t.jet for t in registry.get(n).terms)]
JET_CASES.append(registered_case.PARAM)


@pytest.mark.registered
def test_every_case_with_a_formula_is_checked_against_it():
    """A registered case with an exact solution (not PINNacle's: those are
    tests/test_pinnacle.py's) has its torch twin in EXACT_TORCH, which the
    residual checks above read."""
    for name in registry.NAMES:
        if name in shipped.names_of("pinnacle") or registry.get(name).exact is None:
            continue
        assert name in EXACT_TORCH, (
            f"{name}: add its exact solution in torch to EXACT_TORCH in "
            "tests/test_cases.py"
        )


@pytest.mark.registered
def test_every_derivative_term_has_a_jet():
    """Every shipped case takes all its input derivatives with jets (a term that
    needs derivatives and has no jet would fall back to nested autograd)."""
    for name in registry.NAMES:
        for t in registry.get(name).terms:
            assert t.kind == "value" or t.jet is not None, (
                f"{name}: term {t.name!r} takes input derivatives and has no jet "
                "(Term(..., jet=...)): it falls back to nested autograd"
            )


def _square_sum_and_grads(r, net):
    loss = (as_columns(r) ** 2).sum()
    params = [p for p in net.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, params, allow_unused=True, materialize_grads=True)
    return loss, grads


@pytest.mark.parametrize("name", JET_CASES)
@pytest.mark.parametrize("method", ["lnn", "pinn", "pirate"])
def test_jet_residuals_equal_autograd_residuals(name, method, float64):
    """Every Taylor-mode residual, and the parameter gradient of its sum of
    squares, equals the DeepXDE nested-autograd one on random points."""
    case = registry.get(name)
    net = _random_net(method, case)
    rng = np.random.default_rng(0)
    for term in (t for t in case.terms if t.jet is not None):
        X = term.sampler(64, rng)
        x = torch.as_tensor(X).requires_grad_()
        if isinstance(term.residual, (dde.icbc.BC, dde.icbc.IC)):
            ref = term.residual.error(X, x, net(x), 0, 64)
        else:
            ref = term.residual(x, net(x))
        ref, ref_grads = _square_sum_and_grads(ref, net)
        dde.grad.clear()
        jet, jet_grads = _square_sum_and_grads(term.jet(torch.as_tensor(X), net), net)
        assert abs(jet - ref) <= 1e-10 * ref, (term.name, float(jet), float(ref))
        for g, h in zip(jet_grads, ref_grads):
            err = torch.linalg.norm(g - h) / max(torch.linalg.norm(h), 1e-300)
            assert err <= 1e-9, (term.name, float(err))


@pytest.mark.parametrize("name", JET_CASES)
def test_taylor_and_autograd_losses_agree_in_the_data(name, float64):
    from deepxde_lnn.problems.data import ResampledPDE

    case = registry.get(name)
    terms = case.make_terms(case.profile("quick"))
    net = _random_net("lnn", case)
    model = dde.Model(ResampledPDE(terms, seed=1), net)  # only .net is used
    out = {}
    for mode in ("taylor", "autograd"):
        data = ResampledPDE(terms, seed=1, derivatives=mode)
        xv, _, _ = data.train_next_batch()
        xv = torch.as_tensor(xv)
        out[mode] = torch.stack(data.losses_train(None, net(xv), None, xv, model))
        dde.grad.clear()
    assert data.uses_jets(net) is False
    assert ResampledPDE(terms, seed=1).uses_jets(net) is True
    torch.testing.assert_close(out["taylor"], out["autograd"], rtol=1e-10, atol=0)


def test_catalog_is_what_the_case_modules_declare():
    """The study's catalog.json, what reports read of a case without importing
    it, is current: `python -m deepxde_lnn.study` (make docs) rewrites it."""
    from importlib import resources

    text = resources.files("deepxde_lnn.study").joinpath("catalog.json").read_text()
    assert text == registry.catalog_text(), "run: python -m deepxde_lnn.study"
    for name in registry.NAMES:
        case, info = registry.get(name), registry.info(name)
        assert (info.title, info.inputs, info.fields) == (
            case.title,
            case.inputs,
            case.fields,
        )
        assert tuple(info.profiles) == shipped.STUDIES[info.study]
        for p in info.profiles:
            assert info.profile(p) == case.profile(p)  # decay as a tuple, too


def test_record_says_which_terms_take_which_path():
    """The run record's ``derivatives``: the terms on jets, any derivative term
    without one on nested autograd, and why no jets ran."""
    from dataclasses import replace

    from deepxde_lnn.networks.pytorch import MLP

    case = registry.get("laplace")
    terms = case.make_terms(case.profile("quick"))
    net = _random_net("lnn", case)
    said = ResampledPDE(terms, seed=1).describe_derivatives(net)
    assert said == "Taylor-mode jets (pde, left, right)"
    no_jet = [replace(t, jet=None) if t.name == "right" else t for t in terms]
    said = ResampledPDE(no_jet, seed=1).describe_derivatives(net)
    assert said == "Taylor-mode jets (pde, left); nested autograd (right)"
    said = ResampledPDE(terms, seed=1, derivatives="autograd").describe_derivatives(net)
    assert said == "nested autograd (DeepXDE); derivatives='autograd'"
    relu = MLP([2, 8, 1], "relu", "Glorot normal")
    said = ResampledPDE(terms, seed=1).describe_derivatives(relu)
    assert said.startswith("nested autograd (DeepXDE); no jets: activation 'relu'")


def _vanish_at_x0(x, u):
    """A hard constraint: ``x * u`` is 0 on the edge ``x = 0``."""
    return x[:, :1] * u


def _hard_laplace_run(seeds, derivatives, steps=2):
    """Laplace, pinn, a hard-constraint output transform ``x * u`` on each net;
    ``seeds`` as one run, or stacked; ``steps`` Adam steps. Returns the data, the
    net and the training losses, ``(steps, K, terms)``."""
    from helpers import tiny_case

    from deepxde_lnn.problems import build
    from deepxde_lnn.training.stacking import StackedData, StackedNet

    case = tiny_case("laplace", n=8)
    datas, nets = [], []
    for seed in seeds:
        dde.config.set_random_seed(seed)
        datas.append(
            build.build_data("pinn", case, case.profile("quick"), seed, derivatives)
        )
        nets.append(case.build_net("pinn"))
        nets[-1].apply_output_transform(_vanish_at_x0)
    single = len(seeds) == 1
    data = datas[0] if single else StackedData(datas)
    net = nets[0] if single else StackedNet(nets)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    log = []

    class Log(dde.callbacks.Callback):
        def on_batch_end(self):
            log.append(data.last_losses.clone().reshape(len(seeds), -1))

    model.train(iterations=steps, display_every=1000, callbacks=[Log()], verbose=0)
    return data, net, torch.stack(log)


@pytest.mark.parametrize("seeds", [(0,), (0, 1)], ids=["single", "stacked"])
def test_jets_above_order_one_through_an_output_transform_fall_back(
    float64, monkeypatch, seeds
):
    """An output transform takes jets to first order only: Laplace's 2nd-order
    ``pde`` term takes nested autograd (said once), its 1st-order Neumann edges
    keep their jets, the losses are those of ``derivatives="autograd"`` and the
    record says which term took nested autograd and why."""
    from deepxde_lnn.networks import taylor

    monkeypatch.setattr(taylor, "_WARNED", set())
    with pytest.warns(UserWarning, match="term pde: an output transform") as said:
        data, net, losses = _hard_laplace_run(seeds, "taylor")
    assert len([w for w in said if "output transform" in str(w.message)]) == 1
    _, _, ref = _hard_laplace_run(seeds, "autograd")
    torch.testing.assert_close(losses, ref, rtol=1e-10, atol=0)
    one = data if len(seeds) == 1 else data.runs[0]
    Xs = [one.train_x] if len(seeds) == 1 else [d.train_x for d in data.runs]
    x = torch.as_tensor(np.vstack([one.points(X, "left") for X in Xs]))
    stacked = None if len(seeds) == 1 else net
    jets = one._jet_residuals(Xs, x, net, stacked)
    assert sorted(one.names[i] for i in jets) == ["left", "right"]
    assert data.describe_derivatives(net) == (
        "Taylor-mode jets (left, right); nested autograd (pde): an output "
        "transform takes jets to order 1 only"
    )
