"""Stable-Baselines3 areas, one module per area (absent module: the area does not apply)."""
