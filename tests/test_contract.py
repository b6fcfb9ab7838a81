"""The JSON contract: every `--json` answer is one object whose keys come in a fixed order.

Agents and scripts parse these objects; a renamed, dropped or reordered key is a breaking change
and must show up here (and in docs/json.md's JSON table) first.
"""

from __future__ import annotations

import importlib
import re
import shutil
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, ROOT, brain

from brain.present import json_fields

V = str(FIXTURE_VAULT)

# README row -> the keys of that JSON object, in order. One table: docs/json.md's `## JSON` table
# must list the same rows with the same keys, and every command below answers with them.
KEYS: dict[str, list[str]] = {
    "`find`": ["query", "count", "omitted", "hits", "evidence", "cut_count"],
    "`find` hit": [
        "path",
        "line",
        "kind",
        "handle",
        "aliases",
        "text",
        "section",
        "source",
        "date",
        "score",
        "match",
        "superseded_by",
        "unreviewed",
        "code_changed",
    ],
    "`code_changed` (`find` hit, `pack` bullet)": ["commit_count", "last_date", "at_least"],
    "`reindex`": [
        "vault",
        "full",
        "file_count",
        "changed",
        "removed",
        "unit_count",
        "bullet_count",
        "problem_count",
        "built_at",
        "model",
        "embedded",
        "ms",
    ],
    "`sync` / `sync connect`": [
        "vault",
        "mode",
        "outcome",
        "remote",
        "branch",
        "wrote",
        "received",
        "sent",
        "changed",
        "conflicts",
        "waiting",
        "recovered",
        "joined",
        "reason",
        "retry_at",
        "summary",
        "ms",
    ],
    "`sync` conflict": ["path", "line", "lines"],
    "`sync status` / `on` / `off`": [
        "vault",
        "sync",
        "why",
        "remote",
        "url",
        "branch",
        "changes",
        "ahead",
        "behind",
        "fetched_at",
        "retry_at",
        "last_summary",
        "last_at",
    ],
    "`lint`": ["ok", "strict", "files", "bullet_count", "problems"],
    "problem (`lint`, `secrets` skipped)": ["path", "line", "message"],
    "`secrets`": ["ok", "files", "findings", "gitleaks", "skipped", "not_scanned"],
    "`secrets` finding": ["path", "line", "rule", "masked", "inside"],
    "`secrets --history`": ["ok", "commit_count", "blob_count", "findings", "skipped"],
    "`secrets --history` finding": ["commit", "date", "path", "line", "rule", "masked", "inside"],
    "`secrets --outgoing`": [
        "ok",
        "commit_count",
        "blob_count",
        "findings",
        "unscanned",
        "first_bad",
        "hint",
    ],
    "`secrets --outgoing` finding": ["commit", "path", "line", "rule", "masked", "inside"],
    "`secrets --outgoing` not scanned": ["commit", "path", "why"],
    "`install`": [
        "vault",
        "origin",
        "created",
        "git_init",
        "starter",
        "commit",
        "recorded",
        "moved_from",
        "path_link",
        "git_hooks",
        "index",
        "claude",
        "agents",
        "sync",
        "next",
    ],
    "`install` index": ["path", "file_count", "bullet_count", "built_at", "ms"],
    "`install --dry-run`": ["vault", "origin", "steps", "next"],
    "`install --dry-run` step": ["what", "path", "action", "detail"],
    "`uninstall`": [
        "vault",
        "recorded",
        "path_link",
        "git_hooks",
        "indexes",
        "claude",
        "agents",
        "workers",
        "left",
    ],
    "agent hooks (`claude`, each of `agents`, each of `hooks on` / `off`'s `harnesses`)": [
        "agent",
        "settings",
        "action",
        "hooks",
        "command",
        "message",
    ],
    "`hooks on` / `off`": ["action", "harnesses"],
    "`hooks status`": ["harnesses"],
    "`hooks status` harness": [
        "agent",
        "label",
        "found",
        "settings",
        "pack",
        "prime",
        "settle",
        "problem",
        "note",
    ],
    "`pack`": [
        "project",
        "vault",
        "budget",
        "tokens",
        "bullets",
        "rules",
        "omitted",
        "handoff",
        "handoff_superseded_by",
        "state_files",
        "built_at",
        "cached",
        "text",
    ],
    "`pack` bullet": [
        "path",
        "line",
        "handle",
        "aliases",
        "text",
        "section",
        "source",
        "date",
        "code_changed",
    ],
    "`prime`": [
        "query",
        "mode",
        "session",
        "count",
        "omitted",
        "repeated",
        "hint",
        "tokens",
        "hits",
        "text",
    ],
    "`propose`": [
        "vault",
        "markdown",
        "to",
        "action",
        "number",
        "updates",
        "current",
        "problem",
        "branch",
        "sent",
        "pr",
        "note",
    ],
    "`inbox`": ["vault", "path", "proposals", "recovered", "note"],
    "`inbox` proposal": [
        "number",
        "line",
        "markdown",
        "to",
        "handle",
        "problem",
        "updates",
        "current",
        "kind",
        "by",
        "at",
        "branch",
    ],
    "`inbox approve`": [
        "vault",
        "number",
        "markdown",
        "path",
        "line",
        "replaced",
        "remaining",
        "commit",
        "pushed",
    ],
    "`inbox drop`": ["vault", "number", "markdown", "remaining"],
    "`export`": ["repo", "project", "check", "ok", "targets"],
    "`export` target": ["agent", "path", "kind", "action"],
    "`import`": ["vault", "origin", "found_count", "proposed_count", "stripped", "items"],
    "`recall`": ["query", "count", "hits"],
    "`recall` hit": ["id", "session", "title", "role", "at", "cwd", "snippet", "score", "agent"],
    "`recall --full`": ["id", "agent", "session", "title", "role", "at", "cwd", "body"],
    "`recall --sync`": [
        "agents",
        "full",
        "file_count",
        "read",
        "turn_count",
        "skipped_count",
        "bytes",
        "ms",
    ],
    "`recall --sources`": ["sources"],
    "`recall --sources` source": ["name", "label", "enabled", "root", "exists", "turn_count"],
    "`recall --enable` / `--disable`": ["agent", "enabled", "sources", "removed_count"],
    "`recall sessions`": ["query", "count", "sessions"],
    "`recall sessions` session": [
        "agent",
        "session",
        "title",
        "cwd",
        "start_at",
        "end_at",
        "turn_count",
        "turn",
        "score",
    ],
    "`howto`": ["query", "count", "hits", "proposal"],
    "`howto` hit": [
        "command",
        "ok",
        "code",
        "at",
        "cwd",
        "agent",
        "session",
        "title",
        "turn",
        "score",
        "runs",
        "output",
    ],
    "`lessons`": ["since_at", "count", "moments", "proposals"],
    "`lessons` moment": [
        "kind",
        "key",
        "agent",
        "session",
        "title",
        "cwd",
        "at",
        "lesson",
        "turns",
        "failed",
        "error",
        "worked",
    ],
    "`lessons` turn": ["id", "role", "at", "text"],
    "`lessons` proposal": ["key", "action", "number", "markdown", "problem"],
    "`day`": ["date", "session_count", "turn_count", "file_count", "commit_count", "repos"],
    "`day` repo": ["repo", "project", "git", "note", "sessions", "files", "commits"],
    "`day` session": ["agent", "session", "title", "start_at", "end_at", "turn_count"],
    "`day` file": ["path", "writes", "last_at"],
    "`day` commit": ["sha", "at", "author", "summary"],
    "`week`": [
        "first_date",
        "last_date",
        "project",
        "session_count",
        "turn_count",
        "file_count",
        "commit_count",
        "days",
    ],
    "`ledger`": [
        "vault",
        "since_at",
        "caller",
        "core_tokens",
        "lookups",
        "tokens",
        "saved",
        "callers",
        "sessions",
        "days",
    ],
    "`ledger` caller": ["caller", "lookups", "tokens", "saved"],
    "`ledger` session": ["session", "caller", "lookups", "tokens", "saved", "last_at"],
    "`ledger` day": ["date", "lookups", "tokens", "saved"],
    "`log`": ["vault", "since_at", "mode", "lookups", "misses", "open", "answered", "callers"],
    "`log` open": ["query", "count", "last_date", "callers"],
    "`log` answered": ["query", "count", "last_date", "hit_count"],
    "`log` caller": ["caller", "misses"],
    "`doctor`": [
        "ok",
        "vault",
        "checks",
        "frequent",
        "older_notes",
        "duplicates",
        "superseded",
        "failed_claims",
        "duplicate_handles",
        "corrected",
    ],
    "`doctor` check": ["name", "status", "detail", "fix"],
    "`doctor` frequent": ["handle", "path", "line", "count", "queries"],
    "`doctor` older note": [
        "path",
        "line",
        "date",
        "mentions",
        "phrase",
        "bullet_locator",
        "handle",
        "bullet_date",
    ],
    "`doctor` duplicate": ["handles", "locators", "score", "method"],
    "`doctor` superseded": ["path", "date", "line", "paragraphs", "weight", "bullets"],
    "`doctor` superseded bullet": ["handle", "locator", "date"],
    "`doctor` failed claim": ["path", "line", "handle", "date", "failures", "claim_count"],
    "`doctor` duplicate handle": ["handle", "locators", "dates"],
    "`doctor` corrected": ["handle", "path", "line", "corrections", "session_count", "said"],
    "`verify`": [
        "vault",
        "checked",
        "with_claims",
        "passed_count",
        "failed_count",
        "bullets",
        "dated",
        "repositories",
    ],
    "`verify` bullet": ["path", "line", "handle", "date", "claims", "verdict"],
    "`verify` claim": ["kind", "text", "status", "detail"],
    "`learn`": ["vault", "lookups", "query_count", "proposed", "unused", "applied", "stopped"],
    "`learn` proposed": ["path", "line", "handle", "alias", "lookups", "session_count", "queries"],
    "`learn` unused": ["path", "line", "handle", "alias"],
    "`tend`": [
        "vault",
        "dry_run",
        "daily",
        "quick",
        "ran",
        "applied",
        "proposed",
        "waiting_count",
        "checked",
        "stopped",
        "ms",
    ],
    "`tend` proposed": ["op", "key", "summary", "why", "targets"],
    "`tend` applied": ["kind", "path", "line", "handle", "detail"],
    "`review`": [
        "vault",
        "mode",
        "mode_changed",
        "path",
        "unreviewed_count",
        "set_by",
        "proposals_mode",
    ],
    "`locate`": ["query", "count", "matches"],
    "`locate` match": ["path", "line", "handle", "aliases", "date", "markdown"],
    "`locate` (no handle)": ["vault", "origin"],
    "`update`": ["action", "previous", "current", "wheel", "check", "check_ok"],
    "`version`": ["version", "commit", "package", "python"],
    "error": ["error"],
}

AGENT_HOOKS = "agent hooks (`claude`, each of `agents`, each of `hooks on` / `off`'s `harnesses`)"

# The rows whose object is a result dataclass's fields, in field order (a renamed field is a
# renamed key: this pins them without running a command).
DATACLASSES: dict[str, str] = {
    "`find`": "brain.present.hits:FindDoc",
    "`find` hit": "brain.present.hits:HitDoc",
    "`code_changed` (`find` hit, `pack` bullet)": "brain.drift:Drift",
    "`prime`": "brain.present.hits:PrimeDoc",
    "`lint`": "brain.present.checks:LintDoc",
    "`reindex`": "brain.commands.reindex:ReindexResult",
    "`sync` / `sync connect`": "brain.gitsync:SyncResult",
    "`sync` conflict": "brain.gitsync:Conflict",
    "`sync status` / `on` / `off`": "brain.commands.sync:SyncStatus",
    "problem (`lint`, `secrets` skipped)": "brain.vault:Problem",
    "`secrets`": "brain.secrets_scan:SecretsResult",
    "`secrets` finding": "brain.secrets:Finding",
    "`secrets --history`": "brain.commands.secrets:HistoryResult",
    "`secrets --history` finding": "brain.commands.secrets:HistoryFinding",
    "`secrets --outgoing`": "brain.secrets:CommitScan",
    "`secrets --outgoing` finding": "brain.secrets:CommitFinding",
    "`secrets --outgoing` not scanned": "brain.secrets:CommitUnscanned",
    "`install`": "brain.commands.install:InstallResult",
    "`install` index": "brain.commands.install:IndexBuilt",
    "`install --dry-run`": "brain.commands.install:InstallPlan",
    "`install --dry-run` step": "brain.commands.install:Planned",
    "`uninstall`": "brain.commands.install:UninstallResult",
    AGENT_HOOKS: "brain.agent_hooks:AgentHooks",
    "`hooks on` / `off`": "brain.commands.hooks:HooksResult",
    "`hooks status`": "brain.commands.hooks:HooksStatus",
    "`hooks status` harness": "brain.agent_hooks:HarnessState",
    "`pack`": "brain.commands.pack:PackResult",
    "`pack` bullet": "brain.commands.pack:PackBullet",
    "`propose`": "brain.commands.propose:ProposeResult",
    "`inbox`": "brain.commands.inbox:InboxResult",
    "`inbox` proposal": "brain.commands.inbox:Proposal",
    "`inbox approve`": "brain.commands.inbox:ApproveResult",
    "`inbox drop`": "brain.commands.inbox:DropResult",
    "`export`": "brain.commands.export:ExportResult",
    "`export` target": "brain.commands.export:ExportTarget",
    "`import`": "brain.commands.import_:ImportResult",
    "`recall`": "brain.present.recall:RecallDoc",
    "`recall` hit": "brain.recall.search:Hit",
    "`recall --full`": "brain.commands.recall:FullTurn",
    "`recall --sync`": "brain.recall.store:SyncReport",
    "`recall --sources` source": "brain.commands.recall:Source",
    "`recall --enable` / `--disable`": "brain.commands.recall:Toggle",
    "`recall sessions`": "brain.commands.recall:SessionsResult",
    "`recall sessions` session": "brain.commands.recall:Session",
    "`howto`": "brain.present.past:HowtoDoc",
    "`howto` hit": "brain.commands.howto:HowtoHit",
    "`lessons`": "brain.present.past:LessonsDoc",
    "`lessons` moment": "brain.recall.lessons:Moment",
    "`lessons` turn": "brain.recall.lessons:TurnRef",
    "`lessons` proposal": "brain.commands.lessons:Proposal",
    "`day`": "brain.commands.day:DayResult",
    "`day` repo": "brain.recall.activity:RepoDay",
    "`day` session": "brain.recall.activity:SessionRow",
    "`day` file": "brain.recall.activity:FileRow",
    "`day` commit": "brain.recall.activity:CommitRow",
    "`week`": "brain.commands.day:WeekResult",
    "`ledger`": "brain.commands.ledger:Ledger",
    "`ledger` caller": "brain.commands.ledger:CallerRow",
    "`ledger` session": "brain.commands.ledger:SessionRow",
    "`ledger` day": "brain.commands.ledger:DayRow",
    "`log`": "brain.commands.log:LogResult",
    "`log` open": "brain.commands.log:Miss",
    "`log` answered": "brain.commands.log:Answered",
    "`log` caller": "brain.commands.log:CallerMisses",
    "`doctor`": "brain.commands.doctor:DoctorResult",
    "`doctor` check": "brain.health:Check",
    "`doctor` frequent": "brain.commands.advisories:Frequent",
    "`doctor` older note": "brain.commands.advisories:OlderNote",
    "`doctor` superseded": "brain.commands.advisories:Superseded",
    "`doctor` superseded bullet": "brain.commands.advisories:Newer",
    "`doctor` failed claim": "brain.commands.advisories:FailedClaim",
    "`doctor` duplicate handle": "brain.commands.advisories:SameHandle",
    "`doctor` corrected": "brain.commands.advisories:Corrected",
    "`verify`": "brain.commands.verify:VerifyResult",
    "`verify` bullet": "brain.commands.verify:Checked",
    "`verify` claim": "brain.commands.verify:Claim",
    "`learn`": "brain.commands.learn:LearnResult",
    "`learn` proposed": "brain.commands.learn:AliasProposal",
    "`learn` unused": "brain.commands.learn:UnusedAlias",
    "`tend`": "brain.commands.tend:TendResult",
    "`tend` proposed": "brain.commands.tend:Proposed",
    "`tend` applied": "brain.commands.tend:Applied",
    "`review`": "brain.commands.review:ReviewResult",
    "`locate`": "brain.commands.locate:LocateResult",
    "`locate` match": "brain.commands.locate:Located",
    "`locate` (no handle)": "brain.commands.locate:VaultFound",
    "`update`": "brain.commands.update:UpdateResult",
    "`version`": "brain.commands.version:VersionResult",
}

# Where an object's list holds objects of another row: (row, key) -> that row.
NESTED: dict[tuple[str, str], str] = {
    ("`find`", "hits"): "`find` hit",
    ("`find` hit", "code_changed"): "`code_changed` (`find` hit, `pack` bullet)",
    ("`pack` bullet", "code_changed"): "`code_changed` (`find` hit, `pack` bullet)",
    ("`prime`", "hits"): "`find` hit",
    ("`sync` / `sync connect`", "conflicts"): "`sync` conflict",
    ("`lint`", "problems"): "problem (`lint`, `secrets` skipped)",
    ("`secrets`", "findings"): "`secrets` finding",
    ("`secrets`", "skipped"): "problem (`lint`, `secrets` skipped)",
    ("`secrets`", "not_scanned"): "problem (`lint`, `secrets` skipped)",
    ("`secrets --history`", "findings"): "`secrets --history` finding",
    ("`secrets --history`", "skipped"): "problem (`lint`, `secrets` skipped)",
    ("`secrets --outgoing`", "findings"): "`secrets --outgoing` finding",
    ("`secrets --outgoing`", "unscanned"): "`secrets --outgoing` not scanned",
    ("`hooks status`", "harnesses"): "`hooks status` harness",
    ("`install --dry-run`", "steps"): "`install --dry-run` step",
    ("`hooks on` / `off`", "harnesses"): AGENT_HOOKS,
    ("`pack`", "bullets"): "`pack` bullet",
    ("`pack`", "rules"): "`pack` bullet",
    ("`inbox`", "proposals"): "`inbox` proposal",
    ("`export`", "targets"): "`export` target",
    ("`import`", "items"): "`propose`",
    ("`recall`", "hits"): "`recall` hit",
    ("`recall --sources`", "sources"): "`recall --sources` source",
    ("`recall sessions`", "sessions"): "`recall sessions` session",
    ("`howto`", "hits"): "`howto` hit",
    ("`lessons`", "moments"): "`lessons` moment",
    ("`lessons`", "proposals"): "`lessons` proposal",
    ("`lessons` moment", "turns"): "`lessons` turn",
    ("`day`", "repos"): "`day` repo",
    ("`day` repo", "sessions"): "`day` session",
    ("`day` repo", "files"): "`day` file",
    ("`day` repo", "commits"): "`day` commit",
    ("`week`", "days"): "`day`",
    ("`ledger`", "callers"): "`ledger` caller",
    ("`ledger`", "sessions"): "`ledger` session",
    ("`ledger`", "days"): "`ledger` day",
    ("`log`", "open"): "`log` open",
    ("`log`", "answered"): "`log` answered",
    ("`log`", "callers"): "`log` caller",
    ("`doctor`", "checks"): "`doctor` check",
    ("`doctor`", "frequent"): "`doctor` frequent",
    ("`doctor`", "older_notes"): "`doctor` older note",
    ("`doctor`", "duplicates"): "`doctor` duplicate",
    ("`doctor`", "superseded"): "`doctor` superseded",
    ("`doctor` superseded", "bullets"): "`doctor` superseded bullet",
    ("`doctor`", "failed_claims"): "`doctor` failed claim",
    ("`doctor`", "duplicate_handles"): "`doctor` duplicate handle",
    ("`doctor`", "corrected"): "`doctor` corrected",
    ("`verify`", "bullets"): "`verify` bullet",
    ("`verify` bullet", "claims"): "`verify` claim",
    ("`learn`", "proposed"): "`learn` proposed",
    ("`learn`", "unused"): "`learn` unused",
    ("`learn`", "applied"): "`learn` proposed",
    ("`tend`", "proposed"): "`tend` proposed",
    ("`tend`", "applied"): "`tend` applied",
    ("`locate`", "matches"): "`locate` match",
}
# The keys whose "" is a value, not "none" (README: JSON), each with why. Any other "" (or -1)
# in a JSON answer is a "none" that should be null: `shape` fails on it.
EMPTY_OK: dict[tuple[str, str], str] = {
    ("`pack`", "text"): "what the hook prints: nothing, when the budget holds not even the rules",
    ("`prime`", "text"): "exactly what the hook prints: nothing, when nothing stands out",
}
FIND_KEYS = KEYS["`find`"]
HIT_KEYS = KEYS["`find` hit"]
PRIME_KEYS = KEYS["`prime`"]
REINDEX_KEYS = KEYS["`reindex`"]
LINT_KEYS = KEYS["`lint`"]
PROBLEM_KEYS = KEYS["problem (`lint`, `secrets` skipped)"]
VERSION_KEYS = KEYS["`version`"]
SYNC_KEYS = KEYS["`sync` / `sync connect`"]
CONFLICT_KEYS = KEYS["`sync` conflict"]
SYNC_STATUS_KEYS = KEYS["`sync status` / `on` / `off`"]
ERROR_KEYS = KEYS["error"]
DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# an instant: ISO 8601 with its offset (`Z` or +hh:mm), to the second or finer
INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def shape(doc: Any, row: str, seen: set[str] | None = None) -> set[str]:
    """Assert `doc` (and every object nested in its lists) has its row's keys in order, days
    and instants in their one format, and no count where a list belongs; the rows seen."""
    seen = set() if seen is None else seen
    assert isinstance(doc, dict), (row, doc)
    assert list(doc) == KEYS[row], row
    seen.add(row)
    for key, value in doc.items():
        assert_not_a_none_marker(row, key, value)
        if value is None:
            continue
        if key == "date" or key.endswith("_date"):
            assert DAY.fullmatch(value), (row, key, value)
        if key == "at" or key.endswith("_at"):
            assert INSTANT.fullmatch(value), (row, key, value)
        if key.endswith("_count"):
            assert isinstance(value, int), (row, key, value)
        inner = NESTED.get((row, key))
        if inner is not None and isinstance(value, dict):  # one object, not a list of them
            shape(value, inner, seen)
        elif inner is not None:
            assert isinstance(value, list), (row, key)
            for item in value:
                shape(item, inner, seen)
        else:
            no_none_markers(value, f"{row} {key}")
    return seen


def assert_not_a_none_marker(row: str, key: str, value: Any) -> None:
    """None is null: never "" (unless EMPTY_OK says why that key's "" is a value), never -1, no
    line 0 (lines count from 1), and a list of strings holds no ""."""
    if value == "":
        assert (row, key) in EMPTY_OK, f'{row} {key}: "" where none is null'
    assert value != -1 or isinstance(value, bool), f"{row} {key}: -1 where none is null"
    assert not (key == "line" and value == 0), f"{row}: line 0 where none is null"
    if isinstance(value, list):
        assert "" not in value, f'{row} {key}: "" in a list'


def no_none_markers(doc: Any, where: str = "") -> None:
    """`doc` and everything in it, for a JSON object that has no row of its own in KEYS."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            assert_not_a_none_marker(where, key, value)
            no_none_markers(value, f"{where} {key}")
    elif isinstance(doc, list):
        for item in doc:
            no_none_markers(item, where)


def json_of(*args: str, code: int = 0) -> dict[str, Any]:
    run = brain(*args)
    assert run.code == code, run
    assert run.out.endswith("\n")
    assert run.out.count("\n") == 1, "exactly one JSON object on one line"
    doc: dict[str, Any] = run.json()
    return doc


def test_find_json_keys_and_types() -> None:
    doc = json_of("find", "--vault", V, "--json", "--limit", "20", "paynova timeout")
    assert list(doc) == FIND_KEYS
    assert doc["query"] == "paynova timeout"
    assert doc["count"] == len(doc["hits"]) > 1
    assert isinstance(doc["omitted"], int)
    kinds = set()
    for hit in doc["hits"]:
        assert list(hit) == HIT_KEYS
        assert isinstance(hit["path"], str)
        assert not hit["path"].startswith("/")
        assert "\\" not in hit["path"]
        assert (FIXTURE_VAULT / hit["path"]).is_file()
        assert isinstance(hit["line"], int)
        assert hit["line"] >= 1
        assert hit["kind"] in ("bullet", "prose")
        kinds.add(hit["kind"])
        assert isinstance(hit["aliases"], list)
        assert isinstance(hit["score"], float)
        assert isinstance(hit["match"], list)
        assert hit["date"] is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", hit["date"])
        line = (
            (FIXTURE_VAULT / hit["path"]).read_text(encoding="utf-8").split("\n")[hit["line"] - 1]
        )
        if hit["kind"] == "bullet":
            assert line.startswith(f"- **{hit['handle']}**")
            assert hit["text"] in line
            assert line.endswith(f" — {hit['date']}")
        else:
            assert hit["handle"] is None  # none is null
            assert line.strip()
            first_words = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).split()[:3]
            assert hit["text"].split()[:3] == first_words
    assert kinds == {"bullet", "prose"}


def test_find_json_without_hits() -> None:
    doc = json_of("find", "--vault", V, "--json", "xylophonist", code=1)
    assert doc == {
        "query": "xylophonist",
        "count": 0,
        "omitted": 0,
        "hits": [],
        "evidence": "none",
        "cut_count": 0,
    }


def test_find_json_is_utf8_not_escaped() -> None:
    run = brain("find", "--vault", V, "--json", "--all", "odeme")
    assert "Ödeme" in run.out
    assert "\\u00d6" not in run.out


@pytest.mark.parametrize("command", ["reindex"])
def test_reindex_json_keys(vault: Path, command: str) -> None:
    doc = json_of(command, "--vault", str(vault), "--json")
    assert list(doc) == REINDEX_KEYS
    assert doc["vault"] == str(vault.resolve())
    assert isinstance(doc["full"], bool)
    counts = ("file_count", "unit_count", "bullet_count", "problem_count")
    assert all(isinstance(doc[k], int) for k in counts)
    assert isinstance(doc["changed"], list)
    assert isinstance(doc["removed"], list)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z", doc["built_at"])
    assert isinstance(doc["ms"], float)
    assert list(json_of(command, "--vault", str(vault), "--json", "--full")) == REINDEX_KEYS


def test_sync_json_keys(git_vault: Path) -> None:
    from brain.commands.sync import SyncStatus
    from brain.gitsync import Conflict, SyncResult

    doc = json_of("sync", "--vault", str(git_vault), "--json", code=1)  # not connected
    assert list(doc) == SYNC_KEYS
    assert doc["outcome"] == "not-connected"
    assert [f.name for f in fields(SyncResult)] == SYNC_KEYS
    assert [f.name for f in fields(Conflict)] == CONFLICT_KEYS
    for action in ("status", "off", "on"):
        assert list(json_of("sync", action, "--vault", str(git_vault), "--json")) == (
            SYNC_STATUS_KEYS
        )
    assert [f.name for f in fields(SyncStatus)] == SYNC_STATUS_KEYS


def test_lint_json_keys(vault: Path) -> None:
    clean = json_of("lint", "--vault", str(vault), "--json")
    assert list(clean) == LINT_KEYS
    assert clean["ok"] is True
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- **x** — no date\n", "utf-8")
    broken = json_of("lint", "--vault", str(vault), "--json", code=1)
    assert list(broken) == LINT_KEYS
    assert broken["ok"] is False
    (problem,) = broken["problems"]
    assert list(problem) == PROBLEM_KEYS
    assert problem["path"] == "AI/MEMORY.md"
    assert isinstance(problem["line"], int)


def test_version_json_keys() -> None:
    doc = json_of("version", "--json")
    assert list(doc) == VERSION_KEYS
    assert all(isinstance(v, str) for k, v in doc.items() if k != "commit")
    assert doc["commit"] is None or isinstance(doc["commit"], str)


def test_version_commit_not_known_is_null(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local build whose checkout git cannot read: `commit` is null, not ""."""
    import subprocess

    from brain import gitutil
    from brain.commands import version

    def fails(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.CompletedProcess(args, 128, b"", b"fatal: not a git repository")

    monkeypatch.setattr(gitutil, "run", fails)
    assert version.version().commit is None  # a local build (tests run from the checkout)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["find", "--json", "libgit2"], 1),  # no vault anywhere
        (["find", "--vault", "/nonexistent", "--json", "x"], 1),
        (["find", "--vault", V, "--json", "--", "!!!"], 2),
        (["find", "--vault", V, "--json", "--limit", "0", "x"], 2),
        (["reindex", "--vault", "/nonexistent", "--json"], 1),
        (["lint", "--vault", "/nonexistent", "--json"], 1),
        (["find", "--json", "--bogus", "x"], 2),
    ],
)
def test_error_object(args: list[str], code: int) -> None:
    run = brain(*args)
    assert run.code == code, run
    assert run.err == ""
    doc = run.json()
    assert list(doc) == ERROR_KEYS
    assert isinstance(doc["error"], str)
    assert doc["error"]
    assert "\n" not in doc["error"]


def test_a_problem_with_a_whole_file_has_a_null_line(vault: Path, tmp_path: Path) -> None:
    """A file lint cannot read as a whole (a link out of the vault, bytes that are no text) is a
    problem with no line: null, never 0; every other problem names its line from 1."""
    import random

    (tmp_path / "away.md").write_text("# Away\n", encoding="utf-8")
    (vault / "notes" / "away.md").symlink_to(tmp_path / "away.md")
    noise = random.Random(7).randbytes(20_000)  # noqa: S311 - reproducible, not crypto
    (vault / "notes" / "blob.md").write_bytes(noise)
    doc = json_of("lint", "--vault", str(vault), "--json", code=1)
    shape(doc, "`lint`")
    lines = {p["path"]: p["line"] for p in doc["problems"]}
    assert lines["notes/away.md"] is None
    assert "notes/blob.md" in lines


def test_lint_staged_outside_git_is_an_error_object(vault: Path) -> None:
    run = brain("lint", "--vault", str(vault), "--staged", "--json")
    assert run.code == 1
    assert list(run.json()) == ERROR_KEYS
    assert "not a git repository" in run.json()["error"]


def _readme_table() -> dict[str, list[str]]:
    """docs/json.md's table under `## JSON`: row name -> the keys it lists, in order."""
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    section = text.split("\n## JSON\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and line.startswith("|") and cells[0] not in ("command", "---"):
            rows[cells[0]] = re.findall(r"`([a-z_]+)`", cells[1].split("(")[0])
    return rows


def test_readme_documents_every_row() -> None:
    """docs/json.md's JSON table and KEYS list the same rows with the same keys."""
    table = _readme_table()
    assert set(table) == set(KEYS), set(table) ^ set(KEYS)
    for row, keys in KEYS.items():
        assert table[row] == keys, row


def _class(row: str) -> Any:
    module, name = DATACLASSES[row].split(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("row", sorted(DATACLASSES))
def test_result_fields_are_the_keys(row: str) -> None:
    """A result dataclass's fields are its JSON keys: renaming one is a contract change."""
    assert [f.name for f in json_fields(_class(row))] == KEYS[row]


@pytest.mark.parametrize("row", sorted(DATACLASSES))
def test_no_key_defaults_to_a_none_marker(row: str) -> None:
    """None is null in the types too: no JSON field defaults to "" or -1, and a field that
    may hold None says so (`X | None`), so mypy keeps a "" from standing in for it."""
    for f in json_fields(_class(row)):
        assert f.default not in ("", -1), (row, f.name)
        if f.default is None:
            assert "None" in str(f.type), (row, f.name)


def test_one_name_one_kind() -> None:
    """Across every result dataclass, a key that is a list somewhere is never a number or a
    string elsewhere: a count is `<noun>_count`, never the plural that names a list. (An
    object and a list of such objects may share a name: `install`'s `git_hooks` is the one
    vault's, `uninstall`'s one per vault.)"""
    kinds: dict[str, set[str]] = {}
    for target in DATACLASSES.values():
        module, name = target.split(":")
        cls = getattr(importlib.import_module(module), name)
        for f in fields(cls):
            text = str(f.type)
            if text.startswith(("tuple[", "list[")):
                kinds.setdefault(f.name, set()).add("list")
            elif text.split(" |", 1)[0] in ("int", "float", "str", "bool"):
                kinds.setdefault(f.name, set()).add("scalar")
    mixed = {k for k, v in kinds.items() if len(v) > 1}
    assert not mixed


def test_every_vault_command_answers_its_rows(git_vault: Path) -> None:
    """Each reporting command on the fixture vault: its keys in order, nested objects too."""
    v = ("--vault", str(git_vault), "--json")
    seen: set[str] = set()

    def check(row: str, *args: str, code: int | None = 0) -> dict[str, Any]:
        run = brain(*args, *v)
        assert code is None or run.code == code, run
        doc: dict[str, Any] = run.json()
        shape(doc, row, seen)
        return doc

    check("`reindex`", "reindex")
    check("`find`", "find", "paynova timeout")
    check("`find`", "find", "xylophonist", code=1)
    check("`prime`", "prime", "paynova timeout")
    pack = check("`pack`", "pack", "payments")
    assert pack["bullets"]
    assert pack["state_files"] is not None
    none = check("`pack`", "pack", "no-such-project")
    assert (none["state_files"], none["handoff"]) == (None, None)
    proposed = check("`propose`", "propose", "- **contract kiwi** — a fact — 2026-12-01")
    assert (proposed["to"], proposed["problem"]) == (None, None)
    again = check("`propose`", "propose", "- **contract kiwi** — a fact — 2026-12-01", code=None)
    assert (again["action"], again["number"]) == ("queued", None)  # added nowhere: null
    inbox = check("`inbox`", "inbox")
    assert inbox["recovered"] is None
    check("`inbox approve`", "inbox", "approve", str(proposed["number"]))
    check("`inbox drop`", "inbox", "drop", "1")
    check("`ledger`", "ledger", "--since", "7d")
    check("`log`", "log")
    check("`doctor`", "doctor", code=None)
    check("`verify`", "verify", code=None)
    check("`learn`", "learn")
    check("`tend`", "tend", "--dry-run")
    check("`review`", "review")
    found = check("`locate`", "locate", "paynova timeouts")
    assert found["count"] == 1
    assert check("`locate`", "locate", "no such bullet", code=1)["matches"] == []
    check("`lint`", "lint")
    check("`secrets`", "secrets")
    check("`secrets --history`", "secrets", "--history")
    check("`secrets --outgoing`", "secrets", "--outgoing")
    check("`sync` / `sync connect`", "sync", code=1)
    check("`sync status` / `on` / `off`", "sync", "status")
    nested = {row for (parent, _), row in NESTED.items() if parent in seen}
    reached = {
        "`find` hit",
        "`pack` bullet",
        "`inbox` proposal",
        "`ledger` caller",
        "`ledger` session",
        "`ledger` day",
        "`doctor` check",
        "`doctor` older note",
        "`verify` bullet",
        "`verify` claim",
        "`tend` proposed",
        "`locate` match",
    }
    assert reached <= seen, reached - seen
    assert seen <= set(KEYS)
    assert nested


def test_transcript_commands_answer_their_rows(tmp_path: Path, isolated_env: Path) -> None:
    """recall, howto, lessons, day and week on the history fixtures, nested objects too."""
    history = ROOT / "testdata" / "transcripts" / "history"
    shutil.copytree(history / "claude", tmp_path / "claude")
    shutil.copytree(history / "codex", tmp_path / "codex")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex")}
    seen: set[str] = set()

    def check(row: str, *args: str, code: int = 0) -> dict[str, Any]:
        run = brain(*args, "--json", env=env)
        assert run.code == code, run
        doc: dict[str, Any] = run.json()
        shape(doc, row, seen)
        return doc

    check("`recall --enable` / `--disable`", "recall", "--enable", "claude")
    check("`recall --enable` / `--disable`", "recall", "--enable", "codex")
    check("`recall --sync`", "recall", "--sync")
    check("`recall --sources`", "recall", "--sources")
    hits = check("`recall`", "recall", "database")["hits"]
    assert hits
    check("`recall --full`", "recall", "--full", hits[0]["id"])
    assert check("`recall`", "recall", "xylophonist", code=1)["hits"] == []
    check("`howto`", "howto", "connect", "to", "the", "dev", "database")
    assert check("`howto`", "howto", "zyxwvut", "qwertz", code=1)["hits"] == []
    check("`lessons`", "lessons", "--since", "2026-11-16")
    check("`day`", "day", "2026-11-17")
    check("`week`", "week", "--since", "2026-11-16")
    want = {"`recall` hit", "`howto` hit", "`lessons` moment", "`lessons` turn", "`day` repo"}
    assert want <= seen, want - seen


def test_setup_commands_answer_their_rows(tmp_path: Path, isolated_env: Path) -> None:
    """hooks, export and pack outside a repository: their keys, and null for none."""
    seen: set[str] = set()

    def check(row: str, *args: str, cwd: Path | None = None) -> dict[str, Any]:
        run = brain(*args, "--json", cwd=cwd)
        assert run.code == 0, run
        doc: dict[str, Any] = run.json()
        shape(doc, row, seen)
        return doc

    (isolated_env / ".codex").mkdir()  # found: listed, with a note on trusting hooks
    status = check("`hooks status`", "hooks", "status")["harnesses"]
    assert [(h["agent"], h["problem"]) for h in status] == [("codex", None)]
    assert (
        check("`hooks status`", "hooks", "status", "--harness", "claude")["harnesses"][0]["note"]
        is None
    )
    (on,) = check("`hooks on` / `off`", "hooks", "on", "--harness", "claude")["harnesses"]
    assert (on["action"], on["message"]) == ("added", None)
    check("`hooks on` / `off`", "hooks", "off", "--harness", "claude")
    off = check("`hooks on` / `off`", "hooks", "off", "--harness", "claude")["harnesses"][0]
    assert (off["action"], off["command"], off["message"]) == ("absent", None, None)
    outside = check("`pack`", "pack", "--vault", V, cwd=tmp_path)
    assert (outside["project"], outside["vault"], outside["text"]) == (None, None, "")
    repo = tmp_path / "payments"
    repo.mkdir()
    (repo / ".git").mkdir()  # enough for the repository's root to be found
    check("`export`", "export", "claude", "--vault", V, cwd=repo)
    assert {"`hooks status` harness", AGENT_HOOKS, "`export` target"} <= seen


def test_locate_without_a_handle_json_keys(vault: Path) -> None:
    shape(json_of("locate", "--vault", str(vault), "--json"), "`locate` (no handle)")
