"""ReZero came in as one class (``nn.ReZero``) and one registry entry (``rezero``):
its stacked form, jets, parameter count and commands come from the generic code.
(Stacked == separate runs: tests/test_stacking.py; jets against nested autograd
for every derivative kind: tests/test_taylor.py.)"""

import json

import pytest
import torch
from helpers import run_cli, tiny_case

import deepxde_lnn
from deepxde_lnn import MLP, ReZero
from deepxde_lnn.experiments import ablation
from deepxde_lnn.networks.pytorch import tanh
from deepxde_lnn.problems import build, methods
from deepxde_lnn.problems.data import ResampledPDE
from deepxde_lnn.study import registry

F64 = torch.float64
QUIET = dict(workers=1, progress=False, verbose=False)


def test_zero_alpha_starts_as_the_plain_mlp_and_the_blocks_then_act():
    torch.manual_seed(0)
    sizes = [3, 12, 10, 2]
    net = ReZero(sizes, "tanh", "torch-default")
    plain = MLP(sizes, "tanh", "torch-default")
    plain.linears.load_state_dict(net.linears.state_dict())
    x = torch.randn(9, 3, dtype=net.linears[0].weight.dtype)
    assert torch.equal(net(x), plain(x))
    with torch.no_grad():
        for i, block in enumerate(net.blocks):
            block.alpha.fill_(0.3 * (i + 1))
    h = x
    for lin, block in zip(net.linears[:-1], net.blocks):
        z = tanh(h @ lin.weight.T + lin.bias)
        h = z + block.alpha * tanh(z @ block.linear.weight.T + block.linear.bias)
    out = net.linears[-1]
    torch.testing.assert_close(net(x), h @ out.weight.T + out.bias)
    assert not torch.allclose(net(x), plain(x))


@pytest.mark.parametrize(
    "sizes", [[2, 64, 64, 64, 64, 1], [2, 64, 64, 64, 1], [3, 12, 10, 2], [2, 1]]
)
def test_parameter_count_is_the_mlp_plus_one_scalar_gate_per_block(sizes):
    net = ReZero(sizes, "tanh", "torch-default")
    mlp = MLP(sizes, "tanh", "torch-default").num_trainable_parameters()
    extra = sum(w * w + w + 1 for w in sizes[1:-1])
    assert net.num_trainable_parameters() == mlp + extra
    assert all(b.alpha.shape == () and float(b.alpha.detach()) == 0 for b in net.blocks)


def test_registry_entry_builds_the_network_with_its_options():
    case = registry.get("laplace")
    assert build.parameter_count("rezero", case) == 12737 + 4 * (64 * 64 + 64 + 1)
    assert methods.get("rezero").stackable
    net = build.build_net("rezero:alpha_init=0.25:width=16:block_activation=sin", case)
    assert isinstance(net, ReZero) and net.layer_sizes == [2, 16, 16, 16, 16, 1]
    assert {float(b.alpha.detach()) for b in net.blocks} == {0.25}
    assert {b.activation_name for b in net.blocks} == {"sin"}
    with pytest.raises(ValueError, match="rezero:layout=reduced"):
        methods.get("rezero:layout=reduced")
    assert "rezero" not in ablation.variants(case)  # through methods= only


def test_resampled_pde_takes_the_jets_and_they_equal_autograd(float64):
    """The case's Taylor-mode residual on a ReZero net (gates non-zero) equals
    DeepXDE's nested autograd residual: the training loss uses the jets."""
    case = registry.get("beam")
    torch.manual_seed(0)
    net = build.build_net("rezero:alpha_init=0.7", case)
    data = ResampledPDE(
        case.make_terms(case.profile("quick")), seed=0, derivatives="taylor"
    )
    assert data.uses_jets(net)
    assert "Taylor-mode" in data.describe_derivatives(net)
    (term,) = [t for t in data.terms if t.jet is not None and t.kind == "pde"]
    x = torch.rand(20, 2, dtype=F64)
    xg = x.clone().requires_grad_()
    ref = term.residual(xg, net(xg))
    got = term.jet(x, net)
    assert ref.abs().max() > 1e-3
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.slow
def test_rezero_in_every_command(tmp_path, capsys, monkeypatch):
    """``run`` and ``compare`` from Python (compare stacked), ``sweep`` and
    ``ablate`` from the command line, on a tiny budget."""
    tiny = tiny_case("laplace", n=8, grid_n=9)
    monkeypatch.setattr(registry, "get", lambda name: tiny)
    one = deepxde_lnn.run(
        tiny,
        method="rezero",
        seed=0,
        iterations=4,
        out=tmp_path / "one",
        progress=False,
        verbose=False,
    )
    assert one.record["method"] == "rezero" and one.record["parameters"] == 29381
    assert one.record["network"].startswith("ReZero(")
    cmp = deepxde_lnn.compare(
        tiny,
        methods="rezero,pinn",
        seeds=[1, 2],
        iterations=4,
        stack="on",
        out=tmp_path / "cmp",
        **QUIET,
    )
    rezero = [r for r in cmp.runs if r.method == "rezero"]
    assert [r.record["stacked_runs"] for r in rezero] == [2, 2]
    assert [v.method for v in cmp.verdicts] == ["rezero"]
    argv = ["sweep", "laplace", "--lrs", "1e-3,1e-2", "--methods", "rezero"]
    argv += ["--seeds", "0", "--iterations", "4", "--workers", "1"]
    code, io = run_cli([*argv, "--out", str(tmp_path / "sw")], capsys)
    assert code == 0 and "| 0.01 | rezero | 1 |" in io.out, io.err
    argv = ["ablate", "laplace", "--methods", "rezero,pinn", "--budget", "steps"]
    argv += ["--seeds", "1,2", "--iterations", "4", "--workers", "1"]
    code, io = run_cli([*argv, "--no-progress", "--out", str(tmp_path / "ab")], capsys)
    assert code == 0, io.err
    assert "| `rezero` | 29,381 |" in (tmp_path / "ab" / "ablation.md").read_text()
    rec = json.loads((tmp_path / "ab/steps/rezero/seed-2/metrics.json").read_text())
    assert rec["method"] == "rezero"
