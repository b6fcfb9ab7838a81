"""Line-by-line merging (brain/merge.py): the function, and the driver run by a real `git merge`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

from brain import merge

HEAD = b"# Memory\n\n## Tools\n"


def lines(*items: str) -> bytes:
    return "".join(f"{item}\n" for item in items).encode()


def test_both_sides_adding_bullets_keeps_every_bullet_once_and_no_clash() -> None:
    base = HEAD + lines("- a", "- b")
    ours = HEAD + lines("- a", "- b", "- ours 1")
    theirs = HEAD + lines("- a", "- b", "- theirs 1", "- theirs 2")
    result = merge.merge(base, ours, theirs)
    assert result.data == HEAD + lines("- a", "- b", "- ours 1", "- theirs 1", "- theirs 2")
    assert result.clashes == ()


def test_the_same_bullet_added_on_both_sides_is_kept_once() -> None:
    base = HEAD + lines("- a")
    both = HEAD + lines("- a", "- same", "- ours")
    other = HEAD + lines("- a", "- same", "- theirs")
    assert merge.merge(base, both, other).data == HEAD + lines(
        "- a", "- same", "- ours", "- theirs"
    )


def test_edits_to_neighbouring_bullets_both_apply() -> None:
    """Git calls edits to adjacent lines a conflict; for one-line bullets they are not one."""
    base = HEAD + lines("- a", "- b", "- c")
    ours = HEAD + lines("- a", "- B edited", "- c")
    theirs = HEAD + lines("- a", "- b", "- C edited", "- d")
    result = merge.merge(base, ours, theirs)
    assert result.data == HEAD + lines("- a", "- B edited", "- C edited", "- d")
    assert result.clashes == ()


def test_an_edit_next_to_an_append_both_apply() -> None:
    base = HEAD + lines("- a", "- b")
    ours = HEAD + lines("- a", "- b", "- new")
    theirs = HEAD + lines("- a", "- b edited")
    assert merge.merge(base, ours, theirs).data == HEAD + lines("- a", "- b edited", "- new")


def test_both_editing_one_bullet_keeps_both_lines_and_reports_the_clash() -> None:
    base = HEAD + lines("- a", "- deploy — old fact", "- c")
    ours = HEAD + lines("- a", "- deploy — ours", "- c")
    theirs = HEAD + lines("- a", "- deploy — theirs", "- c", "- d")
    result = merge.merge(base, ours, theirs)
    assert result.data == HEAD + lines("- a", "- deploy — ours", "- deploy — theirs", "- c", "- d")
    assert b"<<<<" not in result.data
    assert b">>>>" not in result.data
    [clash] = result.clashes
    assert (clash.line, clash.ours, clash.theirs) == (
        5,
        ("- deploy — ours",),
        ("- deploy — theirs",),
    )


def test_an_edit_survives_a_deletion_of_the_same_bullet() -> None:
    base = HEAD + lines("- a", "- gone or edited", "- c")
    ours = HEAD + lines("- a", "- c")
    theirs = HEAD + lines("- a", "- edited", "- c")
    result = merge.merge(base, ours, theirs)
    assert result.data == HEAD + lines("- a", "- edited", "- c")
    assert len(result.clashes) == 1


def test_paragraphs_added_on_both_sides_stay_apart() -> None:
    base = b"# Notes\n\nFirst.\n"
    ours = base + b"\nOurs, a paragraph.\n"
    theirs = base + b"\nTheirs, another.\n"
    assert merge.merge(base, ours, theirs).data == (
        b"# Notes\n\nFirst.\n\nOurs, a paragraph.\n\nTheirs, another.\n"
    )


def test_a_missing_final_newline_does_not_glue_lines() -> None:
    result = merge.merge(b"- a", b"- a\n- ours", b"- a\n- theirs")
    assert result.data.splitlines() == [b"- a", b"- ours", b"- theirs"]


def test_crlf_lines_are_kept_as_they_are() -> None:
    base = b"- a\r\n- b\r\n"
    result = merge.merge(base, base + b"- ours\r\n", base + b"- theirs\r\n")
    assert result.data == b"- a\r\n- b\r\n- ours\r\n- theirs\r\n"


def test_binary_content_is_left_to_git() -> None:
    with pytest.raises(ValueError, match="binary"):
        merge.merge(b"a\0", b"b\0", b"c\0")


def test_a_large_file_merges_in_well_under_a_second() -> None:
    import time

    base = b"".join(
        b"- **h%d** \xe2\x80\x94 fact %d \xe2\x80\x94 t \xe2\x80\x94 2026-01-02\n" % (i, i)
        for i in range(10_000)
    )
    ours = base + b"- ours\n"
    theirs = base.replace(b"fact 5000 ", b"fact 5000 edited ") + b"- theirs\n"
    start = time.perf_counter()
    result = merge.merge(base, ours, theirs)
    assert time.perf_counter() - start < 1.0
    assert result.data.endswith(b"- ours\n- theirs\n")
    assert b"fact 5000 edited" in result.data


# --- the driver, through git ---------------------------------------------------------------------


def _repo(path: Path) -> Path:
    git(path.parent, "init", "-q", "-b", "main", str(path))
    git(path, "config", "merge.brain.driver", merge.driver_command())
    (path / ".gitattributes").write_text("*.md merge=brain\n", encoding="utf-8")
    (path / "MEMORY.md").write_bytes(HEAD + lines("- a", "- b"))
    git(path, "add", "-A")
    git(path, "commit", "-qm", "base")
    return path


def _commit(repo: Path, body: bytes, message: str) -> None:
    (repo / "MEMORY.md").write_bytes(body)
    git(repo, "commit", "-qam", message)


def test_git_merge_runs_the_driver_and_leaves_no_markers(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    git(repo, "checkout", "-qb", "side")
    _commit(repo, HEAD + lines("- a edited on side", "- b", "- side"), "side")
    git(repo, "checkout", "-q", "main")
    _commit(repo, HEAD + lines("- a edited on main", "- b", "- main"), "main")
    proc = subprocess.run(
        ["git", "-C", str(repo), "merge", "-q", "side", "-m", "merge"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    text = (repo / "MEMORY.md").read_text(encoding="utf-8")
    assert (
        text
        == (
            HEAD + lines("- a edited on main", "- a edited on side", "- b", "- main", "- side")
        ).decode()
    )
    # Outside sync the clash is said on stderr, so a person merging by hand sees it.
    assert "both sides changed MEMORY.md:4" in proc.stderr


def test_the_driver_reports_clashes_to_sync(tmp_path: Path) -> None:
    for name, body in (("O", lines("- x")), ("A", lines("- x ours")), ("B", lines("- x theirs"))):
        (tmp_path / name).write_bytes(body)
    report = tmp_path / "report.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "brain", "merge-driver", "O", "A", "B", "AI/MEMORY.md"],
        cwd=tmp_path,
        env={**__import__("os").environ, merge.REPORT_ENV: str(report)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "A").read_bytes() == lines("- x ours", "- x theirs")
    assert '"path": "AI/MEMORY.md"' in report.read_text(encoding="utf-8")
    assert proc.stderr == ""


def test_the_drivers_lines_name_a_file_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver's stderr lines pass the output step: a U+202E or an escape in the file's name
    git hands it never reaches the terminal raw."""
    monkeypatch.delenv(merge.REPORT_ENV, raising=False)
    files = {n: tmp_path / n for n in ("base", "ours", "theirs")}
    files["base"].write_text("- **a** — one — t — 2026-12-01\n", "utf-8")
    files["ours"].write_text("- **a** — two — t — 2026-12-01\n", "utf-8")
    files["theirs"].write_text("- **a** — three — t — 2026-12-01\n", "utf-8")
    assert merge.driver(files["base"], files["ours"], files["theirs"], "AI/x\u202e\x1b[2J.md") == 0
    err = capsys.readouterr().err
    assert "\u202e" not in err
    assert "\x1b" not in err
    assert "both sides changed AI/x\\u202e\\x1b[2J.md:1" in err
