"""Training: the one path that trains 1..K runs of one configuration
(:mod:`.runner`; a stack built or restored in :mod:`.stack`, trained phase after phase
in :mod:`.phases` with :mod:`.controller` inside ``dde.Model.train``, its record
in :mod:`.run_record`, its files in :mod:`.artifacts`), step times (:mod:`.timing`), K
seeds stacked as one model's data and Adam state (:mod:`.stacking`), the L-BFGS
phase (:mod:`.accurate`), signals and outcomes. No figures, no reporting.
"""
