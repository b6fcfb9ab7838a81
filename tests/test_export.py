"""`brain export`: the pack in every agent's file, a managed block that survives edits around it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, brain, git

from brain.commands import export as exportmod
from brain.commands import pack as packmod

V = str(FIXTURE_VAULT)
EXPORT_KEYS = ["repo", "project", "check", "ok", "targets"]
TARGET_KEYS = ["agent", "path", "kind", "action"]


@pytest.fixture
def payments(tmp_path: Path) -> Path:
    folder = tmp_path / "payments"
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


def export(repo: Path, *args: str) -> dict[str, Any]:
    run = brain("export", "--vault", V, "--json", *args, cwd=repo)
    assert run.code in (0, 1), run
    doc: dict[str, Any] = run.json()
    return doc


AGENTS = [
    "claude",
    "codex",
    "copilot",
    "gemini",
    "cursor",
    "cline",
    "kiro",
    "opencode",
    "jules",
    "warp",
    "zed",
    "junie",
]


def test_the_table_names_every_agent_once() -> None:
    assert [t.agent for t in exportmod.TARGETS] == AGENTS
    owned = [t.path for t in exportmod.TARGETS if t.kind == "owned"]
    assert len(set(owned)) == len(owned)  # a file brain writes whole is one agent's
    shared = {t.path for t in exportmod.TARGETS if t.kind == "block"}
    assert not shared & set(owned)


def test_export_all_writes_every_file(payments: Path) -> None:
    doc = export(payments, "all")
    assert list(doc) == EXPORT_KEYS
    assert doc["project"] == "payments"
    targets = doc["targets"]
    assert isinstance(targets, list)
    assert [list(t) for t in targets] == [TARGET_KEYS] * len(AGENTS)
    assert {t["action"] for t in targets} == {"created"}
    first = packmod.pack(FIXTURE_VAULT, "payments").bullets[0]
    for t in exportmod.TARGETS:
        text = (payments / t.path).read_text(encoding="utf-8")
        assert f"- **{first.handle}** — {first.text} — {first.date}\n" in text, t.path
    claude = (payments / "CLAUDE.md").read_text(encoding="utf-8")
    assert claude.startswith("<!-- brain:begin")
    assert claude.endswith("<!-- brain:end -->\n")
    cursor = (payments / ".cursor/rules/brain.mdc").read_text(encoding="utf-8")
    front = cursor.split("---\n")[1]
    assert "alwaysApply: true\n" in front
    assert "description: " in front
    assert "globs:" in front
    kiro = (payments / ".kiro/steering/brain.md").read_text(encoding="utf-8")
    assert kiro.startswith("---\ninclusion: always\n---\n")
    cline = (payments / ".clinerules/brain.md").read_text(encoding="utf-8")
    assert cline.startswith(exportmod.OWNED)
    assert {t["action"] for t in export(payments, "all")["targets"]} == {"unchanged"}


def test_the_edit_outside_the_block_survives(payments: Path) -> None:
    agents = payments / "AGENTS.md"
    agents.write_text("# Agents\n\nRun `make test` first.\n", encoding="utf-8")
    export(payments, "codex")
    text = agents.read_text(encoding="utf-8")
    assert text.startswith("# Agents\n\nRun `make test` first.\n\n<!-- brain:begin")
    edited = text.replace("# Agents\n", "# Agents (edited)\n") + "\n## After\n\nmine\n"
    block = text[text.index("<!-- brain:begin") :]
    stale = edited.replace(block.split("\n")[3], "- an old fact")
    agents.write_text(stale, encoding="utf-8")
    doc = export(payments, "codex")
    assert doc["targets"][0]["action"] == "updated"
    final = agents.read_text(encoding="utf-8")
    assert final == edited
    assert final.count("<!-- brain:begin") == 1


def test_crlf_files_keep_their_line_ends(payments: Path) -> None:
    gemini = payments / "GEMINI.md"
    gemini.write_bytes(b"# Gemini\r\n\r\nhello\r\n")
    export(payments, "gemini")
    data = gemini.read_bytes()
    assert data.startswith(b"# Gemini\r\n\r\nhello\r\n\r\n<!-- brain:begin")
    assert b"\n" not in data.replace(b"\r\n", b"")
    export(payments, "gemini")
    assert gemini.read_bytes() == data


def test_check_exits_1_when_out_of_date(payments: Path) -> None:
    run = brain("export", "--vault", V, "--check", "claude", "cursor", cwd=payments)
    assert run.code == 1
    assert "CLAUDE.md: missing" in run.out
    assert brain("export", "--vault", V, "claude", "cursor", cwd=payments).code == 0
    assert not list(payments.glob("*.tmp"))
    run = brain("export", "--vault", V, "--check", "claude", "cursor", cwd=payments)
    assert run.code == 0, run
    claude = payments / "CLAUDE.md"
    claude.write_text(claude.read_text(encoding="utf-8").replace("payments", "PAYMENTS"), "utf-8")
    doc = export(payments, "--check", "claude", "cursor")
    assert doc["ok"] is False
    assert [t["action"] for t in doc["targets"]] == ["stale", "current"]
    before = claude.read_text(encoding="utf-8")
    brain("export", "--vault", V, "--check", "claude", cwd=payments)
    assert claude.read_text(encoding="utf-8") == before  # --check writes nothing


def test_a_vault_change_makes_the_export_stale(payments: Path, vault: Path) -> None:
    assert brain("export", "--vault", str(vault), "claude", cwd=payments).code == 0
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8") + "- **payments v2** — new — me — 2027-01-01\n",
        encoding="utf-8",
    )
    assert brain("export", "--vault", str(vault), "--check", "claude", cwd=payments).code == 1


def test_refuses_a_file_brain_does_not_own(payments: Path) -> None:
    rules = payments / ".clinerules" / "brain.md"
    rules.parent.mkdir()
    rules.write_text("my own rules\n", encoding="utf-8")
    run = brain("export", "--vault", V, "cline", cwd=payments)
    assert run.code == 1
    assert "not written by brain" in run.err
    assert rules.read_text(encoding="utf-8") == "my own rules\n"


def test_refuses_a_broken_block(payments: Path) -> None:
    (payments / "CLAUDE.md").write_text("<!-- brain:begin -->\nhalf\n", encoding="utf-8")
    run = brain("export", "--vault", V, "claude", cwd=payments)
    assert run.code == 1
    assert "brain:end" in run.err


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["windsurf"], 2, "unknown agent"),
        ([], 2, ""),
        (["--project", "xylophone", "claude"], 1, "knows nothing"),
    ],
)
def test_bad_exports(payments: Path, args: list[str], code: int, words: str) -> None:
    run = brain("export", "--vault", V, *args, cwd=payments)
    assert run.code == code, run
    assert words in run.err
    assert not (payments / "CLAUDE.md").exists()


def test_outside_a_repository(tmp_path: Path) -> None:
    run = brain("export", "--vault", V, "claude", cwd=tmp_path)
    assert run.code == 1
    assert "not in a git repository" in run.err


def test_place_block_appends_then_replaces() -> None:
    first = exportmod.place_block("", "<!-- brain:begin x -->\na\n<!-- brain:end -->", "f")
    assert first == "<!-- brain:begin x -->\na\n<!-- brain:end -->\n"
    new = f"{exportmod.BEGIN}\nb\n{exportmod.END}"
    again = exportmod.place_block("top\n" + first + "tail\n", new, "f")
    assert again == f"top\n{new}\ntail\n"


EXAMPLE = f"""# Payments

How brain's block looks, for the docs:

```md
{exportmod.BEGIN}
## What the brain vault knows about example
- **example** — a made-up fact — 2026-01-01
{exportmod.END}
```

    {exportmod.BEGIN}
    an indented example
    {exportmod.END}

~~~
{exportmod.BEGIN}
~~~

Run `make test` first.
"""


def test_markers_inside_a_code_block_are_an_example_not_the_block(payments: Path) -> None:
    """A brain:begin / brain:end pair (or a lone marker) inside a fenced or indented code block
    is text a person wrote: it is left byte for byte, and brain's block goes after it."""
    claude = payments / "CLAUDE.md"
    claude.write_text(EXAMPLE, encoding="utf-8")
    doc = export(payments, "claude")
    assert doc["targets"][0]["action"] == "updated", doc
    text = claude.read_text(encoding="utf-8")
    assert text.startswith(EXAMPLE + "\n" + exportmod.BEGIN)
    assert "- **example** — a made-up fact" in text
    assert text.count(exportmod.BEGIN) == 4
    assert export(payments, "claude")["targets"][0]["action"] == "unchanged"
    assert claude.read_text(encoding="utf-8") == text
    # the real block is replaced in place; the example before it stays as it is
    stale = text.replace("payments", "PAYMENTS")  # in the real block only
    claude.write_text(stale + "\ntail\n", encoding="utf-8")
    assert export(payments, "claude")["targets"][0]["action"] == "updated"
    assert claude.read_text(encoding="utf-8") == text + "\ntail\n"


def test_a_file_ending_in_an_open_code_fence_is_refused(payments: Path) -> None:
    """A block appended inside a fence nobody closed would be code: the next export would not
    find it and would add another. One line says so; the file is left as it is."""
    claude = payments / "CLAUDE.md"
    claude.write_text("# Payments\n\n```sh\nmake test\n", encoding="utf-8")
    run = brain("export", "--vault", V, "claude", cwd=payments)
    assert run.code == 1, run
    assert run.err.count("\n") == 1, run.err
    assert "CLAUDE.md ends inside a code block that is never closed" in run.err
    assert claude.read_text(encoding="utf-8") == "# Payments\n\n```sh\nmake test\n"


def test_a_line_saved_while_export_writes_is_kept(
    payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person saves CLAUDE.md after export read it and before it wrote: the block is placed
    and the person's line kept (the change is merged in, not written over the file)."""
    from brain.commands.export import export as run_export

    claude = payments / "CLAUDE.md"
    claude.write_text("# Payments\n\nRun `make test` first.\n", encoding="utf-8")
    place = exportmod.place_block

    def typed_meanwhile(existing: str, new_block: str, where: str) -> str:
        with claude.open("a", encoding="utf-8") as fh:
            fh.write("A line typed while brain exported.\n")
        return place(existing, new_block, where)

    monkeypatch.setattr(exportmod, "place_block", typed_meanwhile)
    run_export(Path(V), payments, ["claude"])
    text = claude.read_text(encoding="utf-8")
    assert "A line typed while brain exported.\n" in text
    assert text.count(exportmod.BEGIN) == 1


# --- links: never read or written through out of the repository (brain.files.confine) ---


@pytest.mark.parametrize("check", [False, True])
def test_export_refuses_a_file_linked_out_of_the_repository(
    payments: Path, tmp_path: Path, check: bool
) -> None:
    claude = tmp_path / "CLAUDE.md"
    claude.write_text("# Mine\n", "utf-8")
    (payments / "CLAUDE.md").symlink_to(claude)
    args = ["--check"] if check else []
    run = brain("export", "--vault", V, "claude", *args, cwd=payments)
    assert run.code == 1, run
    assert run.err.count("\n") == 1, run
    assert f"CLAUDE.md is a symbolic link to {claude}, outside the repository" in run.err
    assert claude.read_text("utf-8") == "# Mine\n"


def test_export_refuses_a_folder_linked_out_of_the_repository(
    payments: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (payments / ".cursor").symlink_to(outside, target_is_directory=True)
    run = brain("export", "--vault", V, "cursor", cwd=payments)
    assert run.code == 1, run
    assert run.err.count("\n") == 1, run
    assert "brain.mdc is a symbolic link to " in run.err
    assert list(outside.iterdir()) == []


def test_export_writes_through_a_link_inside_the_repository(payments: Path) -> None:
    (payments / "docs").mkdir()
    (payments / "docs" / "CLAUDE.md").write_text("# Ours\n", "utf-8")
    (payments / "CLAUDE.md").symlink_to("docs/CLAUDE.md")
    run = brain("export", "--vault", V, "claude", cwd=payments)
    assert run.code == 0, run
    assert (payments / "CLAUDE.md").is_symlink()
    assert "brain:begin" in (payments / "docs" / "CLAUDE.md").read_text("utf-8")


def test_all_check_checks_only_what_was_exported(payments: Path) -> None:
    """`all --check` in CI: agents never exported here are no failure; a named one still is."""
    run = brain("export", "--vault", V, "all", "--check", cwd=payments)
    assert run.code == 0, run
    assert "nothing exported here yet" in run.out
    assert brain("export", "--vault", V, "claude", "cursor", cwd=payments).code == 0
    doc = export(payments, "all", "--check")
    assert doc["ok"] is True
    actions = {t["agent"]: t["action"] for t in doc["targets"]}
    absent = dict.fromkeys(("codex", "copilot", "gemini", "cline", "kiro"), "absent")
    absent |= dict.fromkeys(("opencode", "jules", "warp", "junie"), "absent")
    # Zed reads CLAUDE.md where the repository has no file before it in Zed's list
    assert actions == {**absent, "claude": "current", "cursor": "current", "zed": "current"}
    run = brain("export", "--vault", V, "all", "--check", cwd=payments)
    assert run.code == 0, run
    assert run.out.splitlines() == [
        "CLAUDE.md: current (read by claude, zed)",
        ".cursor/rules/brain.mdc: current",
        "all 2 files up to date",
    ]
    missing = brain("export", "--vault", V, "all", "codex", "--check", cwd=payments)
    assert missing.code == 1
    assert "AGENTS.md: missing" in missing.out


def test_agents_names_agents_md(payments: Path) -> None:
    doc = export(payments, "agents")
    assert [(t["agent"], t["path"], t["action"]) for t in doc["targets"]] == [
        ("codex", "AGENTS.md", "created")
    ]
    assert export(payments, "codex", "agents")["targets"][0]["action"] == "unchanged"
    run = brain("export", "--vault", V, "windsurf", cwd=payments)
    assert "codex (or agents)" in run.err


def test_exported_text_is_facts_not_the_pack_s_own_lines(payments: Path) -> None:
    """The block holds bullets and rules, no vault paths and no meta lines dressed as bullets."""
    pack = packmod.pack(FIXTURE_VAULT, "payments", budget=3000)
    assert pack.omitted
    assert pack.rules
    assert pack.handoff
    assert brain("export", "--vault", V, "--budget", "3000", "claude", cwd=payments).code == 0
    text = (payments / "CLAUDE.md").read_text(encoding="utf-8")
    block = text[text.index("\n") + 1 : text.index(exportmod.END)]
    items = [line for line in block.splitlines() if line.startswith("- ")]
    assert len(items) == len(pack.bullets) + len(pack.rules)
    assert all(line.startswith("- **") for line in items)
    assert re.search(r"\.md:\d", block) is None  # no vault locators
    for words in (
        "Working rules (AI/",
        "projects/payments",
        "Newest handoff",
        "State:",
        "--budget",
    ):
        assert words not in block, words
    assert "### Working rules\n" in block
    assert block.rstrip().endswith(f"{pack.omitted} more in the vault: `brain find payments`.")


def _front(text: str) -> dict[str, Any]:
    import yaml

    assert text.startswith("---\n")
    doc: dict[str, Any] = yaml.safe_load(text.split("---\n")[1])
    return doc


def test_cursor_rule_front_matter_is_yaml_cursor_reads(payments: Path) -> None:
    """Cursor's .mdc front matter (description, globs, alwaysApply; cursor.com/docs/context/
    rules) parses as YAML: the description said `about payments: facts`, a plain scalar holding
    ": ", which no YAML parser takes, so Cursor skipped the rule. An odd project name stays
    text."""
    assert brain("export", "--vault", V, "cursor", cwd=payments).code == 0
    front = _front((payments / ".cursor/rules/brain.mdc").read_text(encoding="utf-8"))
    assert front["alwaysApply"] is True
    assert front["globs"] is None
    assert front["description"].startswith("What the brain vault knows about payments")
    import dataclasses

    (cursor,) = [t for t in exportmod.TARGETS if t.agent == "cursor"]
    pack = packmod.pack(FIXTURE_VAULT, "payments")
    for name in ("pay: ments #1", 'say "hi"', "a\\b: [x]"):
        odd = exportmod.owned_file(cursor, dataclasses.replace(pack, project=name))
        assert name in _front(odd)["description"], name


def test_agents_that_read_agents_md_share_one_write(payments: Path) -> None:
    """OpenCode, Jules, Warp, Zed and Junie read AGENTS.md: naming several writes it once, and
    the listing says which agents read it."""
    run = brain("export", "--vault", V, "codex", "opencode", "jules", "warp", "zed", "junie",
                cwd=payments)  # fmt: skip
    assert run.code == 0, run
    assert run.out == "AGENTS.md: created (read by codex, opencode, jules, warp, zed, junie)\n"
    text = (payments / "AGENTS.md").read_text(encoding="utf-8")
    assert text.count("<!-- brain:begin") == 1
    doc = export(payments, "--check", "opencode", "jules")
    assert [(t["agent"], t["path"], t["action"]) for t in doc["targets"]] == [
        ("opencode", "AGENTS.md", "current"),
        ("jules", "AGENTS.md", "current"),
    ]


@pytest.mark.parametrize(
    ("agent", "there", "written"),
    [
        ("zed", ".rules", ".rules"),  # Zed reads .rules before every other name
        ("zed", ".cursorrules", ".cursorrules"),
        ("zed", "GEMINI.md", "GEMINI.md"),  # the only file of its list: Zed reads that one
        ("warp", "WARP.md", "WARP.md"),  # WARP.md wins over AGENTS.md in one folder
        ("junie", ".junie/guidelines.md", ".junie/guidelines.md"),
        ("opencode", "WARP.md", "AGENTS.md"),  # OpenCode reads AGENTS.md alone
    ],
)
def test_the_block_goes_where_the_agent_reads(
    payments: Path, agent: str, there: str, written: str
) -> None:
    """An agent that reads the first of several files gets the block in the one it reads now,
    the person's own text around it kept; AGENTS.md is made only where it reads none."""
    (payments / there).parent.mkdir(parents=True, exist_ok=True)
    (payments / there).write_text("Keep answers short.\n", encoding="utf-8")
    doc = export(payments, agent)
    assert [(t["path"], t["action"]) for t in doc["targets"]] == [
        (written, "updated" if written == there else "created")
    ]
    text = (payments / written).read_text(encoding="utf-8")
    assert "<!-- brain:begin" in text
    if written == there:
        assert text.startswith("Keep answers short.\n\n<!-- brain:begin")
        assert not (payments / "AGENTS.md").exists()
    assert export(payments, "--check", agent)["ok"] is True


def test_zed_skips_a_folder_of_its_names(payments: Path) -> None:
    """brain's cline export makes `.clinerules/` a folder: Zed's list names a file, so Zed's
    block goes to the next name the repository has as a file."""
    assert brain("export", "--vault", V, "cline", cwd=payments).code == 0
    doc = export(payments, "zed")
    assert [(t["path"], t["action"]) for t in doc["targets"]] == [("AGENTS.md", "created")]


def test_export_refuses_an_agent_file_over_note_max(payments: Path) -> None:
    """A 200 MB AGENTS.md was read whole, merged and written whole again."""
    from brain.vault import NOTE_MAX

    agents = payments / "AGENTS.md"
    with agents.open("w", encoding="utf-8") as fh:
        fh.write("# ours\n")
        fh.truncate(200 * 1024 * 1024)
    before = agents.stat()
    run = brain("export", "--vault", V, "codex", cwd=payments)
    assert run.code == 1, run
    assert run.err.count("\n") == 1, run
    assert "AGENTS.md is 200 MB, over the 4 MB brain reads of a file: not exported" in run.err
    after = agents.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert before.st_size > NOTE_MAX
