"""The one way brain opens its own SQLite files: the index (brain.index), the usage log
(brain.usage) and recall's transcripts (brain.recall.store).

Each is created readable by its owner only, opened in autocommit mode (brain says BEGIN where it
means a transaction) and waits up to BUSY_SECONDS for a writer: a post-commit reindex, a
background sync and an agent's `find` overlap. `sqlite3.connect(timeout=...)` installs SQLite's
busy handler itself, the same as `PRAGMA busy_timeout` (https://docs.python.org/3/library/
sqlite3.html#sqlite3.connect): set once, here. Another program's database (OpenCode's, read by
brain.recall) and health's in-memory FTS5 probe are not brain's files and open as they need.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from brain.config import private_file

if TYPE_CHECKING:
    from pathlib import Path

BUSY_SECONDS = 10.0  # how long a statement waits for another connection's write lock


def connect(path: Path) -> sqlite3.Connection:
    """A connection to brain's database at `path`, made 0600 when it is new."""
    private_file(path)
    return sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
