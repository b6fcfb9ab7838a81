"""The one way brain starts a process it does not wait for: a worker, a background sync, the daily
sweep, a reindex, the release check. Detached from the caller, so that a hook's or a terminal's
end (its process group killed, Ctrl-C, the console closed) does not end it too.

POSIX: a session of its own (`start_new_session`, setsid(2)): no controlling terminal, and not in
the caller's process group. Windows ignores `start_new_session`; there it is DETACHED_PROCESS (no
console of the caller's) and CREATE_NEW_PROCESS_GROUP (Ctrl-C and Ctrl-Break sent to the caller's
group miss it): https://learn.microsoft.com/windows/win32/procthread/process-creation-flags.

brain.gitutil's process group for git is another job (killing git and what it started on a
timeout) and stays there.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO

    Output = int | IO[bytes] | None  # subprocess.DEVNULL, a descriptor or an open file

# The values of subprocess's constants, which exist only on Windows (the Microsoft page above):
# named here so that the flags can be checked on any system.
DETACHED_PROCESS = 0x00000008
CREATE_NEW_PROCESS_GROUP = 0x00000200


def start_detached(argv: list[str], *, stdout: Output = None, stderr: Output = None) -> bool:
    """Start `argv` detached, with stdin from /dev/null, stdout and stderr to `stdout` and
    `stderr` (/dev/null when None), no descriptor of ours but those, and the command's own
    environment (brain.settings: the worker's command passes on its client's). False when it
    could not start (no such program, no processes left): the caller goes on without it."""
    import subprocess  # here: a find that reaches a live worker never pays for it

    from brain.settings import current

    windows = sys.platform == "win32"
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL if stdout is None else stdout,
            stderr=subprocess.DEVNULL if stderr is None else stderr,
            close_fds=True,
            env=current().child_env(),
            start_new_session=not windows,
            creationflags=DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP if windows else 0,
        )
    except OSError:
        return False
    return True
