"""OpenCode: the SQLite database `~/.local/share/opencode/opencode.db` (its data dir follows
XDG_DATA_HOME; the file OPENCODE_DB, absolute or relative to the data dir).

Where: opencode.ai/docs/troubleshooting ("opencode.db - SQLite database containing projects,
sessions, and messages"; "Custom OPENCODE_DB settings ... can use a different filename"). The
tables are anomalyco/opencode (formerly sst/opencode) packages/core/src/session/sql.ts, the JSON
in their `data` column packages/core/src/v1/session.ts (the message and part types without their
ids), read at 02ce4a33:

- `session` (`id`, `parent_id`: a sub-agent's session has one and is not read, as Claude Code's
  side chains are not; `directory`, `title`, `time_updated` in ms);
- `message` (`id`, `session_id`, `time_created`, `data`: `role` user or assistant, `time`);
- `part` (`id`, `message_id`, `session_id`, `time_updated`, `data`): `text` parts (not
  `synthetic` nor `ignored`) are what was said, `tool` parts the calls (brain.recall.adapters.
  calls.opencode_call).

OpenCode writes the database in WAL mode while it runs: it is opened read-only and never written.
Each top-level session is one "file" of recall: `opencode.db/<session id>`, whose signature is
its parts' count and their (and the session's) last update, read whole when that changes (a part
is rewritten in place as a tool runs). OpenCode moved its older JSON files (`storage/`) into the
database on its first start after 1.2 (packages/opencode/src/storage/json-migration.ts): they are
not read. The title is the session's unless it is OpenCode's placeholder ("New session - <time>"),
else the first prompt.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from brain.recall.adapters import (
    Chunk,
    FileState,
    Turn,
    cap,
    clip_title,
    document,
    env_root,
    iso,
    wrapper,
)
from brain.recall.adapters.calls import Call, Outcome, opencode_call
from brain.settings import current
from brain.text import json_loads

_PLACEHOLDER = re.compile(r"^(?:New|Child) session - \d{4}-")
_SESSIONS = (
    "SELECT s.id, s.time_updated, coalesce(p.n, 0), coalesce(p.last, 0) FROM session s"
    " LEFT JOIN (SELECT session_id, count(*) AS n, max(time_updated) AS last FROM part"
    " GROUP BY session_id) p ON p.session_id = s.id WHERE s.parent_id IS NULL"
)
_ONE = (
    "SELECT s.time_updated, (SELECT count(*) FROM part WHERE session_id = s.id),"
    " (SELECT max(time_updated) FROM part WHERE session_id = s.id) FROM session s WHERE s.id = ?"
)


def _query(db: Path, *queries: tuple[str, tuple[str, ...]]) -> list[list[Any]]:
    """The rows of each query, read in one read-only connection (OpenCode keeps writing); an
    OSError when the database cannot be read."""
    try:
        conn = sqlite3.connect(db.absolute().as_uri() + "?mode=ro", uri=True, timeout=5)
        try:
            conn.text_factory = lambda b: b.decode("utf-8", "replace")  # a stray byte: not fatal
            return [conn.execute(sql, args).fetchall() for sql, args in queries]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise OSError(f"{db}: {exc}") from exc


def _signature(updated: Any, count: Any, last: Any) -> tuple[int, int]:
    newest = max(v for v in (updated, last, 0) if isinstance(v, (int, float)))
    return int(count or 0), int(newest) * 1_000_000  # ms, stored as if ns


class OpenCode:
    name = "opencode"
    label = "OpenCode"

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, int]] = {}  # signatures read by files(), by path

    def root(self) -> Path:
        return env_root("XDG_DATA_HOME", ".local/share") / "opencode"

    def database(self) -> Path:
        value = current().get("OPENCODE_DB")
        if value and value != ":memory:":
            return self.root() / Path(value).expanduser()  # an absolute one stands alone
        return self.root() / "opencode.db"

    def files(self) -> Iterator[Path]:
        db = self.database()
        if not db.is_file():
            return
        try:
            (rows,) = _query(db, (_SESSIONS, ()))
        except OSError:
            return  # not OpenCode's database, or one being migrated
        for sid, updated, count, last in rows:
            if not isinstance(sid, str) or not sid or "/" in sid or sid in (".", ".."):
                continue
            path = db / sid
            self._seen[str(path)] = _signature(updated, count, last)
            yield path

    def may_hold(self, path: Path, session: str) -> bool:
        return path.name == session

    def signature(self, path: Path) -> tuple[int, int]:
        known = self._seen.get(str(path))
        if known is not None:
            return known
        (rows,) = _query(path.parent, (_ONE, (path.name,)))
        if not rows:
            raise FileNotFoundError(str(path))
        return _signature(*rows[0])

    def load(self, path: Path) -> bytes:
        """The session, its messages and their parts as one JSON document (rows' `data` kept
        as the text OpenCode wrote, parsed by `read`)."""
        sid = path.name
        heads, messages, parts = _query(
            path.parent,
            ("SELECT title, directory FROM session WHERE id = ?", (sid,)),
            (
                "SELECT id, time_created, data FROM message WHERE session_id = ?"
                " ORDER BY time_created, id",
                (sid,),
            ),
            (
                "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
                (sid,),
            ),
        )
        if not heads:
            raise FileNotFoundError(str(path))
        head = heads[0]
        held: dict[str, list[str]] = {}
        for mid, data in parts:
            held.setdefault(str(mid), []).append(str(data))
        doc = {
            "id": sid,
            "title": head[0],
            "directory": head[1],
            "messages": [
                {"id": mid, "time": created, "data": data, "parts": held.get(str(mid), [])}
                for mid, created, data in messages
            ],
        }
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "replace")

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        doc = document(data)
        if doc is None:
            return Chunk([], 0, state, skipped=1, titled=False)
        state.session = str(doc.get("id") or path.name)
        state.cwd = doc["directory"] if isinstance(doc.get("directory"), str) else ""
        turns: list[Turn] = []
        calls: list[Call] = []
        outcomes: list[Outcome] = []
        skipped = 0
        last = ""  # the turn a tool call follows
        for msg in doc["messages"]:
            info = _json(msg.get("data")) if isinstance(msg, dict) else None
            if info is None:
                skipped += 1
                continue
            role = info.get("role")
            created = (
                info.get("time", {}).get("created") if isinstance(info.get("time"), dict) else None
            )
            ts = iso(created if created is not None else msg.get("time"))
            parts = [p for p in (_json(raw) for raw in msg.get("parts") or []) if p is not None]
            body = "\n\n".join(
                p["text"]
                for p in parts
                if p.get("type") == "text"
                and isinstance(p.get("text"), str)
                and not p.get("synthetic")
                and not p.get("ignored")
            )
            mid = msg.get("id")
            said = role in ("user", "assistant") and body.strip() and not wrapper(body)
            if said and isinstance(mid, str) and mid:
                turns.append(Turn(mid, ts, str(role), state.session, cap(body)))
                last = mid
            for part in parts:
                if part.get("type") == "tool" and role == "assistant":
                    got, done = opencode_call(part, ts, state.session, last, state.cwd)
                    calls += got
                    if done is not None:
                        outcomes.append(done)
        title = doc["title"] if isinstance(doc.get("title"), str) else ""
        if not title.strip() or _PLACEHOLDER.match(title):
            title = next((t.body for t in turns if t.role == "user"), "")
        state.title = clip_title(title.split("\n", 1)[0]) if title else ""
        return Chunk(turns, 0, state, skipped, calls=calls, outcomes=outcomes, rewrites=True)


def _json(text: Any) -> dict[str, Any] | None:
    """A row's `data` as a JSON object; None when it is not one."""
    if not isinstance(text, str):
        return None
    try:
        got = json_loads(text.encode("utf-8", "replace"))
    except ValueError:
        return None
    return got if isinstance(got, dict) else None
