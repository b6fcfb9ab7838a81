"""The hooks' log (the state dir's logs/hooks.log): a line per run of pack, prime and settle,
saying for which program and session, what it served or why nothing, and how many bytes the
agent got; bounded (moved to hooks.log.1 past brain.crash.LOG_MAX). Through the real path: the
hooks run as each agent runs them, the event JSON on stdin."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, brain_process
from test_pack import _event, repo
from test_prime import event, hook, ivault  # noqa: F401 (fixtures)
from test_settle import SESSION, blocked, passed, settle, stop, transcript  # noqa: F401

from brain import crash
from brain.config import state_dir

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d "


def runs() -> list[str]:
    """The hooks' log, oldest first, each line without its time stamp."""
    path = state_dir() / "logs" / "hooks.log"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    assert all(re.match(STAMP, line) for line in lines), lines
    return [line[20:] for line in lines]


def test_each_prime_says_what_it_served_or_why_nothing(ivault: Path) -> None:  # noqa: F811
    _, served = hook(ivault, event())
    _, again = hook(ivault, event())  # the same session: what stood out was served already
    _, off = hook(ivault, event("write a haiku about autumn", session="s-haiku"))
    _, chat = hook(ivault, event("thanks, that looks good", session="s-thanks"))
    assert (again.out, off.out, chat.out) == ("", "", "")
    size = len(served.out.encode("utf-8"))
    assert runs() == [
        f"prime claude session=4f1c2b9e: served 3 units (keyword); {size} bytes to the agent",
        "prime claude session=4f1c2b9e: nothing new: 3 units that stood out served earlier;"
        " 0 bytes to the agent",
        "prime claude session=s-haiku: nothing stood out (keyword); 0 bytes to the agent",
        "prime claude session=s-thanks: nothing: no words in the prompt worth searching;"
        " 0 bytes to the agent",
    ]


def test_each_stop_says_whether_settle_blocked_and_why_it_passed(
    stop: dict[str, Any],  # noqa: F811
) -> None:
    passed(settle({**stop, "stop_hook_active": True}))
    blocked(settle(stop))
    passed(settle(stop))
    who = f"settle claude session={SESSION[:8]}"
    assert runs() == [
        f"{who}: passed (active)",
        f"{who}: blocked, 3 files named",
        f"{who}: passed (asked)",
    ]


def test_a_session_start_says_what_pack_served(tmp_path: Path) -> None:
    here = repo(tmp_path, "payments")
    run = brain_process(
        "pack", input=_event(here), cwd=tmp_path, env={"BRAIN_VAULT": str(FIXTURE_VAULT)}
    )
    size = len(run.out.encode("utf-8"))
    assert runs() == [f"pack claude session=abc123: served payments; {size} bytes to the agent"]


def test_by_hand_no_line_is_written(tmp_path: Path) -> None:
    run = brain_process("pack", "--vault", str(FIXTURE_VAULT), "payments", input="")
    assert run.code == 0, run
    assert runs() == []


def test_the_log_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past LOG_MAX the log moves to hooks.log.1 (the one before dropped): two files at most."""
    monkeypatch.setattr(crash, "LOG_MAX", 1000)
    for n in range(200):
        crash.log_text(crash.HOOKS_LOG, crash.hook_run("prime", "claude", f"s{n:04}", "x" * 40))
    folder = state_dir() / "logs"
    assert sorted(p.name for p in folder.iterdir()) == ["hooks.log", "hooks.log.1"]
    assert all(p.stat().st_size < 1000 + 100 for p in folder.iterdir())
    assert runs()[-1].startswith("prime claude session=s0199: ")


def test_a_run_that_ends_before_it_answers_says_why(tmp_path: Path, ivault: Path) -> None:  # noqa: F811
    """A resumed start (its conversation holds the pack it began with) and a prompt while the
    index is rebuilt each leave a line saying why the agent got nothing; they left none."""
    here = repo(tmp_path, "payments")
    env = {"BRAIN_VAULT": str(FIXTURE_VAULT)}
    run = brain_process("pack", input=_event(here, source="resume"), cwd=tmp_path, env=env)
    assert (run.code, run.out) == (0, "")
    from brain import config

    path = config.index_path(ivault)
    path.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    _, rebuilt = hook(ivault, event(session="s-rebuild"))
    assert (rebuilt.code, rebuilt.out) == (0, "")
    assert runs() == [
        "pack claude session=abc123: nothing: a resumed session has its pack",
        "prime claude session=s-rebuil: nothing: the index is being rebuilt",
    ]
