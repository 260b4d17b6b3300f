"""The former path of :mod:`deepxde_lnn.pinn.sampling`, kept for code that imports it."""

from .pinn.sampling import *  # noqa: F401,F403
from .pinn.sampling import __all__  # noqa: F401
