"""Reference data shipped with the package (installed as ``deepxde_lnn.reference``).

``circular_heat/``: the heat case's FEM reference field on its evaluation grid, the
mesh-convergence tables and a SHA-256 manifest, written by
``deepxde-lnn reference heat`` (see ``docs/heat.md``).

``pinnacle/``: the reference solutions of PINNacle's problems (COMSOL exports from
its repository, gzip-compressed, under its MIT licence: ``pinnacle/LICENSE``), read
by the PINNacle cases (``pinnacle/README.md`` names each file and its source,
``pinnacle/manifest.json`` records each one's SHA-256, checked before it is read).
"""
