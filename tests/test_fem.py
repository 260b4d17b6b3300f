"""FEM reference for the circular heat case (see docs/heat.md): coarse levels only."""

import dataclasses
import json
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from skfem import Basis, ElementTriP1, FacetBasis, Functional, MeshTri, asm

from deepxde_lnn import fem
from deepxde_lnn.fem import HeatProblem, InvalidReferenceError
from deepxde_lnn.runs.atomic import sha256_file

PB = fem.HEAT


@pytest.fixture(scope="module")
def study():
    """nrefs 3..6 (145 to 8,321 nodes), well inside the asymptotic range."""
    return fem.convergence_study(levels=4, first_nrefs=3).rows


def _flux_and_area(sol):
    """∫_Γ h (T - T∞) ds and the polygon area, with plain skfem."""
    fb = FacetBasis(sol.mesh, ElementTriP1())
    flux = asm(Functional(lambda w: w["u"]), fb, u=fb.interpolate(sol.theta))
    area = asm(
        Functional(lambda w: 1.0 + 0.0 * w.x[0]), Basis(sol.mesh, ElementTriP1())
    )
    return sol.problem.h * flux, area


# --- problem, grid, meshes -------------------------------------------------


def test_disk_grid_has_the_paper_count():
    pts = fem.disk_grid()
    assert pts.shape == (125_629, 2) and pts.dtype == np.float64
    assert np.max(np.hypot(pts[:, 0], pts[:, 1])) <= 1.0 + 1e-12
    g = np.linspace(-1, 1, 401)
    X, Y = np.meshgrid(g, g, indexing="xy")
    # without the tolerance the 4 on-circle points are lost to rounding
    assert np.count_nonzero(X**2 + Y**2 <= 1.0) == 125_625


def test_disk_grid_is_the_heat_case_grid_in_its_order():
    from deepxde_lnn.problems.case import Grid

    grid = Grid(
        (-1.0, -1.0), (1.0, 1.0), 401, mask=lambda p: np.sum(p**2, 1) <= 1 + 1e-12
    )
    x, _ = grid.points()
    assert np.array_equal(fem.disk_grid(), x)
    assert fem.points_sha256(fem.disk_grid()) == fem.points_sha256(x)


def test_nondimensional_numbers():
    assert PB.q_nd == pytest.approx(PB.Q * PB.R**2 / PB.k, rel=1e-15)
    assert PB.h_nd == pytest.approx(PB.h * PB.R / PB.k, rel=1e-15)
    # θ*(0) = Q_nd/4 + Q_nd/(2 h_nd) in units of T_ref = 1 K
    theta0 = PB.q_nd / 4 + PB.q_nd / (2 * PB.h_nd)
    assert theta0 * fem.T_REF == pytest.approx(PB.exact_theta(0.0), rel=1e-14)


def test_exact_solution_values():
    assert PB.exact(0.0) == pytest.approx(803.0707547, abs=1e-7)
    assert fem.exact_temperature(np.array([PB.R]), PB)[0] == pytest.approx(803.0)
    # -k ΔT* = Q: T* = c - Q r²/(4k), Δ(r²) = 4
    r = np.array([0.0, 0.1])
    assert (PB.exact(r[0]) - PB.exact(r[1])) * 4 * PB.k / r[1] ** 2 == pytest.approx(
        PB.Q
    )


@pytest.mark.parametrize(
    "name, value",
    [
        ("R", 0.0),
        ("R", -1.0),
        ("k", float("nan")),
        ("h", float("inf")),
        ("h", 0),
        ("Q", -1.0),
        ("T_inf", float("nan")),
        ("k", "1.0"),
        ("R", True),
        ("Q", None),
    ],
)
def test_invalid_problem_constants_name_the_argument(name, value):
    with pytest.raises(ValueError, match=name):
        HeatProblem(**{name: value})


def test_valid_problem_constants_are_floats():
    pb = HeatProblem(R=1, k=np.float32(2.0), h=3, Q=4, T_inf=-20)
    assert pb.to_dict() == {"R": 1.0, "k": 2.0, "h": 3.0, "Q": 4.0, "T_inf": -20.0}


@pytest.mark.parametrize(
    "call",
    [
        lambda: fem.solve_heat(-1),
        lambda: fem.solve_heat(2, element="P3"),
        lambda: fem.convergence_study(levels=0),
        lambda: fem.disk_grid(1),
    ],
)
def test_invalid_arguments(call):
    with pytest.raises(ValueError):
        call()


def test_meshes_are_init_circle_scaled():
    for n, mesh in enumerate(fem.disk_meshes(4, R=PB.R)):
        ref = MeshTri.init_circle(n).scaled([PB.R, PB.R])
        assert np.array_equal(mesh.t, ref.t)
        assert np.max(np.abs(mesh.p - ref.p)) < 1e-15
        assert mesh.boundary_nodes().size == 4 * 2**n


# --- solver and weak form ----------------------------------------------------


def test_solution_satisfies_the_weak_form_for_T():
    sol = fem.solve_heat(4)
    A, b_Q, b_G = fem.heat_system(sol.mesh, PB)
    b = b_Q + b_G
    assert np.linalg.norm(A @ sol.T - b) / np.linalg.norm(b) < 1e-12
    assert np.linalg.norm(A @ sol.theta - b_Q) / np.linalg.norm(b_Q) < 1e-9


def test_multigrid_matches_direct_solve():
    sol = fem.solve_heat(6)
    A, b_Q, _ = fem.heat_system(sol.mesh, PB)
    direct = spla.spsolve(A.tocsc(), b_Q)
    assert sol.iterations > 0
    assert np.max(np.abs(sol.theta - direct)) < 1e-9


def test_ambient_temperature_shifts_the_solution_by_that_constant():
    hot = fem.solve_heat(3, PB)
    cold = fem.solve_heat(3, replace(PB, T_inf=-50.0))
    np.testing.assert_allclose(hot.T - cold.T, PB.T_inf + 50.0, rtol=0, atol=1e-10)


def test_robin_sign_flux_balance_and_heating():
    sol = fem.solve_heat(4)
    flux, area = _flux_and_area(sol)
    # v = 1 in the weak form: ∫_Γ h(T - T∞) = ∫_Ω Q, exactly on the polygon ...
    assert flux == pytest.approx(PB.Q * area, rel=1e-8)
    # ... and Q·πR² up to the polygon's area deficit (N_b = 64: 1.6e-3)
    assert flux == pytest.approx(PB.Q * np.pi * PB.R**2, rel=3e-3)
    assert np.all(sol.theta > 0)  # Q > 0 heats the plate above T∞
    bnd = sol.mesh.boundary_nodes()
    np.testing.assert_allclose(sol.theta[bnd], PB.Q * PB.R / (2 * PB.h), rtol=2e-3)


def test_large_convection_pins_the_boundary_to_ambient():
    sol = fem.solve_heat(4, replace(PB, h=1e7))
    bnd = sol.mesh.boundary_nodes()
    assert np.max(np.abs(sol.T[bnd] - PB.T_inf)) < 1e-4
    assert sol.T[0] - PB.T_inf == pytest.approx(PB.Q * PB.R**2 / (4 * PB.k), rel=5e-3)


# --- convergence -------------------------------------------------------------


def test_convergence_study_returns_one_record_type():
    res = fem.convergence_study(levels=2, first_nrefs=2)
    assert type(res) is fem.ConvergenceStudy
    assert isinstance(res.rows, tuple) and all(isinstance(r, dict) for r in res.rows)
    assert [r["level"] for r in res.rows] == [1, 2]
    assert [r["nrefs"] for r in res.rows] == [2, 3]
    assert res.slopes == fem.convergence_slopes(res.rows)
    assert res.finest.nrefs == 3 and res.finest.nodes == res.rows[-1]["nodes"]
    assert res.rows[0]["diff_L2"] is None and res.rows[1]["diff_L2"] > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.rows = ()


def test_observed_orders(study):
    h = np.array([r["h"] for r in study])
    for key, order in (("diff_L2", 2), ("diff_H1", 1), ("err_L2", 2), ("err_H1", 1)):
        keep = [r[key] is not None for r in study]
        e = np.array([r[key] for r in study if r[key] is not None])
        slope = np.polyfit(np.log(h[keep]), np.log(e), 1)[0]
        assert slope == pytest.approx(order, abs=0.1), key
        assert fem.convergence_slopes(study)[key] == pytest.approx(slope)
    assert study[-1]["order_diff_L2"] == pytest.approx(2, abs=0.1)
    assert study[-1]["order_diff_H1"] == pytest.approx(1, abs=0.1)


def test_errors_decrease_monotonically(study):
    for key in ("err_L2", "err_H1", "err_max", "diff_L2", "diff_H1"):
        e = [r[key] for r in study if r[key] is not None]
        assert all(a > b for a, b in zip(e, e[1:])), key
    centre = [abs(r["T_centre"] - PB.exact(0.0)) for r in study]
    assert all(a > b for a, b in zip(centre, centre[1:]))


def test_study_matches_indicative_values(study):
    rows = {r["nrefs"]: r for r in study}
    assert rows[4]["h"] == pytest.approx(1.71e-2, rel=5e-3)
    assert rows[4]["diff_L2"] == pytest.approx(3.0e-3, rel=0.05)
    assert rows[4]["diff_H1"] == pytest.approx(1.2e-2, rel=0.05)
    assert rows[5]["err_L2"] == pytest.approx(2.5e-4, rel=0.05)
    assert rows[6]["err_L2"] == pytest.approx(6.3e-5, rel=0.05)
    assert [r["nodes"] for r in study] == [145, 545, 2113, 8321]


def test_inter_level_difference_is_exact_l2_norm():
    coarse, fine = fem.solve_heat(3), fem.solve_heat(4)
    w = fine.theta - fem.nested_prolongation(coarse.mesh, fine.mesh) @ coarse.theta
    M = asm(Functional(lambda v: v["w"] ** 2), Basis(fine.mesh, ElementTriP1()), w=w)
    norms = fem.error_norms(fine, w)
    assert norms["diff_L2"] == pytest.approx(np.sqrt(M), rel=1e-12)


def test_nested_prolongation_is_the_clamped_coarse_interpolant():
    coarse, fine = fem.solve_heat(3), fem.solve_heat(4)
    nested = fem.nested_prolongation(coarse.mesh, fine.mesh) @ coarse.theta
    probed = fem.sample_solution(coarse, fine.mesh.p.T) - PB.T_inf
    np.testing.assert_allclose(nested, probed, rtol=0, atol=1e-12)
    # fine boundary midpoints lie on the circle, outside the coarse polygon
    r = np.hypot(*fine.mesh.p[:, coarse.mesh.nvertices :])
    assert np.max(r) == pytest.approx(PB.R)


def test_sampling_matches_skfem_probes_inside():
    sol = fem.solve_heat(4)
    pts = PB.R * 0.98 * fem.disk_grid(31)
    ours = fem.sample_solution(sol, pts, chunk=100)
    skfem_values = Basis(sol.mesh, ElementTriP1()).probes(pts.T) @ sol.T
    np.testing.assert_allclose(ours, skfem_values, rtol=0, atol=1e-11)


def test_sampling_clamps_the_circle_and_refuses_outside():
    sol = fem.solve_heat(5)
    phi = np.linspace(0, 2 * np.pi, 97)
    circle = PB.R * np.column_stack([np.cos(phi), np.sin(phi)])
    T = fem.sample_solution(sol, circle)
    np.testing.assert_allclose(T, PB.exact(PB.R), atol=2e-3)
    with pytest.raises(ValueError, match="outside"):
        fem.sample_solution(sol, 1.01 * circle)


def test_p2_converges():
    res = fem.convergence_study(levels=3, first_nrefs=2, element="P2")
    assert type(res) is fem.ConvergenceStudy
    assert res.rows[-1]["dofs"] == 2113
    assert res.slopes["err_L2"] == pytest.approx(2, abs=0.15)
    assert res.slopes["diff_L2"] == pytest.approx(2, abs=0.15)


# --- reference files ----------------------------------------------------------


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("heat_reference")
    pts = fem.disk_grid(41)
    rows = fem.write_reference(out, levels=3, first_nrefs=3, points_nd=pts)
    return out, pts, rows


def test_reference_files_and_manifest(reference):
    out, pts, rows = reference
    manifest = json.loads((out / "manifest.json").read_text())
    for name in ("convergence.csv", "convergence.md", "convergence.png"):
        assert manifest["files"][name]["sha256"] == sha256_file(out / name)
    assert manifest["parameters"]["nrefs"] == [3, 4, 5]
    assert manifest["points"]["n_points"] == len(pts) == 1257
    assert len((out / "convergence.csv").read_text().splitlines()) == len(rows) + 1
    data = fem.load_reference(out, PB, points_nd=pts)
    r = PB.R * np.hypot(pts[:, 0], pts[:, 1])
    np.testing.assert_allclose(data["T"], PB.exact(r), atol=1.5e-3)
    np.testing.assert_allclose(data["theta"], data["T"] - PB.T_inf, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(data["points_nd"], pts)


def test_reference_refuses_a_corrupted_file(reference):
    out = reference[0]
    path = out / "heat_reference.npz"
    raw = bytearray(path.read_bytes())
    try:
        raw[len(raw) // 2] ^= 0xFF
        path.write_bytes(bytes(raw))
        with pytest.raises(InvalidReferenceError, match="corrupted"):
            fem.load_reference(out)
    finally:
        raw[len(raw) // 2] ^= 0xFF
        path.write_bytes(bytes(raw))
    fem.load_reference(out)


def test_reference_refuses_stale_constants_or_points(reference):
    out, pts, _ = reference
    with pytest.raises(InvalidReferenceError, match="stale"):
        fem.load_reference(out, replace(PB, k=PB.k + 1.0))
    with pytest.raises(InvalidReferenceError, match="stale"):
        fem.load_reference(out, PB, points_nd=fem.disk_grid(43))
    with pytest.raises(InvalidReferenceError, match="missing.manifest.json"):
        fem.load_reference(out.parent / "missing")


def test_reference_names_a_missing_field_file(reference, tmp_path):
    out = reference[0]
    (tmp_path / "manifest.json").write_bytes((out / "manifest.json").read_bytes())
    with pytest.raises(InvalidReferenceError, match="heat_reference.npz"):
        fem.load_reference(tmp_path)


def test_missing_package_data_is_an_invalid_reference(monkeypatch):
    monkeypatch.setattr(fem.reference, "REFERENCE_PACKAGE", "deepxde_lnn.no_such_data")
    with pytest.raises(InvalidReferenceError, match="heat_reference.npz"):
        fem.load_reference()


def test_shipped_reference_is_current():
    """The package data (``deepxde-lnn reference heat``) matches this problem and
    the heat grid, checked against its manifest."""
    data = fem.load_reference(points_nd=fem.disk_grid())
    assert np.array_equal(data["points_nd"], fem.disk_grid())
    r = PB.R * np.hypot(*data["points_nd"].T)
    np.testing.assert_allclose(data["T"], PB.exact(r), rtol=0, atol=2e-6)
