"""Relativistic viscous fluid, case B (paper Table 6).

Steady 2D relativistic viscous fluid on [0, 1]^2 with the manufactured state q*_b
(see ``deepxde_lnn.relativistic.exact_state_b``); operator, closure, transform,
sources and boundary terms as in ``cases/_relativistic.py``.
"""

from deepxde_lnn import relativistic as rel

from ._relativistic import make_case, table

# paper Table 6 (lr 1e-3, 8000 iterations); "rba" = the paper's RA-PINN row
PAPER = table(
    """
v_x lnn 1.8907e-3 3.5749e-6 1.4565e-3 2.6937e-2 4.5969e-3
v_x rba 6.5583e-2 4.3012e-3 5.2630e-2 9.3434e-1 1.3659e-1
v_x xpinn 4.6884e-2 2.1981e-3 3.1123e-2 6.6794e-1 1.7719e-1
v_x pinn 2.9884e-3 8.9306e-6 2.4352e-3 4.2575e-2 8.3118e-3
v_y lnn 1.3081e-3 1.7112e-6 1.0312e-3 2.1742e-2 3.7218e-3
v_y rba 5.6063e-2 3.1431e-3 4.4388e-2 9.3183e-1 1.1747e-1
v_y xpinn 5.0605e-2 2.5609e-3 3.7017e-2 8.4111e-1 1.8085e-1
v_y pinn 3.9372e-3 1.5501e-5 3.1721e-3 6.5440e-2 1.0089e-2
eps lnn 2.0589e-2 4.2390e-4 1.6145e-2 8.7469e-3 4.9864e-2
eps rba 1.7889e-1 3.2002e-2 1.4839e-1 7.5999e-2 3.9827e-1
eps xpinn 1.1664e-1 1.3606e-2 8.9674e-2 4.9555e-2 2.8930e-1
eps pinn 5.4356e-2 2.9546e-3 3.7934e-2 2.3092e-2 1.3923e-1
n lnn 1.5179e-2 2.3041e-4 1.2328e-2 9.7847e-3 3.3574e-2
n rba 1.1659e-1 1.3593e-2 9.7802e-2 7.5156e-2 2.4571e-1
n xpinn 8.9108e-2 7.9402e-3 6.6530e-2 5.7440e-2 2.5880e-1
n pinn 4.7567e-2 2.2626e-3 3.3379e-2 3.0662e-2 1.2149e-1
Pi lnn 2.1069e-3 4.4392e-6 1.6298e-3 8.5590e-2 5.2477e-3
Pi rba 2.9413e-2 8.6514e-4 2.2606e-2 1.1949 7.3473e-2
Pi xpinn 1.1828e-2 1.3990e-4 8.6206e-3 4.8049e-1 4.2418e-2
Pi pinn 4.9051e-3 2.4060e-5 4.1267e-3 1.9926e-1 9.7875e-3
pi_xx lnn 1.6356e-3 2.6751e-6 1.3007e-3 8.3538e-2 4.2931e-3
pi_xx rba 2.1347e-2 4.5570e-4 1.7274e-2 1.0903 5.0458e-2
pi_xx xpinn 2.1710e-2 4.7134e-4 1.6925e-2 1.1089 6.1130e-2
pi_xx pinn 5.6295e-3 3.1691e-5 4.5736e-3 2.8753e-1 1.3096e-2
pi_xy lnn 9.7229e-4 9.4535e-7 7.8943e-4 6.8430e-2 3.8655e-3
pi_xy rba 1.4453e-2 2.0890e-4 1.1812e-2 1.0172 3.1923e-2
pi_xy xpinn 2.1870e-2 4.7832e-4 1.4371e-2 1.5392 1.8263e-1
pi_xy pinn 2.3858e-3 5.6919e-6 1.9668e-3 1.6791e-1 7.6974e-3
pi_yy lnn 1.1941e-3 1.4259e-6 9.1848e-4 7.5832e-2 2.8278e-3
pi_yy rba 1.7952e-2 3.2227e-4 1.5364e-2 1.1400 3.3720e-2
pi_yy xpinn 2.6034e-2 6.7777e-4 1.8503e-2 1.6533 9.1475e-2
pi_yy pinn 3.3167e-3 1.1000e-5 2.3582e-3 2.1062e-1 9.6874e-3
""",
    train_s={"lnn": 1502.79, "rba": 1967.87, "xpinn": 6136.66, "pinn": 1238.73},
)

CASE = make_case(
    "rel_b",
    "Relativistic viscous fluid, case B",
    rel.exact_state_b,
    rel.exact_state_b_np,
    PAPER,
)
