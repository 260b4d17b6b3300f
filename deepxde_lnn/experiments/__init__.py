"""Experiments over many runs: the Python API behind ``deepxde_lnn.compare``,
``sweep``, ``ablate`` and ``run`` (:mod:`.api`), jobs spread over processes or a
cluster (:mod:`.jobs`, which also draw each finished run's figures) and ablation
variants (:mod:`.ablation`).
"""
