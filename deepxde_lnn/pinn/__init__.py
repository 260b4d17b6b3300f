"""The physics-informed problems: loss terms and their sampling (:mod:`.data`,
:mod:`.sampling`), a case and its profiles (:mod:`.case`, :mod:`.problem`), a plain
DeepXDE problem as a case (:mod:`.custom`), the methods compared and their networks
and losses (:mod:`.methods`, :mod:`.rba`, :mod:`.xpinn`), metrics and the paper's
numbers (:mod:`.metrics`, :mod:`.paper`) and the relativistic fluid's physics.
"""
