"""The former path of :mod:`deepxde_lnn.training.runner`, kept for code that imports it."""

from .training.runner import *  # noqa: F401,F403
from .training.runner import __all__  # noqa: F401
