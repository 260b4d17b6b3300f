"""The parameter-matched plain MLP (deepxde_lnn.networks.matched): the nearest
count at the same depth, for layer sizes, LNN variants and DeepXDE's FNN."""

from dataclasses import replace

import pytest
import torch

import deepxde_lnn

# isort: split
import deepxde as dde

from deepxde_lnn import LNN, MLP, ReZero
from deepxde_lnn.networks.matched import layer_sizes_of, matched, matched_sizes
from deepxde_lnn.problems.build import matched_width
from deepxde_lnn.study import registry


def p_mlp(sizes):
    return sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:]))


def nearest_by_brute_force(sizes, target):
    """The equal width whose MLP count is nearest ``target``, ties to the smaller,
    searched over every width up to ``target`` (an MLP of width w has >= w)."""
    widest = target + 2
    shape = lambda w: [sizes[0], *[w] * (len(sizes) - 2), sizes[-1]]  # noqa: E731
    return shape(
        min(range(1, widest), key=lambda w: (abs(p_mlp(shape(w)) - target), w))
    )


NETWORKS = {
    "lnn": lambda: LNN([2, 64, 64, 64, 64, 1], "tanh", "Glorot normal"),
    "lnn-reduced": lambda: LNN(
        [2, 32, 32, 3], "sin", "Glorot normal", layout="reduced"
    ),
    "lnn-uneven": lambda: LNN([3, 10, 40, 5, 2], "tanh", "Glorot normal"),
    "lnn-one-layer": lambda: LNN([1, 300, 1], "tanh", "Glorot normal"),
    "rezero": lambda: ReZero([2, 20, 20, 1], "tanh", "Glorot normal"),
    "fnn": lambda: dde.nn.FNN([2, 10, 30, 1], "tanh", "Glorot normal"),
    "mlp": lambda: MLP([4, 16, 16, 16, 2], "tanh", "Glorot normal"),
}


@pytest.mark.parametrize("name", NETWORKS)
def test_nearest_count_at_the_same_depth(name):
    net = NETWORKS[name]()
    target = net.num_trainable_parameters()
    sizes = matched_sizes(net)
    old = layer_sizes_of(net)
    assert len(sizes) == len(old) and (sizes[0], sizes[-1]) == (old[0], old[-1])
    assert len(set(sizes[1:-1])) == 1  # equal widths
    assert sizes == nearest_by_brute_force(old, target)
    # within one width step of the target
    w = sizes[1]
    below = [sizes[0], *[w - 1] * (len(sizes) - 2), sizes[-1]]
    above = [sizes[0], *[w + 1] * (len(sizes) - 2), sizes[-1]]
    assert p_mlp(below) <= target <= p_mlp(above) or w == 1
    built = matched(net, "tanh", "Glorot normal")
    assert isinstance(built, MLP) and built.layer_sizes == sizes
    assert built.num_trainable_parameters() == p_mlp(sizes)


def test_layer_sizes_are_those_of_the_lnn():
    """Sizes alone: the LNN of those sizes (with its options) is the target; the
    paper's 4 x 64 network gives width 98, as ``pinn-matched``."""
    assert matched_sizes([2, 64, 64, 64, 64, 1]) == [2, *[98] * 4, 1]
    reduced = matched_sizes([2, 64, 64, 64, 1], layout="reduced")
    assert reduced == matched_sizes(LNN([2, 64, 64, 64, 1], "tanh", "Glorot normal"))
    assert matched_sizes([2, 64, 1], target=p_mlp([2, 7, 1])) == [2, 7, 1]
    assert matched_sizes([2, 1]) == [2, 1]  # no hidden layer: its own match


def test_a_trainable_activation_is_counted():
    """Counts are the networks' own: a trainable activation's slope counts where
    the network registers it (the LNN's blocks do)."""
    sizes, act = [2, 32, 32, 1], "LAAF-10 tanh"
    target = LNN(sizes, act, "Glorot normal").num_trainable_parameters()
    extra = MLP([2, 5, 5, 1], act, "Glorot normal").num_trainable_parameters()
    extra -= p_mlp([2, 5, 5, 1])
    assert target == LNN(sizes, "tanh", "Glorot normal").num_trainable_parameters() + 1
    expected = nearest_by_brute_force(sizes, target - extra)
    assert matched_sizes(sizes, activation=act) == expected


def test_matching_leaves_the_random_state():
    torch.manual_seed(0)
    matched_sizes([2, 64, 64, 1])
    after = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(after, torch.rand(3))


def test_matched_builds_from_the_current_random_state():
    """``matched`` draws only its own network: seeded twice, the same values."""
    torch.manual_seed(3)
    a = deepxde_lnn.matched([2, 16, 16, 1], "tanh", "Glorot normal")
    torch.manual_seed(3)
    b = MLP(a.layer_sizes, "tanh", "Glorot normal")
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((torch.nn.Linear(2, 3),), {}, "net: cannot read"),
        (([2, 8, 1],), {"target": 0}, "target"),
        (([2, 8, 1],), {"target": 2.5}, "target"),
        (([2, 8, 1],), {"layout": "sideways"}, "layout"),
        ((LNN([2, 8, 1], "tanh", "Glorot normal"),), {"layout": "reduced"}, "layout"),
        (([2, 0, 1],), {}, "layer_sizes"),
        # issue 43, item 16: an overflow, and a layer past the cap
        (([2, 64, 1],), {"target": 2**70}, r"^target must be .* \[1, 1000000000\]"),
        (([2, 64, 1],), {"target": 10**12}, r"^target must be .* \[1, 1000000000\]"),
        (([2, 10**8, 10**8, 1],), {}, "^net: the network to match must have 1 to"),
    ],
)
def test_bad_input_names_the_argument(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        matched_sizes(*args, **kwargs)


def test_the_cases_matched_width_is_this_helper():
    """``pinn-matched`` of a case is the helper's width; with one wide hidden
    layer the width is no longer capped at 4 times the case's (was 1200)."""
    lap = registry.get("laplace")
    assert matched_width(lap) == 98
    wide = replace(lap, trunk=replace(lap.trunk, hidden=(300,)))
    assert matched_width(wide) == matched_sizes([2, 300, 1])[1] == 22950


def test_exported_lazily():
    from deepxde_lnn.networks import matched as module

    assert deepxde_lnn.matched is module.matched
    assert deepxde_lnn.matched_sizes is module.matched_sizes
