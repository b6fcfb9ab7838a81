"""Is everything brain relies on in place: doctor's health checks, each with the command that fixes
it (a `fail` makes `brain doctor` exit 1, a `warn` does not).

The vault, its git state, brain's git hooks (core.hooksPath -> brain's generated hooks, with the ID
line and an interpreter that still exists), the index (present, built after the last commit and
the last edit), the embedding model (loads, and the index has its vectors), SQLite with FTS5, and
brain's hooks in the agent programs (pack, prime and settle in each). What in the vault wants
attention is brain.commands.advisories.
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# agent_hooks, githooks and gitutil are imported by the checks that use them
from brain import config, index
from brain.errors import BrainError
from brain.text import listed, plural

if TYPE_CHECKING:
    from brain.agent_hooks import HarnessState

MIN_SQLITE = (3, 27, 0)  # FTS5's `remove_diacritics 2`


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str | None  # the command or step that fixes it (None when there is nothing to fix)


def checks(vault_option: str | None = None) -> tuple[Path | None, list[Check]]:
    """The vault (None when there is none to use) and every check, in the order doctor shows."""
    found: list[Check] = []
    try:
        vault: Path | None = config.resolve_vault(vault_option)
        found.append(Check("vault", "ok", str(vault), None))
    except BrainError as exc:
        vault = None
        found.append(Check("vault", "fail", exc.message, exc.hint or None))
    if vault is not None:
        found += _git_checks(vault)
        found.append(_index_check(vault))
    found.append(_model_check(vault))
    found.append(_sqlite_check())
    found.append(_agent_hooks_check())
    return vault, found


def _git(vault: Path, *args: str) -> str | None:
    from brain import gitutil

    proc = gitutil.run(vault, *args, check=False)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None


def _git_checks(vault: Path) -> list[Check]:
    from brain import gitutil

    if not gitutil.is_repo(vault):
        return [
            Check(
                "git",
                "fail",
                f"{vault} is not a git repository: no history, no hooks",
                f"brain install --init {shlex.quote(str(vault))}",
            )
        ]
    status = _git(vault, "status", "--porcelain", "--untracked-files=normal") or ""
    changed = [line for line in status.splitlines() if line.strip()]
    if changed:
        git = Check(
            "git",
            "warn",
            plural(len(changed), "uncommitted change"),
            f"git -C {shlex.quote(str(vault))} add -A && git -C {shlex.quote(str(vault))} "
            "commit -m 'notes'",
        )
    else:
        git = Check("git", "ok", "clean", None)
    return [git, _hooks_check(vault)]


def _hooks_check(vault: Path) -> Check:
    from brain import githooks, shipped

    current = _git(vault, "config", "--local", "--get", "core.hooksPath")
    if not current:
        return Check("hooks", "fail", "brain's git hooks are not installed", "brain install")
    folder = Path(current).expanduser()
    folder = folder if folder.is_absolute() else vault / folder
    problems = []
    for name in githooks.BRAIN_HOOKS:
        hook = folder / name
        if not hook.is_file():
            problems.append(f"{name} is missing")
            continue
        if not shipped.is_brain_file(hook):
            problems.append(f"{name} is not brain's (no ID line)")
            continue
        if not os.access(hook, os.X_OK):
            problems.append(f"{name} is not executable")
        python = baked_interpreter(hook)
        if python and not (Path(python).is_file() and os.access(python, os.X_OK)):
            problems.append(f"{name} runs {python}, which no longer exists")
    if problems:
        return Check(
            "hooks", "fail", f"core.hooksPath is {current}: " + "; ".join(problems), "brain install"
        )
    return Check(
        "hooks", "ok", f"core.hooksPath is {current} ({', '.join(githooks.BRAIN_HOOKS)})", None
    )


def baked_interpreter(hook: Path) -> str:
    """The interpreter path `brain install` baked into a generated hook (`BRAIN_PY=...`)."""
    try:
        text = hook.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines()[:40]:
        if line.startswith("BRAIN_PY="):
            try:
                parts = shlex.split(line[len("BRAIN_PY=") :])
            except ValueError:
                return ""
            return parts[0] if parts else ""
    return ""


def _stamp_time(stamp: str) -> float:
    try:
        return (
            dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC).timestamp()
        )
    except ValueError:
        return 0.0


def _index_check(vault: Path) -> Check:
    from brain import gitutil

    path = config.index_path(vault)
    if not path.exists():
        return Check("index", "warn", "no index yet (the next find builds it)", "brain reindex")
    try:
        conn = index.connect(vault)
        try:
            built = index.built(conn)
            units = conn.execute("SELECT count(*) FROM units").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return Check(
            "index",
            "warn",
            f"{path} is unreadable (it is rebuilt on demand)",
            "brain reindex --full",
        )
    when = _stamp_time(built)
    commit = _git(vault, "log", "-1", "--format=%ct") if gitutil.is_repo(vault) else None
    newest = 0.0
    from brain.vault import vault_files

    for rel in [*vault_files(vault), config.SYNONYMS]:
        try:
            newest = max(newest, (vault / rel).stat().st_mtime)
        except OSError:
            continue
    if commit and float(commit) > when:
        return Check("index", "warn", f"built {built}, before the last commit", "brain reindex")
    if newest > when:
        return Check("index", "warn", f"built {built}, before the last edit", "brain reindex")
    return Check("index", "ok", f"{plural(units, 'unit')}, built {built}", None)


def _model_check(vault: Path | None) -> Check:
    from brain import semantic

    try:
        provider, options = semantic.embed_settings()
    except BrainError as exc:
        return Check("model", "fail", exc.message, exc.hint or None)
    if provider == "none":
        return Check("model", "ok", "keyword search only (embedding provider: none)", None)
    from brain.embed import EmbedError, load_embedder

    try:
        embedder = load_embedder(provider, options, cache_dir=config.data_dir() / "models")
        if embedder is not None:
            embedder.embed(["brain doctor"])  # an HTTP provider is only reached here
    except EmbedError as exc:
        return Check(
            "model",
            "fail",
            f"{provider}: {exc}",
            "fix the model as the message says, or set BRAIN_EMBED=none for keyword search",
        )
    if embedder is None:
        return Check("model", "ok", "keyword search only (embedding provider: none)", None)
    detail = f"{provider}: {embedder.model_id} loads"
    if vault is not None and config.index_path(vault).exists():
        try:
            conn = index.connect(vault)
            try:
                model = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
                missing = semantic.missing(conn, embedder.model_id)
            finally:
                conn.close()
        except sqlite3.DatabaseError:
            return Check("model", "ok", detail, None)
        # an index of no units (the starter vault install just made) lacks no vector
        if missing and (model is None or model[0] != embedder.model_id):
            return Check(
                "model", "warn", f"{detail}; the index has no vectors for it", "brain reindex"
            )
        if missing:
            return Check(
                "model",
                "warn",
                f"{detail}; {plural(missing, 'unit has', 'units have')} no vector yet",
                "brain reindex",
            )
    return Check("model", "ok", detail, None)


def _sqlite_check() -> Check:
    version = sqlite3.sqlite_version
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute(
                "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')"
            )
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return Check(
            "sqlite",
            "fail",
            f"SQLite {version} has no usable FTS5 ({exc})",
            "use a Python built against SQLite 3.27 or newer with FTS5 (python.org or uv builds)",
        )
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        return Check(
            "sqlite", "fail", f"SQLite {version} is older than 3.27", "use a newer Python build"
        )
    return Check("sqlite", "ok", f"SQLite {version} with FTS5", None)


def _agent_hooks_check() -> Check:
    """brain's three hooks (pack, prime, settle) in every agent program on this machine, as
    `brain hooks status` reads them, and the program each hook starts still there. Claude Code
    is the agent install always wires: a hook missing there fails; in another agent found here it
    warns (it may have come after install, or been turned off on purpose)."""
    from brain import agent_hooks

    states = [agent_hooks.state(n) for n in agent_hooks.AGENTS]
    shown = [s for s in states if s.found or s.problem or _on(s)]
    if not shown:
        labels = ", ".join(a.label for a in agent_hooks.AGENTS.values())
        return Check("agent-hooks", "warn", f"no agent program found ({labels})", None)
    status, parts, fixes = "ok", [], []
    for s in shown:
        off = [role for role in agent_hooks.ROLES if getattr(s, role) in ("off", "partial")]
        gone = _gone(agent_hooks.brain_commands(s.agent)) if not s.problem else []
        if s.problem:
            bad, part = "fail", s.problem
            fixes.append(f"fix {s.settings}, then brain hooks on --harness {s.agent}")
        elif gone:
            bad, part = "fail", f"{s.label}'s hooks run {gone[0]}, which no longer exists"
            fixes.append("brain hooks on")
        elif off:
            bad = "fail" if s.agent == "claude" else "warn"
            part = f"{s.label}: {listed(off)} not registered in {s.settings}"
            fixes.append(f"brain hooks on --harness {s.agent}")
        elif turned_off := agent_hooks.turned_off(s.agent):
            # registered, but the agent's own setting runs no hook at all
            bad, part = "warn", f"{s.label}: {turned_off[0]}, so brain's hooks never run"
            fixes.append(turned_off[1])
        else:
            bad = "ok"
            on = [role for role in agent_hooks.ROLES if getattr(s, role) == "on"]
            part = f"{s.label}: {listed(on)}"
        parts.append(part)
        status = max(status, bad, key=("ok", "warn", "fail").index)
    fix = "; ".join(dict.fromkeys(fixes)) or None
    return Check("agent-hooks", status, "; ".join(parts), fix)


def _on(s: HarnessState) -> bool:
    return any(getattr(s, role) in ("on", "partial") for role in ("pack", "prime", "settle"))


def _gone(commands: tuple[str, ...]) -> list[str]:
    """The programs, named by absolute path, that brain's hook commands start and that no
    longer exist (brain moved, or its environment was removed)."""
    gone = []
    for command in commands:
        try:
            exe = shlex.split(command)[0]
        except (ValueError, IndexError):
            continue
        if "/" in exe and not Path(exe).exists():
            gone.append(exe)
    return list(dict.fromkeys(gone))
