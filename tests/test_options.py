"""One declaration per command (brain.options): the Typer commands are built from it and brain.cli's
fast path parses with it, so the two cannot drift. What is checked is the behaviour: for the same
argv both paths call the same runner with the same arguments, or the fast path steps aside and
Typer says what is wrong; and the same argv gives the same output, exit code and errors."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, ROOT, brain

from brain import cli, options, run
from brain.errors import UsageError

V = str(FIXTURE_VAULT)
RUNNERS = {
    "find": "run_find",
    "pack": "run_pack",
    "prime": "run_prime",
    "reindex": "run_reindex",
    "sync": "run_sync",
    "tend": "run_daily",
    "howto": "run_howto",
    "lessons": "run_lessons",
    "day": "run_day",
    "week": "run_week",
    "propose": "run_propose",
    "settle": "run_settle",
    **{
        c: f"run_{c}"
        for c in ("lint", "secrets", "verify", "doctor", "log", "ledger", "learn", "review")
    },
    **{
        c: f"run_{c}"
        for c in ("locate", "hooks", "uninstall", "update", "export", "import", "version")
    },
}

# (command, argv, whether the fast path takes it)
FORMS: list[tuple[str, list[str], bool]] = [
    ("find", ["--vault", V, "--limit=2", "-n", "3", "--", "--weird"], True),
    ("find", ["--json", "a", "--raw", "b"], True),
    ("find", ["--budget=10", "-", "x"], True),
    ("find", ["--terse", "- **h** — fact"], True),  # a bullet is a word, not an option
    ("find", ["-- why", "--json"], True),
    ("find", ["--budget", "0", "x"], True),  # the runner refuses it, on either path
    ("find", ["x", "-n3"], True),  # a short flag with its value glued on, as Click reads it
    ("find", ["x", "-n=3"], False),  # Click: the value "=3", not a number
    ("find", ["--help"], False),
    ("find", ["--limit", "many", "x"], False),
    ("find", ["--raw=yes", "x"], False),
    ("find", ["--vault"], False),
    ("find", ["--terse"], False),  # no query
    ("find", ["--limt", "2", "x"], False),
    ("pack", [], True),
    ("pack", ["payments"], True),
    ("pack", ["--budget=300", "--fresh", "--json", "--vault", "/v", "x"], True),
    ("pack", ["--", "--odd"], True),
    ("pack", ["a", "b"], False),
    ("pack", ["--budget", "lots"], False),
    ("pack", ["--fresh=1"], False),
    ("prime", [], True),
    ("prime", ["fix", "the", "--json", "build"], True),
    ("prime", ["--budget", "0"], True),
    ("reindex", [], True),
    ("reindex", ["--full", "--json", f"--vault={V}"], True),
    ("reindex", ["extra"], False),
    ("sync", [], True),
    ("sync", ["connect", "git@example.com:v.git", "--json"], True),
    ("sync", ["--background", "receive", "--vault", V], True),
    ("sync", ["a", "b", "c"], False),
    ("tend", ["--daily"], True),
    ("tend", [f"--vault={V}", "--daily"], True),
    ("tend", ["--daily", "--vault"], False),
]


def _call(
    command: str,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    *,
    fast: bool,
    runner_name: str | None = None,
) -> tuple[str, Any]:
    """What one path does with `brain COMMAND ARGV`: ("run", the runner's arguments),
    ("declined", None) when the fast path leaves it to Typer, ("usage", the message) for a usage
    error, ("help", None) for --help. The runner is replaced by a recorder."""
    calls: list[dict[str, Any]] = []
    name = runner_name or RUNNERS[command]
    runner = inspect.signature(getattr(run, name))

    def record(*args: Any, **kwargs: Any) -> int:
        bound = runner.bind(*args, **kwargs)  # positional or keyword, the same call
        bound.apply_defaults()
        calls.append(dict(bound.arguments))
        return 0

    with monkeypatch.context() as m:
        m.setattr(run, name, record)
        if fast:
            if command != "tend":  # tend's fast runner calls run_daily, recorded above
                m.setitem(cli._FAST, command, record)
        else:
            m.setattr(cli, "_FAST", {})
        try:
            code = cli._dispatch([command, *argv], typer=not fast)
        except cli.NotFast:
            return "declined", None
        except UsageError as exc:
            return "usage", exc.message
    if not calls:
        assert code == 0
        return "help", None
    assert len(calls) == 1
    return "run", calls[0]


@pytest.mark.parametrize(("command", "argv", "fast"), FORMS)
def test_fast_path_and_typer_call_the_runner_alike(
    command: str,
    argv: list[str],
    fast: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    quick = _call(command, argv, monkeypatch, fast=True)
    typer = _call(command, argv, monkeypatch, fast=False)
    if fast:
        assert quick[0] == "run", quick
        assert quick == typer
    else:
        assert quick == ("declined", None)
        assert typer[0] in ("run", "usage", "help"), typer
        if typer[0] == "usage":
            assert "\n" not in typer[1]
    capsys.readouterr()


def test_a_bullet_is_a_query_whatever_the_options_look_like() -> None:
    """`- **handle** — fact` (pasted from the vault) is a word on both paths, beside any option;
    with `-n1` Typer used to read it as an unknown option `-`."""
    for args in (["-n1", "- **libgit2** — hooks"], ["- **libgit2** — hooks", "--limit", "1"]):
        run = brain("find", "--vault", V, *args)
        assert run.code == 0, run
        assert run.out.startswith("AI/LEARNINGS.md:7 libgit2 — "), run
        assert run.out.count("\n") == 1


@pytest.mark.parametrize(
    ("command", "argv", "given"),
    [
        ("howto", ["run", "tests"], {"terms": ["run", "tests"], "limit": 5}),  # DEFAULTS
        ("howto", ["-n2", "--all", "--propose", "--to", "LEARNINGS", "x"], {"limit": 2}),
        ("howto", ["--json", "- run the tests"], {"terms": ["- run the tests"]}),
        ("lessons", [], {"since": "7d"}),
        ("lessons", ["--since=2w", "--kind", "retries", "--agent", "codex"], {"kind": "retries"}),
        ("day", [], {"day": None, "no_git": False}),
        ("day", ["yesterday", "--no-git", "--project", "api"], {"no_git": True}),
        ("week", ["--since", "2025-05-01", "--json"], {"since": "2025-05-01"}),
        ("tend", ["--dry-run", "--json"], {"dry_run": True, "daily": False}),
        ("tend", ["--quick", f"--vault={V}"], {"quick": True, "vault": V}),
        ("propose", ["- **h** — fact", "--to", "LEARNINGS"], {"line": ["- **h** — fact"]}),
        ("propose", ["--force", "--pr", "h", "—", "fact"], {"force": True, "pr": True}),
        ("settle", [f"--vault={V}"], {"vault": V}),
        ("reindex", ["--full", "--json"], {"full": True}),
        ("lint", ["--staged", "--strict", "AI/MEMORY.md"], {"paths": ["AI/MEMORY.md"]}),
        ("lint", [], {"paths": None, "strict": False}),
        ("secrets", ["--history", "--json"], {"history": True, "paths": None}),
        ("verify", ["--apply", "- **libgit2** — hooks"], {"handles": ["- **libgit2** — hooks"]}),
        ("doctor", [f"--vault={V}"], {"vault": V, "as_json": False}),
        ("log", ["--since", "7d"], {"since": "7d"}),
        ("ledger", ["--caller", "codex", "--json"], {"caller": "codex", "since": None}),
        ("learn", ["--apply"], {"apply": True}),
        ("review", ["after", "--json"], {"mode": "after"}),
        ("locate", ["- **libgit2** — hooks"], {"handle": ["- **libgit2** — hooks"]}),
        ("locate", [], {"handle": None}),
        ("hooks", [], {"action": None, "harness": None}),  # the runner's status
        ("hooks", ["on", "--harness", "codex"], {"action": "on", "harness": "codex"}),
        ("uninstall", ["--json"], {"as_json": True}),
        ("update", ["--check"], {"check": True, "rollback": False}),
        ("export", ["claude", "codex", "--check"], {"agents": ["claude", "codex"], "budget": None}),
        ("import", ["claude", "--dir", "/m", "--to", "LEARNINGS"], {"memory_dir": "/m"}),
        ("import", ["notes.md"], {"source": "notes.md", "to": None}),
        ("version", ["--json"], {"as_json": True}),
    ],
)
def test_one_declaration_for_every_declared_command(
    command: str, argv: list[str], given: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typer hands a command's runner (brain.run, the one glue from arguments to the command and
    its presenter) what brain.options parses from the same argv (defaults included): one
    declaration, whether or not the command has a fast path. A task that starts
    with a dash is words, as find's query is (Typer used to refuse it: "No such option: -")."""
    runner_name = "run_tend" if command == "tend" else None  # RUNNERS: the daily sweep's
    typer = _call(command, argv, monkeypatch, fast=False, runner_name=runner_name)
    assert typer[0] == "run", typer
    assert typer[1] == options.parse(command, argv)
    assert {k: typer[1][k] for k in given} == given


def test_howto_takes_a_task_that_starts_with_a_dash() -> None:
    run = brain("howto", "--json", "- run the tests")
    assert run.code == 1, run  # the command's answer (no transcripts here), not Typer's usage error
    assert "No such option" not in run.out + run.err
    assert "no transcripts are enabled" in run.out


def test_every_declared_command_is_a_typer_command() -> None:
    import typer

    from brain.app import app

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert set(options.COMMANDS) <= set(commands)


@pytest.mark.parametrize(
    ("command", "args", "parsed"),
    [
        ("find", ["--vault", V, "-n", "3", "q"], {"vault": V, "limit": 3, "query": ["q"]}),
        ("find", ["--terse"], None),
        ("pack", [], {"project": None}),
        ("pack", ["--", "--odd"], {"project": "--odd"}),
        ("pack", ["a", "b"], None),
        ("prime", [], {"prompt": None}),
        ("sync", ["connect", "u"], {"action": "connect", "url": "u"}),
        ("sync", ["status"], {"action": "status", "url": None}),
        ("reindex", ["x"], None),
        ("import", [], None),  # exactly one SOURCE
        ("import", ["a", "b"], None),
        ("import", ["a"], {"source": "a"}),
        ("tend", ["--daily", "--vault=/v"], {"daily": True, "vault": "/v"}),
    ],
)
def test_parse(command: str, args: list[str], parsed: dict[str, object] | None) -> None:
    got = options.parse(command, args)
    if parsed is None:
        assert got is None
    else:
        assert got is not None
        assert {k: got[k] for k in parsed} == parsed
        assert all(got[k] in (None, False) for k in set(got) - set(parsed))  # the defaults


# Typer for every argv: the fast paths emptied, the rest of brain.cli (its error handling) as is.
TYPER_RUN = (
    "import sys; from brain import cli; cli._FAST.clear(); sys.exit(cli.execute(sys.argv[1:]))"
)


@pytest.mark.parametrize(
    "args",
    [
        ["find", "--vault", V, "--limit=2", "-n", "3", "--", "--weird"],
        ["find", "--vault", V, "--limit=2", "-n", "3", "--", "--weird", "libgit2"],
        ["find", "--vault", V, "--raw", "--budget", "300", "--terse", "payments"],
        ["find", "--vault", V, "--json", "--budget=500", "the", "payments"],
        ["find", f"--vault={V}", "--", "-n", "c++"],
        ["find", "--vault", V, "--json", "--budget", "0", "x"],
        ["find", "--vault", "/nonexistent/vault", "x"],
        ["find", "--vault", V, "- **libgit2** — hooks"],
        ["pack", "--vault", V, "payments"],  # text: a JSON pack says whether it was cached
        ["pack", "--vault", V, "--budget", "0", "payments"],
        ["prime", "--vault", V, "--json", "libgit2", "hooks"],
    ],
)
def test_fast_path_and_typer_give_the_same_answer(args: list[str]) -> None:
    assert options.parse(args[0], args[1:]) is not None, "these arguments must take the fast path"
    # The index first: prime never builds one on the prompt's time (it prints nothing and starts a
    # reindex in the background), so the first path used to race that reindex for the second.
    assert brain("reindex", "--vault", V).code == 0
    fast = subprocess.run(
        [sys.executable, "-m", "brain", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    slow = subprocess.run(
        [sys.executable, "-c", TYPER_RUN, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode,
        slow.stdout,
        slow.stderr,
    )
    assert "Traceback" not in fast.stderr + slow.stderr


def test_an_unknown_option_falls_through_to_one_typer_line(tmp_path: Path) -> None:
    run = brain("find", "--vault", V, "--limt", "2", "x")
    assert run.code == 2
    assert run.out == ""
    assert run.err.count("\n") == 1
    assert "--limt" in run.err
    assert "--limit" in run.err  # Typer's suggestion: the declared flags


def test_names_are_the_typer_apps_commands() -> None:
    """brain.options.NAMES (what `brain verify` checks `brain X` against, without Typer) lists
    every command the Typer app registers, and nothing else."""
    import typer

    from brain.app import app

    registered = getattr(typer.main.get_command(app), "commands", {})
    assert len(set(options.NAMES)) == len(options.NAMES)
    assert sorted(options.NAMES) == sorted(registered)


def test_reindex_at_a_terminal_takes_the_fast_path_and_draws_its_bar(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The progress bar is the runner's (brain.run.progress_bar), so a terminal no longer sends
    reindex through Typer for it: both paths draw the same bar."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with run.progress_bar("Embedding", enabled=True) as bar:
        assert bar is not None
        bar(250, 500)
    with run.progress_bar("Embedding", enabled=False) as bar:  # --json: no bar
        assert bar is None
    assert cli._dispatch(["reindex", "--vault", V, "--json"], typer=False) == 0  # not NotFast
    assert isinstance(json.loads(capsys.readouterr().out), dict)
