"""Test-session settings.

Tests use tiny networks, for which intra-op threading only adds overhead (and on a
loaded 2-core machine it slows DeepXDE steps by ~10x): run torch on one thread.
"""

import os

os.environ.setdefault("DDE_BACKEND", "pytorch")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture
def float64():
    """DeepXDE in float64 for one test, float32 again afterwards."""
    import deepxde as dde

    dde.config.set_default_float("float64")
    yield
    dde.config.set_default_float("float32")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "registered: registers tests/registered_case.py's 1-D case for the test "
        "(as docs/extending.md registers a case)",
    )


@pytest.fixture(autouse=True)
def _registered_case(request):
    """The 1-D case of ``tests/registered_case.py`` registered for a test (or a
    parameter) marked ``registered``."""
    if request.node.get_closest_marker("registered") is None:
        yield
        return
    from registered_case import registered

    with registered():
        yield
