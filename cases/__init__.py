"""The paper's six benchmarks, one module each (see docs/cases.md).

Each module reads like a DeepXDE example and ends with ``CASE = Case(...)``,
declaring the physics, its sampling and its evaluation grid. The study
(:mod:`deepxde_lnn.study.registry`) looks a case up by name and attaches its
profiles, trunk and the paper's numbers
(:mod:`deepxde_lnn.study.shipped`, :mod:`deepxde_lnn.study.paper`).
"""
