"""The paper's study: its six cases with their profiles, by name
(:mod:`.registry`, :mod:`.shipped`; :mod:`.catalog` without torch), the paper's
numbers (:mod:`.paper`), the reproduction report (:mod:`.reproduction`), the
README's generated blocks (:mod:`.readme`) and :func:`~.report.report`, which
rebuilds both from run records.
"""
