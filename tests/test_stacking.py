"""Stacked seeds: K seeds trained as one model equal K separate runs."""

import warnings
from dataclasses import replace

import deepxde as dde
import numpy as np
import pytest
import torch

from deepxde_lnn.networks.pytorch import LNN, MLP, TORCH_DEFAULT, ReZero
from deepxde_lnn.problems.build import build_net
from deepxde_lnn.problems.data import ResampledPDE
from deepxde_lnn.study import registry
from deepxde_lnn.training.stacking import (
    StackedData,
    StackedNet,
    split_adam_state,
    stack_adam_states,
)

SEEDS = (3, 4, 5)
STEPS = 20


def tiny(name):
    """A case with 16 points per term and its quick profile."""
    case = registry.get(name)
    prof = replace(case.profile("quick"), counts={t.name: 16 for t in case.terms})
    return case, prof


def separate_run(case, method, seed, prof, steps, lr, init=None, derivs="taylor"):
    """The reference path, as ``runner.run``: dde.Model + ResampledPDE.
    ``init``: initial values to load (cast to the current float type)."""
    dde.config.set_random_seed(seed)
    data = ResampledPDE(case.make_terms(prof), seed=seed, derivatives=derivs)
    net = build_net(method, case)
    if init is not None:
        net.load_state_dict(init)
    model = dde.Model(data, net)
    model.compile("adam", lr=lr)
    log = []

    class Log(dde.callbacks.Callback):
        def on_batch_end(self):
            log.append(data.last_losses.clone())

    model.train(iterations=steps, display_every=1000, callbacks=[Log()], verbose=0)
    return torch.stack(log).double().numpy(), net, model.opt


def stacked_model(case, method, prof, derivs="taylor") -> dde.Model:
    """SEEDS as one ``dde.Model``: each seed's data and net built as the runner
    builds them (seeded in turn), stacked."""
    datas, nets = [], []
    for seed in SEEDS:
        dde.config.set_random_seed(seed)
        datas.append(ResampledPDE(case.make_terms(prof), seed=seed, derivatives=derivs))
        nets.append(build_net(method, case))
    model = dde.Model(StackedData(datas), StackedNet(nets))
    model.compile("adam", lr=prof.lr)
    return model


def train(model: dde.Model, steps: int) -> np.ndarray:
    """``steps`` steps; the (steps, K, T) losses of the training passes."""
    log = []

    class Log(dde.callbacks.Callback):
        def on_batch_end(self):
            log.append(model.data.last_losses.clone())

    model.train(iterations=steps, display_every=1000, callbacks=[Log()], verbose=0)
    return torch.stack(log).double().numpy()


def rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / np.abs(b).max())


def max_rel_params(state_a: dict, state_b: dict) -> float:
    assert list(state_a) == list(state_b)
    return max(rel(state_a[k].cpu(), state_b[k].detach().cpu()) for k in state_a)


# --- forward and derivatives ---------------------------------------------------------


def d(u, x, j):
    return torch.autograd.grad(u.sum(), x, create_graph=True)[0][:, j : j + 1]


def derivatives(y, x):
    """Per output u: u, u_y, u_yy, u_yyyy and u_xy by nested autograd."""
    out = [y]
    for c in range(y.shape[1]):
        d1 = d(y[:, c : c + 1], x, 1)
        d2 = d(d1, x, 1)
        out += [d1, d2, d(d(d2, x, 1), x, 1), d(d(y[:, c : c + 1], x, 0), x, 1)]
    return out


class Shift(torch.nn.Module):
    """A stage with a parameter of its own and no stacked rule: ``sin(h + s)``."""

    def __init__(self, width):
        super().__init__()
        self.shift = torch.nn.Parameter(torch.randn(width, dtype=torch.float64))

    def forward(self, h):
        return torch.sin(h + self.shift)


class Shifted(MLP):
    """A new architecture declared by its stages only: a ``Shift`` after every
    hidden activation (the stacked form takes it under vmap)."""

    def _blocks_init(self, init):
        self.shifts = torch.nn.ModuleList(Shift(w) for w in self.layer_sizes[1:-1])

    def _layer_stages(self, j):
        return [self.activation[j], self.shifts[j]]


@pytest.mark.parametrize(
    "make",
    [
        lambda: MLP([2, 8, 8, 2], "tanh", TORCH_DEFAULT),
        lambda: LNN([2, 8, 8, 2], "tanh", TORCH_DEFAULT),
        lambda: LNN([2, 8, 8, 2], "sin", TORCH_DEFAULT, layout="reduced"),
        lambda: LNN([2, 8, 8, 2], "sin", TORCH_DEFAULT),
        lambda: LNN([2, 8, 8, 2], "sin", TORCH_DEFAULT, block_activation="tanh"),
        lambda: Shifted([2, 8, 8, 2], "tanh", TORCH_DEFAULT),
        lambda: ReZero([2, 8, 8, 2], "sin", TORCH_DEFAULT, alpha_init=0.7),
        lambda: LNN([2, 8, 8, 2], "tanh", TORCH_DEFAULT, residual=False),
        lambda: LNN([2, 8, 8, 2], "tanh", TORCH_DEFAULT, block_layers=[1]),
        lambda: LNN(
            [2, 8, 8, 2], "tanh", TORCH_DEFAULT, layout="reduced", block_layers=[0]
        ),  # fmt: skip
    ],
    ids=[
        "mlp",
        "lnn",
        "lnn-reduced",
        "lnn-sin-blocks",
        "lnn-sin-tanh-blocks",
        "custom-stage",
        "rezero",
        "no-residual",
        "blocks-on-layer-1",
        "reduced-block-on-layer-0",
    ],
)
def test_stacked_forward_and_derivatives_equal_single_nets(float64, make):
    def transform(x, y):
        return x[:, :1] * torch.tanh(y) + 1

    nets = []
    for s in range(3):
        torch.manual_seed(s)
        nets.append(make())
        nets[-1].apply_output_transform(transform)
    stacked = StackedNet(nets)
    x = torch.rand(3 * 7, 2, dtype=torch.float64, requires_grad=True)
    got = derivatives(stacked(x), x)
    # per_run: a function of a single net, vmapped over the runs (K = 1: direct)
    assert rel(stacked.per_run(lambda x, n: n(x), x).detach(), got[0].detach()) < 1e-12
    one = StackedNet(nets[1:2]).per_run(lambda x, n: n(x), x[7:14]).detach()
    assert rel(one, got[0][7:14].detach()) < 1e-12
    for k, net in enumerate(nets):
        xk = x[7 * k : 7 * (k + 1)].detach().clone().requires_grad_()
        for a, b in zip(got, derivatives(net(xk), xk)):
            assert a.shape[0] == 21
            assert rel(a[7 * k : 7 * (k + 1)].detach(), b.detach()) <= 1e-12


def test_stage_without_stacked_rule_runs_under_vmap(float64, monkeypatch):
    """``Shifted`` declares its stages and nothing else: the stacked form equals
    the hand-written forward per run, parameter gradients included; a warning
    names the table a faster rule goes in, once per stage type."""
    from deepxde_lnn.networks import stacked as module

    nets = []
    for s in range(3):
        torch.manual_seed(s)
        nets.append(Shifted([2, 8, 8, 1], "tanh", TORCH_DEFAULT))
    monkeypatch.setattr(module, "_WARNED", set())
    with pytest.warns(UserWarning, match="stage Shift has no stacked rule") as said:
        stacked = StackedNet(nets)
        StackedNet(nets[:2])
    assert len([w for w in said if "_STACKED_RULES" in str(w.message)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stages with rules: nothing said
        StackedNet([LNN([2, 8, 8, 1], "tanh", TORCH_DEFAULT) for _ in range(2)])
    assert "shifts.1.shift" in stacked.names
    x = torch.rand(3 * 5, 2, dtype=torch.float64)
    y = stacked(x)
    for k, net in enumerate(nets):
        h = x[5 * k : 5 * (k + 1)]
        for lin, shift in zip(net.linears[:-1], net.shifts):
            h = torch.sin(torch.tanh(h @ lin.weight.T + lin.bias) + shift.shift)
        want = h @ net.linears[-1].weight.T + net.linears[-1].bias
        assert rel(y[5 * k : 5 * (k + 1)].detach(), want.detach()) <= 1e-14
        want.sum().backward()
    y.sum().backward()
    i = stacked.names.index("shifts.0.shift")
    for k, net in enumerate(nets):
        assert rel(stacked.params[i].grad[k], net.shifts[0].shift.grad) <= 1e-14


@pytest.mark.parametrize("layout", ["standard", "reduced"])
def test_stacked_jets_follow_sin_blocks(float64, layout):
    """Taylor-mode jets under ``per_run`` (vmap) of sin-block nets (the default
    of a sin network) equal each single net's nested-autograd Laplacian."""
    from deepxde_lnn.networks import taylor

    nets = []
    for s in range(3):
        torch.manual_seed(s)
        nets.append(LNN([2, 8, 8, 1], "sin", TORCH_DEFAULT, layout=layout))
    assert nets[0].blocks[0].activation_name == "sin"
    stacked = StackedNet(nets)
    x = torch.rand(3 * 7, 2, dtype=torch.float64)
    lap = stacked.per_run(lambda xk, n: taylor.laplacian(n, xk)[1], x)
    for k, net in enumerate(nets):
        xk = x[7 * k : 7 * (k + 1)].clone().requires_grad_()
        u = net(xk)
        ref = d(d(u, xk, 0), xk, 0) + d(d(u, xk, 1), xk, 1)
        assert rel(lap[7 * k : 7 * (k + 1)].detach(), ref.detach()) <= 1e-12


# --- state dicts and Adam states ------------------------------------------------------


def test_state_dicts_and_adam_states_round_trip():
    case, prof = tiny("laplace")
    model = stacked_model(case, "lnn", prof)
    stacked, opt = model.net, model.opt
    single = build_net("lnn", case)
    ref = single.state_dict()
    states = stacked.state_dicts()
    for s in states:
        assert list(s) == list(ref)
        assert all(s[k].shape == ref[k].shape and s[k].dtype == ref[k].dtype for k in s)
    again = StackedNet.from_state_dicts(single, states).state_dicts()
    assert all(max_rel_params(a, b) == 0 for a, b in zip(again, states))

    train(model, 2)
    split = split_adam_state(opt.state_dict(), 3)
    one = torch.optim.Adam(single.parameters(), lr=prof.lr)
    single(torch.rand(4, 2)).sum().backward()
    one.step()
    want = one.state_dict()
    assert split[1]["param_groups"] == want["param_groups"]
    for st in split:
        assert st.keys() == want.keys() and st["state"].keys() == want["state"].keys()
        for i, s in st["state"].items():
            assert s.keys() == want["state"][i].keys()
            assert s["exp_avg"].shape == want["state"][i]["exp_avg"].shape
    stacked_sd = stack_adam_states(split)
    _assert_same_adam(stacked_sd, opt.state_dict())
    fresh = torch.optim.Adam(
        StackedNet.from_state_dicts(single, states).parameters(), lr=prof.lr
    )
    fresh.load_state_dict(stacked_sd)
    _assert_same_adam(fresh.state_dict(), opt.state_dict())


def _assert_same_adam(a: dict, b: dict):
    assert a["param_groups"] == b["param_groups"]
    assert a["state"].keys() == b["state"].keys()
    for i in a["state"]:
        for key, v in a["state"][i].items():
            assert torch.equal(v, b["state"][i][key])


# --- stacked training equals separate runs -------------------------------------------


def stacked_vs_separate(name, method, derivs="taylor"):
    """Train SEEDS as one stacked model and separately; per run, the max relative
    differences of losses, final parameters and Adam's second moments."""
    case, prof = tiny(name)
    model = stacked_model(case, method, prof, derivs)
    losses = train(model, STEPS)
    adam = split_adam_state(model.opt.state_dict(), len(SEEDS))
    diffs = {}
    for k, seed in enumerate(SEEDS):
        ref_loss, ref_net, ref_opt = separate_run(
            case, method, seed, prof, STEPS, prof.lr, None, derivs
        )
        own = model.net.state_dicts()[k]
        diffs[k] = {
            "loss": rel(losses[:, k], ref_loss),
            "params": max_rel_params(own, ref_net.state_dict()),
            "adam": max(
                rel(s["exp_avg_sq"], ref_opt.state_dict()["state"][i]["exp_avg_sq"])
                for i, s in adam[k]["state"].items()
            ),
        }
    return diffs


@pytest.mark.parametrize(
    "name, method, derivs",
    [
        ("laplace", "lnn", "taylor"),
        ("beam", "lnn", "taylor"),
        pytest.param("beam", "lnn", "autograd", marks=pytest.mark.slow),
        ("heat", "lnn", "taylor"),
        ("rel_b", "pinn", "taylor"),
        ("laplace", "rezero", "taylor"),
        pytest.param("beam", "rezero", "autograd", marks=pytest.mark.slow),
        ("laplace", "lnn:train_alpha=false", "taylor"),
        ("beam", "lnn:residual=false", "taylor"),
    ],
)
def test_stacked_equals_separate_runs_float64(float64, name, method, derivs):
    """beam: 4th-order derivatives (Taylor jets under vmap, or DeepXDE's nested
    hessians on the stacked rows); heat: the reduced LNN layout; rel_b: an output
    transform (jets to first order through it, vmapped sources by forward mode), 8
    outputs, multi-channel residuals; rezero:
    an architecture declared by its stages only (scalar gates from 0)."""
    diffs = stacked_vs_separate(name, method, derivs=derivs)
    for k in diffs:
        assert max(diffs[k]["loss"], diffs[k]["params"], diffs[k]["adam"]) <= 1e-10


def test_stacked_equals_separate_runs_float32(float64):
    """float32: the stacked runs and a separate run round differently (batched vs plain
    matmuls and reductions), and Adam's normalisation amplifies rounding in tiny
    gradient components, so they cannot agree to 1e-10. Scale: the float32 error of
    the separate run itself, against its float64 twin (same initial values and
    draws, float64 arithmetic). Both float32 runs approximate that trajectory, so
    by the triangle inequality they differ by at most about twice that error:
    asserted for the loss history (max relative) and the parameters (relative
    2-norm of all of them; single entries may flip with Adam's sign-like steps)."""
    dde.config.set_default_float("float32")
    case, prof = tiny("laplace")
    model = stacked_model(case, "lnn", prof)
    losses, stacked = train(model, STEPS), model.net
    inits = []
    for seed in SEEDS:
        dde.config.set_random_seed(seed)
        inits.append(build_net("lnn", case).state_dict())
    for k, seed in enumerate(SEEDS):
        dde.config.set_default_float("float32")
        loss32, net32, _ = separate_run(case, "lnn", seed, prof, STEPS, prof.lr)
        dde.config.set_default_float("float64")
        twin = separate_run(case, "lnn", seed, prof, STEPS, prof.lr, inits[k])
        p_ens, p32, p64 = (
            flat(s) for s in (stacked.state_dicts()[k], net32.state_dict(), twin[1])
        )
        assert rel(losses[:, k], loss32) <= 2 * rel(loss32, twin[0])
        assert norm_rel(p_ens, p32) <= 2 * norm_rel(p32, p64)
        assert norm_rel(p_ens, p32) < 1e-6


def flat(state) -> np.ndarray:
    if not isinstance(state, dict):
        state = state.state_dict()
    return np.concatenate([v.detach().double().ravel().numpy() for v in state.values()])


def norm_rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


# a diverging run leaving the stack and exact resumption: tests/test_stacked_runs.py
