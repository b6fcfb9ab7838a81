"""brain's folders by the XDG base directory rules (and BRAIN_STATE), without platformdirs: the
thin client and the worker name their files from these before anything heavier is imported
(brain.config decides with platformdirs where these rules do not apply)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own is an import the thin client would pay for; mypy reads it
if TYPE_CHECKING:
    from collections.abc import Mapping

# Linux's XDG base directories: (variable, default under HOME) per kind.
XDG = {
    "config": ("XDG_CONFIG_HOME", ".config"),
    "state": ("XDG_STATE_HOME", ".local/state"),
    "data": ("XDG_DATA_HOME", ".local/share"),
}


def xdg_dir(kind: str, env: Mapping[str, str] | None = None) -> str | None:
    """brain's folder of `kind` by the variables of `env` (the process's by default; a command the
    worker runs passes its own): for the state, BRAIN_STATE when it names a folder by its full
    path (`~` read as home; brain.config.state_dir refuses another), on every system; else by
    the XDG rules on Linux; None elsewhere (platformdirs decides, in brain.config)."""
    from brain.settings import Settings, current

    said = current() if env is None else Settings(env, "/")
    if kind == "state":
        own = os.path.expanduser(said.state)
        if os.path.isabs(own):
            return own
    if sys.platform != "linux" or "ANDROID_DATA" in said.env:
        return None
    var, default = XDG[kind]
    base = said.env.get(var, "")
    if os.path.isabs(base):
        return os.path.join(base, "brain")
    home = said.env.get("HOME", "")
    if os.path.isabs(home):
        return os.path.join(home, default, "brain")
    return None
