"""Experiments over many runs: the Python API behind ``deepxde_lnn.compare``,
``sweep``, ``ablate`` and ``run`` (:mod:`.api`), jobs spread over processes or a
cluster (:mod:`.jobs`), seeds added until decided (:mod:`.sequential`), ablation
variants (:mod:`.ablation`) and the report (:mod:`.publish`).
"""
