"""Limits of the networks' options, checked without torch."""

LAYOUTS = ("standard", "reduced")
ALPHA_MAX = 1e3  # |alpha_init| beyond this is a typo, not an ablation
