"""The former path of :mod:`deepxde_lnn.pinn.case`, kept for code that imports it."""

from .pinn.case import *  # noqa: F401,F403
from .pinn.case import __all__  # noqa: F401
