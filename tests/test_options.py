"""One declaration per command (brain.options): the Typer commands are built from it and brain.cli's
fast path parses with it, so the two cannot drift. What is checked is the behaviour: for the same
argv both paths call the same runner with the same arguments, or the fast path steps aside and
Typer says what is wrong; and the same argv gives the same output, exit code and errors."""

from __future__ import annotations

import ast
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


def runner_of(command: str, argv: list[str]) -> str:
    """The runner brain.run has for the command `brain COMMAND ARGV` runs: run_recall_search for
    `recall x` and `recall search x`, run_inbox_drop for `inbox drop 2`."""
    key, _ = options.command_of([*command.split(), *argv])
    return "run_" + key.replace(" ", "_")


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
    name = runner_name or RUNNERS.get(command) or runner_of(command, argv)
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
            code = cli._dispatch([*command.split(), *argv], typer=not fast)
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
        # a float, a repeatable option, an interactive confirm, subcommands
        ("install", [], {"path": None, "init": False, "yes": False}),
        ("install", ["/v", "-y", "--dry-run", "--json"], {"path": "/v", "yes": True}),
        ("install", ["--vault=/v", "--init"], {"vault": "/v", "init": True}),
        ("desk", [], {"port": 0, "idle": 3600.0, "no_open": False}),  # DEFAULTS
        ("desk", ["--idle", "1e1", "--port=8", "--no-open"], {"idle": 10.0, "port": 8}),
        ("desk", ["--idle=1_5", f"--vault={V}"], {"idle": 15.0}),  # float() reads it as Click
        ("mcp", [], {"allow_host": None, "port": None, "http": False}),
        ("mcp", ["--http", "--allow-host", "a", "--allow-host=b"], {"allow_host": ["a", "b"]}),
        ("mcp", ["--allow-host", "-x", "--port", "0"], {"allow_host": ["-x"], "port": 0}),
        ("recall search", ["-n3", "--all", "fix", "ci"], {"query": ["fix", "ci"], "limit": 3}),
        ("recall search", ["x"], {"limit": 10, "since": None, "all_sessions": False}),
        ("recall search", ["- run the tests"], {"query": ["- run the tests"]}),
        ("recall full", ["ab12", "--json"], {"turn": "ab12", "as_json": True}),
        ("recall sessions", [], {"query": None, "limit": 20}),
        ("recall sessions", ["--since=7d", "--agent", "codex", "ci"], {"query": ["ci"]}),
        ("recall sync", ["--json"], {"as_json": True}),
        ("recall sources", [], {"as_json": False}),
        ("recall enable", ["codex"], {"agent": "codex"}),
        ("recall disable", ["claude", "--json"], {"agent": "claude"}),
        ("inbox", [f"--vault={V}", "--json"], {"vault": V, "as_json": True}),
        ("inbox approve", ["1-3", "--to", "LEARNINGS"], {"numbers": ["1-3"], "to": "LEARNINGS"}),
        ("inbox drop", ["2", "4", "--json"], {"numbers": ["2", "4"]}),
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


def test_every_command_and_subcommand_is_in_the_test_above() -> None:
    """Each command brain.options declares (but brain's own options and recall's group, which
    runs nothing of its own) has its Typer parse held to brain.options.parse, above or (the
    fast paths) in FORMS."""
    marks = test_one_declaration_for_every_declared_command.pytestmark  # type: ignore[attr-defined]
    tested = {form[0] for mark in marks if mark.name == "parametrize" for form in mark.args[1]}
    tested |= {command for command, _, fast in FORMS if fast}
    assert tested == set(options.COMMANDS) - {"", "recall"}


@pytest.mark.parametrize(
    ("argv", "key"),
    [
        (["recall", "fix", "ci", "-n", "3"], "recall search"),  # QUERY is `search QUERY`
        (["recall", "--json", "- run the tests"], "recall search"),
        (["recall", "--", "sync", "errors"], "recall search"),  # a query, not the subcommand
        (["recall", "--full", "ab12", "--json"], "recall full"),  # the old spellings
        (["recall", "--json", "--full=ab12"], "recall full"),
        (["recall", "--sessions", "ci"], "recall sessions"),
        (["recall", "--sync"], "recall sync"),
        (["recall", "--enable", "codex"], "recall enable"),
    ],
)
def test_recall_alone_and_its_old_spellings_are_its_subcommands(
    argv: list[str], key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typer hands the subcommand's runner what brain.options parses for the subcommand the
    argv means (brain.options.command_of): `brain recall "- run the tests"` included, which
    Typer used to refuse ("No such option: -")."""
    assert options.command_of(argv)[0] == key
    typer = _call(argv[0], argv[1:], monkeypatch, fast=False)
    assert typer[0] == "run", typer
    assert typer[1] == options.parse(*options.command_of(argv))


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("desk", ["--idle", "0x10"]),  # float() refuses it, and so does Click
        ("desk", ["--idle", "soon"]),
        ("desk", ["--port", "1.5"]),
        ("mcp", ["--allow-host"]),  # no value
        ("mcp", ["--http=yes"]),
        ("install", ["a", "b"]),
        ("recall full", []),
        ("recall full", ["a", "b"]),
        ("recall search", ["--limit", "x", "q"]),
        ("inbox approve", []),
        ("inbox drop", ["--to", "MEMORY", "1"]),  # drop has no --to
    ],
)
def test_what_the_parse_declines_typer_refuses(
    command: str, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where brain.options.parse gives up (None), Typer stops with one usage line too: the fast
    parse never reads as valid what Typer would refuse, for the new kinds as for the old."""
    assert options.parse(command, argv) is None
    typer = _call(command, argv, monkeypatch, fast=False)
    assert typer[0] == "usage", typer
    assert "\n" not in typer[1]


def _typer_commands() -> dict[str, Any]:
    """Every command and subcommand of the Typer app, by its words after `brain` ("" for the
    app itself): the Click command Typer builds."""
    import typer

    from brain.app import app

    found: dict[str, Any] = {}

    def walk(key: str, command: Any) -> None:
        found[key] = command
        for word, sub in getattr(command, "commands", {}).items():
            walk(f"{key} {word}".strip(), sub)

    walk("", typer.main.get_command(app))
    return found


def test_howto_takes_a_task_that_starts_with_a_dash() -> None:
    run = brain("howto", "--json", "- run the tests")
    assert run.code == 1, run  # the command's answer (no transcripts here), not Typer's usage error
    assert "No such option" not in run.out + run.err
    assert "no transcripts are enabled" in run.out


@pytest.mark.parametrize("argv", [["recall"], ["recall", "search"], ["recall", "-n", "2"]])
def test_recall_takes_a_query_that_starts_with_a_dash(argv: list[str]) -> None:
    """As find and howto do: the words reach recall (no transcripts here), where Typer used to
    stop at "No such option: -"."""
    run = brain(*argv, "- run the tests")
    assert run.code == 1, run
    assert "No such option" not in run.out + run.err
    assert "no transcripts are enabled" in run.err


def test_every_command_and_subcommand_is_declared_and_built_from_its_declaration() -> None:
    """brain.options declares every command and subcommand the Typer app has, and each one's
    parameters, flags and hidden flags are the declaration's, in its order: nothing declared in
    app.py alone (install, desk, mcp, recall's and the inbox's subcommands once were)."""
    commands = _typer_commands()
    assert sorted(commands) == sorted(options.COMMANDS)
    for key, command in commands.items():
        arguments, declared = options.COMMANDS[key]
        params = [p for p in command.params if p.name != "help"]
        assert [p.name for p in params] == [a[0] for a in arguments] + [o[1] for o in declared]
        flags = [tuple(p.opts + p.secondary_opts) for p in params[len(arguments) :]]
        assert flags == [o[0] for o in declared], key
        assert [p.hidden for p in params[len(arguments) :]] == [o[3] is None for o in declared]


def test_every_command_is_glued_by_its_runner_in_brain_run() -> None:
    """One glue: each command and subcommand of the Typer app (but brain itself and recall's
    group, which run nothing of their own) has a runner brain.run.run_NAME that takes exactly
    the parameters Typer parses for it, the same runner whichever path parsed the arguments."""
    for key, command in _typer_commands().items():
        if key in ("", "recall"):
            continue
        runner = getattr(run, "run_" + key.replace(" ", "_"), None)
        assert runner is not None, f"brain.run has no runner for `brain {key}`"
        names = [p.name for p in command.params if p.name != "help"]
        assert sorted(inspect.signature(runner).parameters) == sorted(names), key


def test_app_declares_no_option_of_its_own() -> None:
    """app.py builds a Typer option or argument in `_parameter` alone, from brain.options: no
    `typer.Option` / `typer.Argument` anywhere else in it (the second way to declare one)."""
    tree = ast.parse((ROOT / "brain" / "app.py").read_text(encoding="utf-8"))
    builder = next(
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_parameter"
    )
    inside = {id(n) for n in ast.walk(builder)}
    outside = [
        f"line {n.lineno}: {ast.unparse(n)}"
        for n in ast.walk(tree)
        if (
            (isinstance(n, ast.Attribute) and n.attr in ("Option", "Argument"))
            or (isinstance(n, ast.ImportFrom) and n.module == "typer")
            or (isinstance(n, ast.Name) and n.id in ("Option", "Argument"))
        )
        and id(n) not in inside
    ]
    assert outside == []


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
