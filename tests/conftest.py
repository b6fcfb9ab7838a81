"""Shared fixtures: every test runs with its own HOME, XDG dirs and git identity."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_VAULT = ROOT / "testdata" / "vault"

_SCRUB = (
    *("BRAIN_", "CLAUDE", "GIT_", "XDG_", "CODEX_", "GEMINI_CLI", "CURSOR_AGENT"),
    *("AI_AGENT", "NO_COLOR", "FORCE_COLOR"),  # who runs brain, and colour (brain.present.colour)
    *("COPILOT_HOME", "OPENCODE_DB", "PI_CODING_AGENT_DIR"),  # where recall's agents keep theirs
)


@pytest.fixture(scope="session")
def short_tmp_root() -> Iterator[Path]:
    """Where each test's TMPDIR is made. A worker whose state dir is too long for a socket lives
    in $TMPDIR/brain-<uid>, so TMPDIR stays short however deep pytest's temp dir is: a HOME there
    grows a digit past home999 on an xdist worker, and a long --basetemp or user name adds more.
    One folder per test process, removed at its end: a process a test left behind that writes
    in its TMPDIR after the test (a worker starting) leaves nothing in /tmp past the run."""
    short = "/tmp" if Path("/tmp").is_dir() else tempfile.gettempdir()
    root = Path(tempfile.mkdtemp(prefix="brain-tests-", dir=short))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def isolated_env(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    short_tmp_root: Path,
) -> Iterator[Path]:
    """HOME, XDG dirs, git identity and git config all point into a temp dir; TMPDIR into a
    short private folder, removed afterwards. The environment is put back as it was, also what a
    test set in os.environ itself rather than through monkeypatch (it would reach every later
    test's module and session fixtures on this xdist worker)."""
    saved = dict(os.environ)
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith(_SCRUB):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    tmp = tempfile.mkdtemp(dir=short_tmp_root)
    monkeypatch.setenv("TMPDIR", tmp)
    # tempfile reads TMPDIR once per process and keeps it: the first test to make a temp file on
    # a worker would leave every later one its TMPDIR, removed at its teardown (FileNotFoundError
    # when only tests of one file ran, so none had cached /tmp before)
    monkeypatch.setattr(tempfile, "tempdir", tmp)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test Person")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.invalid")
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("BRAIN_NO_UPDATE", "1")
    monkeypatch.setenv("BRAIN_EMBED", "none")  # keyword tests stay fast; hybrid tests opt in
    # no worker unless a test asks (BRAIN_WORKER=1): a `brain find` would otherwise leave one behind
    monkeypatch.setenv("BRAIN_WORKER", "0")
    # Prime's 1 s deadline and the daily sweep's 1.3 s budget count from a process's start: on a
    # loaded machine (or beside the other test workers) they ran out, and prime printed nothing or
    # the sweep stopped early. A test of the deadline or the budget sets its own.
    monkeypatch.setenv("BRAIN_PRIME_DEADLINE", "30")
    monkeypatch.setenv("BRAIN_TEND_SECONDS", "30")
    yield home
    shutil.rmtree(tmp, ignore_errors=True)
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A private copy of testdata/vault (not a git repository)."""
    dest = tmp_path / "vault"
    shutil.copytree(FIXTURE_VAULT, dest)
    return dest


@pytest.fixture
def twin(vault: Path, tmp_path: Path) -> Path:
    """A second copy of the fixture vault, to do the same thing to two ways and compare."""
    dest = tmp_path / "twin"
    shutil.copytree(vault, dest)
    return dest


def today() -> str:
    """The date brain writes, read when a test compares it: a run that crosses midnight would
    otherwise compare with the day the test module was imported."""
    return dt.date.today().isoformat()


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return proc.stdout


@pytest.fixture
def git_vault(vault: Path) -> Path:
    """The fixture vault as a git repository with everything committed."""
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "fixture")
    return vault


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


# Commands that cannot run in the test's process: prime's deadline is a thread that ends the
# process (os._exit) when it fires, even after the answer; mcp and desk serve until stopped.
_PROCESS_ONLY = frozenset({"prime", "mcp", "desk"})
_ALL_IN_PROCESSES = os.environ.get("BRAIN_TEST_PROCESS") == "1"  # read before the scrub
_MAIN = str(ROOT / "brain" / "__main__.py")  # sys.argv[0] of `python -m brain`


def brain(
    *args: str,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> Run:
    """Run `brain ARGS` as a fresh process would, in this one: brain's modules imported anew (no
    cache or module global survives from one call to the next), its own environment, folder,
    argv and streams. Commands that need a real process (see needs_process) get one; a test of
    start-up, signals, ttys or the process's own exit calls brain_process.
    BRAIN_TEST_PROCESS=1 runs every call in a process (to compare, or to tell whether a failure
    comes from running in-process)."""
    if _ALL_IN_PROCESSES or needs_process(args, {**os.environ, **(env or {})}):
        return brain_process(*args, input=input, env=env, cwd=cwd, timeout=timeout)
    return _in_process(args, input, env or {}, cwd, timeout)


def needs_process(args: tuple[str, ...], env: dict[str, str]) -> bool:
    """A worker (thin forwarding, or one started after the answer) lives past the call; so do
    the threads and servers of _PROCESS_ONLY. PYTHONPATH and the like act at start-up."""
    return (
        env.get("BRAIN_WORKER", "1") != "0"
        or (bool(args[:1]) and args[0] in _PROCESS_ONLY)
        or any(key.startswith("PYTHON") and os.environ.get(key) != env[key] for key in env)
    )


def brain_process(
    *args: str,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> Run:
    """Run the real `brain` in a fresh process, as an agent or a hook would."""
    proc = subprocess.run(
        [sys.executable, "-m", "brain", *args],
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _is_brain(name: str) -> bool:
    return name == "brain" or name.startswith("brain.")


@contextlib.contextmanager
def _fresh_brain() -> Iterator[None]:
    """brain's modules as a new process has them: none imported yet. The test's own (and what it
    patched in them) come back afterwards; third-party modules stay, imported once."""
    saved = {name: mod for name, mod in sys.modules.items() if _is_brain(name)}
    for name in saved:
        del sys.modules[name]
    try:
        yield
    finally:
        for name in [name for name in sys.modules if _is_brain(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


def _in_process(
    args: tuple[str, ...], input: str | None, env: dict[str, str], cwd: Path | None, timeout: float
) -> Run:
    """brain's entry point (`python -m brain`'s) called here. Output goes to files put in place
    of file descriptors 1 and 2, so what git and hooks started by brain print is caught too, in
    order; stdin is a file holding `input` (brain selects and reads its descriptor), empty when
    there is none. Streams as Python sets them up under LANG=C.UTF-8. Past `timeout` seconds,
    subprocess.TimeoutExpired, as brain_process raises."""
    saved_env, saved_cwd, saved_argv = dict(os.environ), Path.cwd(), sys.argv
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryFile() as stdin,
    ):
        stdin.write((input or "").encode())
        stdin.seek(0)
        for stream in saved_streams[1:]:
            stream.flush()
        saved_fds = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            os.environ.update(env)
            if cwd is not None:
                os.chdir(cwd)
            sys.argv = [_MAIN, *args]
            sys.stdin = open(stdin.fileno(), encoding="utf-8", closefd=False)  # noqa: SIM115
            sys.stdout = _stream(1, "surrogateescape")
            sys.stderr = _stream(2, "backslashreplace")
            with _fresh_brain(), _deadline(args, timeout):
                code = _exit_code(_main)
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            sys.argv = saved_argv
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
            for fd, saved_fd in zip((1, 2), saved_fds, strict=True):
                os.dup2(saved_fd, fd)
                os.close(saved_fd)
        return Run(code, _text(out), _text(err))


class _Late(BaseException):
    """Not an Exception: brain's last line of defence (cli.execute) must not catch it."""


@contextlib.contextmanager
def _deadline(args: tuple[str, ...], timeout: float) -> Iterator[None]:
    def late(signum: int, frame: object) -> None:
        raise _Late

    before = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    except _Late:
        raise subprocess.TimeoutExpired(["brain", *args], timeout) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def _main() -> None:
    import runpy

    runpy.run_module("brain", run_name="__main__", alter_sys=True)


def _exit_code(call: Callable[[], None]) -> int:
    """The process's exit status for `call`: SystemExit's code as the interpreter maps it."""
    try:
        call()
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return 1
    return 0


def _stream(fd: int, errors: str) -> TextIO:
    return io.TextIOWrapper(
        io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors=errors, line_buffering=fd == 2
    )


def _text(file: IO[bytes]) -> str:
    """The output as subprocess.run(text=True) gives it: UTF-8, universal newlines."""
    file.seek(0)
    return io.TextIOWrapper(file, encoding="utf-8").read()
