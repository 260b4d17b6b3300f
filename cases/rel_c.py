"""Relativistic viscous fluid, case C (paper Table 7).

Steady 2D relativistic viscous fluid on [0, 1]^2 with the manufactured state q*_c
(see ``deepxde_lnn.relativistic.exact_state_c``); operator, closure, transform,
sources and boundary terms as in ``cases/_relativistic.py``.
"""

from deepxde_lnn import relativistic as rel

from ._relativistic import make_case, table

# paper Table 7 (lr 1e-3, 8000 iterations); "rba" = the paper's RA-PINN row
PAPER = table(
    """
v_x lnn 2.4618e-3 6.0606e-6 2.0669e-3 5.1451e-2 5.9224e-3
v_x rba 4.3002e-1 1.8491e-1 4.2761e-1 8.9871 5.2668e-1
v_x xpinn 9.4027e-2 8.8410e-3 6.0596e-2 1.9651 3.2792e-1
v_x pinn 3.9688e-3 1.5751e-5 3.0554e-3 8.2946e-2 9.4572e-3
v_y lnn 2.2472e-3 5.0501e-6 1.9202e-3 5.3142e-2 7.8757e-3
v_y rba 4.2981e-1 1.8473e-1 4.2763e-1 1.0164e1 5.1916e-1
v_y xpinn 5.4813e-2 3.0045e-3 3.9015e-2 1.2962 1.5766e-1
v_y pinn 4.0453e-3 1.6364e-5 3.2306e-3 9.5661e-2 1.0142e-2
eps lnn 2.4286e-2 5.8981e-4 2.2164e-2 1.0030e-2 5.0655e-2
eps rba 2.0626 4.2545 2.0605 8.5183e-1 2.2839
eps xpinn 1.8851e-1 3.5535e-2 1.4102e-1 7.7850e-2 1.0986
eps pinn 2.4857e-2 6.1785e-4 1.7580e-2 1.0265e-2 6.4969e-2
n lnn 1.2341e-2 1.5230e-4 9.6952e-3 7.6239e-3 3.3557e-2
n rba 1.2036 1.4487 1.2025 7.4354e-1 1.2975
n xpinn 1.2934e-1 1.6728e-2 8.8008e-2 7.9899e-2 7.0852e-1
n pinn 1.8411e-2 3.3895e-4 1.3645e-2 1.1373e-2 4.5067e-2
Pi lnn 5.0470e-3 2.5472e-5 4.8040e-3 2.1671e-1 8.0024e-3
Pi rba 6.3061e-2 3.9767e-3 5.5193e-2 2.7077 1.6219e-1
Pi xpinn 2.9676e-2 8.8069e-4 1.8766e-2 1.2742 1.4059e-1
Pi pinn 3.8789e-3 1.5046e-5 2.6903e-3 1.6655e-1 1.3186e-2
pi_xx lnn 1.5071e-3 2.2713e-6 1.2294e-3 7.3210e-2 4.2305e-3
pi_xx rba 5.3893e-2 2.9044e-3 4.6022e-2 2.6180 1.2159e-1
pi_xx xpinn 2.3292e-2 5.4251e-4 1.7280e-2 1.1315 1.4296e-1
pi_xx pinn 2.8226e-3 7.9673e-6 2.2085e-3 1.3712e-1 7.7680e-3
pi_xy lnn 4.3105e-3 1.8581e-5 4.2356e-3 3.0257e-1 6.2481e-3
pi_xy rba 3.7759e-2 1.4257e-3 3.1156e-2 2.6504 1.1064e-1
pi_xy xpinn 2.5333e-2 6.4177e-4 2.0143e-2 1.7782 1.0528e-1
pi_xy pinn 3.3916e-3 1.1503e-5 2.9805e-3 2.3807e-1 6.3427e-3
pi_yy lnn 1.3110e-3 1.7188e-6 1.1051e-3 9.1392e-2 3.1393e-3
pi_yy rba 4.3647e-2 1.9051e-3 3.5629e-2 3.0427 1.0167e-1
pi_yy xpinn 1.7513e-2 3.0671e-4 1.3915e-2 1.2208 1.2827e-1
pi_yy pinn 3.4786e-3 1.2101e-5 2.6897e-3 2.4249e-1 9.8232e-3
""",
    train_s={"lnn": 1377.89, "rba": 1626.9, "xpinn": 4925.41, "pinn": 1125.59},
)

CASE = make_case(
    "rel_c",
    "Relativistic viscous fluid, case C",
    rel.exact_state_c,
    rel.exact_state_c_np,
    PAPER,
)
