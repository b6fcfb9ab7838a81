"""The vault: where it is (resolution order, errors) and what it holds (bullets and prose)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, Run, brain

from brain import vault as vaultmod
from brain.config import recorded_vault_file, resolve_vault
from brain.errors import BrainError

LIBGIT2 = "AI/LEARNINGS.md:7"  # the bullet whose handle is `libgit2` in the fixture vault


def locators(run: Run) -> list[str]:
    """`path:line` of each terse hit line."""
    return [line.split(" ", 1)[0] for line in run.out.splitlines()]


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_vault(root: Path, files: dict[str, str] | None = None) -> Path:
    """A small vault: empty core files plus `files`."""
    for core in ("AI/MEMORY.md", "AI/LEARNINGS.md", "AI/TUNINGS.md"):
        write(root, core, "")
    for rel, text in (files or {}).items():
        write(root, rel, text)
    return root


def record_vault(path: Path | str) -> None:
    target = recorded_vault_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"{path}\n", encoding="utf-8")


def assert_one_line_error(run: Run, code: int = 1) -> None:
    assert run.code == code, run
    assert run.out == ""
    assert run.err.startswith("brain: "), run.err
    assert run.err.count("\n") == 1, run.err
    assert "Traceback" not in run.err


# --- where the vault is -------------------------------------------------------------------------


def test_vault_option_beats_env_and_recorded(vault: Path, tmp_path: Path) -> None:
    record_vault(tmp_path / "recorded-nowhere")
    run = brain("find", "--vault", str(vault), "libgit2", env={"BRAIN_VAULT": str(tmp_path / "no")})
    assert run.code == 0, run
    assert locators(run)[0] == LIBGIT2


def test_env_used_without_option_and_beats_recorded(vault: Path, tmp_path: Path) -> None:
    record_vault(tmp_path / "recorded-nowhere")
    run = brain("find", "libgit2", env={"BRAIN_VAULT": str(vault)})
    assert run.code == 0, run
    assert locators(run)[0] == LIBGIT2


def test_recorded_vault_used_last(vault: Path) -> None:
    record_vault(vault)
    run = brain("find", "libgit2")
    assert run.code == 0, run
    assert locators(run)[0] == LIBGIT2


def test_env_tilde_is_expanded(vault: Path, isolated_env: Path) -> None:
    home_vault = isolated_env / "my vault"
    vault.rename(home_vault)
    run = brain("find", "libgit2", env={"BRAIN_VAULT": "~/my vault"})
    assert run.code == 0, run


@pytest.mark.parametrize("recorded", [None, "", "\n"])
def test_no_vault_anywhere_is_a_one_line_error(recorded: str | None) -> None:
    if recorded is not None:
        recorded_vault_file().parent.mkdir(parents=True, exist_ok=True)
        recorded_vault_file().write_text(recorded, encoding="utf-8")
    run = brain("find", "libgit2")
    assert_one_line_error(run)
    assert "brain install" in run.err
    assert "BRAIN_VAULT" in run.err


@pytest.mark.parametrize(
    ("origin", "shape", "says"),
    [
        ("--vault", "missing", "does not exist"),
        ("--vault", "file", "is a file, not a directory"),
        ("--vault", "no-ai", "has no AI/ folder"),
        ("BRAIN_VAULT", "missing", "does not exist"),
        ("BRAIN_VAULT", "no-ai", "has no AI/ folder"),
        ("recorded", "missing", "does not exist"),
        ("recorded", "file", "is a file, not a directory"),
    ],
)
def test_bad_vault_path_is_a_one_line_error(
    tmp_path: Path, origin: str, shape: str, says: str
) -> None:
    target = tmp_path / "target"
    if shape == "file":
        target.write_text("not a vault\n", encoding="utf-8")
    elif shape == "no-ai":
        write(target, "notes/a.md", "a note\n")
    args: list[str] = ["find", "libgit2"]
    env: dict[str, str] = {}
    if origin == "--vault":
        args += ["--vault", str(target)]
    elif origin == "BRAIN_VAULT":
        env["BRAIN_VAULT"] = str(target)
    else:
        record_vault(target)
    run = brain(*args, env=env)
    assert_one_line_error(run)
    assert says in run.err
    assert str(target) in run.err
    assert ("recorded" if origin == "recorded" else origin) in run.err


@pytest.mark.parametrize(
    "args",
    [
        ["find", "--json", "libgit2"],
        ["reindex", "--json"],
        ["lint", "--json"],
    ],
)
def test_json_errors_are_an_error_object_on_stdout(args: list[str]) -> None:
    run = brain(*args)
    assert run.code == 1
    assert run.err == ""
    doc = run.json()
    assert list(doc) == ["error"]
    assert "no vault configured" in doc["error"]
    assert run.out.count("\n") == 1


def test_resolve_vault_returns_the_resolved_path(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vault.parent)
    assert resolve_vault(vault.name) == vault.resolve()
    monkeypatch.setenv("BRAIN_VAULT", str(vault))
    assert resolve_vault() == vault.resolve()
    monkeypatch.delenv("BRAIN_VAULT")
    with pytest.raises(BrainError, match="no vault configured"):
        resolve_vault()


# --- bullets ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "- **libgit2** (aliases: pygit2, git hooks) — no hooks run — session 2026-03-02"
            " — 2026-03-02",
            vaultmod.Bullet(
                "libgit2",
                ("pygit2", "git hooks"),
                "no hooks run",
                "session 2026-03-02",
                "2026-03-02",
            ),
        ),
        (
            "- **heron** — the home desktop — docs — 2025-01-12",
            vaultmod.Bullet("heron", (), "the home desktop", "docs", "2025-01-12"),
        ),
        (  # extra separators belong to the fact; the last two fields are source and date
            "- **dash** — a — b — c — src — 2024-02-29",
            vaultmod.Bullet("dash", (), "a — b — c", "src", "2024-02-29"),
        ),
        (  # aliases: blanks are dropped, spaces trimmed
            "- **x y** (aliases:  a , , b c ) — fact — me — 2025-12-31   ",
            vaultmod.Bullet("x y", ("a", "b c"), "fact", "me", "2025-12-31"),
        ),
    ],
)
def test_parse_bullet(line: str, expected: vaultmod.Bullet) -> None:
    assert vaultmod.parse_bullet(line) == expected


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("- plain text — source — 2026-01-01", "no **handle**"),
        ("- **  ** — fact — src — 2026-01-01", "empty **handle**"),
        ("- **h** fact — src — 2026-01-01", "expected ` — ` after the handle"),
        ("- **h** — fact — src", "needs `fact — source — YYYY-MM-DD`"),
        ("- **h** — fact — src — 2026-13-40", "valid date"),
        ("- **h** — fact — src — 2026-02-30", "valid date"),
        ("- **h** — fact — src — yesterday", "valid date"),
        ("- **h** — fact — src — ", "needs `fact — source — YYYY-MM-DD`"),
        ("- **h** —  — src — 2026-01-01", "empty fact"),
        ("- **h** — fact —   — 2026-01-01", "empty source"),
    ],
)
def test_parse_bullet_rejects(line: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        vaultmod.parse_bullet(line)


def test_format_bullet_round_trips_every_fixture_bullet() -> None:
    count = 0
    for rel in ("AI/MEMORY.md", "AI/LEARNINGS.md", "AI/TUNINGS.md"):
        for line in (FIXTURE_VAULT / rel).read_text(encoding="utf-8").splitlines():
            if line.startswith("- **"):
                assert vaultmod.format_bullet(vaultmod.parse_bullet(line)) == line
                count += 1
    assert count > 100


@pytest.mark.parametrize(
    ("rel", "handle", "section", "line"),
    [
        ("AI/MEMORY.md", "brain cli", "Projects > brain", 9),
        ("AI/MEMORY.md", "payments service", "Projects > payments", 20),
        ("AI/MEMORY.md", "kestrel", "Machines", None),
        ("AI/LEARNINGS.md", "libgit2", "Git and tooling", 7),
        ("AI/TUNINGS.md", "answer first", "Communication", None),
    ],
)
def test_bullet_section_is_the_headings_above_it(
    rel: str, handle: str, section: str, line: int | None
) -> None:
    parsed = vaultmod.parse(rel, (FIXTURE_VAULT / rel).read_bytes())
    assert parsed.problems == []
    (unit,) = [u for u in parsed.units if u.handle == handle]
    assert unit.kind == "bullet"
    assert unit.section == section
    lines = (FIXTURE_VAULT / rel).read_text(encoding="utf-8").split("\n")
    assert lines[unit.line - 1] == unit.raw
    assert unit.raw.startswith(f"- **{handle}**")
    if line is not None:
        assert unit.line == line


def test_core_file_prose_is_prose_and_bad_bullets_are_problems() -> None:
    text = (
        "# Memory\n\nAn intro paragraph about the\nfile.\n\n## Things\n\n"
        "- **good** — a fact — me — 2026-01-01\n"
        "- **bad** — a fact without a date — me\n"
    )
    parsed = vaultmod.parse("AI/MEMORY.md", text.encode())
    kinds = [(u.line, u.kind) for u in parsed.units]
    assert kinds == [(3, "prose"), (8, "bullet"), (9, "prose")]
    assert parsed.units[0].text == "An intro paragraph about the file."
    assert [(p.path, p.line) for p in parsed.problems] == [("AI/MEMORY.md", 9)]


# --- prose --------------------------------------------------------------------------------------

WRAPPED = """\
# Field notes

Intro line about nothing much.

The quokka lives on a small island
off the coast, and the marsupial
is rarely seen on the mainland.

## Lists

- first item mentions the wombat
  and continues with the platypus
- second item is about numbats
1. numbered item with a bilby
   that wraps onto an echidna line

Closing words right after the list about a dugong
and a narwhal.
"""


def test_prose_units_start_at_their_first_line() -> None:
    units = vaultmod.parse_prose(WRAPPED, "notes/wrapped.md")
    assert [(u.line, u.text) for u in units] == [
        (3, "Intro line about nothing much."),
        (
            5,
            "The quokka lives on a small island off the coast, and the marsupial is rarely"
            " seen on the mainland.",
        ),
        (11, "first item mentions the wombat and continues with the platypus"),
        (13, "second item is about numbats"),
        (14, "numbered item with a bilby that wraps onto an echidna line"),
        (17, "Closing words right after the list about a dugong and a narwhal."),
    ]
    assert units[1].section == "Field notes"
    assert units[2].section == "Field notes > Lists"
    assert units[1].raw == "\n".join(WRAPPED.split("\n")[4:7])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("quokka marsupial", ["notes/wrapped.md:5"]),  # words on lines 5 and 6
        ("wombat platypus", ["notes/wrapped.md:11"]),  # a list item and its continuation
        ("bilby echidna", ["notes/wrapped.md:14"]),
        ("numbats", ["notes/wrapped.md:13"]),  # the next item is a unit of its own
    ],
)
def test_wrapped_paragraph_is_found_by_words_on_different_lines(
    tmp_path: Path, query: str, expected: list[str]
) -> None:
    root = make_vault(tmp_path / "v", {"notes/wrapped.md": WRAPPED})
    run = brain("find", "--vault", str(root), query)
    assert run.code == 0, run
    assert locators(run) == expected


FENCED = """\
# Runbook

```bash
# not a heading
- not a list item

echo zebrafish
```

After the fence comes the gecko paragraph.

~~~
tilde fenced iguana
~~~
"""


def test_fenced_code_is_one_unit_and_hides_markdown() -> None:
    units = vaultmod.parse_prose(FENCED, "notes/runbook.md")
    assert [u.line for u in units] == [3, 10, 12]
    code = units[0]
    assert code.text == "# not a heading\n- not a list item\n\necho zebrafish"
    assert code.section == "Runbook"  # the `#` line inside the fence is no heading
    assert units[1].section == "Runbook"
    assert units[2].text == "tilde fenced iguana"


def test_fenced_code_found_at_its_fence(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", {"notes/runbook.md": FENCED})
    run = brain("find", "--vault", str(root), "zebrafish")
    assert locators(run) == ["notes/runbook.md:3"]
    run = brain("find", "--vault", str(root), "gecko")
    assert locators(run) == ["notes/runbook.md:10"]


FRONT_MATTER = """\
---
title: aardvark
tags: [burrow]
---

# Digging

Body text about the pangolin.
"""


def test_front_matter_is_skipped(tmp_path: Path) -> None:
    units = vaultmod.parse_prose(FRONT_MATTER, "notes/fm.md")
    assert [(u.line, u.text) for u in units] == [(8, "Body text about the pangolin.")]
    root = make_vault(tmp_path / "v", {"notes/fm.md": FRONT_MATTER})
    assert brain("find", "--vault", str(root), "aardvark").code == 1
    assert brain("find", "--vault", str(root), "burrow").code == 1
    assert locators(brain("find", "--vault", str(root), "pangolin")) == ["notes/fm.md:8"]


@pytest.mark.parametrize(
    ("path", "date"),
    [
        ("notes/2026-01-05-year-planning.md", "2026-01-05"),
        ("projects/x/handoffs/2025-11-03-kickoff.md", "2025-11-03"),
        ("2024-02-29.md", "2024-02-29"),
        ("notes/2026-13-40-bad-month.md", ""),
        ("notes/reading-list.md", ""),
        ("2026-01-05/undated-inside-dated-folder.md", ""),
    ],
)
def test_dated_file_names_carry_the_date(path: str, date: str) -> None:
    assert vaultmod.file_date(path) == date
    units = vaultmod.parse_prose("Some words here.\n", path)
    assert [u.date for u in units] == [date]


def test_dated_note_date_reaches_the_hit(tmp_path: Path) -> None:
    root = make_vault(
        tmp_path / "v",
        {
            "notes/2026-02-03-standup.md": "# Standup\n\nThe capybara demo slipped.\n",
            "notes/standup.md": "# Standup\n\nThe axolotl demo slipped.\n",
        },
    )
    dated = brain("find", "--vault", str(root), "--json", "capybara").json()["hits"][0]
    undated = brain("find", "--vault", str(root), "--json", "axolotl").json()["hits"][0]
    assert (dated["path"], dated["date"]) == ("notes/2026-02-03-standup.md", "2026-02-03")
    assert (undated["path"], undated["date"]) == ("notes/standup.md", None)  # none is null


def test_inbox_is_never_searched(vault: Path) -> None:
    inbox = vault / "AI" / "INBOX.md"
    assert "zanzibar" in inbox.read_text(encoding="utf-8")
    run = brain("find", "--vault", str(vault), "zanzibar")
    assert run.code == 1
    assert run.out == ""
    # the same line in a core file is found: only the inbox is excluded
    line = next(ln for ln in inbox.read_text(encoding="utf-8").splitlines() if "zanzibar" in ln)
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    assert brain("find", "--vault", str(vault), "zanzibar").code == 0


def test_vault_files_skip_inbox_hidden_and_non_markdown(tmp_path: Path) -> None:
    root = make_vault(
        tmp_path / "v",
        {
            "AI/INBOX.md": "- **x** — y — z — 2026-01-01\n",
            "notes/a.md": "a\n",
            "notes/b.txt": "b\n",
            ".obsidian/workspace.md": "hidden\n",
            "notes/.draft.md": "hidden\n",
            "deep/er/c.md": "c\n",
        },
    )
    assert vaultmod.vault_files(root) == [
        "AI/LEARNINGS.md",
        "AI/MEMORY.md",
        "AI/TUNINGS.md",
        "deep/er/c.md",
        "notes/a.md",
    ]


# --- synonyms -----------------------------------------------------------------------------------


def test_synonyms_reload_on_every_sync(vault: Path) -> None:
    synonyms = vault / "AI" / "synonyms.tsv"
    original = synonyms.read_text(encoding="utf-8")
    assert brain("find", "--vault", str(vault), "zorblax").code == 1

    synonyms.write_text(original + "zorblax\tlibgit2\n", encoding="utf-8")
    assert brain("reindex", "--vault", str(vault)).code == 0
    run = brain("find", "--vault", str(vault), "zorblax")
    assert run.code == 0, run
    assert locators(run)[0] == LIBGIT2

    synonyms.write_text(original, encoding="utf-8")
    assert brain("reindex", "--vault", str(vault)).code == 0
    assert brain("find", "--vault", str(vault), "zorblax").code == 1


def test_synonyms_file_removed_drops_expansions(vault: Path) -> None:
    assert brain("find", "--vault", str(vault), "k8s").code == 0
    (vault / "AI" / "synonyms.tsv").unlink()
    report = json.loads(brain("reindex", "--vault", str(vault), "--json").out)
    assert report["removed"] == ["AI/synonyms.tsv"]
    assert brain("find", "--vault", str(vault), "k8s").code == 1


def test_parse_synonyms() -> None:
    text = (
        "term\texpansion\nk8s\tkubernetes\nDB\tdatabase\ndb\tpostgres\ndb\tdatabase\n# c\n\nbad\n"
    )
    table, problems = vaultmod.parse_synonyms(text)
    assert table == {"k8s": ["kubernetes"], "db": ["database", "postgres"]}
    assert [(p.path, p.line) for p in problems] == [("AI/synonyms.tsv", 8)]


# --- HTML comments and the starter's instructions -------------------------------------------------

OLD_STARTER_MEMORY = """# Memory

What is true about your world: projects, machines, people, services and preferences. One fact per bullet; when two bullets disagree, the newer date wins.

Write each fact on one line as `- **handle** (aliases: other, names) — the fact — where it came from — YYYY-MM-DD`. The handle is a short unique name, the aliases are optional, and the date is when the fact was last true. Group bullets under `##` headings of your choosing; `brain lint` checks every line.

## Projects

What is true about the payments project: it bills in euros.
"""  # noqa: E501 - the starter as brain wrote it, one paragraph per line


def test_html_comments_are_not_served_and_keep_line_numbers() -> None:
    text = (
        "# Notes\n\n<!--\nhidden words\n\nmore hidden\n-->\nshown words\n\n"
        "<!-- one line, hidden -->\n\n```\n<!-- in code: shown -->\n```\n"
        "- **x** — a bullet in a note is prose — me — 2026-01-01\n"
    )
    units = vaultmod.parse("notes/n.md", text.encode()).units
    assert [(u.line, u.text) for u in units] == [
        (8, "shown words"),
        (12, "<!-- in code: shown -->"),
        (15, "**x** — a bullet in a note is prose — me — 2026-01-01"),
    ]
    core = "# Memory\n\n<!--\n- **hidden** — commented out — me — 2026-01-01\n-->\n"
    core += "- **seen** — kept — me — 2026-01-02\n"
    parsed = vaultmod.parse("AI/MEMORY.md", core.encode())
    assert [(u.line, u.handle) for u in parsed.units] == [(6, "seen")]
    assert parsed.problems == []


def test_the_starter_files_serve_no_instructions(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    assert brain("install", str(vault)).code == 0
    for name in ("MEMORY.md", "LEARNINGS.md", "TUNINGS.md"):
        text = (vault / "AI" / name).read_text(encoding="utf-8")
        assert "<!--" in text  # the instructions are there for a person editing the file
        assert vaultmod.parse(f"AI/{name}", text.encode()).units == []
    for query in ("handle aliases fact", "what is true about your world", "gotchas"):
        run = brain("find", "--vault", str(vault), "--json", query)
        assert run.json()["hits"] == [], query


def test_a_vault_made_from_the_old_starter_stops_serving_its_instructions() -> None:
    units = vaultmod.parse("AI/MEMORY.md", OLD_STARTER_MEMORY.encode()).units
    assert [u.text for u in units] == [
        "What is true about the payments project: it bills in euros."
    ]
    # the same words in a note are the note's own
    note = vaultmod.parse("notes/copy.md", OLD_STARTER_MEMORY.encode()).units
    assert len(note) == 3
