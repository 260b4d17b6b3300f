"""The former path of :mod:`deepxde_lnn.networks.taylor`, kept for code that imports it."""

from .networks.taylor import *  # noqa: F401,F403
from .networks.taylor import __all__  # noqa: F401
