"""PINNacle's published errors beside ours (``deepxde_lnn.study.published``): the
shipped table, when ours matches theirs, and the report's table."""

import pytest

from deepxde_lnn.study import published as pub


def test_the_shipped_table_gives_pinnacles_numbers_by_problem():
    burgers = pub.published("burgers1d")
    assert burgers["PINN"].mean == 0.0145 and burgers["PINN"].std == 0.00159
    assert burgers["PINN"].text() == "0.0145 ± 0.00159"
    assert pub.published("laplace") == {}  # not one of PINNacle's
    assert pub.pinnacle_name("ns2d_lid_driven") == "NS 2d-C"


def _beside(strong, theirs=0.05, lbfgs=None, ours=0.6):
    return pub.Beside("ns2d_lid_driven", ours, 5, theirs, f"{theirs}", lbfgs, strong, 1)


@pytest.mark.parametrize(
    "strong, theirs, lbfgs, expected",
    [
        (0.09, 0.05, None, True),  # within x2 of their PINN
        (0.11, 0.05, None, False),
        (0.11, 0.05, 0.06, True),  # ... or of their Adam + L-BFGS
        (0.001, 0.05, None, True),  # better than theirs matches too
        (0.3, 0.6, None, None),  # theirs did not converge: no claim
        (0.3, 0.6, 0.2, True),  # ... unless L-BFGS did
        (None, 0.05, None, None),  # ours not run at the strong profile
    ],
)
def test_ours_matches_theirs_within_twice_their_converged_error(
    strong, theirs, lbfgs, expected
):
    assert _beside(strong, theirs, lbfgs).matches is expected


def test_the_strong_profile_s_columns_appear_once_it_has_run(monkeypatch):
    monkeypatch.setattr(pub, "beside_published", lambda v, runs=(): [_beside(None)])
    short = pub.published_section([])
    assert short[-4].count("|") == 7 and "accurate" not in "".join(short)
    monkeypatch.setattr(pub, "beside_published", lambda v, runs=(): [_beside(0.0355)])
    both = pub.published_section([])
    header, row = both[-4], both[-2]
    assert header.endswith(
        "| our `pinn` at `accurate` (seeds) | ours at `accurate` within ×2 of theirs |"
    )
    assert row.count("|") == header.count("|") == 9
    assert row.endswith("| 0.0355 (1) | yes |")
    assert "1/8 of PINNacle's points, at most 1,024 a term" in both[2]


def test_the_answer_says_where_ours_matches_theirs_at_the_strong_profile():
    from deepxde_lnn.study import answer

    assert answer._strong_match([_beside(None)]) == ""  # not run there: nothing said
    found = [_beside(0.0355), _beside(0.3), _beside(0.2, theirs=0.7)]
    text = answer._strong_match(found)
    assert "ours is within ×2 of theirs on 1 of the 2 problems" in text
    assert "where theirs converged and ours ran (1 seed each)" in text
    assert text.endswith("(not on ns2d_lid_driven)")
