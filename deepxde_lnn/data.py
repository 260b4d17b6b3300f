"""The former path of :mod:`deepxde_lnn.pinn.data`, kept for code that imports it."""

from .pinn.data import *  # noqa: F401,F403
from .pinn.data import __all__  # noqa: F401
