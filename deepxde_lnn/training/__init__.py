"""Training: the one loop that trains 1..K runs of one configuration
(:mod:`.runner`, with :mod:`.controller` inside ``dde.Model.train``), K seeds stacked
as one model's data and Adam state (:mod:`.ensemble`), the L-BFGS phase
(:mod:`.accurate`), signals and outcomes.
"""
