"""LiquidBlock / LNN / MLP: shapes, counts, maths, DeepXDE integration, errors."""

import os
import subprocess
import sys

import deepxde as dde
import numpy as np
import pytest
import torch

from deepxde_lnn import LNN, MLP, LiquidBlock
from deepxde_lnn.networks.pytorch import tanh
from deepxde_lnn.training import run_record as record


def p_mlp(d, m, L, w):
    return (d + 1) * w + (L - 1) * (w * w + w) + (w + 1) * m


@pytest.mark.parametrize(
    "sizes, layout, mlp, lnn",
    [
        ([2, 64, 64, 64, 64, 1], "standard", 12737, 29633),
        ([2, 64, 64, 64, 1], "reduced", 8577, 21249),
        ([2, 64, 64, 64, 64, 8], "standard", 13192, 30088),
    ],
)
def test_parameter_counts(sizes, layout, mlp, lnn):
    d, m, L, w = sizes[0], sizes[-1], len(sizes) - 2, sizes[1]
    assert p_mlp(d, m, L, w) == mlp
    assert p_mlp(d, m, L, w) + L * (w * w + 2 * w) == lnn
    assert MLP(sizes, "tanh", "torch-default").num_trainable_parameters() == mlp
    net = LNN(sizes, "tanh", "torch-default", layout=layout)
    assert net.num_trainable_parameters() == lnn


def test_block_parameters_and_alpha_init():
    block = LiquidBlock(64)
    assert sum(p.numel() for p in block.parameters()) == 64 * 64 + 2 * 64
    assert torch.all(block.alpha == 0.5)
    net = LNN([2, 8, 8, 1], "tanh", "torch-default", alpha_init=0.25)
    assert all(torch.all(b.alpha == 0.25) for b in net.blocks)
    assert {n for n, _ in net.named_parameters()} >= {
        "blocks.0.alpha",
        "blocks.1.alpha",
    }


def test_alpha_zero_is_identity():
    block = LiquidBlock(16, alpha_init=0.0)
    h = torch.randn(10, 16, dtype=block.alpha.dtype)
    assert torch.equal(block(h), h)


def _manual_forward(net, x, layout):
    h = x
    for lin, blk in zip(net.linears[:-1], net.blocks):
        z = h @ lin.weight.T + lin.bias
        if layout == "standard":
            z = tanh(z)
        h = z + blk.alpha * tanh(z @ blk.linear.weight.T + blk.linear.bias)
    out = net.linears[-1]
    return h @ out.weight.T + out.bias


@pytest.mark.parametrize("layout", ["standard", "reduced"])
def test_forward_matches_hand_written(layout):
    torch.manual_seed(0)
    net = LNN([3, 12, 12, 12, 2], "tanh", "torch-default", layout=layout)
    x = torch.randn(7, 3, dtype=net.linears[0].weight.dtype)
    torch.testing.assert_close(net(x), _manual_forward(net, x, layout))
    # the blocks matter: the plain trunk gives something else
    plain = MLP([3, 12, 12, 12, 2], "tanh", "torch-default")
    plain.linears.load_state_dict(net.linears.state_dict())
    assert not torch.allclose(plain(x), net(x))


def _manual_forward_sigma(net, x, hidden, sigma):
    """Standard layout with hidden activation ``hidden`` and block ``sigma``."""
    h = x
    for lin, blk in zip(net.linears[:-1], net.blocks):
        z = hidden(h @ lin.weight.T + lin.bias)
        h = z + blk.alpha * sigma(z @ blk.linear.weight.T + blk.linear.bias)
    out = net.linears[-1]
    return h @ out.weight.T + out.bias


def test_block_activation_defaults_to_the_network_activation():
    torch.manual_seed(4)
    sizes = [2, 10, 10, 1]
    net = LNN(sizes, "sin", "torch-default")
    x = torch.randn(6, 2)
    torch.testing.assert_close(
        net(x), _manual_forward_sigma(net, x, torch.sin, torch.sin)
    )
    assert all(b.activation is a for b, a in zip(net.blocks, net.activation))
    assert net.extra_repr().endswith("block_activation='sin'")
    assert "activation" not in LiquidBlock(4).extra_repr()  # a lone block: tanh
    # a tanh network (the paper's, every method's) has the paper's block, unchanged
    torch.manual_seed(4)
    tanh_net = LNN(sizes, "tanh", "torch-default")
    torch.manual_seed(4)
    paper = LNN(sizes, "tanh", "torch-default", block_activation="tanh")
    for (k, a), (k2, b) in zip(
        tanh_net.state_dict().items(), paper.state_dict().items()
    ):
        assert k == k2 and torch.equal(a, b)
    assert torch.equal(tanh_net(x), paper(x))
    assert torch.equal(tanh_net(x), _manual_forward_sigma(paper, x, *[tanh] * 2))
    assert repr(tanh_net) == repr(paper)
    # the run record's "network" field names the blocks' sigma
    assert record.describe(tanh_net) == (
        "LNN([2, 10, 10, 1], layout='standard', alpha_init=0.5, "
        "block_activation='tanh')"
    )
    mixed = LNN([1, 4, 4, 1], ["sin", "tanh", None], "torch-default")
    assert mixed.extra_repr().endswith("block_activation=['sin', 'tanh']")
    laaf = LNN([1, 4, 4, 1], "LAAF-10 sin", "torch-default")
    assert laaf.extra_repr().endswith("block_activation='LAAF-10 sin'")


@pytest.mark.parametrize(
    "block_activation, hidden, sigma",
    [
        ("sin", tanh, torch.sin),
        (torch.sigmoid, tanh, torch.sigmoid),
        ("same", torch.sin, torch.sin),
    ],
    ids=["sin", "callable", "same"],
)
def test_block_activation_variants(block_activation, hidden, sigma):
    torch.manual_seed(5)
    hidden_name = "sin" if hidden is torch.sin else "tanh"
    net = LNN(
        [3, 12, 12, 12, 2],
        hidden_name,
        "torch-default",
        block_activation=block_activation,
    )
    x = torch.randn(7, 3)
    torch.testing.assert_close(net(x), _manual_forward_sigma(net, x, hidden, sigma))
    assert net.num_trainable_parameters() == p_mlp(3, 2, 3, 12) + 3 * (144 + 24)
    expected = "sin" if sigma is torch.sin else "sigmoid"  # as resolved
    assert f"block_activation={expected!r}" in net.extra_repr()
    assert "activation=" in net.blocks[0].extra_repr()


def test_block_activation_same_follows_activation_list_and_reduced_layout():
    net = LNN(
        [1, 4, 4, 1], ["sin", "tanh", None], "Glorot normal", block_activation="same"
    )
    x = torch.rand(3, 1)
    z = torch.sin(net.linears[0](x))
    z = z + net.blocks[0].alpha * torch.sin(net.blocks[0].linear(z))
    z = tanh(net.linears[1](z))
    z = z + net.blocks[1].alpha * tanh(net.blocks[1].linear(z))
    torch.testing.assert_close(net(x), net.linears[2](z))
    # reduced layout: "same" makes the hidden activation the blocks' nonlinearity
    net = LNN(
        [2, 8, 8, 1], "sin", "torch-default", layout="reduced", block_activation="same"
    )
    x = torch.rand(5, 2)
    h = x
    for lin, blk in zip(net.linears[:-1], net.blocks):
        z = lin(h)
        h = z + blk.alpha * torch.sin(blk.linear(z))
    torch.testing.assert_close(net(x), net.linears[-1](h))


def test_mlp_twin_shares_trunk_with_lnn():
    torch.manual_seed(1)
    net = LNN([2, 10, 10, 1], "tanh", "Glorot normal", alpha_init=0.0)
    plain = MLP([2, 10, 10, 1], "tanh", "Glorot normal")
    plain.linears.load_state_dict(net.linears.state_dict())
    x = torch.rand(5, 2, dtype=net.linears[0].weight.dtype)
    torch.testing.assert_close(plain(x), net(x))


def test_initializers():
    torch.manual_seed(0)
    net = LNN([2, 16, 16, 1], "tanh", "torch-default")
    assert all(lin.bias.abs().sum() > 0 for lin in net.linears)
    assert all(b.linear.bias.abs().sum() > 0 for b in net.blocks)
    net = LNN([2, 16, 16, 1], "tanh", "Glorot uniform")
    assert all(torch.all(m.bias == 0) for m in net.modules() if hasattr(m, "bias"))
    bound = np.sqrt(6 / 32)
    assert all(b.linear.weight.abs().max() <= bound for b in net.blocks)
    assert all(torch.all(b.alpha == 0.5) for b in net.blocks)


def test_float64_parameters(float64):
    net = LNN([2, 8, 8, 1], "tanh", "He normal")
    assert all(p.dtype == torch.float64 for p in net.parameters())
    assert all(
        p.dtype == torch.float64 for p in MLP([2, 4, 1], "tanh", "zeros").parameters()
    )


@pytest.mark.parametrize("layout", ["standard", "reduced"])
def test_derivatives_match_finite_differences(float64, layout):
    torch.manual_seed(3)
    net = LNN([2, 16, 16, 1], "tanh", "torch-default", layout=layout)
    x = torch.rand(6, 2, dtype=torch.float64, requires_grad=True)
    u = net(x)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    d2u_dx2 = torch.autograd.grad(du[:, 0].sum(), x)[0][:, 0]
    eps = 1e-5
    with torch.no_grad():
        e = torch.tensor([eps, 0.0], dtype=torch.float64)
        fd1 = (net(x + e) - net(x - e))[:, 0] / (2 * eps)
        fd2 = (net(x + e) - 2 * net(x) + net(x - e))[:, 0] / eps**2
    torch.testing.assert_close(du[:, 0], fd1, rtol=1e-8, atol=1e-9)
    torch.testing.assert_close(d2u_dx2, fd2, rtol=1e-4, atol=1e-5)
    assert torch.autograd.gradcheck(lambda z: net(z), (x.detach().requires_grad_(),))


def test_transforms_and_outputs():
    net = LNN([2, 8, 8, 3], "tanh", "Glorot normal")
    x = torch.rand(4, 2)
    base = net(x)
    assert base.shape == (4, 3)
    net.apply_feature_transform(lambda z: torch.zeros_like(z))
    y0 = net(x)
    assert torch.allclose(y0, y0[:1].expand_as(y0))  # features no longer depend on x
    net.apply_output_transform(lambda z, y: z[:, :1] * (1 - z[:, :1]) * y)
    torch.testing.assert_close(net(x), x[:, :1] * (1 - x[:, :1]) * y0)


def test_activation_list_like_fnn():
    net = LNN([1, 4, 4, 1], ["sin", "tanh", None], "Glorot normal")
    x = torch.rand(3, 1)
    z = torch.sin(net.linears[0](x))
    z = net.blocks[0](z)
    z = net.blocks[1](tanh(net.linears[1](z)))
    torch.testing.assert_close(net(x), net.linears[2](z))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(layer_sizes=[2]), "layer_sizes"),
        (dict(layer_sizes=[2, 0, 1]), "layer_sizes"),
        (dict(layer_sizes=[2, -3, 1]), "layer_sizes"),
        (dict(layer_sizes=[2, 8.5, 1]), "layer_sizes"),
        (dict(layer_sizes=[2, True, 1]), "layer_sizes"),
        (dict(layer_sizes="2,8,1"), "layer_sizes"),
        (dict(layout="wide"), "layout"),
        (dict(alpha_init=float("nan")), "alpha_init"),
        (dict(alpha_init=float("inf")), "alpha_init"),
        (dict(alpha_init="a"), "alpha_init"),
        (dict(activation="nope"), "activation"),
        (dict(activation=["tanh"]), "activation"),
        (dict(kernel_initializer="Glorot nonsense"), "kernel_initializer"),
        (dict(layer_sizes=[2, 8, 16, 1], layout="reduced"), "layer_sizes"),
        (dict(block_activation="nope"), "block_activation"),
        (dict(block_activation="Same"), "block_activation"),
        (dict(block_activation=3), "block_activation"),
    ],
)
def test_bad_arguments(kwargs, name):
    args = dict(layer_sizes=[2, 8, 8, 1], activation="tanh", kernel_initializer="zeros")
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        LNN(**args)


def test_mlp_bad_arguments():
    with pytest.raises(ValueError, match="layer_sizes"):
        MLP([3], "tanh", "zeros")
    with pytest.raises(ValueError, match="kernel_initializer"):
        MLP([3, 1], "tanh", "bogus")
    with pytest.raises(ValueError, match="width"):
        LiquidBlock(0)
    with pytest.raises(ValueError, match="activation 'same'"):
        LiquidBlock(4, activation="same")  # "same" needs a network around the block


HUGE = [10**12, 2**62, 10**400]  # allocation fails, size overflows, int too big


@pytest.mark.parametrize("width", HUGE, ids=["1e12", "2^62", "1e400"])
def test_a_network_too_large_to_build_is_refused_naming_its_sizes(width):
    # every backend's networks build from a Plan: refused there, nothing allocated
    from deepxde_lnn import LiquidDeepONet, ReZero, matched
    from deepxde_lnn.networks.limits import MAX_PARAMETERS
    from deepxde_lnn.networks.plan import lnn_plan, mlp_plan

    said = f"^layer_sizes: .* more than {MAX_PARAMETERS:,}$"
    for build in (LNN, MLP, ReZero):
        with pytest.raises(ValueError, match=said):
            build([1, width, 1], "tanh", "zeros")
    for plan in (mlp_plan, lnn_plan):
        with pytest.raises(ValueError, match=said):
            plan([1, width, 1], "tanh")
    with pytest.raises(ValueError, match="^width: "):
        LiquidBlock(width)
    with pytest.raises(ValueError, match="^net: "):
        matched([1, width, 1], "tanh", "zeros")
    with pytest.raises(ValueError, match="^layer_sizes_branch: "):
        LiquidDeepONet([3, width, 8], [1, 8], "tanh", "zeros", liquid=())
    # the blocks count: a width whose plain layers fit, whose LNN does not
    with pytest.raises(ValueError, match="1,600,200,001 trainable"):
        LNN([1, 40000, 1], "tanh", "zeros")


def _run(code, **env):
    full = {**os.environ, **env}
    full.pop("DDE_BACKEND", None) if "DDE_BACKEND" not in env else None
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full
    )


@pytest.mark.slow
def test_backend_selected_on_import():
    r = _run("import deepxde_lnn, deepxde; print(deepxde.backend.backend_name)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "pytorch"


@pytest.mark.slow
def test_the_backend_the_user_chose_is_respected():
    # the import leaves the choice as it is (the networks of every backend:
    # tests/test_backends.py, with the backends installed)
    r = _run(
        "import os, sys, deepxde_lnn; "
        "print(os.environ['DDE_BACKEND'], 'deepxde' in sys.modules)",
        DDE_BACKEND="tensorflow.compat.v1",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "tensorflow.compat.v1 False"


def _poisson_model(net):
    """-u'' = pi^2 sin(pi x) on [-1, 1], u(+-1) = 0; u* = sin(pi x)."""
    geom = dde.geometry.Interval(-1, 1)

    def pde(x, y):
        return -dde.grad.hessian(y, x) - np.pi**2 * torch.sin(np.pi * x)

    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda _, on: on)
    data = dde.data.PDE(geom, pde, bc, 32, 2, solution=lambda x: np.sin(np.pi * x))
    return dde.Model(data, net)


@pytest.mark.slow  # trains for seconds
def test_lnn_trains_poisson_adam_lbfgs_and_save_restore(tmp_path):
    dde.config.set_random_seed(0)
    net = LNN([1, 24, 24, 1], "tanh", "Glorot normal")
    model = _poisson_model(net)
    model.compile("adam", lr=3e-3)
    model.train(iterations=300, display_every=1000, verbose=0)
    model.compile("L-BFGS")  # the usual DeepXDE Adam -> L-BFGS script
    dde.optimizers.set_LBFGS_options(maxiter=300)
    model.train(verbose=0)
    x = np.linspace(-1, 1, 201, dtype=np.float32)[:, None]
    y = model.predict(x)
    err = np.linalg.norm(y - np.sin(np.pi * x)) / np.linalg.norm(np.sin(np.pi * x))
    assert err < 1e-2
    path = model.save(str(tmp_path / "lnn"))
    twin = _poisson_model(LNN([1, 24, 24, 1], "tanh", "Glorot normal"))
    twin.compile("L-BFGS")  # restore() also loads the optimizer state
    assert not np.allclose(twin.predict(x), y)
    twin.restore(path)
    np.testing.assert_array_equal(twin.predict(x), y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_tanh_of_the_networks_is_tanh_to_a_few_units_in_the_last_place(dtype):
    special = [0.0, -0.0, 1e-30, -1e-30, float("inf"), float("-inf")]
    x = torch.cat(
        [
            torch.linspace(-40, 40, 400_001, dtype=dtype),
            torch.tensor(special, dtype=dtype),
        ]
    )
    err = (tanh(x) - torch.tanh(x)).abs().max().item()
    assert err <= 4 * torch.finfo(dtype).eps
    assert tanh(x).abs().max().item() == 1.0  # saturates, never past +-1
    assert tanh(torch.tensor([float("nan")], dtype=dtype)).isnan().all()


def test_networks_built_with_tanh_use_one_tanh():
    from deepxde.backend import tanh as dde_tanh

    for act in ("tanh", torch.tanh, dde_tanh):
        net = LNN([2, 4, 4, 1], act, "Glorot normal")
        assert net.activation[0] is tanh and net.blocks[0].activation is tanh
        assert net.extra_repr().endswith("block_activation='tanh'")
    assert MLP([2, 4, 1], "sin", "Glorot normal").activation[0] is not tanh
