"""Liquid DeepONets: DeepXDE's signatures and shapes, DeepXDE's network without
liquid parts, the parameter-count formula, DeepXDE's operator data, Adam, L-BFGS,
save/restore, and the worked example (docs/examples/poisson_operator.py)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn import LNN, LiquidDeepONet, LiquidDeepONetCartesianProd
from deepxde_lnn.networks.pytorch import LiquidBlock

EXAMPLE = Path(__file__).resolve().parents[1] / "docs/examples/poisson_operator.py"
PAIRS = [
    (dde.nn.DeepONet, LiquidDeepONet),
    (dde.nn.DeepONetCartesianProd, LiquidDeepONetCartesianProd),
]
LIQUID = [(), "branch", "trunk", ("branch", "trunk")]
# (branch sizes, trunk sizes, num_outputs, multi_output_strategy)
LAYOUTS = [
    ([6, 12, 8], [1, 10, 8], 1, None),
    ([6, 12, 12, 8], [2, 10, 10, 8], 2, "independent"),
    ([6, 12, 8], [1, 10, 8], 2, "split_both"),
    ([6, 12, 16], [1, 10, 8], 2, "split_branch"),
    ([6, 12, 8], [1, 10, 16], 2, "split_trunk"),
]


def _example():
    spec = importlib.util.spec_from_file_location("poisson_operator", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(branch, trunk, cartesian, n=5, m=7):
    g = torch.Generator().manual_seed(1)
    v = torch.randn(n, branch[0], generator=g)
    x = torch.rand(m if cartesian else n, trunk[0], generator=g)
    return v, x


def _pair(ours, theirs, args, kwargs, liquid, seed=0):
    torch.manual_seed(seed)
    a = theirs(*args, **kwargs)
    torch.manual_seed(seed)
    return a, ours(*args, **kwargs, liquid=liquid)


@pytest.mark.parametrize("theirs, ours", PAIRS)
@pytest.mark.parametrize("branch, trunk, outputs, strategy", LAYOUTS)
@pytest.mark.parametrize("liquid", LIQUID)
def test_shapes_are_deepxdes(theirs, ours, branch, trunk, outputs, strategy, liquid):
    args = (branch, trunk, "tanh", "Glorot normal", outputs, strategy)
    a, b = _pair(ours, theirs, args, {}, liquid)
    x = _inputs(branch, trunk, theirs is dde.nn.DeepONetCartesianProd)
    assert b(x).shape == a(x).shape
    cartesian = theirs is dde.nn.DeepONetCartesianProd
    expected = (5, 7) if cartesian else (5, 1)
    assert a(x).shape == (
        expected if outputs == 1 else (5, 7, 2) if cartesian else (5, 2)
    )


@pytest.mark.parametrize("theirs, ours", PAIRS)
@pytest.mark.parametrize("branch, trunk, outputs, strategy", LAYOUTS)
def test_without_liquid_parts_it_is_deepxdes_network(
    theirs, ours, branch, trunk, outputs, strategy
):
    """liquid=(): DeepXDE's own FNNs, drawn in the same order: the same values,
    the same outputs."""
    args = (branch, trunk, "tanh", "Glorot normal", outputs, strategy)
    a, b = _pair(ours, theirs, args, {}, ())
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    x = _inputs(branch, trunk, theirs is dde.nn.DeepONetCartesianProd)
    assert torch.equal(a(x), b(x))


def p_fnn(n):
    return sum((a + 1) * b for a, b in zip(n[:-1], n[1:]))


def p_lnn(n):
    return p_fnn(n) + sum(w * w + 2 * w for w in n[1:-1])


@pytest.mark.parametrize("cls", [LiquidDeepONet, LiquidDeepONetCartesianProd])
@pytest.mark.parametrize("branch, trunk, outputs, strategy", LAYOUTS)
@pytest.mark.parametrize("liquid", LIQUID)
@pytest.mark.parametrize("layout", ["standard", "reduced"])
def test_parameter_count_formula(cls, branch, trunk, outputs, strategy, liquid, layout):
    """k (P_branch + P_trunk) + num_outputs, as the module's docstring says."""
    net = cls(
        branch, trunk, "tanh", "Glorot normal", outputs, strategy,
        liquid=liquid, layout=layout,
    )  # fmt: skip
    k = outputs if strategy == "independent" else 1
    pb = (p_lnn if "branch" in liquid else p_fnn)(branch)
    pt = (p_lnn if "trunk" in liquid else p_fnn)(trunk)
    expected = k * (pb + pt) + outputs
    assert net.num_trainable_parameters() == expected
    assert sum(p.numel() for p in net.parameters()) == expected


def test_liquid_parts_are_lnns_with_the_options():
    net = LiquidDeepONetCartesianProd(
        [6, 12, 8], [1, 10, 8], {"branch": "relu", "trunk": "sin"}, "Glorot normal",
        liquid="trunk", alpha_init=0.25, block_activation="tanh",
    )  # fmt: skip
    assert isinstance(net.trunk, LNN) and not isinstance(net.branch, LNN)
    assert isinstance(net.branch, dde.nn.FNN)
    (block,) = net.trunk.blocks
    assert isinstance(block, LiquidBlock) and block.activation_name == "tanh"
    assert torch.all(block.alpha == 0.25)
    both = LiquidDeepONet([6, 12, 8], [1, 10, 8], "tanh", "Glorot normal")
    assert isinstance(both.branch, LNN) and isinstance(both.trunk, LNN)
    assert both.liquid == ("branch", "trunk")


def test_a_branch_of_ones_own_with_a_liquid_trunk():
    mine = torch.nn.Sequential(torch.nn.Linear(6, 8))
    net = LiquidDeepONet([6, mine], [1, 10, 8], "tanh", "Glorot normal", liquid="trunk")
    assert net.branch is mine and isinstance(net.trunk, LNN)
    assert net(_inputs([6], [1], False)).shape == (5, 1)


@pytest.mark.parametrize(
    "liquid, branch, match",
    [
        ("brunch", [6, 12, 8], "unknown part"),
        (3, [6, 12, 8], "liquid must be"),
        (None, [6, 12, 8], "liquid must be"),
        ("branch", [6, torch.nn.Linear(6, 8)], "network of your own"),
    ],
)
def test_bad_liquid_names_the_argument(liquid, branch, match):
    with pytest.raises(ValueError, match=match) as err:
        LiquidDeepONet(branch, [1, 10, 8], "tanh", "Glorot normal", liquid=liquid)
    assert str(err.value).startswith("liquid")


SIZES = ([6, 12, 8], [1, 10, 8])


@pytest.mark.parametrize("cls", [LiquidDeepONet, LiquidDeepONetCartesianProd])
@pytest.mark.parametrize(
    "sizes, options, match",
    [
        (([], [1, 10, 8]), {}, r"^layer_sizes_branch needs at least input and out"),
        (SIZES, {"activation": "tanhx"}, r"^activation 'tanhx' is not known"),
        (
            SIZES,
            {"activation": {"branch": "tanh", "trunk": "relux"}},
            r"^activation\['trunk'\] 'relux' is not known",
        ),
        (SIZES, {"num_outputs": 0}, r"^num_outputs must be an integer >= 1; got 0"),
        (
            ([6, 12, 8], [1, 10, 6]),
            {},
            r"^layer_sizes_branch, layer_sizes_trunk: their last widths must be "
            r"equal \(one output\); got branch 8, trunk 6",
        ),
        (
            SIZES,
            {"num_outputs": 3, "multi_output_strategy": "split_both"},
            r"equal and a multiple of num_outputs \(split_both, num_outputs=3\)",
        ),
        (
            ([6, 12, 6], [1, 10, 6]),
            {"num_outputs": 2, "multi_output_strategy": "split_branch"},
            r"branch = num_outputs x trunk \(split_branch, num_outputs=2\)",
        ),
        (
            SIZES,
            {"num_outputs": 2, "multi_output_strategy": "splat"},
            r"^multi_output_strategy must be one of independent, split_both",
        ),
        (
            SIZES,
            {"kernel_initializer": "Glorot xx", "liquid": "trunk"},
            r"^kernel_initializer 'Glorot xx' is not known to DeepXDE",
        ),
        (
            SIZES,
            {"kernel_initializer": "torch-default", "liquid": "trunk"},
            r"^kernel_initializer: 'torch-default' applies to liquid parts only",
        ),
    ],
)
def test_bad_arguments_are_one_error_naming_them_at_construction(
    cls, sizes, options, match
):
    # issue 43, item 16: an IndexError, a KeyError, an AssertionError, a network
    # of no parameters, or a failure only at the first forward pass
    given = {"activation": "tanh", "kernel_initializer": "Glorot normal", **options}
    with pytest.raises(ValueError, match=match):
        cls(*sizes, **given)


def test_lnn_options_are_checked():
    with pytest.raises(ValueError, match="layout"):
        LiquidDeepONet([6, 12, 8], [1, 10, 8], "tanh", "Glorot normal", layout="x")


def test_output_transform_applies():
    """A hard zero at both ends, DeepXDE's way: ``transform(inputs, outputs)``."""
    net = LiquidDeepONetCartesianProd([6, 12, 8], [1, 10, 8], "tanh", "Glorot normal")
    net.apply_output_transform(lambda inputs, u: inputs[1].T * (1 - inputs[1].T) * u)
    v = torch.randn(3, 6)
    u = net((v, torch.tensor([[0.0], [0.5], [1.0]])))
    assert torch.all(u[:, [0, 2]] == 0) and torch.all(u[:, 1] != 0)


@pytest.mark.parametrize("outputs", [1, 2])
def test_fits_triple_cartesian_prod_data(outputs):
    """Data-driven operator learning (``TripleCartesianProd``), several outputs
    included: Adam lowers the loss."""
    rng = np.random.default_rng(0)
    v = rng.normal(size=(8, 6)).astype(np.float32)
    x = np.linspace(0, 1, 9, dtype=np.float32)[:, None]
    y = v[:, :1] * np.sin(x.T)  # (8, 9)
    y = y if outputs == 1 else np.stack([y, -y], axis=2)
    data = dde.data.TripleCartesianProd((v, x), y, (v, x), y)
    dde.config.set_random_seed(0)
    net = LiquidDeepONetCartesianProd(
        [6, 12, 8], [1, 10, 8], "tanh", "Glorot normal", outputs,
        "split_both" if outputs > 1 else None,
    )  # fmt: skip
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-2)
    loss, _ = model.train(iterations=20, display_every=20, verbose=0)
    assert model.predict((v, x)).shape == y.shape
    assert loss.loss_train[-1].sum() < 0.5 * loss.loss_train[0].sum()


def test_fits_triple_data():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(30, 6)).astype(np.float32)
    x = rng.uniform(size=(30, 1)).astype(np.float32)
    y = v[:, :1] * x
    data = dde.data.Triple((v, x), y, (v, x), y)
    dde.config.set_random_seed(0)
    model = dde.Model(
        data, LiquidDeepONet([6, 12, 8], [1, 10, 8], "tanh", "Glorot normal")
    )
    model.compile("adam", lr=1e-2)
    loss, _ = model.train(iterations=20, display_every=20, verbose=0)
    assert loss.loss_train[-1].sum() < 0.5 * loss.loss_train[0].sum()


def _hessian_residual(x, u, f):
    return -dde.grad.hessian(u, x) - f


def _poisson_pde(ex, points=6):
    ends = dde.icbc.DirichletBC(ex.line, lambda x: 0, lambda x, on: on)
    return dde.data.PDE(
        ex.line, _hessian_residual, ends, num_domain=points, num_boundary=2
    )


def test_physics_informed_with_pde_operator_data():
    """Paired rows (``dde.data.PDEOperator``): the residual and the ends' losses."""
    ex = _example()
    dde.config.set_random_seed(0)
    data = dde.data.PDEOperator(_poisson_pde(ex), ex.space, ex.sensors, 3)
    net = LiquidDeepONet([10, 12, 8], [1, 10, 8], "tanh", "Glorot normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    loss, _ = model.train(iterations=3, display_every=3, verbose=0)
    assert len(loss.loss_train[-1]) == 2 and np.isfinite(loss.loss_train).all()


def _phases(model, ex, adam=5, lbfgs=5):
    """Adam then L-BFGS; the total training loss at each display."""
    model.compile("adam", lr=1e-3)
    model.train(iterations=adam, display_every=adam, verbose=0)
    ex.lbfgs_steps(lbfgs)
    model.compile("L-BFGS")
    model.train(display_every=lbfgs, verbose=0)
    return [sum(row) for row in model.losshistory.loss_train]


def _restores(model, fresh, tmp_path, x):
    """``model`` saved, restored into ``fresh`` (other values before): the same
    predictions."""
    path = model.save(str(tmp_path / "model"))
    fresh.compile("L-BFGS")
    assert not np.allclose(fresh.predict(x), model.predict(x))
    fresh.restore(path)
    return np.array_equal(fresh.predict(x), model.predict(x))


def test_pde_operator_cartesian_prod_with_adam_lbfgs_and_restore(tmp_path):
    """DeepXDE's ``PDEOperatorCartesianProd`` (``dde.grad.hessian`` per source):
    Adam and L-BFGS each lower the loss; save/restore round-trips."""
    ex = _example()

    def model(seed):
        dde.config.set_random_seed(seed)
        data = dde.data.PDEOperatorCartesianProd(
            _poisson_pde(ex), ex.space, ex.sensors, 3
        )
        return dde.Model(data, ex.NETS["liquid-both"]())

    trained = model(0)
    history = _phases(trained, ex)
    assert len(history) >= 3 and history[-1] < history[1] < history[0]
    x = ex.reference(functions=4, points=11)[0]
    assert _restores(trained, model(1), tmp_path, x)


def test_the_examples_exact_solution_solves_the_problem():
    """-u'' = f and u(0) = u(1) = 0 for the example's u (finite differences)."""
    ex = _example()
    x = np.linspace(0, 1, 2001)[:, None]
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    u = ex.exact(a, x)
    assert np.allclose(u[:, [0, -1]], 0, atol=1e-12)
    h = x[1, 0] - x[0, 0]
    second = (u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2]) / h**2
    assert np.allclose(-second, ex.space.eval_batch(a, x)[:, 1:-1], atol=1e-5)
    (f, points), u = ex.reference(functions=3, points=11)
    assert f.shape == (3, 10) and points.shape == (11, 1) and u.shape == (3, 11)


def test_example_trains_with_adam_then_lbfgs_and_restores(tmp_path):
    """The example's ``train`` (``dde.zcs``) at a tiny budget: each phase lowers
    the loss; the saved model restored into a fresh network predicts the same."""
    ex = _example()
    dde.config.set_random_seed(0)
    model = ex.train(ex.NETS["liquid-both"](), adam=5, lbfgs=5, functions=4, points=8)
    history = [sum(row) for row in model.losshistory.loss_train]
    assert len(history) >= 3 and history[-1] < history[1] < history[0]
    assert model.train_state.step <= 5 + 5 + 5  # L-BFGS capped (lbfgs_steps)
    test = ex.reference(functions=4, points=11)
    assert 0 < ex.relative_l2(model, test) < np.inf
    dde.config.set_random_seed(1)
    fresh = dde.zcs.Model(ex.operator_data(4, 8), ex.NETS["liquid-both"]())
    assert _restores(model, fresh, tmp_path, test[0])


def test_example_nets_are_comparable():
    """The example's networks: one output each, the matched DeepONet's count
    within 2 % of the liquid one's."""
    ex = _example()
    nets = {name: make() for name, make in ex.NETS.items()}
    assert set(nets) == {"deeponet", "liquid-branch", "liquid-both", "deeponet-matched"}
    x = ex.reference(functions=2, points=5)[0]
    x = tuple(torch.as_tensor(a) for a in x)
    assert all(net(x).shape == (2, 5) for net in nets.values())
    counts = {k: v.num_trainable_parameters() for k, v in nets.items()}
    assert counts["deeponet"] < counts["liquid-branch"] < counts["liquid-both"]
    assert abs(counts["deeponet-matched"] / counts["liquid-both"] - 1) < 0.02
    assert deepxde_lnn.LiquidDeepONet is LiquidDeepONet


@pytest.mark.slow
def test_example_runs_as_a_script(tmp_path):
    """``python docs/examples/poisson_operator.py``: every network over seeds,
    compared through ``compare(train=...)``, the verdicts printed."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    args = ["--adam", "2", "--lbfgs", "2", "--seeds", "0,1", "--out", str(tmp_path)]
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    for name in list(_example().NETS)[1:]:
        assert f"{name}/deeponet error ratio" in out.stdout
    assert len(list(tmp_path.glob("*/seed-*/metrics.json"))) == 2 * len(_example().NETS)
