"""``ResampledPDE``: the paper's sampling protocol as a DeepXDE ``Data``.

Stock ``dde.data.PDE`` evaluates the PDE on boundary points too, filters boundary
points by ``on_boundary`` (random per-BC counts, shared points) and
``PDEPointResampler`` cannot keep per-term counts fixed. Here every loss term owns
a fixed-size point set with its own sampler::

    loss = sum_k  w_k * mean_{x in S_k} |r_k(x)|^2        (multi-channel: sum of means)

* ``kind="pde"`` / ``"operator"``: the network is re-run on the term's own points,
  so derivatives (up to the beam's 4th order) are taken on those rows only;
* ``kind="value"``: residual from the shared forward pass (no derivatives);
* ``kind="net"``: the residual takes the network itself, ``residual(x, net)``
  (e.g. XPINN interface terms that evaluate two subnetworks at the same points).

``resample=True`` redraws every set at every step (paper protocol);
``resample=False`` draws one fixed pool (for L-BFGS). A term with ``fixed=True``
keeps one pool, drawn once from its own stream, even when the others are redrawn
(point-attached weights such as RBA's multipliers).

An optional ``weights`` hook multiplies each row's squared residual::

    loss_k = w_k * sum_c mean_i ( omega_ic * r_ic^2 )

(``omega = lambda^2`` for RBA, ``N / N_q`` for XPINN's per-subdomain means).

The batch handed to DeepXDE (``train_next_batch``/``test``) holds only the value
terms' rows, since only those use DeepXDE's shared forward pass: a forward over the
other rows would be thrown away. ``data.train_x`` holds every term's points.

Modules: :mod:`.terms` (a loss term), :mod:`.conditions` (DeepXDE conditions
without DeepXDE's cache), :mod:`.resampled` (the data), :mod:`.staging` (a step
that reads no host memory), :mod:`.jets` (Taylor-mode residuals) and
:mod:`.reductions` (residuals to losses).
"""

from .reductions import RowWeights, as_columns
from .resampled import ResampledPDE, is_training_pass
from .terms import KINDS, Term

__all__ = [
    "Term",
    "ResampledPDE",
    "RowWeights",
    "KINDS",
    "as_columns",
    "is_training_pass",
]
