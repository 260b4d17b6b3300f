"""From records to answers, without torch (nor the training code): one
aggregation of run records (:mod:`.table`), intervals and verdicts
(:mod:`.stats`), seeds added until decided (:mod:`.sequential`), a run folder's
figures (:mod:`.figures`) and the summaries of folders of runs
(:mod:`.summaries`).
"""
