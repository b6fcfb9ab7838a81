"""brain: a local-first memory for coding agents."""

from __future__ import annotations

import os

__version__ = "0.1.0"

# onnxruntime writes a device id under ~/.cache unless this is set before its first import;
# setting it here covers every path that might load the model.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
