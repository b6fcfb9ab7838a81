"""`brain verify`: the claims a bullet makes that this machine can check, and whether they hold.

A bullet's date means "last known true"; verify is how brain learns that a fact still is. The
claims it reads:

- a path: absolute, `~/...`, or relative to a repository the bullet names (by its folder's name,
  in the bullet's words or its section); a relative path is only taken from a code span, or when
  it ends in a file extension (`and/or`, `CI/CD`, `Europe/Istanbul` are not paths); `REPO:PATH`
  in a code span is a file of the repository of that folder name;
- a vault file: a relative path whose first folder is one of the vault's (`AI/INBOX.md`), or a
  bare `NAME.md`;
- a `brain` subcommand it names in a code span (`brain find --json`);
- a commit hash (7 to 40 hex digits, with a digit and a letter), looked up with pygit2 in the
  repositories here: the vault's, those recall's sessions ran in, the one verify runs in and
  those brain.drift read;
- a command it names in a code span of two or more words (`go test -race ./...`): on PATH.

Each claim is `passed`, `failed` or `cannot check`. A path is failed only when this machine could
hold it: its folder is here, or a repository here should hold it. A path on another machine
(`/Users/bob/...` here on Linux, a folder that is not here) and a repository that is not here are
"cannot check", never "failed".

A bullet's verdict is read from the claims this machine could check; a claim it cannot check
neither speaks for the bullet nor against it: `passed` (every checked claim passed), `failed`
(every checked claim failed), `mixed` (some passed, some failed), `unknown` (none could be
checked), `none` (no claim). A bullet that names a path on two machines is never checkable whole
on either, and passes on each where its own claims hold.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from brain import claims, gitutil
from brain.config import CORE_FILES
from brain.options import NAMES
from brain.vault import Unit
from brain.vocab import split_aliases

PASSED, FAILED, UNKNOWN = "passed", "failed", "cannot check"


@dataclass(frozen=True)
class Claim:
    kind: str  # path | vault-file | brain | commit | command
    text: str  # as the bullet says it
    status: str  # passed | failed | cannot check
    detail: str  # what was found (where, or why it cannot be checked)


@dataclass(frozen=True)
class Checked:
    path: str
    line: int
    handle: str
    date: str
    claims: tuple[Claim, ...]
    verdict: str  # of the claims checked here: passed, failed, mixed; unknown, none (no claim)


@dataclass(frozen=True)
class VerifyResult:
    vault: str
    checked: int  # bullets read
    with_claims: int  # bullets that make a claim this machine reads (checkable here or not)
    passed_count: int  # bullets whose every claim checked here passed (verdict passed)
    failed_count: int  # bullets with a failed claim
    bullets: tuple[Checked, ...]  # the bullets that make claims
    dated: tuple[str, ...]  # with --apply: path:line of the bullets dated today
    repositories: tuple[str, ...]  # where relative paths and commits were looked for


@dataclass
class Context:
    """What the checks look things up in, gathered once per run."""

    vault: Path
    repos: dict[str, Path]  # folder name (folded) -> repository root
    vault_dirs: frozenset[str] = frozenset()
    vault_names: frozenset[str] = frozenset()  # basenames of the vault's Markdown files
    _ids: dict[Path, list[str] | None] = field(default_factory=dict)
    _which: dict[str, bool] = field(default_factory=dict)


def bullets(conn: sqlite3.Connection) -> list[Unit]:
    """The core files' bullets in the index, in file order."""
    marks = ",".join("?" * len(CORE_FILES))
    rows = conn.execute(
        "SELECT path, line, kind, text, section, handle, aliases, source, date, raw FROM units"  # noqa: S608
        f" WHERE kind = 'bullet' AND path IN ({marks}) ORDER BY path, line",
        CORE_FILES,
    ).fetchall()
    return [
        Unit(path, line, kind, text, section, handle, split_aliases(aliases), source, date, raw)
        for path, line, kind, text, section, handle, aliases, source, date, raw in rows
    ]


def repositories(vault: Path) -> dict[str, Path]:
    """The repositories here, by folder name: the vault's and recall's sessions'
    (brain.drift.repositories), the one brain runs in, and those drift read (a `brain reindex`
    run in them): the ones whose files `code changed since` counts are the ones checked."""
    from brain.drift import in_reach, read_before
    from brain.settings import current

    return in_reach(vault, Path(current().cwd), read_before(vault))


def context(vault: Path, repos: dict[str, Path] | None = None) -> Context:
    from brain.vault import vault_files

    files = vault_files(vault)
    dirs = frozenset(f.split("/", 1)[0] for f in files if "/" in f)
    names = frozenset(f.rsplit("/", 1)[-1].casefold() for f in files)
    return Context(vault, repositories(vault) if repos is None else repos, dirs, names)


# --- reading claims ------------------------------------------------------------------------------


claims_of = claims.claims_of  # the parser lives in the core: brain/claims.py


# --- checking ------------------------------------------------------------------------------------


def named_repos(row: Unit, ctx: Context) -> list[Path]:
    """The repositories here that the bullet names (brain.claims.named_repos)."""
    return claims.named_repos(row, ctx.repos)


def check(kind: str, token: str, row: Unit, ctx: Context) -> Claim:
    if kind == "brain":
        sub = token.split()[1]
        if sub in NAMES:
            return Claim(kind, token, PASSED, "a brain command")
        return Claim(kind, token, FAILED, f"brain has no `{sub}` command")
    if kind == "command":
        return _command(token, ctx)
    if kind == "commit":
        return _commit(token, row, ctx)
    if kind == "vault-file":
        if token.casefold() in ctx.vault_names or (ctx.vault / "AI" / token).exists():
            return Claim(kind, token, PASSED, "in the vault")
        return Claim(kind, token, FAILED, "no such file in the vault")
    return _path(token, row, ctx)


def _command(program: str, ctx: Context) -> Claim:
    if program not in ctx._which:
        ctx._which[program] = shutil.which(program) is not None
    if ctx._which[program]:
        return Claim("command", program, PASSED, "on PATH")
    return Claim("command", program, FAILED, "not on PATH")


def _exists(path: str) -> bool:
    """os.path, not pathlib: a sweep checks thousands of paths."""
    try:
        return os.path.exists(path)  # noqa: PTH110
    except (OSError, ValueError):
        return False


def _path(token: str, row: Unit, ctx: Context) -> Claim:
    named = claims.EXPLICIT.match(token)
    if named:  # `payments:src/retry.py`
        from brain.vocab import fold

        repo = ctx.repos.get(fold(named.group(1)))
        if repo is None:
            return Claim("path", token, UNKNOWN, f"no repository {named.group(1)} here")
        if ".." in named.group(2).split("/"):  # a file beside it is none of its (as drift reads)
            return Claim(
                "path", token, FAILED, f"climbs out of {repo} (`..`): name it from its root"
            )
        if _exists(os.path.join(repo, named.group(2))):  # noqa: PTH118
            return Claim("path", token, PASSED, f"in {repo}")
        return Claim("path", token, FAILED, f"missing from {repo}")
    clean = token.rstrip("/")
    if token.startswith(("/", "~/")):
        target = os.path.expanduser(clean)  # noqa: PTH111
        parent = os.path.dirname(target)  # noqa: PTH120
        if _exists(target):
            return Claim("path", token, PASSED, "exists")
        if _exists(parent):
            return Claim("path", token, FAILED, f"missing from {parent}")
        for repo in ctx.repos.values():
            if target.startswith(f"{repo}{os.sep}"):
                return Claim("path", token, FAILED, f"missing from the repository {repo}")
        return Claim("path", token, UNKNOWN, "not on this machine (its folder is not here)")
    rel = clean.removeprefix("./")
    first = rel.split("/", 1)[0]
    if first in ctx.vault_dirs or first == "AI":
        if _exists(os.path.join(ctx.vault, rel)):  # noqa: PTH118
            return Claim("vault-file", token, PASSED, "in the vault")
        return Claim("vault-file", token, FAILED, "missing from the vault")
    repos = named_repos(row, ctx)
    if not repos:
        return Claim("path", token, UNKNOWN, "names no repository here")
    for repo in repos:
        if _exists(os.path.join(repo, rel)):  # noqa: PTH118
            return Claim("path", token, PASSED, f"in {repo}")
    return Claim("path", token, FAILED, f"missing from {', '.join(str(r) for r in repos)}")


COMMITS_LISTED = 200_000  # a repository with more commits is asked one hash at a time


def _commit_ids(root: Path, ctx: Context) -> list[str] | None:
    """Every commit id reachable from the repository's refs, sorted, once per run (gitutil)."""
    if root not in ctx._ids:
        ctx._ids[root] = gitutil.commit_ids(root, COMMITS_LISTED)
    return ctx._ids[root]


def _has_commit(root: Path, sha: str, ctx: Context) -> bool:
    import bisect

    ids = _commit_ids(root, ctx)
    if ids is None:
        return False
    if ids:
        k = bisect.bisect_left(ids, sha)
        return k < len(ids) and ids[k].startswith(sha)
    return gitutil.is_commit(root, sha)


def _commit(sha: str, row: Unit, ctx: Context) -> Claim:
    repos = named_repos(row, ctx)
    order = repos + [r for r in ctx.repos.values() if r not in repos]
    for root in order:
        if _has_commit(root, sha, ctx):
            return Claim("commit", sha, PASSED, f"in {root}")
    if repos:
        return Claim("commit", sha, FAILED, f"not in {', '.join(str(r) for r in repos)}")
    return Claim("commit", sha, UNKNOWN, "in no repository here (it may be in one elsewhere)")


def verdict(claims: Iterable[Claim]) -> str:
    """What the claims checked here say (see the module's docstring): a claim this machine
    cannot check is left out, so `passed` and `cannot check` is `passed`, not `mixed`."""
    states = [c.status for c in claims]
    if not states:
        return "none"
    checked = {s for s in states if s != UNKNOWN}
    if not checked:
        return "unknown"
    if checked == {PASSED}:
        return "passed"
    if checked == {FAILED}:
        return "failed"
    return "mixed"


def check_rows(
    rows: Iterable[Unit], ctx: Context, deadline: float | None = None
) -> tuple[list[Checked], bool]:
    """The bullets that make claims, checked; and whether `deadline` (monotonic) stopped it."""
    import time

    out: list[Checked] = []
    for n, row in enumerate(rows):
        if deadline is not None and n % 200 == 0 and time.monotonic() > deadline:
            return out, True
        found = claims_of(row)
        if not found:
            continue
        claims = tuple(check(kind, token, row, ctx) for kind, token in found)
        out.append(Checked(row.path, row.line, row.handle, row.date, claims, verdict(claims)))
    return out, False


# --- the command ---------------------------------------------------------------------------------


def select(rows: list[Unit], handles: list[str]) -> list[Unit]:
    """The rows whose handle or an alias is one of `handles` (folded); all when none given."""
    if not handles:
        return rows
    from brain.vocab import handle_key

    wanted = {handle_key(h) for h in handles}
    picked = [r for r in rows if wanted & {handle_key(n) for n in (r.handle, *r.aliases)}]
    if not picked:
        from brain.errors import BrainError

        raise BrainError(
            f"no bullet has the handle or alias {', '.join(repr(h) for h in handles)}",
            "run `brain locate WORDS` to find the handle",
        )
    return picked


def verify(vault: Path, handles: list[str] | None = None, *, apply: bool = False) -> VerifyResult:
    from brain import index

    conn = index.open_index(vault)
    try:
        rows = bullets(conn)
    finally:
        conn.close()
    picked = select(rows, handles or [])
    ctx = context(vault)
    checked, _ = check_rows(picked, ctx)
    dated: tuple[str, ...] = ()
    if apply:
        dated = tuple(date_bullets(vault, [c for c in checked if c.verdict == "passed"]))
    return VerifyResult(
        str(vault),
        len(picked),
        len(checked),
        sum(c.verdict == "passed" for c in checked),
        sum(any(x.status == FAILED for x in c.claims) for c in checked),
        tuple(checked),
        dated,
        tuple(str(p) for p in ctx.repos.values()),
    )


def date_bullets(vault: Path, checked: list[Checked]) -> list[str]:
    """Date today each bullet (a line edit; one already dated today is left alone); returns
    path:line of those changed."""
    import datetime as dt

    from brain.edits import edit_lines

    today = dt.date.today().isoformat()

    def edit(c: Checked) -> Callable[[str], str | None]:
        return lambda line: redate(line, today) if line.endswith(c.date) else None

    edits = [(c.path, c.line, edit(c)) for c in checked if c.date != today]
    return [f"{rel}:{line}" for rel, line in edit_lines(vault, edits)]


def redate(line: str, date: str) -> str:
    """A bullet's line with its date (the last field) replaced."""
    from brain.vocab import SEP

    head, _, _ = line.rstrip().rpartition(SEP)
    return f"{head}{SEP}{date}"
