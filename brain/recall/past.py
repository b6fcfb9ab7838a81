"""What past sessions did, read back from transcripts.db: the helpers `howto`, `lessons` and
`day`/`week` share.

Shell commands are compared as a person would: by their words (`npm test` and `npm test --
--runInBand` are near each other, `make build` and `make test` are not) and by their characters
(`docker compose up` and `docker-compose up`). Commands that only look (ls, cat, grep, git status
...) never did a task and never teach one. Everything shown or proposed passes through `masked`
first: the secrets rules' masking of what looks like a credential.
"""

from __future__ import annotations

import difflib
import re
import shlex
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

NEAR_WORDS = 0.4  # token Jaccard at or above which two commands are near each other
NEAR_CHARS = 0.75  # difflib ratio at or above which two commands are near each other
SNIPPET = 160  # characters of a turn or an output shown with a moment


# -- credentials -----------------------------------------------------------------------------


def masked(text: str) -> str:
    """`text` with every credential the secrets rules find replaced by its masked form (the one
    masking every output uses, overlapping matches included)."""
    from brain.secrets import redact

    return redact(text)


def one_line(text: str, limit: int = SNIPPET) -> str:
    """A turn or an output as one line of at most `limit` characters, credentials masked."""
    from brain.text import cut

    return cut(" ".join(masked(text).split()), limit)


# -- shell commands --------------------------------------------------------------------------

# Programs that only look at things: a command made of these alone did no task.
LOOKS = frozenset(
    """ls ll la cd pwd cat head tail less more echo printf grep egrep fgrep rg ag ack find fd wc
    which whereis type file stat tree du df sed awk sort uniq cut tr diff jq yq date whoami env
    printenv history true false sleep clear man help""".split()
)
_LOOK_GIT = frozenset("status diff log show branch remote blame rev-parse ls-files".split())
_PREFIXES = frozenset("sudo env time nice nohup command exec builtin".split())
_SEGMENTS = re.compile(r"\|\|?|&&|;|\n")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def shell_words(command: str) -> list[str]:
    """A command's words as the shell splits them (on whitespace when it cannot)."""
    try:
        return shlex.split(command, comments=False)
    except ValueError:
        return command.split()


def programs(command: str) -> list[list[str]]:
    """Each pipeline segment's words from its program on (assignments and sudo/env skipped)."""
    out = []
    for segment in _SEGMENTS.split(command):
        ws = shell_words(segment)
        while ws and (_ASSIGN.match(ws[0]) or ws[0] in _PREFIXES):
            ws = ws[1:]
        if ws:
            out.append([ws[0].rsplit("/", 1)[-1], *ws[1:]])
    return out


def looks_only(command: str) -> bool:
    """True for a command that only inspects (every segment is ls, cat, grep, git status ...)."""
    segments = programs(command)
    if not segments:
        return True
    for ws in segments:
        prog = ws[0]
        if prog == "git" and len(ws) > 1 and ws[1] in _LOOK_GIT:
            continue
        if prog == "sed" and "-i" in ws:
            return False
        if prog not in LOOKS:
            return False
    return True


def normal(command: str) -> str:
    return " ".join(command.split())


def nearness(a: str, b: str) -> tuple[float, float]:
    """(token Jaccard, character ratio) of two commands."""
    wa, wb = set(shell_words(a)), set(shell_words(b))
    jac = len(wa & wb) / len(wa | wb) if wa | wb else 1.0
    ratio = difflib.SequenceMatcher(None, normal(a), normal(b), autojunk=False).ratio()
    return jac, ratio


def _compact(ws: list[str]) -> str:
    return re.sub(r"[\s_-]", "", "".join(ws)).lower()


def near(a: str, b: str) -> bool:
    """Two commands near each other: sharing most words or characters, or one program spelt
    two ways (`docker-compose` / `docker compose`, `go fmt` / `gofmt`)."""
    jac, ratio = nearness(a, b)
    if jac >= NEAR_WORDS or ratio >= NEAR_CHARS:
        return True
    pa, pb = programs(a), programs(b)
    if not pa or not pb:
        return False
    wa, wb = pa[-1], pb[-1]
    if wa[0] == wb[0]:
        return False
    return _compact(wa[:1]) == _compact(wb[:2]) or _compact(wb[:1]) == _compact(wa[:2])


_NOT_FOUND = re.compile(
    r"command not found|is not recognized as|: not found\b|No such file or directory"
)


def missing_program(command: str, code: int | None, output: str) -> str:
    """The program a failure says does not exist (exit 127, "command not found"), else ''."""
    segments = programs(command)
    if not segments or not (code == 127 or _NOT_FOUND.search(output[:300])):
        return ""
    prog = segments[0][0]
    return prog if code == 127 or prog in output[:300] else ""


def mentions(command: str, program: str) -> bool:
    """Whether a command runs `program` another way: it names it, or a 4+ letter part of it
    (`make openapi-client` for `openapi-generator`, `uv run mypy` for `mypy`)."""
    parts = [p for p in re.split(r"[-_.]", program.lower()) if len(p) >= 4] or [program.lower()]
    text = command.lower()
    return any(p in text for p in parts)


def core(command: str) -> list[str]:
    """A command's words but its options, assignments and paths: what it does, not to what."""
    return [w for ws in programs(command) for w in ws if not _optional(w)]


def _optional(word: str) -> bool:
    return word.startswith("-") or "=" in word or _pathlike(word)


def same(a: str, b: str) -> bool:
    """Near-identical: one command, run again give or take an option or a path."""
    if normal(a) == normal(b):
        return True
    ca = core(a)
    return bool(ca) and ca == core(b)


def _pathlike(word: str) -> bool:
    if word.startswith("-"):  # an option, even one naming a path (-chdir=envs/prod)
        return False
    return "/" in word or bool(re.search(r"\.[A-Za-z0-9]{1,5}$", word)) or "::" in word


def other_target(a: str, b: str) -> bool:
    """True when two commands differ only in the files they name: the same tool pointed at
    another thing (`pytest tests/a.py`, `pytest tests/b.py`), not another way of doing it."""
    wa, wb = shell_words(a), shell_words(b)
    diff = set(wa) ^ set(wb)
    return bool(diff) and all(_pathlike(w) for w in diff)


# -- time ------------------------------------------------------------------------------------


def local_day(text: str, today: date | None = None) -> date:
    """`2026-05-14`, `today` or `yesterday` as a date (local time)."""
    from brain.errors import UsageError

    today = today or datetime.now().astimezone().date()
    key = text.strip().lower()
    if key in ("", "today"):
        return today
    if key == "yesterday":
        return today - timedelta(days=1)
    try:
        return date.fromisoformat(key)
    except ValueError:
        raise UsageError(
            f"{text!r} is not a day", "pass YYYY-MM-DD, `today` or `yesterday`"
        ) from None


def utc_bounds(first: date, last: date) -> tuple[str, str]:
    """The UTC ISO strings (as transcripts.db stores times) from local midnight of `first` to
    local midnight after `last`."""
    zone = datetime.now().astimezone().tzinfo
    start = datetime.combine(first, time(), zone).astimezone(UTC)
    end = datetime.combine(last + timedelta(days=1), time(), zone).astimezone(UTC)
    return iso_z(start), iso_z(end)


def iso_z(stamp: datetime) -> str:
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def local_date(ts: str | None) -> str:
    """A stored UTC time's local date, YYYY-MM-DD ('' when it is not a time)."""
    try:
        stamp = datetime.fromisoformat((ts or "").replace("Z", "+00:00"))
    except ValueError:
        return ""
    return stamp.astimezone().date().isoformat()


def local_time(ts: str | None) -> str:
    """A stored UTC time as local `HH:MM`."""
    try:
        stamp = datetime.fromisoformat((ts or "").replace("Z", "+00:00"))
    except ValueError:
        return ""
    return stamp.astimezone().strftime("%H:%M")


# -- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """Which turns or calls to read: a time window, one session, some agents."""

    since: str = ""  # UTC ISO; at or after
    until: str = ""  # before
    session: str = ""
    agents: tuple[str, ...] = ()

    def where(self, alias: str) -> tuple[str, list[object]]:
        """The SQL conditions on a table aliased `alias` (turns or calls), and their values."""
        clauses = [f"{alias}.ts >= ?"]
        args: list[object] = [self.since]
        if self.until:
            clauses.append(f"{alias}.ts < ?")
            args.append(self.until)
        if self.session:
            clauses.append(f"{alias}.session = ?")
            args.append(self.session)
        if self.agents:  # `+`: the time index narrows better than calls' (agent, ...) ones
            clauses.append(f"+{alias}.agent IN ({','.join('?' * len(self.agents))})")
            args.extend(self.agents)
        return " AND ".join(clauses), args


def enabled_agents(agent: str = "") -> tuple[list[str], tuple[str, ...]]:
    """(the enabled agents, the ones to read): all of them, or the one asked for when it is
    enabled."""
    from brain.errors import UsageError
    from brain.recall import enable_command, store

    names = store.need_enabled()
    if not agent:
        return names, tuple(names)
    store.adapter(agent)
    if agent not in names:
        raise UsageError(f"{agent} transcripts are not enabled", f"run `{enable_command(agent)}`")
    return names, (agent,)


@dataclass(frozen=True)
class CallRow:
    rowid: int
    agent: str
    cid: str
    session: str
    turn: str  # the id of the turn before it
    pos: int | None  # that turn's place (turns.pos), None when it is not stored
    ts: str
    cwd: str
    kind: str
    tool: str
    text: str
    ok: bool | None
    code: int | None
    output: str


CALL_COLUMNS = (
    "c.id, c.agent, c.cid, c.session, c.turn, t.pos, c.ts, c.cwd, c.kind, c.tool, c.text,"
    " c.ok, c.code, c.output"
)
CALL_FROM = "calls c LEFT JOIN turns t ON t.tid = c.turn AND t.agent = c.agent"


def call_rows(conn: sqlite3.Connection, where: str, args: Sequence[object]) -> Iterator[CallRow]:
    """Calls matching a WHERE clause over `calls c` (built from constants by the caller)."""
    sql = f"SELECT {CALL_COLUMNS} FROM {CALL_FROM} WHERE {where}"  # noqa: S608
    for row in conn.execute(sql, list(args)):
        rowid, agent, cid, session, turn, pos, ts, cwd, kind, tool, text, ok, code, output = row
        known = None if ok is None else bool(ok)
        yield CallRow(
            rowid, agent, cid, session, turn, pos, ts, cwd, kind, tool, text, known, code, output
        )


def title_of(conn: sqlite3.Connection, agent: str, session: str) -> str | None:
    """The session's title, None when it has none."""
    row = conn.execute(
        "SELECT title FROM sessions WHERE agent = ? AND session = ?", (agent, session)
    ).fetchone()
    return str(row[0]) if row and row[0] else None


def turn_body(conn: sqlite3.Connection, rowid: int) -> str:
    row = conn.execute("SELECT body FROM fts WHERE rowid = ?", (rowid,)).fetchone()
    return str(row[0]) if row else ""


# -- proposals -------------------------------------------------------------------------------

PROPOSED_FILE = "recall-proposed"  # in the state dir: `vault<TAB>moment key`, one a line


def proposed_path() -> Path:
    from brain.config import state_dir

    return state_dir() / PROPOSED_FILE


def proposed(vault: Path) -> set[str]:
    """The moments already proposed to this vault (whatever became of the proposal since: a
    person who dropped one does not want it back)."""
    try:
        text = proposed_path().read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    except OSError as exc:
        from brain.errors import BrainError

        raise BrainError(
            f"cannot read {proposed_path()}: {exc.strerror}", "fix its permissions or delete it"
        ) from exc
    mine = str(vault)
    return {k for v, _, k in (line.partition("\t") for line in text.splitlines()) if v == mine}


def remember(vault: Path, keys: list[str]) -> None:
    if not keys:
        return
    path = proposed_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(f"{vault}\t{k}\n" for k in keys))


def project_of(cwd: str | None) -> str:
    """The name a folder's work goes by: its repository's folder name, else its own."""
    from brain.gitutil import repo_root

    if not cwd:
        return ""
    try:
        root = repo_root(Path(cwd))
    except OSError:
        root = None
    return (root or Path(cwd)).name
