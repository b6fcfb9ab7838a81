"""File names are printed escaped, odd names never stop the index, unread files are never clean.

A newline in a name must not forge a line of the agent format; U+202E (which reverses what follows
on a terminal) and other control and format characters are shown as `\\n`, `\\u202e`; a name that
is not UTF-8 is skipped with a line saying so; a file that cannot be read is named by lint and
secrets, which then do not say "all good".
"""

from __future__ import annotations

import os
import random
import string
from pathlib import Path

import pytest
from conftest import brain

from brain import lint as lintmod
from brain import secrets_scan as secretsmod

RNG = random.Random(5_550_123)  # noqa: S311 - a reproducible fake credential, not crypto
FORGED = "evil\nMEMORY.md:1 forged — pwned.md"
REVERSED = "x\u202egnp.md"


def token() -> str:
    body = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "ghp" + "_" + body


def test_printable_escapes_what_could_forge_or_reorder_a_line() -> None:
    from brain.text import printable

    assert printable("notes/plain name é 日本.md") == "notes/plain name é 日本.md"
    assert printable(FORGED) == "evil\\nMEMORY.md:1 forged — pwned.md"
    assert printable(REVERSED) == "x\\u202egnp.md"
    assert printable("a\x1b[31mred\tb\r") == "a\\x1b[31mred\\tb\\r"
    assert printable(os.fsdecode(b"bad\xff.md")) == "bad\\xff.md"
    assert printable("👩\u200d💻 notes.md") == "👩\u200d💻 notes.md"  # a joiner is harmless


@pytest.fixture
def odd(vault: Path) -> Path:
    (vault / "notes" / FORGED).write_text("# Evil\n\nThe gnu migrates north.\n", "utf-8")
    (vault / "notes" / REVERSED).write_text("The gnu sleeps all day.\n", "utf-8")
    return vault


@pytest.mark.parametrize("how", [["--terse"], ["--raw"], []])
def test_odd_names_are_escaped_in_every_line_format(odd: Path, how: list[str]) -> None:
    run = brain("find", "--vault", str(odd), *how, "gnu", env={"CLAUDECODE": "1"})
    assert run.code == 0, run
    lines = run.out.splitlines()
    assert len(lines) == 2, run.out  # one line per hit: nothing forged
    assert all(line.startswith("notes/") for line in lines)
    assert "\u202e" not in run.out
    assert any(line.startswith("notes/evil\\nMEMORY.md:1 forged — pwned.md:3") for line in lines)
    assert any(line.startswith("notes/x\\u202egnp.md:1") for line in lines)


def test_the_person_listing_escapes_names_too(odd: Path) -> None:
    from test_find import run_in_pty

    code, out = run_in_pty("find", "--vault", str(odd), "gnu sleeps")
    assert code == 0, out
    assert "\u202e" not in out
    assert "x\\u202egnp" in out


def test_json_keeps_the_exact_name(odd: Path) -> None:
    doc = brain("find", "--vault", str(odd), "--json", "gnu").json()
    assert {h["path"] for h in doc["hits"]} == {f"notes/{FORGED}", f"notes/{REVERSED}"}


def test_a_handoff_name_is_escaped_in_the_pack(vault: Path) -> None:
    handoffs = vault / "projects" / "paynova" / "handoffs"
    handoffs.mkdir(parents=True, exist_ok=True)
    (handoffs / "2099-01-01-\u202etxt.md").write_text("# Handoff\n", "utf-8")
    run = brain("pack", "--vault", str(vault), "paynova")
    assert run.code == 0, run
    assert "Newest handoff: projects/paynova/handoffs/2099-01-01-\\u202etxt.md" in run.out
    assert "\u202e" not in run.out


def test_secrets_and_lint_print_names_escaped(vault: Path) -> None:
    (vault / "notes" / REVERSED).write_text(f"the key is {token()}\n", "utf-8")
    run = brain("secrets", "--vault", str(vault))
    assert run.code == 1
    assert run.out.startswith("notes/x\\u202egnp.md:1: github-token")
    assert "\u202e" not in run.out + run.err


def test_a_name_that_is_not_utf8_is_skipped_with_a_line(vault: Path) -> None:
    bad = os.fsencode(vault / "notes") + b"/bad\xff.md"
    with open(bad, "wb") as fh:  # noqa: PTH123 - a bytes path, which Path cannot hold
        fh.write(b"# Bad\n\nThe ocelot naps here.\n")
    report = brain("reindex", "--vault", str(vault), "--json")
    assert report.code == 0, report
    assert report.json()["problem_count"] == 1
    found = brain("find", "--vault", str(vault), "--terse", "libgit2 hooks")
    assert found.code == 0, found
    assert brain("find", "--vault", str(vault), "ocelot").code == 1
    lint = brain("lint", "--vault", str(vault))
    assert lint.code == 1, lint
    assert "notes/bad\\xff.md: the name is not valid UTF-8; skipped" in lint.out
    secrets = brain("secrets", "--vault", str(vault))  # reads it by its bytes: test_secrets_cmd
    assert (secrets.code, secrets.out) == (0, ""), secrets
    for run in (report, found, lint, secrets):
        assert "Traceback" not in run.err


# --- files that cannot be read ------------------------------------------------------------------


@pytest.fixture
def unreadable(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """notes/locked.md and AI/TUNINGS.md raise PermissionError when read (as root, chmod would
    not stop the read, so the read itself is made to fail)."""
    (vault / "notes" / "locked.md").write_text(f"key {token()}\n", "utf-8")
    locked = {vault / "notes" / "locked.md", vault / "AI" / "TUNINGS.md"}
    read_bytes = Path.read_bytes

    def guarded(self: Path) -> bytes:
        if self in locked:
            raise PermissionError(13, "Permission denied", str(self))
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", guarded)
    monkeypatch.setattr(lintmod, "read_regular", guarded)  # lint reads files it may not block on
    return vault


def test_secrets_names_a_file_it_cannot_read_and_is_not_clean(unreadable: Path) -> None:
    result = secretsmod.scan(unreadable)
    assert not result.ok
    assert result.findings == ()
    assert [(p.path, p.message) for p in result.skipped] == [
        ("AI/TUNINGS.md", "cannot read it (Permission denied); not scanned"),
        ("notes/locked.md", "cannot read it (Permission denied); not scanned"),
    ]


def test_lint_names_a_core_file_it_cannot_read_and_is_not_clean(unreadable: Path) -> None:
    result = lintmod.lint(unreadable)
    assert not result.ok
    assert [str(p) for p in result.problems] == [
        "AI/TUNINGS.md: cannot read it (Permission denied); not checked",
        # lint reads every note the index reads, for the guard
        "notes/locked.md: cannot read it (Permission denied); not checked",
    ]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads through chmod"
)
def test_chmod_000_files_are_named_by_lint_and_secrets(vault: Path) -> None:
    (vault / "notes" / "locked.md").write_text(f"key {token()}\n", "utf-8")
    (vault / "notes" / "locked.md").chmod(0)
    (vault / "AI" / "TUNINGS.md").chmod(0)
    try:
        secrets = brain("secrets", "--vault", str(vault))
        assert secrets.code == 1, secrets
        assert "notes/locked.md: cannot read it (Permission denied)" in secrets.err
        assert "no secrets in" in secrets.err
        assert "2 files not read" in secrets.err
        lint = brain("lint", "--vault", str(vault))
        assert lint.code == 1, lint
        assert "AI/TUNINGS.md: cannot read it (Permission denied)" in lint.out
        assert "all good" not in lint.out
    finally:
        (vault / "notes" / "locked.md").chmod(0o644)
        (vault / "AI" / "TUNINGS.md").chmod(0o644)
