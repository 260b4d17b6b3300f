"""From records to answers, without torch: one aggregation of run records
(:mod:`.table`), intervals and verdicts (:mod:`.stats`), summaries and figures
(:mod:`.summaries`), the reproduction report (:mod:`.reproduction`) and the
README's generated blocks (:mod:`.readme`).
"""
