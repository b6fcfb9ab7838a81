"""Git hook templates, shipped as the package data `brain.hooks_data` (see brain/githooks.py)."""
