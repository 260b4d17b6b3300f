"""Taylor-mode jets (``deepxde_lnn.networks.taylor``) against nested autograd and DeepXDE.

All comparisons in float64 with norm-based relative errors; the networks get random
biases and random ``alpha`` so that no term of the jet rules vanishes.
"""

import math
import warnings

import deepxde as dde
import pytest
import torch

import deepxde_lnn
from deepxde_lnn.networks import taylor
from deepxde_lnn.networks.pirate import PirateBlock, PirateNet
from deepxde_lnn.networks.pytorch import LiquidBlock
from deepxde_lnn.networks.stacked import StackedNet

F64 = torch.float64
ARCHS = [
    ("mlp", "standard"),
    ("lnn", "standard"),
    ("lnn", "reduced"),
    ("rezero", "standard"),
]
ARCH_IDS = ["mlp", "lnn-standard", "lnn-reduced", "rezero"]


def make_net(kind, layout, activation, sizes=(2, 12, 12, 12, 1), seed=0, **kwargs):
    torch.manual_seed(seed)
    if kind == "mlp":
        net = deepxde_lnn.MLP(list(sizes), activation, "Glorot normal")
    elif kind == "rezero":
        net = deepxde_lnn.ReZero(list(sizes), activation, "Glorot normal", **kwargs)
    else:
        net = deepxde_lnn.LNN(
            list(sizes), activation, "Glorot normal", layout=layout, **kwargs
        )
    net = net.to(F64)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.endswith("bias"):
                p.normal_(0.0, 0.5)
            elif name.endswith("alpha"):
                p.uniform_(-1.5, 1.5)
    return net


def points(n=16, d=2, seed=1, dtype=F64):
    g = torch.Generator().manual_seed(seed)
    return (2.0 * torch.rand(n, d, generator=g) - 1.0).to(dtype)


def relerr(a, b):
    return ((a - b).norm() / b.norm()).item()


def nested_directional(net, x, v, order):
    """[u, D_v u, ..., D_v^order u] by nested reverse mode, one output at a time."""
    x = x.detach().clone().requires_grad_(True)
    out = [net(x)]
    for _ in range(order):
        cur = out[-1]
        cols = [
            (torch.autograd.grad(cur[:, c].sum(), x, create_graph=True)[0] * v).sum(-1)
            for c in range(cur.shape[1])
        ]
        out.append(torch.stack(cols, 1))
    return out


def nested_beam(net, x):
    """u, u_xx, u_yyyy, u_y as the paper authors' nested autograd.grad loop."""
    x = x.detach().clone().requires_grad_(True)
    u = net(x)

    def d(f, i):
        g = torch.autograd.grad(f, x, torch.ones_like(f), create_graph=True)[0]
        return g[:, i : i + 1]

    u_x, u_y = d(u, 0), d(u, 1)
    u_yy = d(u_y, 1)
    return u, d(u_x, 0), d(d(u_yy, 1), 1), u_y


# --- values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [dict(residual=False), dict(block_layers=[0, 2]), dict(train_alpha=False)],
    ids=["no-residual", "blocks-on-0-and-2", "fixed-alpha"],
)
@pytest.mark.parametrize("layout", ["standard", "reduced"])
def test_ablation_variants_follow_nested_autograd(layout, kwargs):
    """The ablations' blocks (no identity path, blocks on some layers, fixed
    gates): the jets give nested autograd's derivatives, and the variant is not
    the default network (an ignored option would fail here)."""
    net = make_net("lnn", layout, "tanh", **kwargs)
    plain = make_net("lnn", layout, "tanh")
    x, v = points(), torch.tensor([0.6, -0.8], dtype=F64)
    ref = nested_directional(net, x, v, 3)
    got = taylor.directional_derivatives(net, x, v, 3)
    for a, b in zip(got, ref):
        assert relerr(a, b) < 1e-10
    if "train_alpha" not in kwargs:
        assert relerr(net(x), plain(x)) > 1e-3


@pytest.mark.parametrize("activation", ["tanh", "sin"])
@pytest.mark.parametrize("kind, layout", ARCHS, ids=ARCH_IDS)
def test_directional_derivatives_match_nested_autograd(kind, layout, activation):
    net = make_net(kind, layout, activation)
    x = points()
    oblique = torch.tensor([0.6, -0.8], dtype=F64)
    per_point = points(seed=7)
    cases = [(0, torch.eye(2, dtype=F64)[0]), (1, torch.eye(2, dtype=F64)[1])]
    cases += [(oblique, oblique), (per_point, per_point)]
    for direction, v in cases:
        jets = taylor.directional_derivatives(net, x, direction, 4)
        ref = nested_directional(net, x, v, 4)
        assert len(jets) == 5
        assert jets[0].shape == (16, 1)
        for k in range(5):
            assert ref[k].norm() > 1e-3  # a non-trivial derivative
            assert relerr(jets[k], ref[k]) <= 1e-10, (direction, k)


@pytest.mark.parametrize("kind, layout", ARCHS, ids=ARCH_IDS)
def test_several_inputs_and_outputs(kind, layout):
    net = make_net(kind, layout, "tanh", sizes=(3, 10, 10, 2))
    x = points(d=3)
    v = torch.tensor([0.3, -1.2, 0.7], dtype=F64)
    jets = taylor.directional_derivatives(net, x, v, 4)
    ref = nested_directional(net, x, v, 4)
    for k in range(5):
        assert jets[k].shape == (16, 2)
        assert relerr(jets[k], ref[k]) <= 1e-10
    # taylor_coefficients: c[k-1, i] = D_{v_i}^k u / k!, directions batched
    vs = torch.stack([v, torch.eye(3, dtype=F64)[2]])
    u, c = taylor.taylor_coefficients(net, x, vs, 3)
    assert c.shape == (3, 2, 16, 2)
    ref_e2 = nested_directional(net, x, vs[1], 3)
    for k in range(1, 4):
        assert relerr(math.factorial(k) * c[k - 1, 0], ref[k]) <= 1e-10
        assert relerr(math.factorial(k) * c[k - 1, 1], ref_e2[k]) <= 1e-10


@pytest.mark.parametrize(
    "activation",
    ["sigmoid", "silu", "gelu", "LAAF-3 tanh", torch.cos, torch.nn.Tanh()],
    ids=["sigmoid", "silu", "gelu", "laaf", "cos", "module"],
)
def test_other_activations(activation):
    net = make_net("mlp", "standard", activation, sizes=(2, 10, 10, 1))
    x = points()
    v = torch.tensor([-0.4, 1.1], dtype=F64)
    jets = taylor.directional_derivatives(net, x, v, 4)
    ref = nested_directional(net, x, v, 4)
    for k in range(5):
        assert relerr(jets[k], ref[k]) <= 1e-10


@pytest.mark.parametrize(
    "activation, block_activation",
    [("tanh", "sin"), ("sin", "same"), ("tanh", "sigmoid"), ("tanh", "LAAF-2 sin")],
    ids=["sin", "same", "sigmoid", "laaf"],
)
@pytest.mark.parametrize("layout", ["standard", "reduced"])
def test_block_activation(layout, activation, block_activation):
    net = make_net(
        "lnn",
        layout,
        activation,
        sizes=(2, 10, 10, 10, 1),
        block_activation=block_activation,
    )
    with torch.no_grad():  # L-LAAF: a scale n * a = 1.6 instead of 1
        for name, p in net.named_parameters():
            if name.endswith("activation.a"):
                p.fill_(0.8)
    assert taylor.supported(net)
    x = points()
    v = torch.tensor([0.8, -0.5], dtype=F64)
    jets = taylor.directional_derivatives(net, x, v, 4)
    ref = nested_directional(net, x, v, 4)
    for k in range(5):
        assert ref[k].norm() > 1e-3
        assert relerr(jets[k], ref[k]) <= 1e-10
    _, beam = taylor.pure_derivative_combination(net, x, [(1, 0, 2), (-1, 1, 4)])
    eye = torch.eye(2, dtype=F64)
    ref = nested_directional(net, x, eye[0], 2)[2]
    ref = ref - nested_directional(net, x, eye[1], 4)[4]
    assert relerr(beam, ref) <= 1e-10


def test_unsupported_block_activation_is_not_supported():
    net = make_net("lnn", "standard", "tanh", block_activation="relu")
    assert not taylor.supported(net)
    with pytest.raises(ValueError, match="activation 'relu' has no Taylor-mode rule"):
        taylor.laplacian(net, points())
    # the default ("same") in the reduced layout makes the activation matter
    assert taylor.supported(make_net("lnn", "reduced", "relu", block_activation="tanh"))
    assert not taylor.supported(make_net("lnn", "reduced", "relu"))


@pytest.mark.parametrize("layout", ["standard", "reduced"])
def test_default_blocks_of_a_sin_network_are_sin(layout):
    """The default block activation follows a sin network; jets follow the blocks."""
    net = make_net("lnn", layout, "sin", sizes=(2, 10, 10, 10, 1))
    assert {b.activation_name for b in net.blocks} == {"sin"}
    x = points()
    v = torch.tensor([0.8, -0.5], dtype=F64)
    jets = taylor.directional_derivatives(net, x, v, 4)
    ref = nested_directional(net, x, v, 4)
    for k in range(5):
        assert relerr(jets[k], ref[k]) <= 1e-10
    _, lap = taylor.laplacian(net, x)
    eye = torch.eye(2, dtype=F64)
    ref = sum(nested_directional(net, x, eye[i], 2)[2] for i in range(2))
    assert relerr(lap, ref) <= 1e-10


def test_register_activation():
    softplus = torch.nn.functional.softplus

    def factors(z0, order):
        # softplus^(m) = sigmoid^(m-1): shift the sigmoid factors
        s = taylor._sigmoid_factors(z0, max(order - 1, 0))
        return [softplus(z0)] + [s[m - 1] / m for m in range(1, order + 1)]

    net = make_net("mlp", "standard", softplus, sizes=(2, 8, 8, 1))
    with pytest.raises(ValueError, match="softplus"):
        taylor.directional_derivatives(net, points(), 0, 4)
    taylor.register_activation(softplus, factors)
    try:
        jets = taylor.directional_derivatives(net, points(), 1, 4)
    finally:
        del taylor._RULES[softplus]
    ref = nested_directional(net, points(), torch.eye(2, dtype=F64)[1], 4)
    for k in range(5):
        assert relerr(jets[k], ref[k]) <= 1e-10


def test_linear_network_and_order_zero():
    net = make_net("mlp", "standard", "tanh", sizes=(2, 3))
    x = points()
    v = torch.tensor([2.0, -1.0], dtype=F64)
    u, du, d2u = taylor.directional_derivatives(net, x, v, 2)
    assert relerr(du, (net.linears[0].weight @ v).expand(16, 3)) <= 1e-15
    assert d2u.shape == (16, 3) and d2u.abs().max() == 0
    lnn = make_net("lnn", "standard", "sin")
    (u0,) = taylor.directional_derivatives(lnn, x, 0, 0)
    assert relerr(u0, lnn(x)) <= 1e-15
    u0, (same,) = taylor.pure_derivatives(lnn, x, [(1, 0)])
    assert relerr(same, lnn(x)) <= 1e-15
    u0, lu = taylor.pure_derivative_combination(lnn, x, [(2.5, 0, 0)])
    assert relerr(lu, 2.5 * lnn(x)) <= 1e-15
    u0, c = taylor.taylor_coefficients(lnn, x, torch.eye(2, dtype=F64), 0)
    assert c.shape == (0, 2, 16, 1)


@pytest.mark.parametrize("activation, d", [("tanh", 2), ("tanh", 3), ("sin", 2)])
@pytest.mark.parametrize("kind, layout", ARCHS, ids=ARCH_IDS)
def test_laplacian(kind, layout, activation, d):
    net = make_net(kind, layout, activation, sizes=(d, 12, 12, 12, 2))
    x = points(d=d)
    u, lap = taylor.laplacian(net, x)
    ref = sum(nested_directional(net, x, e, 2)[2] for e in torch.eye(d, dtype=F64))
    assert lap.shape == (16, 2)
    assert relerr(u, net(x)) <= 1e-15
    assert relerr(lap, ref) <= 1e-10


@pytest.mark.parametrize("method", ["truncated", "stacked", "combination"])
@pytest.mark.parametrize("kind, layout", ARCHS, ids=ARCH_IDS)
def test_beam_residual_matches_deepxde(float64, kind, layout, method):
    net = make_net(kind, layout, "tanh")
    x = points(n=32)
    dde.grad.clear()
    xg = x.clone().requires_grad_(True)
    u = net(xg)
    u_xx = dde.grad.hessian(u, xg, i=0, j=0)
    u_yy = dde.grad.hessian(u, xg, i=1, j=1)
    ref = u_xx - dde.grad.hessian(u_yy, xg, i=1, j=1)
    dde.grad.clear()
    if method == "combination":
        u_j, res = taylor.pure_derivative_combination(net, x, [(1, 0, 2), (-1, 1, 4)])
    else:
        requests = [(0, 2), (1, 4), (1, 2)]
        u_j, (uxx, uyyyy, uyy) = taylor.pure_derivatives(
            net, x, requests, strategy=method
        )
        assert relerr(uyy, u_yy) <= 1e-10
        res = uxx - uyyyy
    assert relerr(u_j, u) <= 1e-15
    assert relerr(res, ref) <= 1e-10


def test_pure_derivatives_requests():
    net = make_net("lnn", "standard", "sin", sizes=(3, 10, 10, 1))
    x = points(d=3)
    requests = [(2, 3), (0, 0), (1, 1), (2, 1), (0, 4)]
    u, outs = taylor.pure_derivatives(net, x, requests)
    eye = torch.eye(3, dtype=F64)
    for (i, k), got in zip(requests, outs):
        assert relerr(got, nested_directional(net, x, eye[i], k)[k]) <= 1e-10
    _, stacked = taylor.pure_derivatives(net, x, requests, strategy="stacked")
    for a, b in zip(outs, stacked):
        assert relerr(a, b) <= 1e-13


@pytest.mark.parametrize("activation", ["tanh", "sin"])
@pytest.mark.parametrize("kind, layout", ARCHS, ids=ARCH_IDS)
def test_pure_derivative_combination(kind, layout, activation):
    # several orders on one axis, an axis whose top order is 1 (collapsed at the
    # input), a zeroth-order term and a repeated term
    net = make_net(kind, layout, activation, sizes=(3, 10, 10, 2))
    x = points(d=3)
    terms = [(0.5, 1, 1), (2.0, 1, 3), (-1.0, 0, 2), (0.7, 0, 0), (1.5, 2, 1)]
    terms += [(0.25, 0, 2), (-0.3, 1, 4)]
    u, lu = taylor.pure_derivative_combination(net, x, terms)
    eye = torch.eye(3, dtype=F64)
    ref = sum(a * nested_directional(net, x, eye[i], k)[k] for a, i, k in terms)
    assert relerr(u, net(x)) <= 1e-15
    assert relerr(lu, ref) <= 1e-10


def test_generic_rule_agrees_with_tanh_recurrence():
    # the Faa di Bruno path with the tanh derivative polynomials vs the ODE recurrence
    my_tanh = lambda z: torch.tanh(z)  # noqa: E731
    taylor.register_activation(my_tanh, lambda z0, k: taylor._tanh_factors(z0, k))
    try:
        generic = make_net("mlp", "standard", my_tanh, sizes=(2, 10, 10, 1))
        jets = taylor.directional_derivatives(generic, points(), [0.3, 0.9], 4)
        _, lap = taylor.laplacian(generic, points())
    finally:
        del taylor._RULES[my_tanh]
    special = make_net("mlp", "standard", "tanh", sizes=(2, 10, 10, 1))
    ref = taylor.directional_derivatives(special, points(), [0.3, 0.9], 4)
    for a, b in zip(jets, ref):
        assert relerr(a, b) <= 1e-13
    assert relerr(lap, taylor.laplacian(special, points())[1]) <= 1e-13


# --- parameter gradients --------------------------------------------------------------


@pytest.mark.parametrize("activation", ["tanh", "sin"])
@pytest.mark.parametrize("kind, layout", ARCHS, ids=ARCH_IDS)
def test_parameter_gradients_match_nested_autograd(kind, layout, activation):
    net = make_net(kind, layout, activation)
    x = points(n=24)
    params = list(net.parameters())

    f = (2 - x[:, 0:1] ** 2) * torch.exp(-x[:, 1:2])

    def loss(u, beam, uxx, uyyyy, u_y, lap):
        mse = ((beam - f) ** 2).mean() + ((uxx - uyyyy - f) ** 2).mean()
        return mse + (u_y**2).mean() + (lap**2).mean() + ((u - 0.3) ** 2).mean()

    u, (uxx, uyyyy, uy) = taylor.pure_derivatives(net, x, [(0, 2), (1, 4), (1, 1)])
    _, beam = taylor.pure_derivative_combination(net, x, [(1, 0, 2), (-1, 1, 4)])
    _, lap = taylor.laplacian(net, x)
    g_jet = torch.autograd.grad(loss(u, beam, uxx, uyyyy, uy, lap), params)

    u, uxx, uyyyy, uy = nested_beam(net, x)
    lap_ref = sum(nested_directional(net, x, e, 2)[2] for e in torch.eye(2, dtype=F64))
    g_ref = torch.autograd.grad(loss(u, uxx - uyyyy, uxx, uyyyy, uy, lap_ref), params)
    flat_jet = torch.cat([g.flatten() for g in g_jet])
    flat_ref = torch.cat([g.flatten() for g in g_ref])
    assert flat_ref.norm() > 1e-3
    assert relerr(flat_jet, flat_ref) <= 1e-9
    for a, b in zip(g_jet, g_ref):  # every parameter tensor, alpha included
        assert relerr(a, b) <= 1e-9


# --- dtypes and devices ---------------------------------------------------------------


def test_float32_follows_float64():
    net64 = make_net("lnn", "standard", "tanh")
    net32 = make_net("lnn", "standard", "tanh").to(torch.float32)
    x = points()
    jets32 = taylor.directional_derivatives(net32, x.float(), 1, 4)
    jets64 = taylor.directional_derivatives(net64, x, 1, 4)
    for a, b in zip(jets32, jets64):
        assert a.dtype == torch.float32
        assert relerr(a.double(), b) <= 1e-4


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():
    net = make_net("lnn", "standard", "tanh")
    x = points()
    u, outs = taylor.pure_derivatives(net.cuda(), x.cuda(), [(0, 2), (1, 4)])
    assert u.device.type == "cuda"
    _, ref = taylor.pure_derivatives(net.cpu(), x, [(0, 2), (1, 4)])
    for a, b in zip(outs, ref):
        assert relerr(a.cpu(), b) <= 1e-12


# --- errors ---------------------------------------------------------------------------


def test_unsupported_activation_raises():
    net = make_net("mlp", "standard", "relu")
    with pytest.raises(ValueError, match="activation 'relu' has no Taylor-mode rule"):
        taylor.laplacian(net, points())
    with pytest.raises(ValueError, match="activation '<lambda>'"):
        taylor.laplacian(make_net("lnn", "standard", lambda z: z**3), points())
    # the reduced layout with tanh blocks does not use the activation: no error
    net = make_net("lnn", "reduced", "relu", block_activation="tanh")
    _, lap = taylor.laplacian(net, points())
    ref = sum(
        nested_directional(net, points(), e, 2)[2] for e in torch.eye(2, dtype=F64)
    )
    assert relerr(lap, ref) <= 1e-10


def test_transforms_raise():
    net = make_net("lnn", "standard", "tanh")
    net.apply_output_transform(lambda x, y: x[:, :1] * y)
    with pytest.raises(taylor.TransformOrder, match=taylor.TRANSFORM_ORDER):
        taylor.directional_derivatives(net, points(), 0, 2)
    # first order goes through, on a single point too (forward mode's dual
    # tensors refuse the zero stride of a one-row broadcast)
    for n in (1, 16):
        _, got = taylor.pure_derivatives(net, points(n), [(0, 1), (1, 1)])
        for g, e in zip(got, torch.eye(2, dtype=F64)):
            assert relerr(g, nested_directional(net, points(n), e, 1)[1]) <= 1e-12
    net = make_net("mlp", "standard", "tanh")
    net.apply_feature_transform(lambda x: torch.sin(x))
    with pytest.raises(ValueError, match="input \\(feature\\) transform"):
        taylor.pure_derivatives(net, points(), [(0, 2)])


class Shift(torch.nn.Module):
    """A stage type of its own with a parameter: ``sin(h + s)``."""

    def __init__(self, width):
        super().__init__()
        self.shift = torch.nn.Parameter(torch.zeros(width))

    def forward(self, h):
        return torch.sin(h + self.shift)


class Shifted(deepxde_lnn.MLP):
    """A new block kind, declared by its stages: a ``Shift`` after each
    hidden activation."""

    def _blocks_init(self, init):
        self.shifts = torch.nn.ModuleList(Shift(w) for w in self.layer_sizes[1:-1])

    def _layer_stages(self, j):
        return [self.activation[j], self.shifts[j]]


class Gate(LiquidBlock):
    """A liquid block whose forward differs from the one the rule follows."""

    def forward(self, h):
        return h + self.alpha * torch.tanh(self.linear(h))


def test_a_stage_without_a_rule_names_the_table_to_extend(monkeypatch):
    """A stage type jets have no rule for (a new one, or a block whose forward
    is its own) is refused naming ``_STAGE_RULES``, not ``register_activation``;
    a run's residuals fall back to nested autograd with a warning naming it,
    once per type."""
    from deepxde_lnn.problems.data import ResampledPDE, Term
    from deepxde_lnn.problems.sampling import Box

    lnn = make_net("lnn", "standard", "tanh")
    lnn.blocks[1].__class__ = Gate  # its forward is Gate's now
    shifted = Shifted([2, 8, 8, 1], "tanh", "Glorot normal").to(F64)
    for net, name in ((shifted, "Shift"), (lnn, "Gate")):
        with pytest.raises(taylor.MissingRule, match=f"stage {name} has no Taylor"):
            taylor.laplacian(net, points())
        assert "_STAGE_RULES in deepxde_lnn/networks/taylor.py" in taylor.unsupported(
            net
        )
        assert "register_activation" not in taylor.unsupported(net)
    monkeypatch.setattr(taylor, "_WARNED", set())
    box = Box((0.0, 0.0), (1.0, 1.0))
    terms = [Term("pde", box, 4, lambda x, u: u, kind="pde", jet=lambda x, n: n(x))]
    first, again = (Shifted([2, 8, 1], "tanh", "Glorot normal") for _ in range(2))
    with pytest.warns(UserWarning, match="stage Shift has no .*_STAGE_RULES") as said:
        assert ResampledPDE(terms, seed=0).uses_jets(first) is False
        assert ResampledPDE(terms, seed=0).uses_jets(again) is False
    assert len([w for w in said if "Taylor-mode" in str(w.message)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a network jets follow: nothing said
        net = make_net("lnn", "standard", "tanh")
        assert ResampledPDE(terms, seed=0).uses_jets(net) is True


def test_bad_arguments_raise():
    net = make_net("mlp", "standard", "tanh")
    x = points()
    with pytest.raises(TypeError, match="FNN"):
        taylor.laplacian(dde.nn.FNN([2, 4, 1], "tanh", "Glorot normal"), x)
    with pytest.raises(ValueError, match="order"):
        taylor.directional_derivatives(net, x, 0, -1)
    with pytest.raises(ValueError, match="axis"):
        taylor.directional_derivatives(net, x, 2, 2)
    with pytest.raises(ValueError, match="direction"):
        taylor.directional_derivatives(net, x, [1.0, 0.0, 0.0], 2)
    with pytest.raises(ValueError, match="shape"):
        taylor.laplacian(net, x[:, :1])
    with pytest.raises(ValueError, match="float32"):
        taylor.laplacian(net, x.float())
    with pytest.raises(ValueError, match="strategy"):
        taylor.pure_derivatives(net, x, [(0, 2)], strategy="loop")
    with pytest.raises(ValueError, match="pairs"):
        taylor.pure_derivatives(net, x, [0, 2])


def test_laplacian_backward_copies_no_slices():
    """Selecting every row of a coefficient is the tensor itself: no slice whose
    backward fills a zero tensor and copies the gradient in (a speed regression
    test; the values are checked above)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(func._opname)
            return func(*args, **(kwargs or {}))

    net = make_net("mlp", "standard", "tanh")
    _, lap = taylor.laplacian(net, points())
    with Ops() as ops:
        lap.square().sum().backward()
    assert "slice_backward" not in ops.names
    assert "mm" in ops.names  # the mode saw the backward


# --- PirateNet: gates, products of two jets -------------------------------------------


def make_pirate(blocks, n_in=2, n_out=3, width=8, seed=0):
    """A PirateNet away from its identity start: random biases, every block's
    ``alpha`` in (0.2, 0.9), so that every product-rule term counts."""
    torch.manual_seed(seed)
    net = PirateNet(n_in, n_out, width=width, blocks=blocks, scale=1.5).to(F64)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.endswith("bias"):
                p.normal_(0.0, 0.5)
            elif name.endswith("alpha"):
                p.uniform_(0.2, 0.9)
    return net


@pytest.mark.parametrize("blocks", [1, 2])
def test_pirate_directional_derivatives_match_nested_autograd(blocks):
    """Orders 1 to 4 along a direction, and along one direction per point, of
    every output."""
    net = make_pirate(blocks)
    assert taylor.unsupported(net) is None
    x = points()
    for v in (torch.tensor([0.6, -0.8], dtype=F64), points(seed=5)):
        order = 4 if v.ndim == 1 else 2
        got = taylor.directional_derivatives(net, x, v, order)
        for a, b in zip(got, nested_directional(net, x, v, order)):
            assert a.shape == (16, 3)
            assert relerr(a, b) <= 1e-10


@pytest.mark.parametrize("blocks", [1, 2])
def test_pirate_mixed_second_derivatives(blocks):
    """``u_ij`` by polarisation, ``(D_{e_i + e_j}^2 u - u_ii - u_jj) / 2``, the
    three inputs' directions stacked in one propagation."""
    net = make_pirate(blocks, n_in=3)
    x = points(d=3)
    pairs = [(0, 1), (0, 2), (1, 2)]
    eye = torch.eye(3, dtype=F64)
    directions = torch.cat([eye, torch.stack([eye[i] + eye[j] for i, j in pairs])])
    u, c = taylor.taylor_coefficients(net, x, directions, 2)
    assert relerr(u, net(x)) <= 1e-14
    xg = x.clone().requires_grad_(True)
    y = net(xg)
    for p, (i, j) in enumerate(pairs):
        got = c[1, 3 + p] - c[1, i] - c[1, j]  # (2! / 2) (D^2 ...)
        want = torch.stack(
            [
                torch.autograd.grad(
                    torch.autograd.grad(y[:, o].sum(), xg, create_graph=True)[0][
                        :, i
                    ].sum(),
                    xg,
                    retain_graph=True,
                )[0][:, j]
                for o in range(3)
            ],
            1,
        )
        assert relerr(got, want) <= 1e-10


@pytest.mark.parametrize("method", ["truncated", "stacked", "combination"])
@pytest.mark.parametrize("blocks", [1, 2])
def test_pirate_beam_and_laplacian(float64, blocks, method):
    """The beam's 4th-order residual (directions stopping at different orders,
    and the collapsed top) and the Laplacian against DeepXDE."""
    net = make_pirate(blocks)
    x = points(n=24)
    dde.grad.clear()
    xg = x.clone().requires_grad_(True)
    u = net(xg)
    u_yy = [dde.grad.hessian(u, xg, component=o, i=1, j=1) for o in range(3)]
    ref = torch.cat(
        [
            dde.grad.hessian(u, xg, component=o, i=0, j=0)
            - dde.grad.hessian(u_yy[o], xg, i=1, j=1)
            for o in range(3)
        ],
        1,
    )
    lap_ref = torch.cat(u_yy, 1) + torch.cat(
        [dde.grad.hessian(u, xg, component=o, i=0, j=0) for o in range(3)], 1
    )
    dde.grad.clear()
    if method == "combination":
        _, res = taylor.pure_derivative_combination(net, x, [(1, 0, 2), (-1, 1, 4)])
    else:
        _, (uxx, uyyyy, uyy) = taylor.pure_derivatives(
            net, x, [(0, 2), (1, 4), (1, 2)], strategy=method
        )
        assert relerr(uyy, torch.cat(u_yy, 1)) <= 1e-10
        res = uxx - uyyyy
    assert relerr(res, ref) <= 1e-10
    assert relerr(taylor.laplacian(net, x)[1], lap_ref) <= 1e-10


def test_pirate_parameter_gradients_match_nested_autograd():
    """The gradient of a loss of jets, every parameter (each block's ``alpha``
    included) against nested autograd's."""
    net = make_pirate(2, n_out=1)
    x = points(n=24)
    params = list(net.parameters())

    def loss(u, beam, u_y, lap):
        return (beam**2).mean() + (u_y**2).mean() + (lap**2).mean() + (u**2).mean()

    u, (uy,) = taylor.pure_derivatives(net, x, [(1, 1)])
    _, beam = taylor.pure_derivative_combination(net, x, [(1, 0, 2), (-1, 1, 4)])
    _, lap = taylor.laplacian(net, x)
    g_jet = torch.autograd.grad(loss(u, beam, uy, lap), params)
    u, uxx, uyyyy, uy = nested_beam(net, x)
    lap_ref = sum(nested_directional(net, x, e, 2)[2] for e in torch.eye(2, dtype=F64))
    g_ref = torch.autograd.grad(loss(u, uxx - uyyyy, uy, lap_ref), params)
    names = [n for n, _ in net.named_parameters()]
    assert any(n.endswith("alpha") for n in names)
    for name, a, b in zip(names, g_jet, g_ref):
        assert b.norm() > 1e-8, name
        assert relerr(a, b) <= 1e-9, name


def test_pirate_output_transform_and_what_jets_refuse():
    """An output transform to first order, as for an MLP; an input transform, a
    block or a network whose forward is its own are refused."""
    net = make_pirate(1)
    net.apply_output_transform(lambda x, y: x[:, :1] * y)
    x = points()
    got = taylor.directional_derivatives(net, x, 1, 1)
    ref = nested_directional(net, x, torch.tensor([0.0, 1.0], dtype=F64), 1)
    assert relerr(got[1], ref[1]) <= 1e-12
    with pytest.raises(ValueError, match="output transform"):
        taylor.directional_derivatives(net, x, 1, 2)
    net = make_pirate(1)
    net.apply_feature_transform(torch.sin)
    assert "input (feature) transform" in taylor.unsupported(net)

    class Block(PirateBlock):
        def forward(self, h, u, v):
            return h

    class Net(PirateNet):
        def trunk(self, x):
            return self.output(self.embedding(x))

    net = make_pirate(2)
    net.blocks[1].__class__ = Block
    with pytest.raises(taylor.MissingRule, match="stage Block has no Taylor"):
        taylor.laplacian(net, x)
    net.__class__ = Net
    assert "got Net" in taylor.unsupported(net)


def test_pirate_jets_stacked_equal_separate_runs():
    """Three seeds stacked (:class:`~deepxde_lnn.networks.stacked.StackedNet`),
    their jets vmapped over the seeds: each seed's block of rows, and the
    gradient w.r.t. its slice of the stacked parameters, are that seed's own
    net's."""
    nets = [make_pirate(2, seed=s) for s in (3, 4, 5)]
    stacked = StackedNet(nets)
    n = 6
    x = points(n=3 * n)

    def jets(xk, net):
        _, beam = taylor.pure_derivative_combination(net, xk, [(1, 0, 2), (-1, 1, 4)])
        _, c = taylor.taylor_coefficients(net, xk, [[1.0, 1.0]], 2)
        return [beam, c[1, 0]]

    got = stacked.per_run(jets, x)
    loss = sum((g**2).sum() for g in got)
    unused = dict(allow_unused=True, materialize_grads=True)  # the output bias
    grads = torch.autograd.grad(loss, list(stacked.parameters()), **unused)
    for k, net in enumerate(nets):
        rows = slice(n * k, n * (k + 1))
        ref = jets(x[rows], net)
        for a, b in zip(got, ref):
            assert relerr(a[rows], b) <= 1e-12
        ref_grads = torch.autograd.grad(
            sum((r**2).sum() for r in ref), list(net.parameters()), **unused
        )
        assert sum(b.norm() > 0 for b in ref_grads) == len(ref_grads) - 1
        for a, b in zip(grads, ref_grads):
            torch.testing.assert_close(a[k], b, rtol=1e-10, atol=1e-14)
