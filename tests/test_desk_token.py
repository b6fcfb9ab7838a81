"""The desk's token never leaves the person's own reach: `brain desk`, run as the real command on a
terminal, opens the browser (a stand-in named by $BROWSER, as Python's webbrowser reads it) on a
file only its owner can read, and no process it starts carries the token in its command line or
environment, which every local user can read in /proc (`ps`). The file goes when the desk stops.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
import pytest
from conftest import ROOT, brain
from test_desk import moves_on_to

# A browser for the test: it records how it was started, as /proc shows it to anyone, and exits.
FAKE_BROWSER = """#!{python}
import json, sys
def proc(name):
    with open("/proc/self/" + name, "rb") as fh:
        return fh.read().decode("utf-8", "replace")
seen = {{"argv": sys.argv, "cmdline": proc("cmdline"), "environ": proc("environ")}}
with open({record!r}, "a", encoding="utf-8") as fh:
    fh.write(json.dumps(seen) + "\\n")
"""


@dataclass
class Terminal:
    """`brain desk` on a pseudo-terminal, as a person starts it."""

    proc: subprocess.Popen[bytes]
    fd: int
    out: bytearray = field(default_factory=bytearray)

    def read(self, until: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while until not in self.text() and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    self.out += os.read(self.fd, 65536)
                except OSError:  # EIO: the desk closed the terminal
                    break
        assert until in self.text(), self.text()
        return self.text()

    def text(self) -> str:
        return self.out.decode("utf-8", "replace").replace("\r\n", "\n")

    def serving(self) -> int:
        """The desk's port, once it answers (a 403 without the token): Ctrl-C before that is
        an abort (exit 130), not the person closing the desk."""
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", self.read("Ctrl-C stops it"))
        assert m
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{m.group(1)}/", timeout=5).status_code == 403:
                    return int(m.group(1))
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("the desk never answered")

    def interrupt(self) -> str:
        """Ctrl-C, as the person closes the desk; all it printed."""
        os.kill(self.proc.pid, signal.SIGINT)
        out = self.read("stopped (interrupted)")
        assert self.proc.wait(timeout=30) == 0
        return out


@contextmanager
def desk_on_a_terminal(vault: Path, env: dict[str, str], *args: str) -> Iterator[Terminal]:
    main, sub = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "brain", "desk", "--vault", str(vault), *args],
        stdin=sub,
        stdout=sub,
        stderr=sub,
        env={**os.environ, "COLUMNS": "200", **env},
        cwd=ROOT,
        close_fds=True,
    )
    os.close(sub)
    term = Terminal(proc, main)
    try:
        yield term
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)  # by its pid, only when a test failed midway
        proc.wait(timeout=30)
        if term.fd >= 0:
            os.close(term.fd)


def descendants(root: int) -> set[int]:
    """Every process below `root`, by the parent pid each one's /proc/PID/stat names."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class Watch:
    """Reads the command line and environment of every process the desk starts, while it runs."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, tuple[bytes, bytes]] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.done.is_set():
            for pid in descendants(self.root) - set(self.seen):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    environ = Path(f"/proc/{pid}/environ").read_bytes()
                except OSError:
                    continue  # gone already
                self.seen[pid] = (cmdline, environ)
            time.sleep(0.01)

    def stop(self) -> dict[int, tuple[bytes, bytes]]:
        self.done.set()
        self.thread.join(timeout=30)
        return self.seen


def fake_browser(tmp_path: Path) -> tuple[Path, Path]:
    record = tmp_path / "browser.jsonl"
    browser = tmp_path / "fake-browser"
    browser.write_text(FAKE_BROWSER.format(python=sys.executable, record=str(record)))
    browser.chmod(0o700)
    return browser, record


def started(record: Path, timeout: float = 60) -> list[dict[str, str]]:
    def written() -> bool:  # the browser opens the file before it writes its line
        return record.exists() and record.read_text(encoding="utf-8").endswith("\n")

    deadline = time.monotonic() + timeout
    while not written() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert written(), "the desk never started the browser"
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def token_of(page: Path) -> tuple[str, str]:
    """The tokened URL the start page leads to, and its token."""
    m = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', page.read_text("utf-8"))
    assert m, page.read_text("utf-8")
    url = m.group(1).replace("&amp;", "&")
    token = re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=([\w-]{40,})", url)
    assert token, url
    return url, token.group(1)


def test_the_browser_gets_an_owner_only_file_and_no_child_sees_the_token(
    vault: Path, tmp_path: Path
) -> None:
    browser, record = fake_browser(tmp_path)
    with desk_on_a_terminal(vault, {"BROWSER": str(browser)}) as term:
        watch = Watch(term.proc.pid)
        (run,) = started(record)
        uri = run["argv"][1]
        assert uri.startswith("file://"), run["argv"]
        page = Path(unquote(urlsplit(uri).path))
        assert stat.S_IMODE(page.stat().st_mode) == 0o600  # never readable by another user
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        assert "no-referrer" in page.read_text("utf-8")
        url, token = token_of(page)

        # the page leads a browser into the desk: the token for a cookie, then every page
        port = urlsplit(url).port
        with httpx.Client(timeout=120) as c:
            first = c.get(url)
            assert c.get(f"http://127.0.0.1:{port}{moves_on_to(first)}").status_code == 303
            # pages that run doctor, log, find and recall in the desk, which may start processes
            for path in ("/inbox", "/ledger", "/health", "/misses", "/search?q=libgit2"):
                assert c.get(f"http://127.0.0.1:{port}{path}").status_code == 200, path
            assert c.get(f"http://127.0.0.1:{port}/search?q=helm&in=recall").status_code == 200

        shown = term.read("Ctrl-C stops it")
        seen = watch.stop()
        assert browser.name in b"".join(cmd for cmd, _ in seen.values()).decode()  # it was watched
        for pid, (cmdline, environ) in seen.items():
            assert token.encode() not in cmdline, (pid, cmdline)
            assert token.encode() not in environ, (pid, cmdline)
        assert token not in run["cmdline"]
        assert token not in run["environ"]
        own = Path(f"/proc/{term.proc.pid}")
        assert token.encode() not in (own / "cmdline").read_bytes()
        assert token.encode() not in (own / "environ").read_bytes()

        # the terminal shows the address without the token, and the file for another browser
        assert f"http://127.0.0.1:{port}/ (opening it in your browser)" in shown
        assert uri in shown
        out = term.interrupt()
    assert token not in out  # nor in anything the server wrote while it ran
    assert not page.exists()  # gone with the desk


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_the_start_page_goes_when_the_desk_is_killed_or_its_terminal_closes(
    vault: Path, tmp_path: Path, sig: int
) -> None:
    browser, record = fake_browser(tmp_path)
    with desk_on_a_terminal(vault, {"BROWSER": str(browser)}) as term:
        (run,) = started(record)
        page = Path(unquote(urlsplit(run["argv"][1]).path))
        term.read("Ctrl-C stops it")
        assert page.exists()
        if sig == signal.SIGHUP:  # the terminal closes: nothing is left to write on
            os.close(term.fd)
            term.fd = -1
        os.kill(term.proc.pid, sig)  # at once: also before the server runs, it stops cleanly
        assert term.proc.wait(timeout=30) == 0
    assert not page.exists()
    assert not (page.parent.parent / "crashes").exists()


def test_a_killed_desks_start_page_is_removed_by_the_next(vault: Path, tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    browser, record = fake_browser(tmp_path)
    with desk_on_a_terminal(vault, {"BROWSER": str(browser)}) as term:
        (run,) = started(record)
        folder = Path(unquote(urlsplit(run["argv"][1]).path)).parent
        term.read("Ctrl-C stops it")
        os.kill(term.proc.pid, signal.SIGKILL)  # no chance to remove its file
        term.proc.wait(timeout=30)
    left = folder / f"desk-{term.proc.pid}.html"
    assert left.exists()
    stale = folder / f"desk-{dead.stdout.strip()}.html"
    stale.write_text("a desk long gone", encoding="utf-8")
    with desk_on_a_terminal(vault, {"BROWSER": str(browser)}) as term:
        term.serving()
        assert not left.exists()
        assert not stale.exists()
        assert [p.name for p in folder.iterdir()] == [f"desk-{term.proc.pid}.html"]
        term.interrupt()


def test_with_no_open_the_token_url_is_printed_for_the_person(vault: Path, tmp_path: Path) -> None:
    """--no-open (a browser on another machine, through an ssh tunnel): no browser is started,
    the URL is for the person to carry, on their own terminal, and the start page is there too."""
    browser, record = fake_browser(tmp_path)
    with desk_on_a_terminal(vault, {"BROWSER": str(browser)}, "--no-open") as term:
        shown = term.read("Ctrl-C stops it")
        m = re.search(r"file://\S+\.html", shown)
        assert m, shown
        url, _ = token_of(Path(unquote(urlsplit(m.group(0)).path)))
        assert f": {url}\n" in shown
        term.serving()
        term.interrupt()
    assert not record.exists()


def test_a_start_page_that_cannot_be_written_is_one_line(vault: Path) -> None:
    from brain.desk import door

    door.folder().parent.mkdir(parents=True, exist_ok=True)
    door.folder().write_text("not a folder", encoding="utf-8")
    run = brain("desk", "--vault", str(vault), "--no-open", timeout=60)
    assert run.code == 1
    assert f"cannot write the desk's start page in {door.folder()}" in run.err
    assert run.err.count("\n") <= 2  # the line and its next step
    assert "Traceback" not in run.err
    assert "token" not in run.out + run.err  # it stopped before any URL was printed
