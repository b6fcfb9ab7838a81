"""One SQLite opener (brain.database, issue 29 item 5): the index, the usage log and recall's
transcripts open the same way, with one busy timeout."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

from brain import config, database, index, usage
from brain.recall import store


def test_every_database_of_brains_waits_as_long_for_a_writer(vault: Path, tmp_path: Path) -> None:
    """The usage log waited 5 s where the index and the transcripts waited 10: a find that logs
    while a sync holds the log's lock gave up first."""
    opened = {
        "index": index.open_index(vault),
        "usage": usage.connect(),
        "transcripts": store.connect(tmp_path / "transcripts.db"),
    }
    try:
        waits = {name: c.execute("PRAGMA busy_timeout").fetchone()[0] for name, c in opened.items()}
    finally:
        for conn in opened.values():
            conn.close()
    assert waits == dict.fromkeys(opened, int(database.BUSY_SECONDS * 1000))
    assert config.usage_log_path().stat().st_mode & 0o077 == 0  # created 0600


# Not brain's own files: another program's database, read-only, and an in-memory probe.
OTHERS = {"brain/recall/adapters/opencode.py", "brain/health.py"}


def test_only_brain_database_opens_brains_sqlite_files() -> None:
    callers = set()
    for path in sorted((ROOT / "brain").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and ast.unparse(func) == "sqlite3.connect":
                callers.add(path.relative_to(ROOT).as_posix())
    assert callers - OTHERS == {"brain/database.py"}
