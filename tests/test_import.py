"""`brain import`: Claude Code's memories and any Markdown list, through the inbox, idempotent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import brain, git

from brain.commands import import_ as importmod
from brain.commands import inbox as inboxmod

IMPORT_KEYS = ["vault", "origin", "found", "proposed", "items"]

LIST = """# Notes

Prose is not a list.

- **Postgres** runs on *Cloud SQL*, see [the runbook](https://example.com/rb)
  - version 15 with `pg_stat_statements`
- use `ruff format` before committing: it saves review time
- **deploy freeze** (aliases: freeze) — no deploys on Fridays — priya — 2025-01-03
- token: ghp_Z8kQ2mXv9LpR4tYw7NcB3sJd6HfA1eUo5iGq

1. ordered item with a
   lazy continuation line
"""


def test_list_items_render_inline_markdown_to_plain_text() -> None:
    assert importmod.list_items(LIST)[:5] == [
        "**Postgres** — runs on Cloud SQL, see the runbook (https://example.com/rb)",
        "**version 15 with pg_stat_statements** — Postgres: version 15 with `pg_stat_statements`",
        "**use ruff format before** — use `ruff format` before committing: it saves review time",
        "**deploy freeze** (aliases: freeze) — no deploys on Fridays — priya — 2025-01-03",
        "**token** — token: ghp_Z8kQ2mXv9LpR4tYw7NcB3sJd6HfA1eUo5iGq",
    ]
    assert importmod.list_items(LIST)[5] == (
        "**ordered item with a** — ordered item with a lazy continuation line"
    )


def test_import_file_proposes_each_item_once(vault: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(LIST, encoding="utf-8")
    run = brain("import", "--vault", str(vault), "--json", str(notes))
    assert run.code == 0, run
    doc = run.json()
    assert list(doc) == IMPORT_KEYS
    assert (doc["found"], doc["proposed"]) == (6, 5)
    actions = [i["action"] for i in doc["items"]]
    assert actions == ["proposed"] * 4 + ["refused", "proposed"]
    assert "credential" in doc["items"][4]["problem"]
    queued = inboxmod.proposals(vault)
    assert queued[3].text.endswith(" — import notes.md — " + queued[3].text.rsplit(" — ", 1)[1])
    assert (
        queued[6].text
        == "- **deploy freeze** (aliases: freeze) — no deploys on Fridays — priya — 2025-01-03"
    )
    again = brain("import", "--vault", str(vault), "--json", str(notes)).json()
    assert again["proposed"] == 0
    assert len(inboxmod.proposals(vault)) == len(queued)
    assert "ghp_" not in (vault / "AI" / "INBOX.md").read_text(encoding="utf-8")


def test_import_a_missing_file(vault: Path) -> None:
    run = brain("import", "--vault", str(vault), "nope.md")
    assert run.code == 1
    assert "does not exist" in run.err


def _claude_memories(root: Path, repo: Path) -> Path:
    slug = "".join(c if c.isalnum() else "-" for c in str(repo.resolve()))
    folder = root / "projects" / slug / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(
        "- [User role](user_role.md) — backend engineer\n- [Testing](feedback_testing.md)\n",
        encoding="utf-8",
    )
    (folder / "user_role.md").write_text(
        "---\nname: User role\ndescription: the user is a backend engineer\ntype: user\n---\n\n"
        "The user is a **backend engineer** who prefers Go.\n",
        encoding="utf-8",
    )
    (folder / "feedback_testing.md").write_text(
        "---\nname: integration tests\ndescription: real db\ntype: feedback\n---\n\n"
        "Integration tests must hit a real database, not mocks.\n\n"
        "**Why:** a mocked test passed while the migration failed.\n",
        encoding="utf-8",
    )
    os.utime(folder / "feedback_testing.md", (1_750_000_000, 1_750_000_000))
    return folder


def test_import_claude_reads_the_memory_folder(vault: Path, tmp_path: Path) -> None:
    repo = tmp_path / "myrepo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    root = tmp_path / "claude-config"
    folder = _claude_memories(root, repo)
    env = {"CLAUDE_CONFIG_DIR": str(root)}
    run = brain("import", "--vault", str(vault), "--json", "claude", cwd=repo / "sub", env=env)
    assert run.code == 0, run
    doc = run.json()
    assert doc["origin"] == str(folder)
    assert (doc["found"], doc["proposed"]) == (2, 2)
    bullets = [i["bullet"] for i in doc["items"]]
    assert bullets[0] == (
        "- **integration tests** — Integration tests must hit a real database, not mocks. "
        "Why: a mocked test passed while the migration failed. — feedback — 2025-06-15"
    )
    assert bullets[1].startswith(
        "- **User role** — The user is a backend engineer who prefers Go. — user — "
    )
    again = brain("import", "--vault", str(vault), "--json", "claude", cwd=repo, env=env).json()
    assert again["proposed"] == 0
    assert [i["action"] for i in again["items"]] == ["queued", "queued"]


def test_import_claude_in_home_by_default(vault: Path, tmp_path: Path, isolated_env: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    _claude_memories(isolated_env / ".claude", repo)
    result = importmod.import_claude(vault, repo)
    assert result.proposed == 2


def test_import_claude_without_memories(vault: Path, tmp_path: Path) -> None:
    run = brain("import", "--vault", str(vault), "claude", cwd=tmp_path)
    assert run.code == 1
    assert "--dir" in run.err


@pytest.mark.parametrize(
    ("text", "fields", "body"),
    [
        ("---\nname: a\ntype: user\n---\nbody\n", {"name": "a", "type": "user"}, "body\n"),
        ("no front matter\n", {}, "no front matter\n"),
        ("---\nname: [unclosed\n---\nx", {}, "x"),
    ],
)
def test_front_matter(text: str, fields: dict[str, str], body: str) -> None:
    assert importmod.front_matter(text) == (fields, body)
