"""The worker's wire, shared by the thin client (brain/thin.py), the worker (brain/worker.py) and
its client (brain/worker_client.py): the protocol's version and timings, its size limits, and the
worker's name and folder, so both sides find one socket."""

from __future__ import annotations

import os
import sys

from brain import __version__
from brain.xdg import xdg_dir

PROTOCOL = 1
CONNECT_TIMEOUT = 0.1
DEADLINE = 0.3  # seconds after the connect; a worker that has not acknowledged is replaced
SILENCE = 10.0  # a worker running a command sends a heartbeat every HEARTBEAT seconds
HEARTBEAT = 1.0
PAYLOAD_MAX = 4 * 1024 * 1024  # bytes of one forwarded command (argv and environment)
SOCKET_PATH_MAX = 100  # sun_path holds 104 bytes on macOS, 108 on Linux


def _fnv(data: bytes) -> str:
    """A 64-bit FNV-1a digest in hex: names a worker without importing hashlib (a name that
    collides only makes the worker decline: it checks the vault it is asked about)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def worker_name(vault: str) -> str:
    """`worker-<digest>`: one worker per vault, embedding settings (BRAIN_EMBED, brain.yaml as it
    was when the worker started), installation (sys.prefix: `python` and `python3` of one venv
    are one) and brain version."""
    config = xdg_dir("config")
    stamp = ""
    if config is not None:
        try:
            st = os.stat(os.path.join(config, "brain.yaml"))
            stamp = f"{st.st_mtime_ns}:{st.st_size}"
        except OSError:
            stamp = "-"
    from brain.settings import current

    parts = (vault, current().embed, stamp, sys.prefix, __version__)
    return "worker-" + _fnv("\0".join(parts).encode("utf-8", "surrogateescape"))


def run_dirs() -> list[str]:
    """Where a worker's socket may live, in order: `$XDG_RUNTIME_DIR/brain`, the state dir's
    `run/` (Linux), and on Unix `$TMPDIR/brain-<uid>` (else /tmp), whose path is short enough for
    a socket where a long HOME makes the state dir's too long. The thin client and the worker
    both pick from this one list (run_dir), so they never look in two places."""
    from brain.settings import current

    env = current().env
    folders = []
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        folders.append(os.path.join(runtime, "brain"))
    state = xdg_dir("state", env)
    if state is not None:
        folders.append(os.path.join(state, "run"))
    if hasattr(os, "getuid"):
        temp = [env.get(var, "") for var in ("TMPDIR", "TEMP", "TMP")]
        # check_dir refuses it unless it is ours and 0700, as tempfile.mkdtemp would make it
        folder = next((path for path in temp if os.path.isabs(path)), "/tmp")  # noqa: S108
        folders.append(os.path.join(folder, f"brain-{os.getuid()}"))
    return folders


def run_dir() -> str | None:
    """The first of run_dirs() where a worker's socket path fits sun_path; None when none does
    (brain.worker_client then says why no worker can start)."""
    sample = "worker-" + "0" * 16 + ".sock"  # every worker's name is this long
    for folder in run_dirs():
        if len(os.fsencode(os.path.join(folder, sample))) <= SOCKET_PATH_MAX:
            return folder
    return None
