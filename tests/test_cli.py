"""The command line as a whole: entry points, help, version, the usage log, and bad input."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, ROOT, Run, brain, brain_process

from brain.config import usage_log_path
from brain.usage import connect, events

V = str(FIXTURE_VAULT)


def commands() -> dict[str, str]:
    """Every command the Typer app declares, with its help text."""
    import typer

    from brain.app import app

    group = typer.main.get_command(app)
    return {name: cmd.help or "" for name, cmd in group.commands.items()}  # type: ignore[attr-defined]


def assert_clean(run: Run) -> None:
    assert "Traceback" not in run.err
    assert "Traceback" not in run.out
    assert "internal error" not in run.err


def usage_rows() -> list[tuple[str, str, str, str, int, int]]:
    conn = connect(usage_log_path())
    try:
        return [(e.command, e.caller, e.session, e.query, e.entries, e.bytes) for e in events(conn)]
    finally:
        conn.close()


# --- entry points and help ----------------------------------------------------------------------


def test_python_dash_m_brain_without_arguments_prints_help() -> None:
    run = brain_process()
    assert run.code == 0, run
    assert "Usage" in run.out
    for name in commands():
        assert name in run.out


def test_console_script_and_module_agree() -> None:
    script = Path(sys.executable).with_name("brain")
    if not script.exists():
        pytest.skip("the console script is not installed in this environment")
    proc = subprocess.run(
        [str(script), "find", "--vault", V, "pygit2"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == brain_process("find", "--vault", V, "pygit2").out


def test_help_lists_every_command_with_help_text() -> None:
    declared = commands()
    assert {"find", "reindex", "sync", "lint", "version"} <= set(declared)
    run = brain("--help")
    assert run.code == 0
    for name, text in declared.items():
        assert re.search(rf"^\W*{re.escape(name)}\s", run.out, re.MULTILINE), name
        assert text.strip(), f"`brain {name}` has no help text"
    assert brain("-h").out == run.out


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_has_its_own_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from brain.app import run

    assert run([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"Usage: brain {name}" in " ".join(out.split())
    first_words = " ".join(commands()[name].split()[:3])
    assert first_words in " ".join(out.split())


def test_each_command_s_short_help_is_one_whole_sentence() -> None:
    """`brain --help` shows the first paragraph of each docstring: one line, ending its sentence,
    so that a narrow terminal wraps it rather than cutting it mid-sentence."""
    for name, text in commands().items():
        first = text.strip().split("\n\n")[0]
        assert "\n" not in first, f"`brain {name}`'s short help runs over more than one line"
        assert first.endswith("."), f"`brain {name}`'s short help is not a whole sentence"
    run = brain("--help", env={"COLUMNS": "80"})
    assert run.code == 0
    assert "newest\n" not in run.out  # the cut `brain pack` used to show


def test_install_help_shows_each_option_once() -> None:
    run = brain("install", "--help", env={"COLUMNS": "100"})
    assert run.code == 0
    assert "--init" in run.out
    assert "--init,--yes" not in run.out
    assert "--yes" not in run.out  # an alias kept for scripts, not advertised


def test_dash_dash_version_is_brain_version() -> None:
    run = brain("--version")
    assert run.code == 0, run
    assert run.out == brain("version").out
    assert run.out.startswith("brain ")
    assert "--version" in brain("--help").out


def test_command_help_via_the_cli() -> None:
    run = brain("find", "--help")
    assert run.code == 0, run
    assert "--budget" in run.out
    assert "--limit" in run.out


def test_the_command_reference_mentions_every_command() -> None:
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    missing = [name for name in commands() if f"brain {name}" not in text]
    assert missing == [], f"commands missing from docs/commands.md: {missing}"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["frobnicate"], "No such command"),
        (["find", "--bogus", "x"], "No such option"),
        (["reindex", "--vault"], "requires an argument"),
        (["find", "--vault", V, "--limit", "many", "x"], "many"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], says: str) -> None:
    run = brain_process(*args)  # the real process's exit code
    assert run.code == 2, run
    assert run.err.startswith("brain: ")
    assert run.err.count("\n") == 1
    assert says in run.err
    assert_clean(run)


# --- version ------------------------------------------------------------------------------------


def test_version_names_this_checkout() -> None:
    if (ROOT / "brain" / "_build.py").exists():
        pytest.skip("a release build carries its own tag and commit")
    if not (ROOT / ".git").exists():
        pytest.skip("not running from a git checkout")
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    run = brain("version")
    assert run.code == 0, run
    m = re.fullmatch(r"brain dev \((?P<commit>[0-9a-f]{12})(?P<dirty>-dirty)?\)\n", run.out)
    assert m, run.out
    assert m["commit"] == head
    doc = brain("version", "--json").json()
    assert doc["version"] == "dev"
    assert doc["commit"].removesuffix("-dirty") == head
    assert doc["python"] == ".".join(map(str, sys.version_info[:3]))


def test_version_needs_no_vault() -> None:
    run = brain("version", env={"BRAIN_VAULT": "/nonexistent"})
    assert run.code == 0
    assert run.out.startswith("brain ")


# --- --vault ------------------------------------------------------------------------------------

# The commands that work on no one vault, so take no --vault: README.md names them ("the others
# take none"). Every other command and subcommand takes it, with the same meaning.
NO_VAULT = ("version", "hooks", "recall", "day", "week", "update", "uninstall")
# What a command needs besides its required words to read its vault (lessons and howto read it
# only to propose, prime for a prompt, pack for a project); the stop hook reads it at a stop.
TO_READ = {
    "howto": ["--propose"],
    "lessons": ["--propose"],
    "prime": ["what the vault holds"],
    "pack": ["paynova"],  # outside a repository, pack with no project packs nothing
}
STOP = '{"hook_event_name": "Stop", "session_id": "s1", "transcript_path": "/nonexistent.jsonl"}'


def vault_commands() -> list[list[str]]:
    """Every command, subcommand and group with options of its own (`brain inbox`) that the Typer
    app declares outside NO_VAULT, as the words that run it: its name, then a word for each
    argument it requires. A command added later is in it without a line here."""
    import typer

    from brain.app import app

    found: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        if path[:1] and path[0] in NO_VAULT:
            return
        if path:
            words = [p for p in cmd.params if p.param_type_name == "argument" and p.required]
            found.append([*path, *["1"] * len(words)])
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize("words", vault_commands(), ids=" ".join)
def test_every_command_that_reads_a_vault_takes_dash_dash_vault(
    words: list[str], tmp_path: Path
) -> None:
    """`--vault` is accepted and names the vault the command reads: given a file, each says so
    (the hooks, which never speak, in their log), naming it; no usage error."""
    given = tmp_path / "not-a-vault.txt"
    given.write_text("a file, not a folder\n", encoding="utf-8")
    extra = TO_READ.get(words[0], [])
    stdin = STOP if words[0] == "settle" else None
    run = brain(*words, *extra, "--vault", str(given), input=stdin, cwd=tmp_path, timeout=60)
    assert_clean(run)
    logs = Path(os.environ["XDG_STATE_HOME"]) / "brain" / "logs"
    said = run.out + run.err + "".join(f.read_text("utf-8") for f in sorted(logs.glob("*.log")))
    assert "No such option" not in said
    assert run.code != 2, run
    assert f"{given} is a file" in said, run


@pytest.mark.parametrize("name", NO_VAULT)
def test_a_command_that_reads_no_vault_refuses_dash_dash_vault(name: str) -> None:
    """NO_VAULT holds only commands without --vault, and README.md names each of them."""
    run = brain(name, "--vault", V)
    assert run.code == 2, run
    assert "No such option: --vault" in run.err
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    claim = readme[readme.index("the others take none") :].split(".")[0]
    assert f"`{name}`" in claim


# --- the usage log ------------------------------------------------------------------------------


def test_every_find_appends_a_usage_row() -> None:
    env = {"BRAIN_CALLER": "tester", "BRAIN_SESSION": "sess-1"}
    hit = brain("find", "--vault", V, "--budget", "99999", "libgit2 hooks", env=env)
    miss = brain("find", "--vault", V, "xylophonist", env=env)
    as_json = brain("find", "--vault", V, "--json", "pygit2", env=env)
    assert (hit.code, miss.code, as_json.code) == (0, 1, 0)
    rows = usage_rows()
    assert rows == [
        (
            "find",
            "tester",
            "sess-1",
            "libgit2 hooks",
            len(hit.out.splitlines()) - 1,  # the hits, not the line saying what was left out
            len(hit.out.encode()),
        ),
        ("find", "tester", "sess-1", "xylophonist", 0, 0),
        ("find", "tester", "sess-1", "pygit2", 1, len(as_json.out.encode())),
    ]
    conn = connect(usage_log_path())
    try:
        (event,) = [e for e in events(conn) if e.query == "pygit2"]
    finally:
        conn.close()
    assert event.vault == str(FIXTURE_VAULT.resolve())
    assert abs(event.ts - time.time()) < 120


@pytest.mark.parametrize(
    ("env", "caller", "session"),
    [
        ({"CLAUDECODE": "1", "CLAUDE_SESSION_ID": "c-42"}, "claude-code", "c-42"),
        (
            {"CLAUDECODE": "1", "BRAIN_SESSION": "b-1", "CLAUDE_SESSION_ID": "c-42"},
            "claude-code",
            "b-1",
        ),
        ({"BRAIN_CALLER": "my-agent", "CLAUDECODE": "1"}, "my-agent", ""),
        ({}, "script", ""),
    ],
)
def test_usage_row_names_the_caller(env: dict[str, str], caller: str, session: str) -> None:
    run = brain("find", "--vault", V, "--budget", "300", "payments", env=env)
    assert run.code == 0
    (row,) = usage_rows()
    assert row[1:3] == (caller, session)
    assert row[5] == len(run.out.encode())


def test_unwritable_state_dir_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    env = {"XDG_STATE_HOME": str(blocker / "state")}
    for args in (["find", "--vault", V, "libgit2"], ["reindex", "--vault", V]):
        run = brain(*args, env=env)
        assert run.code == 1, run
        assert run.err.startswith("brain: ")
        assert run.err.count("\n") == 1
        assert str(blocker) in run.err
        assert_clean(run)
    run = brain("find", "--vault", V, "--json", "libgit2", env=env)
    assert run.code == 1
    assert str(blocker) in run.json()["error"]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes through chmod"
)
def test_read_only_state_dir_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o500)
    try:
        run = brain("find", "--vault", V, "libgit2", env={"XDG_STATE_HOME": str(state)})
    finally:
        state.chmod(0o700)
    assert run.code == 1, run
    assert str(state) in run.err
    assert run.err.count("\n") == 1
    assert_clean(run)


# --- bad input ----------------------------------------------------------------------------------


def test_malformed_bullet_is_searchable_as_prose_and_reindex_warns(vault: Path) -> None:
    memory = vault / "AI" / "MEMORY.md"
    lines = memory.read_text(encoding="utf-8").split("\n")
    lines.insert(10, "- **broken bullet** — a fact about the okapi without a date — me")
    memory.write_text("\n".join(lines), encoding="utf-8")
    run = brain("reindex", "--vault", str(vault))
    assert run.code == 0, run
    assert run.err.startswith("1 problem in the vault; ")
    assert "brain lint" in run.err
    assert_clean(run)
    found = brain("find", "--vault", str(vault), "--json", "okapi")
    assert found.code == 0
    hit = found.json()["hits"][0]
    assert (hit["path"], hit["line"], hit["kind"]) == ("AI/MEMORY.md", 11, "prose")
    assert brain("find", "--vault", str(vault), "libgit2").code == 0  # the rest still works
    lint = brain("lint", "--vault", str(vault))
    assert lint.code == 1
    assert "AI/MEMORY.md:11: " in lint.out


def test_non_utf8_files_are_read_and_reported(vault: Path) -> None:
    (vault / "notes" / "latin1.md").write_bytes(b"# Caf\xe9\n\nThe ocelot visited the caf\xe9.\n")
    tunings = vault / "AI" / "TUNINGS.md"
    tunings.write_bytes(tunings.read_bytes() + b"- **bad bytes** \xff\xfe \xe2\x80 x\n")
    run = brain("reindex", "--vault", str(vault))
    assert run.code == 0, run
    assert "problems" in run.err
    assert_clean(run)
    found = brain("find", "--vault", str(vault), "ocelot")
    assert found.code == 0
    assert found.out.startswith("notes/latin1.md:3 ")
    assert_clean(found)
    assert brain("find", "--vault", str(vault), "pygit2").code == 0


@pytest.mark.slow
def test_megabyte_lines_stay_searchable_and_fast(vault: Path) -> None:
    words = " ".join(f"w{i}" for i in range(150_000))  # ~1 MB on one line
    (vault / "notes" / "paste.md").write_text(f"# Paste\n\nquetzal {words} tapir\n", "utf-8")
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8")
        + f"- **huge bullet** — narwhal {words} — me — 2026-01-01\n",
        encoding="utf-8",
    )
    start = time.monotonic()
    run = brain("find", "--vault", str(vault), "quetzal")
    assert run.code == 0, run
    assert run.out.startswith("notes/paste.md:3 ")
    assert len(run.out.encode()) <= 2400
    bullet = brain("find", "--vault", str(vault), "--json", "narwhal")
    assert bullet.json()["hits"][0]["handle"] == "huge bullet"
    lint = brain("lint", "--vault", str(vault))
    assert lint.code == 0, lint
    assert time.monotonic() - start < 30
    for r in (run, bullet, lint):
        assert_clean(r)


@pytest.mark.parametrize("shape", ["empty-core-files", "bare-ai-folder"])
def test_empty_vault(tmp_path: Path, shape: str) -> None:
    root = tmp_path / "empty"
    (root / "AI").mkdir(parents=True)
    if shape == "empty-core-files":
        for name in ("MEMORY.md", "LEARNINGS.md", "TUNINGS.md", "INBOX.md", "synonyms.tsv"):
            (root / "AI" / name).write_text("", encoding="utf-8")
    run = brain("find", "--vault", str(root), "anything")
    assert (run.code, run.out, run.err) == (1, "", "")
    report = brain("reindex", "--vault", str(root), "--json")
    assert report.code == 0, report
    assert (report.json()["unit_count"], report.json()["bullet_count"]) == (0, 0)
    lint = brain("lint", "--vault", str(root))
    assert lint.code == 0, lint
    for r in (run, report, lint):
        assert_clean(r)


def test_odd_files_do_not_break_the_index(vault: Path) -> None:
    (vault / "notes" / "binary.md").write_bytes(bytes(range(256)) * 64)
    (vault / "notes" / "empty.md").write_bytes(b"")
    (vault / "notes" / "only-front-matter.md").write_text("---\na: b\n---\n", "utf-8")
    (vault / "notes" / "unterminated-fence.md").write_text("```\nopen fence aardwolf\n", "utf-8")
    (vault / "notes" / "folder.md").mkdir()
    (vault / "notes" / "crlf.md").write_bytes(b"# Win\r\n\r\nThe dingo line\r\nwraps here.\r\n")
    run = brain("find", "--vault", str(vault), "aardwolf")
    assert run.code == 0, run
    assert run.out.startswith("notes/unterminated-fence.md:1 ")
    crlf = brain("find", "--vault", str(vault), "dingo wraps")
    assert crlf.out.startswith("notes/crlf.md:3 ")
    for r in (run, crlf, brain("reindex", "--vault", str(vault), "--full")):
        assert_clean(r)


def test_propose_of_a_handle_a_bullet_has_needs_force(vault: Path) -> None:
    """Approving a proposal whose handle a core bullet has replaces that bullet: without --force
    the line is refused (one line naming the bullet and both ways on) and the inbox is as it was;
    with --force it is queued as the update the inbox shows, and approving it corrects the
    bullet in place. A proposal of another handle needs nothing."""
    inbox = vault / "AI" / "INBOX.md"
    before = inbox.read_bytes()
    v = str(vault)
    run = brain("propose", "--vault", v, "brain cli — brain's CLI is built with Typer")
    assert run.code == 1
    assert run.out == ""
    assert run.err.count("\n") == 1
    assert "**brain cli** is already a bullet (AI/MEMORY.md:9)" in run.err
    assert "--force" in run.err
    assert "a handle of its own" in run.err
    assert inbox.read_bytes() == before
    same_key = brain("propose", "--vault", v, "--json", "Brain-CLI — built with Typer")
    assert same_key.code == 1  # the handle key, as lint and the inbox read it
    assert "**Brain-CLI** is already a bullet (AI/MEMORY.md:9)" in same_key.json()["error"]
    fix = "brain cli — brain's CLI is built with Typer"
    forced = brain("propose", "--vault", v, "--force", fix)
    assert forced.code == 0, forced
    assert forced.out.startswith("Proposed as #4: - **brain cli**")
    assert "\n  updates AI/MEMORY.md:9: " in forced.out
    assert brain("inbox", "approve", "4", "--vault", v).code == 0
    memory = (vault / "AI" / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert "built with Typer" in memory[8]
    assert sum("**brain cli**" in line for line in memory) == 1
    other = brain("propose", "--vault", v, "brain cli flags — every flag has help text")
    assert other.code == 0, other


def test_ctrl_c_inside_a_typer_command_says_interrupted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], vault: Path
) -> None:
    """Typer turns a KeyboardInterrupt into a silent exit 130 (typer/core.py `_main`); a
    command that Typer runs must end as the fast path's do: one line and 130."""
    from brain import cli
    from brain import run as runner

    def interrupted(**_: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_doctor", interrupted)
    assert cli.execute(["doctor", "--vault", str(vault)]) == 130
    assert capsys.readouterr().err == "brain: interrupted\n"


def test_ctrl_c_while_typer_parses_says_interrupted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real SIGINT while Typer parses the arguments (before any command runs) ends as one
    inside a command: one line and 130 (Typer returned 130 and said nothing)."""
    import signal

    from typer import core

    from brain import cli

    def parse(*_: object, **__: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises here
        raise AssertionError("no SIGINT came")

    monkeypatch.setattr(core.TyperGroup, "parse_args", parse)
    assert cli.execute(["--help"]) == 130
    assert capsys.readouterr().err == "brain: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


# The interpreter's own start (site, a .pth) is not brain's: a child tells when its
# sitecustomize runs, the last of it, and the SIGINT comes after.
READY = """import os
fd = os.environ.pop("BRAIN_TEST_READY_FD", "")
if fd:
    os.write(int(fd), b"r")
    os.close(int(fd))
"""


def _interrupted_at(args: list[str], delay: float, site: Path) -> Run:
    """`bin/brain ARGS` (the console script on POSIX) sent SIGINT `delay` seconds after the
    interpreter has started: while brain loads, Typer parses or prints help."""
    import signal

    read, write = os.pipe()
    env = {
        **os.environ,
        "BRAIN_WORKER": "0",
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "BRAIN_TEST_READY_FD": str(write),
    }
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bin" / "brain"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        pass_fds=(write,),
    )
    os.close(write)
    try:
        assert os.read(read, 1) == b"r"
    finally:
        os.close(read)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return Run(proc.returncode, out.decode(), err.decode())


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ctrl_c_at_any_moment_before_the_command_is_one_line(seed: int, tmp_path: Path) -> None:
    """SIGINT at random moments of `brain --help`-like runs (brain loading, Typer building the
    app, parsing, printing help): each ends with `brain: interrupted` and 130, or (the signal
    after the help was written) as the run would have; never a traceback, never silence."""
    import random

    (tmp_path / "sitecustomize.py").write_text(READY, encoding="utf-8")
    rng = random.Random(seed)  # noqa: S311 -- reproducible moments, not crypto
    cases = [["--help"], ["inbox", "--help"], ["recall", "search", "--help"]]
    whole: dict[tuple[str, ...], tuple[str, float]] = {}  # each one's help and its time
    said = 0
    for _ in range(8):
        args = rng.choice(cases)
        if tuple(args) not in whole:
            start = time.monotonic()
            done = brain_process(*args, env={"BRAIN_WORKER": "0"})
            assert (done.code, done.err) == (0, "")
            whole[tuple(args)] = (done.out, time.monotonic() - start)
        full, seconds = whole[tuple(args)]
        run = _interrupted_at(args, rng.uniform(0, 0.8 * seconds), tmp_path)
        assert "Traceback" not in run.err, run.err
        assert full.startswith(run.out), run  # what was written is the help's start, or none
        if run.code == 130:
            assert run.err == "brain: interrupted\n", run
            said += 1
        else:  # it had finished: the help whole (and then perhaps killed by the signal)
            assert (run.code in (0, -2), run.err, run.out) == (True, "", full), run
    assert said >= 4  # most moments fall inside the run


def test_a_ctrl_c_python_cannot_raise_prints_no_traceback() -> None:
    """A Ctrl-C that lands in a callback (an import lock's weakref callback, while brain loads)
    cannot be raised: Python printed `Exception ignored in ... Traceback ... KeyboardInterrupt`
    (seen once in 24 runs of the test above). Once brain is imported it prints nothing of it; any
    other exception there is still reported."""
    code = (
        "import {pkg}, weakref\n"
        "class A: pass\n"
        "def cb(_): raise {exc}()\n"
        "a = A(); r = weakref.ref(a, cb); del a\n"
        "print('went on')\n"
    )
    for exc, said in (("KeyboardInterrupt", False), ("ValueError", True)):
        run = subprocess.run(
            [sys.executable, "-c", code.format(pkg="brain", exc=exc)],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
            timeout=30,
        )
        assert run.stdout == "went on\n", run
        assert ("Traceback" in run.stderr) == said, run.stderr
