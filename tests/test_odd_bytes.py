"""Odd bytes through the real CLI: argv that is not UTF-8, transcripts that hold what JSON allows
but nothing downstream can store, and the crash report that must never crash itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Run, brain

from brain import crash
from brain.config import state_dir

FF = "\udcff"  # how Python decodes the byte 0xff of argv (surrogateescape); brain() passes 0xff
TRANSCRIPTS = ROOT / "testdata" / "transcripts"
SESSION = "5b0c1f7e-0000-4000-8000-000000000001"


def crashes() -> list[Path]:
    folder = state_dir() / "crashes"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def assert_one_clean_line(run: Run) -> None:
    assert "Traceback" not in run.err + run.out
    assert "internal error" not in run.err
    assert run.err.count("\n") <= 2, run.err  # the note on the bytes, and the answer's own line
    assert crashes() == []


# --- argv ------------------------------------------------------------------------------------


def test_find_with_only_an_undecodable_byte_is_one_line(vault: Path) -> None:
    run = brain("find", "--vault", str(vault), FF)
    assert_one_clean_line(run)
    assert run.code == 2
    assert "not valid UTF-8 (byte 0xff)" in run.err


@pytest.mark.parametrize("extra", [[], ["--json"], ["--terse"]])
def test_find_searches_the_words_around_an_undecodable_byte(vault: Path, extra: list[str]) -> None:
    run = brain("find", "--vault", str(vault), f"paynova {FF}", *extra)
    assert_one_clean_line(run)
    assert run.code == 0
    assert "paynova" in run.out.lower()
    if extra == ["--json"]:
        assert json.loads(run.out)["query"] == "paynova \ufffd"
    rows = _usage_queries()
    assert rows == ["paynova \ufffd"]  # logged, repaired: SQLite never sees a surrogate


def _usage_queries() -> list[str]:
    from brain.config import usage_log_path
    from brain.usage import connect, events

    conn = connect(usage_log_path())
    try:
        return [e.query for e in events(conn)]
    finally:
        conn.close()


def test_propose_refuses_an_undecodable_byte_and_writes_nothing(vault: Path) -> None:
    inbox = (vault / "AI" / "INBOX.md").read_bytes()
    run = brain("propose", "--vault", str(vault), f"okapi {FF} — a fact")
    assert_one_clean_line(run)
    assert run.code == 1
    assert "not valid UTF-8 text (byte 0xff)" in run.err
    doc = brain("propose", "--vault", str(vault), "--json", f"okapi {FF} — a fact").json()
    assert doc["error"].startswith("not proposed: it is not valid UTF-8")
    assert (vault / "AI" / "INBOX.md").read_bytes() == inbox


@pytest.mark.parametrize(
    "args",
    [
        ["locate", f"paynova {FF}"],
        ["pack", f"pay{FF}ments"],
        ["ledger", "--caller", f"x{FF}"],
        ["log"],
        ["doctor"],
    ],
)
def test_other_commands_take_an_undecodable_byte_without_a_traceback(
    vault: Path, args: list[str]
) -> None:
    run = brain(*args[:1], "--vault", str(vault), *args[1:])
    assert_one_clean_line(run)
    assert run.code in (0, 1)


def test_a_vault_folder_whose_name_is_not_utf8(vault: Path, tmp_path: Path) -> None:
    odd = tmp_path / f"v{FF}"
    shutil.copytree(vault, odd)
    for args in (["find", "paynova"], ["find", "paynova", "--json"], ["ledger"], ["log"]):
        run = brain(*args, "--vault", str(odd))
        assert_one_clean_line(run)
        assert run.code == 0, (args, run)
    doc = json.loads(brain("propose", "--vault", str(odd), "--json", "kiwi — a fruit").out)
    assert doc["action"] == "proposed"
    assert doc["vault"].endswith("v\udcff")  # printed as the JSON escape, read back the same


# --- files that are not text ------------------------------------------------------------------


def test_a_binary_file_named_md_is_one_problem_not_thousands(vault: Path) -> None:
    """Random bytes saved as .md, and a note saved as UTF-16: each is skipped by the index and
    named once by reindex and lint, where each odd line used to be a problem and a unit."""
    import random

    noise = random.Random(7).randbytes(200_000)  # noqa: S311 - reproducible, not crypto
    (vault / "notes" / "blob.md").write_bytes(noise)
    (vault / "notes" / "wide.md").write_bytes("# Wombat\n\nwombat burrows\n".encode("utf-16"))
    (vault / "notes" / "stray.md").write_bytes(b"# Stray\n\ncaf\xe9 quokka byte\n")
    run = brain("reindex", "--vault", str(vault))
    assert run.code == 0, run.err
    assert "3 problems" in run.err
    lint = brain("lint", "--vault", str(vault))
    why = "not a UTF-8 text file (binary, or UTF-16); skipped"
    assert f"notes/blob.md: {why}" in lint.out
    assert f"notes/wide.md: {why}" in lint.out
    assert "notes/stray.md:3: not valid UTF-8" in lint.out  # a stray byte: still a text file
    assert lint.out.count("notes/blob.md") == 1
    assert lint.out.count("notes/wide.md") == 1
    assert brain("find", "--vault", str(vault), "wombat").code == 1
    assert "quokka" in brain("find", "--vault", str(vault), "quokka").out
    import sqlite3

    from brain.config import index_path

    with sqlite3.connect(index_path(vault)) as conn:
        paths = {r[0] for r in conn.execute("SELECT path FROM units")}
    assert "notes/blob.md" not in paths
    assert "notes/stray.md" in paths


# --- the crash report ------------------------------------------------------------------------

# An unexpected error (here planted in find) whose message and argv hold an undecodable byte.
BOOM = """
import sys
import brain.commands.find as f
def boom(*args, **kwargs):
    raise RuntimeError("exploded on " + sys.argv[-1])
f.find = boom
from brain.cli import main
main()
"""


def test_an_internal_error_with_odd_bytes_writes_its_crash_report(vault: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BOOM, "find", "--vault", str(vault), f"x{FF}"],
        capture_output=True,
        env=os.environ,
        check=False,
    )
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 3, err
    assert "Traceback" not in err
    *_, last = err.splitlines()
    assert last.startswith("brain: internal error (RuntimeError: exploded on x\\xff)")
    (report,) = crashes()
    assert str(report) in err
    text = report.read_text(encoding="utf-8")
    assert "argv: find --vault" in text
    assert "x\\udcff" in text
    assert "RuntimeError: exploded on x\\udcff" in text


def test_two_crash_reports_in_one_second_get_two_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crash.time, "strftime", lambda fmt, *a: "crash-20261201-120000")
    first = crash.crash_report(RuntimeError("one"), ["find", "a"])
    second = crash.crash_report(RuntimeError("two"), ["find", "b"])
    assert first != second
    assert [p.name for p in crashes()] == [
        "crash-20261201-120000-2.txt",
        "crash-20261201-120000.txt",
    ]
    assert "RuntimeError: one" in Path(first).read_text(encoding="utf-8")
    assert "RuntimeError: two" in Path(second).read_text(encoding="utf-8")


def test_the_crash_report_never_raises(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # the state dir cannot be made
    assert crash.crash_report(RecursionError(FF), [FF]) == "(the crash report could not be written)"


# --- transcripts -----------------------------------------------------------------------------

ZEBRA: dict[str, Any] = {
    "parentUuid": None,
    "isSidechain": False,
    "userType": "external",
    "cwd": "/home/dev/shop",
    "sessionId": SESSION,
    "type": "user",
    "uuid": "c1000000-0000-4000-8000-0000000000aa",
    "timestamp": "2025-05-08T09:30:00.000Z",
    "message": {"role": "user", "content": "zebra crossing on Elm street"},
}


def _line(kind: str) -> str:
    """One transcript line holding one odd input (Python's json writes NaN and lone surrogates as
    Node's JSON.stringify would: `NaN` is not JSON but Python reads it)."""
    if kind == "deep":
        return "[" * 100_000 + "]" * 100_000
    if kind == "deep-inside":
        return json.dumps(ZEBRA)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    rec = json.loads(json.dumps(ZEBRA))
    if kind in ("1e308", "nan", "-inf", "1e17", "year-0"):
        stamp: Any = {"1e308": 1e308, "nan": float("nan"), "-inf": float("-inf"), "1e17": 1e17}
        rec["timestamp"] = stamp.get(kind, "0001-01-01T00:00:00+05:00")  # before year 1 in UTC
    elif kind == "surrogate-body":
        rec["message"]["content"] = "zebra crossing \ud83d cut mid-emoji"
    elif kind == "surrogate-everywhere":
        rec["cwd"] = "/home/\ud800"
        rec["uuid"] = "c1000000-\udc00"
        rec["sessionId"] = SESSION + "\ud800"
        rec["message"]["content"] = "zebra crossing \ud800"
    elif kind == "surrogate-title":
        return json.dumps({"type": "custom-title", "customTitle": "zebra \ud83d"})
    return json.dumps(rec)


@pytest.fixture
def claude(tmp_path: Path) -> dict[str, str]:
    shutil.copytree(TRANSCRIPTS / "claude", tmp_path / "claude")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert brain("recall", "--enable", "claude", env=env).code == 0
    return env


def _transcript(env: dict[str, str]) -> Path:
    return next(Path(env["CLAUDE_CONFIG_DIR"]).glob(f"projects/*/{SESSION}.jsonl"))


@pytest.mark.parametrize(
    "kind",
    [
        "1e308",
        "nan",
        "-inf",
        "1e17",
        "year-0",
        "deep",
        "deep-inside",
        "surrogate-body",
        "surrogate-everywhere",
        "surrogate-title",
    ],
)
def test_one_odd_transcript_line_never_breaks_recall(claude: dict[str, str], kind: str) -> None:
    with _transcript(claude).open("a", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(_line(kind) + "\n")
    run = brain("recall", "paynova webhook", env=claude)
    assert_one_clean_line(run)
    assert run.code == 0  # every other turn is still found
    sync = brain("recall", "--sync", "--json", env=claude).json()
    zebra = brain("recall", "zebra crossing", "--json", env=claude)
    assert_one_clean_line(zebra)
    if kind.startswith("deep"):
        assert sync["skipped_count"] == 1  # the line is skipped and counted
        assert zebra.code == 1
    elif kind == "surrogate-title":
        assert brain("recall", "paynova", "--json", env=claude).json()["hits"][0]["title"] == (
            "zebra \ufffd"
        )
    else:  # stored, the bad part repaired: no date, or U+FFFD for the surrogate
        hit = next(h for h in zebra.json()["hits"] if "zebra" in h["snippet"])
        full = brain("recall", "--full", hit["id"], "--json", env=claude).json()
        if kind.startswith("surrogate"):
            assert "\ufffd" in full["body"]
        else:
            assert full["at"] is None  # undated: null (README: JSON)


@pytest.mark.parametrize("raw", [b"\xed\xa0\x80", b"\xff\xfe"])
def test_a_transcript_line_with_bytes_that_are_not_utf8_never_breaks_a_command(
    claude: dict[str, str], raw: bytes
) -> None:
    """A line holding the UTF-8 bytes of a lone surrogate (ED A0 80, which Python's JSON reads
    as U+D800 and SQLite cannot store), or bytes that are no UTF-8 at all, is read with each bad
    byte replaced: every command that reads the transcripts answers, and the turn is kept."""
    line = json.dumps(ZEBRA, ensure_ascii=False).encode("utf-8").replace(b"Elm", b"Elm " + raw)
    with _transcript(claude).open("ab") as fh:
        fh.write(line + b"\n")
    for args in (
        ["recall", "zebra crossing"],
        ["howto", "zebra crossing"],
        ["lessons"],
        ["day"],
        ["week"],
    ):
        run = brain(*args, env=claude)
        assert_one_clean_line(run)
        assert run.code in (0, 1), (args, run)
    zebra = brain("recall", "zebra crossing", "--json", env=claude)
    assert zebra.code == 0, zebra
    hit = next(h for h in zebra.json()["hits"] if "zebra" in h["snippet"])
    full = brain("recall", "--full", hit["id"], "--json", env=claude).json()
    assert "Elm \ufffd" in full["body"]


def test_a_lone_surrogate_in_a_codex_call_s_nested_json_never_breaks_a_command(
    tmp_path: Path,
) -> None:
    """Codex keeps a call's arguments and output as JSON inside a JSON string: a lone surrogate
    spelled out there (`\\ud800`) is repaired as in the line itself, never stored as one."""
    shutil.copytree(TRANSCRIPTS / "codex", tmp_path / "codex")
    env = {"CODEX_HOME": str(tmp_path / "codex")}
    assert brain("recall", "--enable", "codex", env=env).code == 0
    call = {"type": "function_call", "name": "shell", "call_id": "call_9"}
    call["arguments"] = json.dumps({"command": ["rg", "zebra \ud800"]})
    out = {"type": "function_call_output", "call_id": "call_9"}
    out["output"] = json.dumps({"output": "zebra \udc00", "metadata": {"exit_code": 1}})
    (rollout,) = (tmp_path / "codex").rglob("rollout-*.jsonl")
    with rollout.open("a", encoding="utf-8") as fh:
        for i, payload in enumerate((call, out)):
            stamp = f"2025-05-08T11:00:0{5 + i}.000Z"
            rec = {"timestamp": stamp, "type": "response_item", "payload": payload}
            fh.write(json.dumps(rec) + "\n")
    for args in (["recall", "zebra"], ["howto", "zebra"], ["lessons"], ["day"], ["week"]):
        run = brain(*args, env=env)
        assert_one_clean_line(run)
        assert run.code in (0, 1), (args, run)


def test_gemini_documents_with_odd_values(tmp_path: Path, isolated_env: Path) -> None:
    chats = isolated_env / ".gemini" / "tmp" / "abc" / "chats"
    chats.mkdir(parents=True)
    doc = {
        "sessionId": "g1",
        "messages": [
            {"id": "g1-1", "type": "user", "timestamp": float("nan"), "content": "zebra \ud800"},
            {"id": "g1-2", "type": "gemini", "timestamp": 1e308, "content": "zebra answer"},
        ],
    }
    (chats / "session-1.json").write_text(json.dumps(doc), encoding="utf-8")
    (chats / "session-2.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert brain("recall", "--enable", "gemini").code == 0
    run = brain("recall", "zebra", "--json")
    assert_one_clean_line(run)
    assert {h["id"] for h in run.json()["hits"]} == {"g1-1", "g1-2"}
    assert brain("recall", "--sync", "--json").json()["skipped_count"] == 1


def test_recall_with_undecodable_bytes_in_argv(claude: dict[str, str]) -> None:
    run = brain("recall", f"paynova {FF}", env=claude)
    assert_one_clean_line(run)
    assert run.code == 0
    for args in (["--full", f"c1{FF}"], ["paynova", "--cwd", f"/home/{FF}"]):
        run = brain("recall", *args, env=claude)
        assert_one_clean_line(run)
        assert run.code == 1
    mine = {**claude, "BRAIN_SESSION": FF}
    assert_one_clean_line(brain("recall", "paynova", env=mine))


def test_recall_ids_are_unique_and_full_takes_each(claude: dict[str, str], tmp_path: Path) -> None:
    shutil.copytree(TRANSCRIPTS / "codex", tmp_path / "codex")
    env = {**claude, "CODEX_HOME": str(tmp_path / "codex")}
    brain("recall", "--enable", "codex", env=env)
    listing = brain("recall", "paynova webhook ledger", env=env)
    assert listing.code == 0
    shown = [line.split()[0] for line in listing.out.splitlines()]
    ids = [
        h["id"] for h in brain("recall", "paynova webhook ledger", "--json", env=env).json()["hits"]
    ]
    assert len(shown) == len(ids) >= 4
    for short, full in zip(shown, ids, strict=True):
        assert full.startswith(short)
        assert len(short) >= 8
        assert brain("recall", "--full", short, "--json", env=env).json()["id"] == full
    assert any(len(s) == 8 for s in shown)  # a codex id: short where nothing shares its start
    assert all(len(s) == 36 for s in shown if s.startswith("c1000000"))
