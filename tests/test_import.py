"""`brain import`: Claude Code's memories and any Markdown list, through the inbox, idempotent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import brain, git

from brain.commands import import_ as importmod
from brain.commands import inbox as inboxmod
from brain.present.inbox import LINE_CHARS

IMPORT_KEYS = ["vault", "origin", "found_count", "proposed_count", "stripped", "items"]

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
        "**version 15** — Postgres: version 15 with `pg_stat_statements`",
        "**ruff format** — use `ruff format` before committing: it saves review time",
        "**deploy freeze** (aliases: freeze) — no deploys on Fridays — priya — 2025-01-03",
        "**token** — token: ghp_Z8kQ2mXv9LpR4tYw7NcB3sJd6HfA1eUo5iGq",
    ]
    assert importmod.list_items(LIST)[5] == (
        "**ordered item** — ordered item with a lazy continuation line"
    )


def test_import_file_proposes_each_item_once(vault: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(LIST, encoding="utf-8")
    run = brain("import", "--vault", str(vault), "--json", str(notes))
    assert run.code == 0, run
    doc = run.json()
    assert list(doc) == IMPORT_KEYS
    assert (doc["found_count"], doc["proposed_count"]) == (6, 5)
    actions = [i["action"] for i in doc["items"]]
    assert actions == ["proposed"] * 4 + ["refused", "proposed"]
    assert "credential" in doc["items"][4]["problem"]
    queued = inboxmod.proposals(vault)
    third = queued[3].markdown
    assert third.endswith(" — import notes.md — " + third.rsplit(" — ", 1)[1])
    assert (
        queued[6].markdown
        == "- **deploy freeze** (aliases: freeze) — no deploys on Fridays — priya — 2025-01-03"
    )
    again = brain("import", "--vault", str(vault), "--json", str(notes)).json()
    assert again["proposed_count"] == 0
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
    assert (doc["found_count"], doc["proposed_count"]) == (2, 2)
    bullets = [i["markdown"] for i in doc["items"]]
    assert bullets[0] == (
        "- **integration tests** — Integration tests must hit a real database, not mocks. "
        "Why: a mocked test passed while the migration failed. — claude-code memory "
        "feedback_testing.md — 2025-06-15"
    )
    assert bullets[1].startswith(
        "- **user role** — The user is a backend engineer who prefers Go. — claude-code memory "
        "user_role.md — "
    )
    again = brain("import", "--vault", str(vault), "--json", "claude", cwd=repo, env=env).json()
    assert again["proposed_count"] == 0
    assert [i["action"] for i in again["items"]] == ["queued", "queued"]


def test_import_claude_in_home_by_default(vault: Path, tmp_path: Path, isolated_env: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    _claude_memories(isolated_env / ".claude", repo)
    result = importmod.import_claude(vault, repo)
    assert result.proposed_count == 2


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


def _laughs(depth: int) -> str:
    """Front matter whose `name` is a list of nine aliases of a list of nine aliases ... `depth`
    deep: a few hundred bytes that stand for 9**depth strings."""
    lines, prev = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"], "a0"
    for i in range(1, depth):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*{prev}'] * 9)}]")
        prev = f"a{i}"
    return "---\n" + "\n".join(lines) + f"\nname: *{prev}\n---\n"


def test_a_memory_whose_front_matter_is_a_bomb_is_read_for_its_body(
    vault: Path, tmp_path: Path
) -> None:
    """A Claude Code memory file is written by another program: front matter nested past
    Python's stack (RecursionError: exit 3, an internal error) or made of aliases (str() of it
    spelt out every item: 12 GB and minutes at nine deep) is no front matter; the body is the
    fact. Five deep here, so that the old code's failure stays small."""
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "nested.md").write_text(
        "---\nname: " + "[" * 100_000 + "]" * 100_000 + "\n---\nDeploys go out on Tuesdays.\n",
        encoding="utf-8",
    )
    (folder / "laughs.md").write_text(_laughs(5) + "Staging uses the blue cluster.\n", "utf-8")
    run = brain("import", "--vault", str(vault), "--json", "claude", "--dir", str(folder))
    assert run.code == 0, run
    bullets = [i["markdown"] for i in run.json()["items"]]
    assert [b.split(" — ")[1] for b in bullets] == [
        "Staging uses the blue cluster.",
        "Deploys go out on Tuesdays.",
    ]
    assert all("lol" not in b and "[" not in b for b in bullets), bullets


def test_import_reads_at_most_a_megabyte(vault: Path, tmp_path: Path) -> None:
    inbox = (vault / "AI" / "INBOX.md").read_bytes()
    big = tmp_path / "big.md"
    big.write_text("- an item about okapis\n" * 60_000, encoding="utf-8")  # 1.4 MB
    run = brain("import", "--vault", str(vault), str(big), timeout=30)
    assert run.code == 1
    assert run.err == f"brain: {big} is 1.4 MB, more than the 1 MB brain imports at once " + (
        "(split it, or import the list you mean to review)\n"
    )
    if Path("/dev/zero").exists():  # a device never ends: read only as far as the cap
        run = brain("import", "--vault", str(vault), "/dev/zero", timeout=30)
        assert run.code == 1
        assert "/dev/zero holds more than the 1 MB brain imports at once" in run.err
    assert (vault / "AI" / "INBOX.md").read_bytes() == inbox


def test_the_inbox_holds_at_most_max_pending_proposals(vault: Path, tmp_path: Path) -> None:
    many = tmp_path / "many.md"
    many.write_text(
        "".join(f"- **okapi {i}** — okapi fact number {i}\n" for i in range(1_100)),
        encoding="utf-8",
    )
    run = brain("import", "--vault", str(vault), str(many))
    assert run.code == 0, run
    room = inboxmod.MAX_PENDING - 3  # the fixture's inbox holds three
    assert f"{room} proposals added to the inbox from {many} (1100 found)" in run.out
    assert f"{1_100 - room} more items not proposed: the inbox already holds 1000" in run.out
    assert len(run.out.splitlines()) == room + 2  # not a line for each item left out
    assert len(inboxmod.proposals(vault)) == inboxmod.MAX_PENDING
    run = brain("propose", "--vault", str(vault), "kiwi — a fruit")
    assert run.code == 1
    assert run.err == f"brain: not proposed: {inboxmod.FULL}\n"
    assert brain("inbox", "--vault", str(vault), "drop", "1").code == 0
    assert brain("propose", "--vault", str(vault), "kiwi — a fruit").code == 0


def test_control_characters_never_reach_the_inbox_or_the_terminal(
    vault: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(
        b"- build \x1b[31mfailed\x1b[0m on arm64 \xe2\x80\x94 a fact\n"
        b"- **nul** \xe2\x80\x94 a NUL\x00 byte and a bell\x07\n"
        b"- title \x1b]0;owned\x07 set \xe2\x80\x94 by OSC\n"
    )
    run = brain("import", "--vault", str(vault), "--json", str(notes))
    assert run.code == 0, run
    doc = run.json()
    assert (doc["proposed_count"], doc["stripped"]) == (3, 5)
    inbox = (vault / "AI" / "INBOX.md").read_text(encoding="utf-8")
    for bad in ("\x1b", "\x00", "\x07", "[31m", "owned"):
        assert bad not in inbox
    assert "- **build failed** — build failed on arm64 — a fact — import notes.md" in inbox
    text = brain("import", "--vault", str(vault), str(notes))
    assert "5 control characters (terminal escapes, NUL) left out of what" in text.out
    assert "\x1b" not in text.out + text.err


TOKEN = "ghp_" + "Q7wErTy1UiOp2AsDfGh3JkLz4XcVbN5mQwEr6T"


def _leaks(text: str) -> list[str]:
    """Runs of 8 characters of TOKEN's secret part that `text` shows."""
    secret = TOKEN[4:]
    return [secret[i : i + 8] for i in range(len(secret) - 7) if secret[i : i + 8] in text]


def test_a_huge_refused_item_is_one_short_line_naming_its_file_and_line(
    vault: Path, tmp_path: Path
) -> None:
    """A list item of 100,000 characters holding a credential was printed back whole on its
    Refused line; now one line: the file and line, why, the item's start (masked before it is
    cut: a credential cut in half is still masked), and what to do. --json keeps it whole."""
    huge = "- **huge one** — " + "word " * 20000 + TOKEN + "\n"
    # the cut falls inside the credential: half of it must not be shown as plain text
    straddling = "- **cut one** — " + "x" * (LINE_CHARS - 30) + " " + TOKEN + " and more\n"
    src = tmp_path / "notes.md"
    src.write_text("# facts\n\n- **fine one** — short fact\n" + huge + straddling, "utf-8")
    run = brain("import", str(src), "--vault", str(vault))
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert len(lines) == 4, run.out
    assert all(len(line) <= LINE_CHARS + 300 for line in lines), [len(line) for line in lines]
    refused = [line for line in lines if ": refused (" in line]
    assert [line.split(": refused (")[0] for line in refused] == [f"{src}:4", f"{src}:5"]
    assert all(line.endswith("; fix it there and import again") for line in refused)
    assert "- **huge one** — word word" in refused[0]
    assert _leaks(run.out) == []
    doc = brain("import", str(src), "--vault", str(vault), "--json").json()
    assert list(doc) == IMPORT_KEYS
    assert len(doc["items"][1]["markdown"]) > 100_000


def test_a_huge_proposal_is_listed_by_its_start_and_where_to_read_it(
    vault: Path, tmp_path: Path
) -> None:
    """A 100,000-character item is a valid bullet: proposing it echoed it whole, and so did
    every `brain inbox` after."""
    src = tmp_path / "long.md"
    src.write_text("- **long one** — " + "word " * 20000 + "\n", "utf-8")
    run = brain("import", str(src), "--vault", str(vault))
    assert run.code == 0, run.err
    assert len(run.out) < 1000
    assert "Proposed as #" in run.out
    listing = brain("inbox", "--vault", str(vault))
    assert listing.code == 0
    assert len(listing.out) < 5000
    inbox = (vault / "AI/INBOX.md").read_text(encoding="utf-8").split("\n")
    line = next(n for n, x in enumerate(inbox, 1) if "long one" in x)
    assert f"characters: read it whole at AI/INBOX.md:{line})" in listing.out


def test_list_items_at_names_the_line_each_item_starts_on() -> None:
    text = "# t\n\n```\n- not an item\n```\n\n- one\n  - two\n\n---\n\n1. three\n   lazy\n* four\n"
    assert [n for _, n in importmod.list_items_at(text)] == [7, 8, 12, 14]
    assert [i for i, _ in importmod.list_items_at(text)] == importmod.list_items(text)
    # what does not add up (a `- ` line inside an HTML block): no line rather than a wrong one
    assert [n for _, n in importmod.list_items_at("<div>\n- x\n</div>\n\n- one\n")] == [0]


def test_approving_or_dropping_a_huge_proposal_echoes_its_start(
    vault: Path, tmp_path: Path
) -> None:
    """`brain inbox approve` and `drop` printed the whole 100,000-character line back."""
    src = tmp_path / "long.md"
    src.write_text(
        "- **long one** — " + "word " * 20000 + "\n- **long two** — " + "w " * 50000, "utf-8"
    )
    assert brain("import", str(src), "--vault", str(vault)).code == 0
    numbers = [p.number for p in inboxmod.proposals(vault) if p.handle in ("long one", "long two")]
    approve = brain("inbox", "approve", str(numbers[0]), "--vault", str(vault))
    assert approve.code == 0, approve.err
    assert "long one" in approve.out
    assert len(approve.out) < 1000
    drop = brain("inbox", "drop", str(numbers[1] - 1), "--vault", str(vault))
    assert drop.code == 0, drop.err
    assert "Dropped #" in drop.out
    assert "long two" in drop.out
    assert len(drop.out) < 1000
