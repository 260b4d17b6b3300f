r"""scikit-fem reference for the circular heat benchmark.

Steady conduction in the disk |x| < R with a Robin (convection) boundary::

    -k ΔT = Q  in Ω,    -k ∂T/∂n = h (T - T∞)  on |x| = R,

closed form ``T*(r) = T∞ + QR/(2h) + Q(R² - r²)/(4k)``.  P1 elements on the
``MeshTri.init_circle`` hierarchy, multigrid-preconditioned CG, a six-level
mesh-convergence study and the checksummed reference field the heat case
compares against (see ``docs/heat.md``).

Modules: :mod:`.heat_problem` (constants :data:`HEAT`, closed form, evaluation grid),
:mod:`.mesh` (disk meshes, nested prolongation), :mod:`.solver` (weak form,
assembly, solver), :mod:`.norms` (error norms, point evaluation), :mod:`.convergence`
(convergence study), :mod:`.reference` (writing and loading the stored
reference).  Nothing here imports DeepXDE or the networks.
"""

from .convergence import ConvergenceStudy, convergence_slopes, convergence_study
from .heat_problem import (
    HEAT,
    T_REF,
    HeatProblem,
    InvalidReferenceError,
    disk_grid,
    exact_temperature,
    points_sha256,
)
from .mesh import disk_meshes, longest_edge, nested_prolongation
from .norms import error_norms, probe_matrix, sample_solution
from .reference import load_reference, write_reference
from .solver import ELEMENTS, HeatSolution, heat_system, solve_heat

__all__ = [
    "ConvergenceStudy",
    "ELEMENTS",
    "HEAT",
    "HeatProblem",
    "HeatSolution",
    "InvalidReferenceError",
    "T_REF",
    "convergence_slopes",
    "convergence_study",
    "disk_grid",
    "disk_meshes",
    "error_norms",
    "exact_temperature",
    "heat_system",
    "load_reference",
    "longest_edge",
    "nested_prolongation",
    "points_sha256",
    "probe_matrix",
    "sample_solution",
    "solve_heat",
    "write_reference",
]
