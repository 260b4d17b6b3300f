"""Networks and their derivatives: the liquid residual network and its plain and
ReZero twins (:mod:`.nn`), Taylor-mode jets (:mod:`.taylor`, compiled in
:mod:`.compiled`), K networks stacked as one (:mod:`.stacked`) and the authors'
gated residual-attention network (:mod:`.gated`). Each network's forward pass is
declared once (its stages); the stacked and Taylor-mode forms are derived from it.
"""
