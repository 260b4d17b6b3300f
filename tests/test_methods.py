"""Baselines: every method on every case, RBA's update rule, XPINN's split and
interface terms."""

import numpy as np
import pytest
import torch

import deepxde_lnn  # noqa: F401

# isort: split
import deepxde as dde
import registered_case
from helpers import SignalAt, tiny_case

from deepxde_lnn.networks import taylor
from deepxde_lnn.networks.pirate import PirateNet
from deepxde_lnn.networks.pytorch import MLP
from deepxde_lnn.networks.stacked import StackedNet
from deepxde_lnn.problems import build, methods
from deepxde_lnn.problems.data import ResampledPDE, Term
from deepxde_lnn.problems.rba import RBA
from deepxde_lnn.problems.sampling import Box
from deepxde_lnn.problems.xpinn import Decomposition, SubdomainMeans, XNet, xpinn_terms
from deepxde_lnn.study import registry, shipped
from deepxde_lnn.training import runner

#: the trunk of each column of PARAMETERS: (inputs, fields, hidden widths, layout)
TRUNKS = (
    (2, 1, (64,) * 4, "standard"),  # drift_decay, laplace, beam
    (2, 1, (64,) * 3, "reduced"),  # heat
    (2, 8, (64,) * 4, "standard"),  # rel_b, rel_c
    (1, 1, (64,) * 4, "standard"),  # tests/registered_case.py's 1-D Poisson
)
PARAMETERS = {  # method -> its parameter count on each trunk of TRUNKS
    "lnn": (29633, 21249, 30088, 29569),
    "pinn": (12737, 8577, 13192, 12673),
    "pinn-matched": (29499, 21421, 30192, 29401),
    "rezero": (29381, 21060, 29836, 29317),
    "rba": (12737, 8577, 13192, 12673),
    "ra-gated": (38177, 38177, 38632, 38113),
    "xpinn": (50948, 34308, 52768, 25346),  # 2 x 2 subdomains; 2 on a line
    "xpinn-authors": (1348, 1348, 1824, 642),
    "laaf": (12738, 8578, 13193, 12674),
    "pirate": (20866, 20866, 21321, 20866),
    "fourier": (16705, 12545, 17160, 16705),
}
#: every case but PINNacle's (tests/test_pinnacle.py), and a 1-D one registered
#: for the test: what holds on every case holds on one input too
CASES = [
    *(n for n in registry.NAMES if n not in shipped.names_of("pinnacle")),
    registered_case.PARAM,
]


def _column(case) -> int:
    """The column of PARAMETERS for ``case``'s trunk; a failure naming the trunk
    where there is none."""
    hidden, layout = case.trunk.hidden, case.trunk.lnn_layout
    trunk = (len(case.inputs), len(case.fields), hidden, layout)
    if trunk not in TRUNKS:
        pytest.fail(
            f"{case.name}: no parameter counts for its trunk (inputs, fields, "
            f"hidden, layout) = {trunk}: add it to TRUNKS and its column to "
            "PARAMETERS in tests/test_methods.py"
        )
    return TRUNKS.index(trunk)


def test_every_method_has_its_parameter_counts():
    """A method added to the table of methods has its counts here (one per
    trunk), or the test below could not check it."""
    for method in methods.METHODS:
        assert len(PARAMETERS.get(method, ())) == len(TRUNKS), (
            f"{method}: add its parameter count on each of TRUNKS to PARAMETERS "
            "in tests/test_methods.py"
        )


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("method", methods.METHODS)
def test_every_method_trains_on_every_case(tmp_path, name, method):
    case = tiny_case(name, n=12, grid_n=9)
    assert build.parameter_count(method, case) == PARAMETERS[method][_column(case)]
    cfg = runner.RunConfig(name, method, iterations=3, checkpoint_every=2)
    rec = runner.run(cfg, tmp_path / "run", problem=case)
    assert rec["method"] == method and rec["iterations"] == 3
    losses = np.loadtxt(tmp_path / "run" / "loss.csv", delimiter=",", skiprows=1)
    assert losses.shape[0] == 3 and np.isfinite(losses).all()
    for fld in case.fields:
        assert np.isfinite(rec["metrics"][fld]["RMSE"])


def test_every_method_names_a_builder(monkeypatch):
    """The one table of methods names each method's builder in ``build``."""
    for name in methods.METHODS:
        assert isinstance(build.builder(name), build.Builder), name
    for missing in ("NO_SUCH", "ACTIVATION"):  # absent, and not a Builder
        monkeypatch.setitem(methods._BY_NAME, "x", methods.Method("x", missing))
        with pytest.raises(ValueError, match=f"'x': build has no Builder '{missing}'"):
            build.builder("x")


@pytest.mark.parametrize("method", methods.METHODS)
def test_every_methods_network_has_jets_where_it_declares_stages(float64, method):
    """A network that declares its stages (``MLP`` and its kin) has Taylor-mode
    jets, a rule for each stage type (a missing one is named), and they equal
    nested autograd; so has ``PirateNet`` (its own rule); the others (``XNet``,
    the gated one) have none, as docs/extending.md says."""
    torch.manual_seed(0)
    net = build.build_net(method, registry.get("laplace"))
    if not isinstance(net, (MLP, PirateNet)):
        assert not taylor.supported(net)
        return
    assert taylor.unsupported(net) is None, f"{method}: {taylor.unsupported(net)}"
    x = torch.rand(6, 2, dtype=torch.float64, requires_grad=True)
    _, lap = taylor.laplacian(net, x)
    (du,) = torch.autograd.grad(net(x).sum(), x, create_graph=True)
    ref = sum(
        torch.autograd.grad(du[:, i].sum(), x, retain_graph=True)[0][:, i : i + 1]
        for i in range(2)
    )
    torch.testing.assert_close(lap, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "method", [m for m in methods.METHODS if methods.get(m).stackable]
)
def test_every_stackable_methods_seeds_stack_as_single_nets(float64, method):
    """A method marked stackable stacks: K seeds' networks as one
    ``StackedNet`` give each seed's own values on its rows."""
    nets = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        nets.append(build.build_net(method, registry.get("laplace")))
    x = torch.rand(2 * 5, 2, dtype=torch.float64)
    y = StackedNet(nets)(x)
    for k, net in enumerate(nets):
        rows = slice(5 * k, 5 * (k + 1))
        torch.testing.assert_close(y[rows], net(x[rows]), rtol=1e-12, atol=1e-14)


def test_every_method_has_its_paragraph():
    """docs/methods.md names every method (docs/extending.md's last step)."""
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs" / "methods.md").read_text()
    for method in methods.METHODS:
        assert f"`{method}`" in page, f"{method}: describe it in docs/methods.md"


def test_parameter_count_builds_nothing_real():
    """Counts (and ``pinn-matched``'s width search) leave the random state as it
    was: a method's count taken between seeding and building changes nothing."""
    case = registry.get("laplace")
    torch.manual_seed(0)
    assert build.parameter_count("pinn-matched", case) == PARAMETERS["pinn-matched"][0]
    after = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(after, torch.rand(3))


def test_bad_method_names_the_argument():
    with pytest.raises(ValueError, match="method"):
        methods.get("rba2")


# --- RBA --------------------------------------------------------------------------


def _term(name="pde", kind="pde"):
    return Term(name, Box((0.0,), (1.0,)), 3, lambda x, y: y, kind=kind)


def test_rba_update_rule_by_hand():
    rba = RBA(["pde"])
    t = _term()
    r1 = torch.tensor([[1.0], [-2.0], [4.0]], dtype=torch.float64)
    w = rba(0, t, None, r1, True)
    lam1 = 1e-3 * np.array([0.25, 0.5, 1.0])
    assert np.allclose(w.numpy().ravel(), lam1**2, rtol=1e-14)
    r2 = torch.tensor([[2.0], [2.0], [1.0]], dtype=torch.float64)
    w = rba(0, t, None, r2, True)
    lam2 = 0.999 * lam1 + 1e-3 * np.array([1.0, 1.0, 0.5])
    assert np.allclose(w.numpy().ravel(), lam2**2, rtol=1e-14)
    # evaluation passes read the multipliers without updating them
    w = rba(0, t, None, 5 * r2, False)
    assert np.allclose(w.numpy().ravel(), lam2**2, rtol=1e-14)
    assert rba(1, _term("edge", "operator"), None, r2, True) is None
    # checkpoint round trip
    again = RBA(["pde"])
    again.load_state_dict(rba.state_dict())
    assert torch.equal(again.lam[0], rba.lam[0])


def test_rba_multichannel_normalises_each_channel():
    rba = RBA(["pde"])
    r = [torch.tensor([[1.0], [2.0]]), torch.tensor([[10.0], [-5.0]])]
    w = rba(0, _term(), None, r, True)
    assert w.shape == (2, 2)
    assert np.allclose(w.sqrt().numpy(), 1e-3 * np.array([[0.5, 1.0], [1.0, 0.5]]))


def test_rba_loss_is_the_weighted_residual_on_a_fixed_pool():
    case = tiny_case("laplace", n=10)
    data = build.build_data("rba", case, case.profile("quick"), seed=3)
    data.train_next_batch()
    pool = data.points(data.train_x, "pde").copy()
    edge = data.points(data.train_x, "bottom").copy()
    data.train_next_batch()
    assert np.array_equal(data.points(data.train_x, "pde"), pool)
    assert not np.array_equal(data.points(data.train_x, "bottom"), edge)

    dde.config.set_random_seed(0)
    net = build.build_net("rba", case)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    x = torch.as_tensor(pool).requires_grad_()
    r = case.terms[0].residual(x, net(x)).detach()
    lam = 1e-3 * r.abs() / r.abs().max()
    _, losses = model.outputs_losses_train(data.train_next_batch()[0], None, None)
    assert torch.allclose(losses[0], torch.mean((lam * r) ** 2), rtol=1e-5)


def _resume_equals_uninterrupted(tmp_path, method):
    case = tiny_case("laplace", n=8, grid_n=9)
    kw = dict(iterations=12, checkpoint_every=4, dtype="float64")
    cfg = runner.RunConfig("laplace", method, **kw)
    runner.run(cfg, tmp_path / "a", problem=case)
    with pytest.raises(runner.RunInterrupted):
        runner.run(cfg, tmp_path / "b", problem=case, callbacks=[SignalAt(6)])
    runner.run(cfg, tmp_path / "b", problem=case, resume=True)
    a = (tmp_path / "a" / "loss.csv").read_text()
    assert a == (tmp_path / "b" / "loss.csv").read_text()


@pytest.mark.slow  # trains for seconds
@pytest.mark.parametrize("method", ["rba", "ra-gated", "xpinn", "fourier", "laaf"])
def test_resume_is_exact_for_stateful_and_random_methods(tmp_path, method):
    # RBA's multipliers and ra-gated's dropout draws travel with the checkpoint, as
    # do fourier's fixed random frequencies (a buffer) and laaf's trained slope
    _resume_equals_uninterrupted(tmp_path, method)


# --- XPINN ------------------------------------------------------------------------


def test_routing_is_half_open_and_closed_outside():
    dec = Decomposition((0.0, 0.0), (2.0, 1.0), ((1.0,), (0.5,)))
    x = np.array([[0.0, 0.0], [1.0, 0.2], [0.99, 0.5], [2.0, 1.0], [1.5, 0.49]])
    assert dec.route(x).tolist() == [0, 1, 2, 3, 1]  # k = 2 j + i
    assert dec.route_torch(torch.as_tensor(x)).tolist() == [0, 1, 2, 3, 1]
    faces = {(f.a, f.b, f.axis) for f in dec.interfaces()}
    assert faces == {(0, 1, 0), (2, 3, 0), (0, 2, 1), (1, 3, 1)}


def test_disk_interfaces_stay_inside_the_disk():
    dec = build.decomposition(registry.get("heat"))
    rng = np.random.default_rng(0)
    assert dec.n_cells == 4 and len(dec.interfaces()) == 4
    for face in dec.interfaces():
        x = dec.sampler(face)(200, rng)
        assert x.shape == (200, 2)
        assert np.all(np.sum(x.astype(float) ** 2, axis=1) <= 1 + 1e-6)
        assert np.all(x[:, face.axis] == face.value)


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.p = torch.nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return self.fn(x) + 0 * self.p


def _xpinn_losses(case, shifts):
    dec = build.decomposition(case)
    # phi = y (+ a shift per cell); the 0 * x^2 keeps second derivatives in the graph
    net = XNet(
        [_Fn(lambda x, s=s: x[:, 1:2] + 0 * x[:, :1] ** 2 + s) for s in shifts], dec
    )
    terms = xpinn_terms(case.make_terms(case.profile("quick")), dec, n_interface=50)
    data = ResampledPDE(terms, seed=0, weights=SubdomainMeans(dec))
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    _, losses = model.outputs_losses_train(data.train_next_batch()[0], None, None)
    return dict(zip(data.names, [float(v) for v in losses]))


def test_xpinn_interface_terms_vanish_for_a_continuous_exact_solution():
    losses = _xpinn_losses(registry.get("laplace"), [0.0] * 4)  # phi = y everywhere
    assert max(losses.values()) < 1e-12
    assert sum(name.startswith("avg") for name in losses) == 4


def test_xpinn_interface_terms_measure_the_jump():
    # cell 1 shifted by 0.1: faces 0|1 and 1|3 see a jump of 0.1 in u, and none in
    # the residual; W_I * MSE(u_a - u_b) / 2 = 20 * 0.01 / 2
    losses = _xpinn_losses(registry.get("laplace"), [0.0, 0.1, 0.0, 0.0])
    assert losses["avg 0|1"] == pytest.approx(0.1, rel=1e-5)
    assert losses["avg 1|3"] == pytest.approx(0.1, rel=1e-5)
    assert losses["avg 0|2"] < 1e-12 and losses["pde jump 0|1"] < 1e-12


def test_xnet_stitches_its_subnetworks():
    dec = Decomposition((0.0, 0.0), (1.0, 1.0), ((0.5,), (0.5,)))
    net = XNet([_Fn(lambda x, q=q: x[:, :1] * 0 + q) for q in range(4)], dec)
    x = torch.rand(200, 2, dtype=torch.float64)
    assert net(x).detach().numpy().ravel().tolist() == dec.route(x.numpy()).tolist()


def test_subdomain_means_sum_the_per_subdomain_means():
    dec = Decomposition((0.0,), (1.0,), ((0.3,),))
    rows = np.array([[0.1], [0.2], [0.5], [0.6], [0.9]])
    r = torch.tensor([[1.0], [3.0], [2.0], [2.0], [5.0]], dtype=torch.float64)
    omega = SubdomainMeans(dec)(0, _term(), rows, r, True)
    got = torch.mean(omega * r**2)
    assert float(got) == pytest.approx((1 + 9) / 2 + (4 + 4 + 25) / 3)


# --- method options (ablation variants) ---------------------------------------------


def test_method_options_build_the_variants():
    case = registry.get("laplace")
    assert build.parameter_count("lnn:width=32", case) == 7649
    assert build.parameter_count("pinn:width=98", case) == 29499
    net = build.build_net("lnn:alpha_init=0:layout=reduced", case)
    assert net.layout == "reduced"
    assert all(float(b.alpha.abs().max()) == 0 for b in net.blocks)
    net = build.build_net("lnn:block_activation=sin", case)
    assert net.blocks[0].activation_name == "sin"


@pytest.mark.parametrize(
    "bad", ["lnn:foo=1", "pinn:width=0", "lnn:width", "xpinn:width=3", "lnn:layout=x"]
)
def test_bad_method_options_are_refused_up_front(bad):
    with pytest.raises(ValueError, match="method"):
        runner.RunConfig("laplace", bad).resolved(tiny_case())


@pytest.mark.slow
def test_ablate_writes_one_table_for_both_budgets(tmp_path, monkeypatch):
    from deepxde_lnn import cli

    tiny = tiny_case("laplace", n=8, grid_n=9)
    monkeypatch.setattr(registry, "get", lambda name: tiny)
    out = tmp_path / "abl"
    argv = ["ablate", "laplace", "--methods", "lnn,lnn:alpha_init=0,pinn"]
    argv += ["--seeds", "1,2", "--iterations", "10", "--workers", "1"]
    assert cli.main([*argv, "--no-progress", "--out", str(out)]) == 0
    text = (out / "ablation.md").read_text()
    for m in ("lnn", "lnn:alpha_init=0", "pinn"):
        assert f"| `{m}` |" in text
        for budget in ("steps", "time"):
            assert (out / budget / m / "seed-2" / "metrics.json").exists()
    assert "baseline" in text and "(time)" in text


# --- the ablation's LNN options -------------------------------------------------------


@pytest.mark.parametrize(
    "method, parameters",
    [
        ("lnn:residual=false", 29633),
        ("lnn:train_alpha=false", 29633 - 4 * 64),  # the gates are not trained
        ("lnn:blocks=0+1", 29633 - 2 * (64 * 64 + 2 * 64)),
        ("lnn:blocks=3", 29633 - 3 * (64 * 64 + 2 * 64)),
    ],
)
def test_the_ablation_options_build_their_networks(method, parameters):
    case = registry.get("laplace")
    assert build.parameter_count(method, case) == parameters
    assert methods.canonical(method) != methods.canonical("lnn")


@pytest.mark.parametrize(
    "method, message",
    [
        ("lnn:residual=no", "residual must be true or false; got 'no'"),
        ("lnn:train_alpha=0", "train_alpha must be true or false; got '0'"),
        ("lnn:blocks=0,1", "blocks must be an integer"),
        ("lnn:blocks=1+1", "blocks: each hidden layer once"),
        ("lnn:blocks=", "blocks must be an integer"),
    ],
)
def test_bad_ablation_options_name_themselves(method, message):
    with pytest.raises(ValueError, match=message):
        methods.parse(method)


def test_a_block_on_a_layer_the_network_lacks_is_refused():
    with pytest.raises(ValueError, match="block_layers must be an integer"):
        build.build_net("lnn:blocks=4", registry.get("laplace"))


@pytest.mark.parametrize("stacked", [False, True], ids=["single", "stacked"])
def test_fixed_gates_stay_fixed_while_trained_gates_move(tmp_path, stacked):
    """``train_alpha=false``: after Adam steps every gate is still alpha_init,
    single and stacked; the default network's gates have moved."""
    res = deepxde_lnn.compare(
        tiny_case(),
        methods=["lnn:train_alpha=false", "lnn"],
        seeds=[0, 1] if stacked else [0],
        iterations=5,
        out=tmp_path / "c",
        stack="on" if stacked else "off",
        progress=False,
        workers=1,
    )
    for run in res.runs:
        state = torch.load(run.out / "model.pt", weights_only=True)
        alphas = torch.cat([v for k, v in state.items() if k.endswith("alpha")])
        fixed = run.method != "lnn"
        assert bool(torch.all(alphas == 0.5)) is fixed
