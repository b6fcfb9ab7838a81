"""brain: a local-first memory for coding agents.

The package itself holds only what every process needs first: the version, onnxruntime's
telemetry switched off before anything can load it (numbers from the environment are
brain/settings.py's). What the
thin client, the worker and the commands share before brain knows which command it runs has a
module of its own, each builtin modules only and nothing of brain's above it (they close no
import cycle, tests/test_import_cycles.py): brain/xdg.py (brain's folders by the XDG rules),
brain/stdin.py (the one reader of a hook's stdin), brain/deadline.py (prime's clock and its
watchdog) and brain/wire.py (the worker's name, folder and the limits of its wire).
"""

from __future__ import annotations

import os
import sys

__version__ = "0.1.0"

# onnxruntime writes a device id under ~/.cache unless this is set before its first import;
# setting it here covers every path that might load the model.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def _unraisable(info: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C that lands in a callback Python cannot raise from (an import lock's, while brain
    loads) is lost either way; Python would print its traceback, brain prints nothing of it."""
    if not issubclass(info.exc_type, KeyboardInterrupt):
        sys.__unraisablehook__(info)


sys.unraisablehook = _unraisable
