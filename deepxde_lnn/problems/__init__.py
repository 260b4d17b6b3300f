"""The physics-informed problems: a case as data, its physics, sampling and
evaluation grid (:mod:`.case`), profiles and the runner's interface
(:mod:`.problem`), loss terms and their sampling (:mod:`.data`, :mod:`.sampling`),
a plain DeepXDE problem (:mod:`.deepxde_problem`), what a problem of the user's own is
(:mod:`.fingerprints`), the methods by name (:mod:`.methods`,
without torch) and what they build (:mod:`.build`, with the baselines' losses in
:mod:`.rba`, :mod:`.xpinn`), metrics (:mod:`.metrics`) and the relativistic
fluid's physics.
"""
