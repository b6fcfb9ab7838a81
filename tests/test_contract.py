"""The JSON contract: every `--json` answer is one object whose keys come in a fixed order.

Agents and scripts parse these objects; a renamed, dropped or reordered key is a breaking change
and must show up here (and in README.md's JSON table) first.
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, ROOT, brain

V = str(FIXTURE_VAULT)

FIND_KEYS = ["query", "count", "omitted", "hits"]
HIT_KEYS = [
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
]
REINDEX_KEYS = [
    "vault",
    "full",
    "files",
    "changed",
    "removed",
    "units",
    "bullets",
    "problems",
    "built",
    "model",
    "embedded",
    "ms",
]
LINT_KEYS = ["ok", "strict", "files", "bullets", "problems"]
PRIME_KEYS = [
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
]
PROBLEM_KEYS = ["path", "line", "message"]
VERSION_KEYS = ["version", "commit", "package", "python"]
SYNC_KEYS = [
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
    "retry",
    "line",
    "ms",
]
CONFLICT_KEYS = ["path", "line", "lines"]
SYNC_STATUS_KEYS = [
    "vault",
    "sync",
    "why",
    "remote",
    "url",
    "branch",
    "changes",
    "ahead",
    "behind",
    "fetched",
    "offline_until",
    "last",
    "last_at",
]
ERROR_KEYS = ["error"]


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
        assert re.fullmatch(r"(\d{4}-\d{2}-\d{2})?", hit["date"])
        line = (
            (FIXTURE_VAULT / hit["path"]).read_text(encoding="utf-8").split("\n")[hit["line"] - 1]
        )
        if hit["kind"] == "bullet":
            assert line.startswith(f"- **{hit['handle']}**")
            assert hit["text"] in line
            assert line.endswith(f" — {hit['date']}")
        else:
            assert hit["handle"] == ""
            assert line.strip()
            first_words = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).split()[:3]
            assert hit["text"].split()[:3] == first_words
    assert kinds == {"bullet", "prose"}


def test_find_json_without_hits() -> None:
    doc = json_of("find", "--vault", V, "--json", "xylophonist", code=1)
    assert doc == {"query": "xylophonist", "count": 0, "omitted": 0, "hits": []}


def test_find_json_is_utf8_not_escaped() -> None:
    run = brain("find", "--vault", V, "--json", "odeme")
    assert "Ödeme" in run.out
    assert "\\u00d6" not in run.out


@pytest.mark.parametrize("command", ["reindex"])
def test_reindex_json_keys(vault: Path, command: str) -> None:
    doc = json_of(command, "--vault", str(vault), "--json")
    assert list(doc) == REINDEX_KEYS
    assert doc["vault"] == str(vault.resolve())
    assert isinstance(doc["full"], bool)
    assert all(isinstance(doc[k], int) for k in ("files", "units", "bullets", "problems"))
    assert isinstance(doc["changed"], list)
    assert isinstance(doc["removed"], list)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z", doc["built"])
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
    assert all(isinstance(v, str) for v in doc.values())


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


def test_lint_staged_outside_git_is_an_error_object(vault: Path) -> None:
    run = brain("lint", "--vault", str(vault), "--staged", "--json")
    assert run.code == 1
    assert list(run.json()) == ERROR_KEYS
    assert "not a git repository" in run.json()["error"]


def _readme_table() -> dict[str, list[str]]:
    """README.md's table under `## JSON`: row name -> the keys it lists, in order."""
    readme = ROOT / "README.md"
    if not readme.exists():
        pytest.skip("README.md is not written yet")
    text = readme.read_text(encoding="utf-8")
    if "\n## JSON\n" not in text:
        pytest.skip("README.md has no JSON section yet")
    section = text.split("\n## JSON\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and line.startswith("|") and not cells[1].startswith("---"):
            rows[cells[0]] = re.findall(r"`([a-z_]+)`", cells[1].split("(")[0])
    return rows


@pytest.mark.parametrize(
    ("row", "keys"),
    [
        ("`find`", FIND_KEYS),
        ("`find` hit", HIT_KEYS),
        ("`reindex`", REINDEX_KEYS),
        ("`sync` / `sync connect`", SYNC_KEYS),
        ("`sync` conflict", CONFLICT_KEYS),
        ("`sync status` / `on` / `off`", SYNC_STATUS_KEYS),
        ("`lint`", LINT_KEYS),
        ("`prime`", PRIME_KEYS),
        ("`version`", VERSION_KEYS),
        ("error", ERROR_KEYS),
    ],
)
def test_readme_documents_the_same_keys(row: str, keys: list[str]) -> None:
    table = _readme_table()
    assert row in table, f"README.md's JSON table has no row {row}"
    assert table[row] == keys
