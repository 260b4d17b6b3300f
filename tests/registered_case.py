"""A case registered as docs/extending.md's checklist registers one, for the tests
that must hold on every case: DeepXDE's 1-D Poisson problem (one input, where
the shipped cases have two or more), never shipped.

    -u''(x) = pi^2 sin(pi x)   on (-1, 1),   u(-1) = u(1) = 0
    exact: u = sin(pi x)

:func:`registered` takes a case's steps for the duration of a test (its module
among the cases, its entry in SHIPPED, its catalog entry); ``tests/conftest.py``
calls it for a test or a parameter marked ``pytest.mark.registered``.
"""

import contextlib
import json
import sys

import numpy as np
import pytest
import torch

import deepxde_lnn  # noqa: F401  (first: selects DeepXDE's pytorch backend)

# isort: split
import deepxde as dde

from deepxde_lnn.networks import taylor
from deepxde_lnn.problems.case import Case, Grid, Profile
from deepxde_lnn.problems.data import Term
from deepxde_lnn.problems.sampling import Box, Edge
from deepxde_lnn.study import catalog, registry, report_records, shipped

NAME = "tiny_poisson_1d"
LO, HI = (-1.0,), (1.0,)
geom = dde.geometry.Interval(-1, 1)


def pde(x, u):
    return -dde.grad.hessian(u, x) - np.pi**2 * torch.sin(np.pi * x)


def pde_jet(x, net):
    return -taylor.laplacian(net, x)[1] - np.pi**2 * torch.sin(np.pi * x)


def exact(x):
    return np.sin(np.pi * x[:, 0:1])


def exact_torch(x):
    return torch.sin(np.pi * x[:, 0:1])


ends = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on: on)

CASE = Case(
    name=NAME,
    title="Poisson in 1-D with Dirichlet ends (a test's registered case)",
    inputs=("x",),
    fields=("u",),
    terms=[
        Term("pde", Box(LO, HI), 64, pde, kind="pde", jet=pde_jet),
        Term("left", Edge(LO, HI, axis=0, value=-1.0), 1, ends),
        Term("right", Edge(LO, HI, axis=0, value=1.0), 1, ends),
    ],
    exact=exact,
    grid=Grid(LO, HI, 201),
)

ENTRY = shipped.Shipped(
    published=Profile(iterations=8000, lr=1e-3, seed=888888),
    quick=Profile(iterations=2000, lr=1e-3, seed=888888, counts={"pde": 64}),
)


@contextlib.contextmanager
def registered():
    """This module as the case ``NAME`` of the package, as long as the block
    runs: the module among the cases, ``ENTRY`` in ``shipped.SHIPPED`` and its
    entry in the catalog (the caches that read them emptied on the way in and
    out)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, f"{catalog.CASES}.{NAME}", sys.modules[__name__])
        mp.setitem(shipped.SHIPPED, NAME, ENTRY)
        for module in (catalog, registry):
            mp.setattr(module, "NAMES", (*catalog.NAMES, NAME))
        mp.setattr(registry, "_CASES", dict(registry._CASES))
        entries = catalog._catalog()
        entry = json.loads(json.dumps(registry.catalog_entry(NAME)))
        mp.setattr(catalog, "_catalog", lambda: {**entries, NAME: entry})
        _clear()
        try:
            yield
        finally:
            _clear()


def _clear() -> None:
    catalog.known.cache_clear()
    report_records.published_group.cache_clear()


#: the case as a test's parameter (registered for that test)
PARAM = pytest.param(NAME, marks=pytest.mark.registered)
