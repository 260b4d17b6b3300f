"""The former path of :mod:`deepxde_lnn.networks.nn`, kept for code that imports it."""

from .networks.nn import *  # noqa: F401,F403
from .networks.nn import __all__  # noqa: F401
