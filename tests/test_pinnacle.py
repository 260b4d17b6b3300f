"""PINNacle's problems as cases: the reference tables, the samplers of their
domains, a case scored on a solver's points, the pooled L2 relative error."""

import gzip
from dataclasses import replace

import deepxde as dde
import numpy as np
import pytest
import torch
from helpers import ExactNet, tiny_case

import deepxde_lnn  # noqa: F401

# isort: split
from deepxde_lnn.config import RunConfig, stackable_training
from deepxde_lnn.problems.case import Case, Grid
from deepxde_lnn.problems.data import ResampledPDE, Term
from deepxde_lnn.problems.metrics import JOINT, joint_metrics
from deepxde_lnn.problems.reference_data import (
    Observations,
    ShippedTable,
    load_table,
    times_of,
)
from deepxde_lnn.problems.sampling import (
    Ball,
    Box,
    Inside,
    Points,
    Sphere,
    Union,
    WithTime,
    box_boundary,
)
from deepxde_lnn.study import registry, shipped
from deepxde_lnn.training.runner import run

COMSOL = """% Model: made.mph
% Nodes: 2
% X  Y  u (1) @ t=0  v (1) @ t=0  u (1) @ t=0.5  v (1) @ t=0.5
0 1  10 20 11 21
2 3  30 40 31 41
"""


def test_a_time_stacked_export_unfolds_to_one_row_per_node_and_time(tmp_path):
    path = tmp_path / "t.dat.gz"
    with gzip.open(path, "wt") as f:
        f.write(COMSOL)
    x, y = load_table(path, inputs=3, outputs=2, time_stacked=True)
    assert x.tolist() == [[0, 1, 0], [0, 1, 0.5], [2, 3, 0], [2, 3, 0.5]]
    assert y.tolist() == [[10, 20], [11, 21], [30, 40], [31, 41]]
    plain = tmp_path / "p.dat"
    plain.write_text("% x y u\n0 1 5\n2 3 nan\n")
    x, y = load_table(plain, 2, 1)  # the NaN row left out
    assert x.tolist() == [[0, 1]] and y.tolist() == [[5]]
    with pytest.raises(ValueError, match="p.dat: 3 columns, expected 2 \\+ 2"):
        load_table(plain, 2, 2)


def test_a_header_whose_times_do_not_fit_is_refused():
    assert times_of("u @ t=0 v @ t=0 u @ t=1 v @ t=1", 2).tolist() == [0, 1]
    with pytest.raises(ValueError, match="not blocks of 2"):
        times_of("u @ t=0 v @ t=0 u @ t=1", 2)
    with pytest.raises(ValueError, match="do not share their times"):
        times_of("u @ t=0 v @ t=1", 2)


def test_the_shipped_burgers_reference_starts_at_its_initial_state():
    x, y = ShippedTable(("pinnacle", "burgers1d.dat.gz"), 2, 1, time_stacked=True)()
    assert x.shape == (1111, 2) and y.shape == (1111, 1)  # 101 nodes x 11 times
    at0 = x[:, 1] == 0
    assert at0.sum() == 101
    assert np.abs(y[at0, 0] + np.sin(np.pi * x[at0, 0])).max() < 1e-5
    assert np.abs(y[np.abs(x[:, 0]) == 1]).max() < 1e-12  # u = 0 at x = +-1


def test_samplers_of_holed_balls_and_times():
    rng = np.random.default_rng(0)
    holed = Inside((0, 0), (1, 1), lambda p: np.hypot(*(p - 0.5).T) > 0.3)
    p = holed(500, rng)
    assert p.shape == (500, 2) and (np.hypot(*(p - 0.5).T) > 0.3).all()
    with pytest.raises(ValueError, match="fills less than"):
        Inside((0, 0), (1, 1), lambda p: p[:, 0] < 1e-9)(10, rng)
    ball, sphere = Ball(5)(2000, rng), Sphere(5, 2.0)(100, rng)
    r = np.linalg.norm(ball, axis=1)
    assert r.max() <= 1 and abs(np.mean(r**5) - 0.5) < 0.05  # uniform: r^5 ~ U(0,1)
    assert np.allclose(np.linalg.norm(sphere, axis=1), 2.0, atol=1e-5)
    timed = WithTime(Box((0,), (1,)), 0.0, 5.0)(400, rng)
    assert timed.shape == (400, 2) and 0 <= timed[:, 1].min() < timed[:, 1].max() < 5
    assert (WithTime(Box((0,), (1,)), 0.0, 0.0)(3, rng)[:, 1] == 0).all()
    left = Box((0.0,), (1.0,))
    right = Box((2.0,), (5.0,))
    both = Union((left, right), (1.0, 3.0))(4000, rng)
    assert abs((both[:, 0] >= 2).mean() - 0.75) < 0.03  # in proportion to measure
    walls = box_boundary((0, 0, 0), (1, 2, 10), axes=(0, 1))(6000, rng)
    on_x = np.isin(walls[:, 0], (0, 1))
    assert (on_x | np.isin(walls[:, 1], (0, 2))).all()
    assert abs(on_x.mean() - 2 / 3) < 0.03  # faces of area 20 (x) and 10 (y)
    anchor = Points(((0.0, 0.0),))(4, rng)
    assert anchor.tolist() == [[0, 0]] * 4
    obs = ((0.0, 1.0), (2.0, 3.0))
    assert Points(obs)(2, rng).tolist() == [list(o) for o in obs]  # all, in order


def _case(**over):
    spec = dict(
        name="ref_case",
        title="t",
        inputs=("x", "y"),
        fields=("u",),
        terms=[Term("pde", Box((0, 0), (1, 1)), 4, lambda x, u: u, kind="pde")],
        exact=None,
        grid=Grid((0, 0), (1, 1), 5),
        reference=lambda: (
            np.array([[0.1, 0.2], [0.3, 0.4]]),
            np.array([[1.0], [2.0]]),
        ),
    )
    return Case(**{**spec, **over})


def test_a_case_is_scored_on_its_references_points():
    case = _case()
    case.check()
    ev = case.evaluation(case.profile(case.default_profile))
    assert ev.x.tolist() == [[0.1, 0.2], [0.3, 0.4]] and ev.exact.tolist() == [[1], [2]]
    assert ev.axes == () and ev.mask.shape == (2,)
    with pytest.raises(ValueError, match="exactly one of exact .* and reference"):
        _case(reference=None)
    with pytest.raises(ValueError, match="exactly one of exact"):
        _case(exact=lambda x: x[:, :1])
    bad = _case(reference=lambda: (np.zeros((2, 3)), np.zeros((2, 1))))
    with pytest.raises(ValueError, match="reference: points of shape \\(2, 3\\)"):
        bad.check()
    nan = _case(reference=lambda: (np.zeros((2, 2)), np.array([[1.0], [np.nan]])))
    with pytest.raises(ValueError, match="reference\\(\\) on 2 points gave NaN"):
        nan.check()


def test_the_joint_error_pools_every_field_as_pinnacle_scores():
    exact = np.array([[1.0, 10.0], [2.0, 20.0]])
    pred = exact + np.array([[0.1, -1.0], [0.0, 2.0]])
    rel = np.sqrt((0.01 + 1 + 0 + 4) / (1 + 100 + 4 + 400))
    assert joint_metrics(None, pred, exact)[JOINT]["relL2"] == pytest.approx(rel)
    assert joint_metrics(None, pred[:, :1], exact[:, :1]) == {}  # one field: its own


# ------------------------------------------------- the twelve problems as cases

PI = np.pi
ANALYTIC = {  # torch versions of the analytic problems' exact solutions
    "heat2d_multiscale": lambda x: (
        torch.sin(20 * PI * x[:, 0:1])
        * torch.sin(PI * x[:, 1:2])
        * torch.exp(-(1 / 625 + 1) * x[:, 2:3])
    ),
    "wave1d": lambda x: (
        torch.sin(PI * x[:, 0:1]) * torch.cos(2 * PI * x[:, 1:2])
        + 0.5 * torch.sin(4 * PI * x[:, 0:1]) * torch.cos(8 * PI * x[:, 1:2])
    ),
    "poisson_nd": lambda x: torch.sin(PI / 2 * x).sum(1, keepdim=True),
    "heat_nd": lambda x: torch.exp((x[:, :5] ** 2).sum(1, keepdim=True) / 2 + x[:, 5:]),
    "poisson_inv": lambda x: torch.cat(
        [
            torch.sin(PI * x[:, 0:1]) * torch.sin(PI * x[:, 1:2]),
            1 / (1 + (x**2).sum(1, keepdim=True) + ((x - 1) ** 2).sum(1, keepdim=True)),
        ],
        1,
    ),
    "heat_inv": lambda x: torch.cat(
        [
            torch.exp(-x[:, 2:3])
            * torch.sin(PI * x[:, 0:1])
            * torch.sin(PI * x[:, 1:2]),
            2 + torch.sin(PI * x[:, 0:1]) * torch.sin(PI * x[:, 1:2]),
        ],
        1,
    ),
}
# rows of each reference table (nodes x times for the time-dependent ones)
REFERENCE_ROWS = {
    "burgers1d": 101 * 11,
    "poisson2d_classic": 1246,
    "poisson_boltzmann2d": 3236,
    "heat2d_longtime": 192 * 501,
    "ns2d_lid_driven": 101**2,
    "ns2d_back_step": 12910,
}
OBSERVED = "data"  # the inverse problems' noisy observations (std 0.1)


def test_the_study_holds_twelve_problems_each_scored_one_way():
    names = shipped.names_of("pinnacle")
    assert set(names) == set(ANALYTIC) | set(REFERENCE_ROWS) and len(names) == 12
    for name in REFERENCE_ROWS:
        case = registry.get(name)
        x, y = case.reference()
        assert x.shape == (REFERENCE_ROWS[name], len(case.inputs))
        assert y.shape == (len(x), len(case.fields)) and np.isfinite(y).all()


@pytest.mark.parametrize("name", list(ANALYTIC))
def test_an_analytic_problems_exact_solution_has_zero_residuals(name, float64):
    case = registry.get(name)
    counts = {t.name: 64 for t in case.terms if not t.fixed}
    data = ResampledPDE(
        case.make_terms(replace(case.profile("quick"), counts=counts)), 0
    )
    solution = ANALYTIC[name]
    net = ExactNet(solution)
    model = dde.Model(data, net)
    x = torch.as_tensor(data.train_next_batch()[0]).requires_grad_()
    losses = data.losses_train(None, net(x), None, x, model)
    for term, loss in zip(case.terms, (float(v.detach()) for v in losses)):
        if term.name == OBSERVED:  # the noise: its mean square
            assert 0.005 < loss < 0.02, name
        else:
            assert loss < 1e-20, (name, term.name, loss)
    # and the check can fail: a perturbed solution leaves a PDE residual
    bent = ExactNet(lambda x: solution(x) + 0.01 * (x**2).sum(1, keepdim=True))
    wrong = data.losses_train(None, bent(x), None, x, dde.Model(data, bent))
    assert float(wrong[0].detach()) > 1e-8
    xg, _ = case.grid.points(5)
    np.testing.assert_allclose(case.exact(xg), solution(torch.as_tensor(xg)).numpy())


@pytest.mark.parametrize("name", shipped.names_of("pinnacle"))
def test_every_pinnacle_problem_trains_and_is_scored(tmp_path, name):
    case = tiny_case(name, n=8, grid_n=5)
    cfg = RunConfig(name, "lnn", iterations=2)
    rec = run(cfg, tmp_path / "r", problem=case)
    assert set(rec["metrics"]) >= set(case.fields)
    pooled = rec.get("extra_metrics", {}).get(JOINT)
    assert (pooled is not None) == (len(case.fields) > 1)
    if name in REFERENCE_ROWS:
        assert rec["grid_points"] == REFERENCE_ROWS[name]


def test_the_cpu_profile_is_a_share_of_pinnacles_points_stacked_and_settled():
    case = registry.get("ns2d_lid_driven")
    cpu, full = case.profile("quick"), case.profile("pinnacle")
    assert (full.iterations, full.lr, full.resample) == (20_000, 1e-3, False)
    assert case.trunk.hidden == (100,) * 5
    sizes = {t.name: t.n for t in case.terms}
    assert cpu.counts == {"pde": 256, "lid": 16, "walls": 48, "anchor": 1}
    assert sizes == {"pde": 8192, "lid": 512, "walls": 1536, "anchor": 1}
    assert stackable_training(cpu, RunConfig(case.name, "lnn"))
    assert cpu.n_seeds == 5 and cpu.decay[0] == "exponential"
    inverse = registry.get("heat_inv").profile("quick")
    assert inverse.counts["data"] == 2500  # observations stay whole


def test_observations_give_each_points_value_and_refuse_other_points():
    seen = Observations(np.array([[0.0, 0.0], [1.0, 0.5]]), np.array([3.0, 4.0]))
    rows = np.array([[1.0, 0.5], [0.0, 0.0]], dtype=np.float32)
    assert seen(rows).tolist() == [[4.0], [3.0]]
    with pytest.raises(ValueError, match="not an observation point"):
        seen(np.array([[0.5, 0.5]]))
