"""Experiments over many runs, behind ``deepxde_lnn.compare``, ``sweep``, ``ablate``
and ``run`` (:mod:`deepxde_lnn.api`): comparisons and their summaries
(:mod:`.orchestration`, :mod:`.results`), jobs spread over processes or a
cluster (:mod:`.jobs`, which also draw each finished run's figures) and ablation
variants (:mod:`.ablation`).
"""
