"""What a PINN researcher would pick instead of the liquid block: ``laaf``
(DeepXDE's adaptive activation), ``pirate`` (PirateNets) and ``fourier`` (random
Fourier features). Each network against an independent NumPy computation with the
same weights, its derivatives against finite differences, its method options."""

import json

import numpy as np
import pytest
import torch

import deepxde_lnn  # noqa: F401

# isort: split
import deepxde as dde
from helpers import tiny_case

from deepxde_lnn.config import RunConfig
from deepxde_lnn.networks import taylor
from deepxde_lnn.networks.fourier import FourierFeatures, FourierMLP
from deepxde_lnn.networks.pirate import PirateNet, pirate_parameters
from deepxde_lnn.networks.pytorch import MLP
from deepxde_lnn.networks.stacked import StackedNet
from deepxde_lnn.problems import build, methods
from deepxde_lnn.study import registry
from deepxde_lnn.training.run_record import describe
from deepxde_lnn.training.runner import run, run_stacked


@pytest.fixture
def float64():
    dde.config.set_default_float("float64")
    yield
    dde.config.set_default_float("float32")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().numpy()


def _mlp_np(linears, x, act=np.tanh):
    for lin in linears[:-1]:
        x = act(x @ _np(lin.weight).T + _np(lin.bias))
    return x @ _np(linears[-1].weight).T + _np(linears[-1].bias)


def _pirate_np(net: PirateNet, x):
    """The paper's equations, written out in NumPy from the network's weights."""

    def dense(lin, h):
        return np.tanh(h @ _np(lin.weight).T + _np(lin.bias))

    z = x @ _np(net.embedding.frequencies).T
    h = np.concatenate([np.cos(z), np.sin(z)], axis=1)
    u, v = dense(net.u, h), dense(net.v, h)
    for block in net.blocks:
        f = dense(block.dense[0], h)
        z1 = f * u + (1 - f) * v
        g = dense(block.dense[1], z1)
        z2 = g * u + (1 - g) * v
        r = dense(block.dense[2], z2)
        a = block.alpha.item()
        h = a * r + (1 - a) * h
    return h @ _np(net.output.weight).T + _np(net.output.bias)


def _nets():
    torch.manual_seed(3)
    pirate = PirateNet(2, 2, width=6, blocks=2, scale=1.5)
    with torch.no_grad():  # away from the identity start, so the blocks count
        for i, block in enumerate(pirate.blocks):
            block.alpha.fill_(0.3 + 0.4 * i)
    fourier = FourierMLP([2, 6, 5, 2], "tanh", scale=0.8)
    laaf = MLP([2, 5, 4, 2], "LAAF-10 tanh", "torch-default")
    with torch.no_grad():
        laaf.trainable_activations[0].a.fill_(0.13)  # slope n a = 1.3
    return {"pirate": pirate, "fourier": fourier, "laaf": laaf}


def _reference(name, net, x):
    if name == "pirate":
        return _pirate_np(net, x)
    if name == "fourier":
        b = _np(net.embedding.frequencies) / (2 * np.pi)  # B ~ N(0, s^2)
        z = 2 * np.pi * x @ b.T
        phi = np.concatenate([np.cos(z), np.sin(z)], axis=1)
        return _mlp_np(net.linears, phi)
    return _mlp_np(net.linears, x, lambda z: np.tanh(1.3 * z))


@pytest.mark.parametrize("name", ["pirate", "fourier", "laaf"])
def test_forward_matches_numpy(float64, name):
    net = _nets()[name]
    x = np.random.default_rng(0).uniform(-1, 1, (7, 2))
    out = net(torch.as_tensor(x)).detach().numpy()
    np.testing.assert_allclose(out, _reference(name, net, x), rtol=1e-12, atol=1e-12)


def _fd_second(f, x, i, h=1e-4):
    e = np.zeros_like(x)
    e[:, i] = h
    return (f(x + e) - 2 * f(x) + f(x - e)) / h**2


@pytest.mark.parametrize("name", ["pirate", "fourier", "laaf"])
def test_deepxde_derivatives_match_finite_differences(float64, name):
    net = _nets()[name]
    x0 = np.random.default_rng(1).uniform(-1, 1, (5, 2))
    x = torch.as_tensor(x0).requires_grad_()
    y = net(x)

    def ref(z):
        return _reference(name, net, z)

    for c in range(2):
        du = dde.grad.jacobian(y, x, i=c, j=0).detach().numpy()[:, 0]
        h = 1e-6
        e = np.array([h, 0.0])
        fd = (ref(x0 + e)[:, c] - ref(x0 - e)[:, c]) / (2 * h)
        np.testing.assert_allclose(du, fd, rtol=1e-6, atol=1e-7)
        for i in range(2):
            d2 = dde.grad.hessian(y, x, component=c, i=i, j=i).detach().numpy()[:, 0]
            fd2 = _fd_second(ref, x0, i)[:, c]
            np.testing.assert_allclose(d2, fd2, rtol=1e-5, atol=1e-5)
    dde.grad.clear()


@pytest.mark.parametrize("name", ["pirate", "fourier", "laaf"])
def test_taylor_jets_follow_the_network(float64, name):
    """The Taylor-mode jets (4th order along one axis, the Laplacian) agree with
    nested autograd."""
    net = _nets()[name]
    assert taylor.supported(net)
    x = torch.rand(6, 2, dtype=torch.float64, requires_grad=True)
    jets = taylor.directional_derivatives(net, x, 1, 4)
    d = net(x)[:, :1]
    for k in range(1, 5):
        d = torch.autograd.grad(d.sum(), x, create_graph=True)[0][:, 1:2]
        torch.testing.assert_close(jets[k][:, :1], d, rtol=1e-10, atol=1e-10)
    u, lap = taylor.laplacian(net, x)
    y = net(x)[:, 1]
    g = torch.autograd.grad(y.sum(), x, create_graph=True)[0]
    want = sum(
        torch.autograd.grad(g[:, i].sum(), x, retain_graph=True)[0][:, i]
        for i in range(2)
    )
    torch.testing.assert_close(lap[:, 1], want, rtol=1e-10, atol=1e-10)


def _seeded(name: str, seed: int):
    """``name``'s network of ``_nets`` drawn from ``seed``; laaf's slopes moved by
    the seed (as training moves them), so that no two seeds share a value."""
    torch.manual_seed(seed)
    if name == "pirate":
        return PirateNet(2, 2, width=6, blocks=2, scale=1.5)
    if name == "fourier":
        return FourierMLP([2, 6, 5, 2], "tanh", scale=0.8)
    activation = "LAAF-10 tanh" if name == "laaf" else ["LAAF-10 tanh"] * 3
    net = MLP([2, 5, 4, 2], activation, "torch-default")
    with torch.no_grad():
        for j, f in enumerate(net.trainable_activations):
            f.a.fill_(0.1 + 0.02 * seed + 0.01 * j)
    return net


def _d(u, x, i):
    """``du/dx_i`` by autograd, kept differentiable."""
    return torch.autograd.grad(u.sum(), x, create_graph=True)[0][:, i : i + 1]


def _hessian_diagonal(y, x):
    """``[u, u_x, u_y, u_xx, u_yy]`` of every output by nested autograd."""
    out = [y]
    for c in range(y.shape[1]):
        g = torch.autograd.grad(y[:, c].sum(), x, create_graph=True)[0]
        out += [g] + [
            torch.autograd.grad(g[:, i].sum(), x, create_graph=True)[0][:, i]
            for i in range(2)
        ]
    return out


@pytest.mark.parametrize("name", ["pirate", "fourier", "laaf", "laaf-per-layer"])
def test_a_stack_keeps_each_seeds_slope_and_frequencies(float64, name):
    """Stacked, seed k runs with seed k's own LAAF slope(s) or random frequencies
    (a buffer): the stacked forward, its nested-autograd derivatives and, where
    the network has them, its Taylor-mode jets (vmapped over the seeds) equal
    each single net's; the seeds' state dicts come back whole, also after
    :meth:`~StackedNet.select_`."""
    nets = [_seeded(name, seed) for seed in (3, 4, 5)]
    stacked = StackedNet(nets)
    n = 6
    x = torch.rand(3 * n, 2, dtype=torch.float64, requires_grad=True)
    got = _hessian_diagonal(stacked(x), x)
    for k, net in enumerate(nets):
        rows = slice(n * k, n * (k + 1))
        xk = x[rows].detach().clone().requires_grad_()
        for a, b in zip(got, _hessian_diagonal(net(xk), xk)):
            torch.testing.assert_close(a[rows], b, rtol=1e-12, atol=1e-12)
        for key, v in stacked.state_dicts()[k].items():
            assert torch.equal(v, net.state_dict()[key]), key
    assert taylor.supported(nets[0])
    jets = stacked.per_run(
        lambda xk, net: [
            *taylor.laplacian(net, xk),
            taylor.directional_derivatives(net, xk, 1, 4)[4],
        ],
        x.detach(),
    )
    for k, net in enumerate(nets):
        rows = slice(n * k, n * (k + 1))
        xk = x[rows].detach().clone().requires_grad_()
        u = net(xk)[:, :1]
        lap = _d(_d(u, xk, 0), xk, 0) + _d(_d(u, xk, 1), xk, 1)
        fourth = _d(_d(_d(_d(u, xk, 1), xk, 1), xk, 1), xk, 1)
        for a, b in zip(jets, [u, lap, fourth]):
            torch.testing.assert_close(a[rows, :1], b, rtol=1e-10, atol=1e-10)
    stacked.select_([2, 0])
    for k, net in zip((0, 1), (nets[2], nets[0])):
        for key, v in stacked.state_dicts()[k].items():
            assert torch.equal(v, net.state_dict()[key]), key


@pytest.mark.parametrize("method", ["laaf", "pirate", "fourier", "laaf:per_layer=true"])
def test_a_stack_of_seeds_trains_as_the_separate_runs(float64, tmp_path, method):
    """K = 3 seeds of each alternative trained as one stacked model write the
    losses, predictions, metrics and final networks of three separate runs (to
    the tolerance of lnn's and pinn's stacks, tests/test_stacked_runs.py), and
    their records say they trained stacked."""
    assert methods.get(method).stackable
    case = tiny_case(n=8, grid_n=9)
    cfgs = [
        RunConfig("laplace", method, seed=s, iterations=10, dtype="float64")
        for s in (3, 4, 5)
    ]
    alone = [run(c, tmp_path / f"s{c.seed}", problem=case) for c in cfgs]
    outs = [tmp_path / f"b{c.seed}" for c in cfgs]
    assert [o.status for o in run_stacked(cfgs, outs, problem=case)] == ["done"] * 3
    for ref, cfg, out in zip(alone, cfgs, outs):
        rec = json.loads((out / "metrics.json").read_text())
        assert rec["stacked_runs"] == 3 and rec["stack_sizes"] == [[0, 3]]
        assert "stacking" not in ref and "stacking" not in rec
        assert rec["derivatives"] == ref["derivatives"]
        assert rec["metrics"]["phi"]["RMSE"] == pytest.approx(
            ref["metrics"]["phi"]["RMSE"], rel=1e-10, abs=0
        )
        single = tmp_path / f"s{cfg.seed}"
        a, b = (
            np.loadtxt(d / "loss.csv", delimiter=",", skiprows=1) for d in (out, single)
        )
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=0)
        with np.load(out / "fields.npz") as a, np.load(single / "fields.npz") as b:
            np.testing.assert_allclose(a["pred"], b["pred"], rtol=1e-10, atol=1e-12)
        a, b = (torch.load(d / "model.pt", weights_only=True) for d in (out, single))
        assert a.keys() == b.keys()
        for key in a:
            torch.testing.assert_close(a[key], b[key], rtol=1e-10, atol=1e-12)
    if not method.startswith("laaf"):  # each seed's own random frequencies
        a, b = (torch.load(o / "model.pt", weights_only=True) for o in outs[:2])
        assert not torch.equal(a["embedding.frequencies"], b["embedding.frequencies"])


def test_pirate_starts_as_the_embedding_read_out():
    """``alpha = 0``: every block is the identity, ``out = W phi + b``."""
    torch.manual_seed(0)
    net = PirateNet(2, 1, width=8, blocks=3)
    x = torch.rand(5, 2)
    phi = net.embedding(x)
    torch.testing.assert_close(net(x), net.output(phi))


def test_laaf_is_deepxdes_fnn_with_its_activation():
    """The same weights and slope give ``dde.nn.FNN(..., "LAAF-10 tanh")``'s
    output, and the slope is a trained parameter (one, shared as FNN shares it)."""
    torch.manual_seed(0)
    ours = MLP([2, 5, 5, 1], "LAAF-10 tanh", "torch-default")
    fnn = dde.nn.FNN([2, 5, 5, 1], "LAAF-10 tanh", "Glorot normal")
    with torch.no_grad():
        ours.trainable_activations[0].a.fill_(0.2)
    fnn.load_state_dict(
        {
            k.replace("trainable_activations.0", "activation"): v
            for k, v in ours.state_dict().items()
        }
    )
    x = torch.rand(4, 2)
    torch.testing.assert_close(ours(x), fnn(x))
    assert ours.num_trainable_parameters() == fnn.num_trainable_parameters()
    ours(x).sum().backward()
    assert ours.trainable_activations[0].a.grad is not None


def test_fourier_features_are_fixed_and_saved():
    torch.manual_seed(0)
    emb = FourierFeatures(3, 8, scale=2.0)
    assert emb.frequencies.shape == (4, 3) and not list(emb.parameters())
    assert "frequencies" in emb.state_dict()


@pytest.mark.parametrize(
    "method, count",
    [
        ("laaf", 12737 + 1),
        ("laaf:per_layer=true", 12737 + 4),
        ("laaf:n=5", 12737 + 1),
        ("pirate", pirate_parameters(1, 64, 1)),
        ("pirate:blocks=2", 33347),
        ("pirate:width=32:blocks=3", pirate_parameters(1, 32, 3)),
        ("fourier", 12737 + (64 - 2) * 64),
        ("fourier:width=32", (32 + 1) * 32 + 3 * 33 * 32 + 33),
    ],
)
def test_parameter_counts(method, count):
    assert build.parameter_count(method, registry.get("laplace")) == count


def test_options_reach_the_networks():
    case = registry.get("laplace")
    pirate = build.build_net("pirate:scale=2.5:alpha_init=0.25:blocks=2", case)
    assert pirate.embedding.scale == 2.5 and len(pirate.blocks) == 2
    assert all(b.alpha.item() == 0.25 for b in pirate.blocks)
    assert build.build_net("fourier:scale=3", case).embedding.scale == 3.0
    laaf = build.build_net("laaf:n=4", case)
    assert laaf.activation[0].n == 4.0
    assert describe(laaf).endswith("activation='LAAF-4 tanh')")  # the record's
    assert "one slope per layer" in describe(
        build.build_net("laaf:per_layer=true", case)
    )
    assert build.pirate_blocks(case) == 1


@pytest.mark.parametrize(
    "bad, message",
    [
        ("pirate:blocks=0", "blocks must be an integer in \\[1, 256\\]"),
        ("fourier:scale=-1", "scale must be a finite number in \\(0"),
        ("fourier:scale=0", "scale must be a finite number in \\(0"),
        ("pirate:depth=3", "bad option 'depth=3' \\(options of pirate:"),
        ("laaf:n=0", "n must be a finite number in \\[1"),
        ("laaf:per_layer=yes", "per_layer must be true or false"),
    ],
)
def test_bad_options_are_one_error_naming_the_option(bad, message):
    with pytest.raises(ValueError, match=f"method '{bad}'.*{message}") as err:
        methods.parse(bad)
    assert "\n" not in str(err.value)


def test_an_odd_pirate_width_is_refused_naming_the_method():
    with pytest.raises(
        ValueError, match="method 'pirate:width=63'.*width must be even"
    ):
        build.check("pirate:width=63", registry.get("laplace"))


@pytest.mark.slow
def test_compare_runs_the_alternatives_end_to_end(tmp_path, monkeypatch):
    from deepxde_lnn import cli

    tiny = tiny_case("laplace", n=8, grid_n=9)
    monkeypatch.setattr(registry, "get", lambda name: tiny)
    out = tmp_path / "cmp"
    argv = ["compare", "laplace", "--methods", "laaf,pirate,fourier"]
    argv += ["--seeds", "1", "--iterations", "5", "--workers", "1"]
    assert cli.main([*argv, "--no-progress", "--out", str(out)]) == 0
    for m in ("laaf", "pirate", "fourier"):
        (record,) = out.glob(f"**/{m}/seed-1/metrics.json")
        rec = json.loads(record.read_text())
        assert rec["parameters"] == build.parameter_count(m, tiny)
        assert "stacking" not in rec  # stackable; one seed trains alone
        assert rec["derivatives"].startswith("Taylor-mode jets"), rec["derivatives"]
